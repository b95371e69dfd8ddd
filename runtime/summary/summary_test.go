package summary_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

func TestWriteJSONRoundTrip(t *testing.T) {
	s := summarize.Build(summarytest.TwoScenarioReport(t), summarytest.Meta)
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back summary.Summary
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("the export is not valid JSON: %v", err)
	}
	if !reflect.DeepEqual(&back, s) {
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(&back)
		t.Errorf("round trip changed the summary:\nbefore %s\nafter  %s", a, b)
	}

	// The field names are the export's contract.
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	paths := []struct {
		path []any
		want any
	}{
		{[]any{"schema_version"}, float64(summary.SchemaVersion)},
		{[]any{"serving", "completed"}, 10.0},
		{[]any{"serving", "failed"}, 4.0},
		{[]any{"serving", "request_throughput"}, 1.0},
		{[]any{"serving", "total_output_tokens"}, 900.0},
		{[]any{"latency", 0, "metric"}, "llm_ttft"},
		{[]any{"latency", 0, "percentiles_ms", "p50"}, s.Latency[0].P["p50"]},
		{[]any{"scenarios", 1, "name"}, "rag"},
		{[]any{"errors", 0, "class"}, "http_5xx"},
		{[]any{"checks", 2, "group"}, "::chat"},
		{[]any{"metrics", "my_counter", "values", "count"}, 12.0},
		{[]any{"meta", "seed"}, 42.0},
		{[]any{"meta", "start"}, "2026-03-04T05:06:07Z"},
		{[]any{"serving", "headline", "completed"}, 10.0},
		{[]any{"serving", "headline", "p99_ttft_ms"}, s.Latency[0].P["p99"]},
		{[]any{"metrics", "llm_ttft", "histogram", "scale"}, 1000.0},
		{[]any{"metrics", "llm_ttft", "histogram", "count"}, 10.0},
		{[]any{"scenarios", 1, "metrics", "llm_ttft", "histogram", "count"}, 2.0},
		{[]any{"scenarios", 1, "serving", "headline", "completed"}, 2.0},
	}
	for _, p := range paths {
		var v any = raw
		for _, k := range p.path {
			switch k := k.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[k]
			case int:
				a, _ := v.([]any)
				if k < len(a) {
					v = a[k]
				} else {
					v = nil
				}
			}
		}
		if v != p.want {
			t.Errorf("%v = %v, want %v", p.path, v, p.want)
		}
	}
}

// A run that tried and measured no successful request says why; a run
// with a success, or one that sent no LLM request and ran cleanly, does
// not.
func TestNoSuccess(t *testing.T) {
	threw := func(n float64) map[string]summary.MetricSummary {
		return map[string]summary.MetricSummary{"script_errors": {Values: map[string]float64{"count": n}}}
	}
	for _, tc := range []struct {
		name string
		s    summary.Summary
		want string
	}{
		{"a success", summary.Summary{Serving: summary.Serving{Requests: 9, OK: 1, Failed: 8}}, ""},
		{"all failed", summary.Summary{Serving: summary.Serving{Requests: 9, Failed: 9}}, "no request succeeded: all 9 failed"},
		{"all cut", summary.Summary{Serving: summary.Serving{Interrupted: 3}}, "no request completed: all 3 were cut"},
		{"all warmup", summary.Summary{Serving: summary.Serving{WarmupRequests: 5}}, "the 5 requests sent were all warmup"},
		{"every iteration threw", summary.Summary{Serving: summary.Serving{Iterations: 4}, Metrics: threw(4)}, "all 4 iterations threw"},
		{"the one iteration threw", summary.Summary{Serving: summary.Serving{Iterations: 1}, Metrics: threw(1)}, "all 1 iteration threw"},
		{"some iterations threw", summary.Summary{Serving: summary.Serving{Iterations: 4}, Metrics: threw(3)}, ""},
		{"no LLM request, clean", summary.Summary{Serving: summary.Serving{Iterations: 4}}, ""},
	} {
		got := tc.s.NoSuccess()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
