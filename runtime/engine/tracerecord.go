package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules/data/trace"
	"github.com/llmrun/llmrun/modules/scriptpath"
	"github.com/llmrun/llmrun/runtime/executor"
)

// jsTraceRecord is a trace record as the scenario's function gets it,
// its second argument (docs/scripting.md, "Replaying a trace").
type jsTraceRecord struct {
	Index        int64          `json:"index"`
	Start        float64        `json:"start"` // milliseconds from the trace's first record
	InputTokens  int            `json:"inputTokens"`
	OutputTokens int            `json:"outputTokens"`
	HashIDs      []int64        `json:"hashIds"`
	Fields       map[string]any `json:"fields"`
}

// iterationArgs are the arguments of the iteration running under ctx:
// setup()'s data, and the trace record a trace-replay iteration replays.
func (v *vu) iterationArgs(ctx context.Context) ([]goja.Value, error) {
	rec, ok := executor.TraceRecord(ctx)
	if !ok {
		return v.args, nil
	}
	js, err := v.traceRecordValue(rec)
	if err != nil {
		return nil, fmt.Errorf("passing trace record %d to VU %d: %w", rec.Index, v.id, err)
	}
	return append(v.args[:1:1], js), nil
}

// traceRecordValue is rec as a plain JavaScript object.
func (v *vu) traceRecordValue(rec trace.Record) (goja.Value, error) {
	out := jsTraceRecord{Index: rec.Index, Start: ms(rec.Start), InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens,
		HashIDs: rec.HashIDs, Fields: rec.Fields}
	if out.HashIDs == nil {
		out.HashIDs = []int64{}
	}
	if out.Fields == nil {
		out.Fields = map[string]any{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return v.parseJSON(b)
}

// openTraces reads the trace of each trace-replay scenario once before
// the run (executor.TraceFile), its path resolved as every path the script
// names; found says that there was one.
func openTraces(ctx context.Context, scs []Scenario, paths *scriptpath.Resolver) (found bool, err error) {
	for _, sc := range scs {
		tf, ok := sc.Config.(executor.TraceFile)
		if !ok {
			continue
		}
		if err := tf.OpenTrace(ctx, paths.Resolve); err != nil {
			return true, &ConfigError{Field: "options.scenarios." + sc.Name + ".trace", Err: err}
		}
		found = true
	}
	return found, nil
}
