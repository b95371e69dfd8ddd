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

// traceRecordValue is rec as a plain JavaScript object, the scenario
// function's second argument (docs/scripting.md, "Replaying a trace"):
// { index, start (milliseconds from the trace's first record),
// inputTokens, outputTokens, hashIds, fields }. It is built property by
// property, once per iteration: only fields, whose values may nest, goes
// through JSON, and only when the record has any.
func (v *vu) traceRecordValue(rec trace.Record) (goja.Value, error) {
	rt := v.rt
	fields := rt.NewObject()
	if len(rec.Fields) > 0 {
		b, err := json.Marshal(rec.Fields)
		if err != nil {
			return nil, err
		}
		parsed, err := v.parseJSON(b)
		if err != nil {
			return nil, err
		}
		fields = parsed.ToObject(rt)
	}
	ids := make([]any, len(rec.HashIDs))
	for i, id := range rec.HashIDs {
		ids[i] = id
	}
	o := rt.NewObject()
	for _, p := range []struct {
		name  string
		value any
	}{
		{"index", rec.Index}, {"start", ms(rec.Start)}, {"inputTokens", rec.InputTokens}, {"outputTokens", rec.OutputTokens},
		{"hashIds", rt.NewArray(ids...)}, {"fields", fields},
	} {
		if err := o.Set(p.name, p.value); err != nil {
			return nil, err
		}
	}
	return o, nil
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
