package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules/data/trace"
)

const replayOptions = `export const options = { scenarios: { replay: { executor: 'trace-replay', trace: 'trace.jsonl', preAllocatedVUs: 2, speed: 100 } } };
`

// A trace named by a relative path is the one beside the script, and the
// scenario's function gets each record as its second argument.
func TestTraceReplayPassesEachRecordBesideTheScript(t *testing.T) {
	var logs logBuffer
	cfg := testConfig(t, replayOptions+`
export function setup() { return { from: 'setup' }; }
export default function (data, record) {
  console.log('got ' + data.from + ' ' + JSON.stringify(record));
}
`, nil, &logs)
	trace := `{"timestamp_ms": 1000, "input_tokens": 12, "output_tokens": 3, "hash_ids": [7, 8], "tenant": {"id": 4}}
{"timestamp_ms": 1500, "input_tokens": 5, "output_tokens": 1}
`
	if err := os.WriteFile(filepath.Join(filepath.Dir(cfg.ScriptPath), "trace.jsonl"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, load(t, cfg))
	for _, want := range []string{
		`got setup {\"index\":0,\"start\":0,\"inputTokens\":12,\"outputTokens\":3,\"hashIds\":[7,8],\"fields\":{\"tenant\":{\"id\":4}}}`,
		`got setup {\"index\":1,\"start\":500,\"inputTokens\":5,\"outputTokens\":1,\"hashIds\":[],\"fields\":{}}`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log has no %s:\n%s", want, logs.String())
		}
	}
}

// A bad line fails Load, before the run, naming the scenario's field, the
// file and the line.
func TestTraceReplayRefusesABadTraceBeforeTheRun(t *testing.T) {
	cfg := testConfig(t, replayOptions+"export default function () {}\n", nil, nil)
	path := filepath.Join(filepath.Dir(cfg.ScriptPath), "trace.jsonl")
	if err := os.WriteFile(path, []byte(`{"timestamp_ms": 0, "input_tokens": 1, "output_tokens": 1}`+"\n"+`{"timestamp_ms": 1, "input_tokens": "x", "output_tokens": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(t.Context(), cfg)
	want := `invalid options: options.scenarios.replay.trace: ` + path + `:2: "input_tokens": not a number: "x"`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}

// BenchmarkTraceRecordValue measures the per-iteration cost of a
// Mooncake record (20 hash ids, no other fields) as the function's
// argument.
func BenchmarkTraceRecordValue(b *testing.B) {
	rt := goja.New()
	parse, ok := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	if !ok {
		b.Fatal("no JSON.parse")
	}
	v := &vu{rt: rt, jsonParse: parse}
	rec := trace.Record{Index: 5, Start: 1234 * time.Millisecond, InputTokens: 10000, OutputTokens: 200, HashIDs: make([]int64, 20)}
	for i := range rec.HashIDs {
		rec.HashIDs[i] = int64(i * 1000)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.traceRecordValue(rec); err != nil {
			b.Fatal(err)
		}
	}
}
