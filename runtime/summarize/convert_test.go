package summarize

import (
	"encoding/json"
	"testing"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
)

// The document's own error-count, chain-stop and probe types write what
// the engine's and modules/llm's wrote: every field converted, the same
// JSON, null kept null.
func TestConversionsKeepTheJSON(t *testing.T) {
	probe := llm.Probe{Target: "http://127.0.0.1:8000/v1", API: llm.ChatCompletions, Model: "m", OK: false, Status: 503, Class: llm.ErrHTTP5xx,
		Error: "HTTP 503", Fatal: true, Fix: "start the server", ModelListed: "no", TTFT: 12.5, E2E: 40, Stream: true, UsageReported: true,
		OutputTokens: 16, TokensPerChunk: 1.5, Reasoning: true, PrefixCacheReported: true}
	for _, tc := range []struct {
		name     string
		from, to any
	}{
		{"probes", []llm.Probe{probe}, Probes([]llm.Probe{probe})},
		{"no probes", []llm.Probe(nil), Probes(nil)},
		{"error counts", []engine.ErrorCount{{Message: "boom", Count: 2}}, errorCounts([]engine.ErrorCount{{Message: "boom", Count: 2}})},
		{"empty error counts", []engine.ErrorCount{}, errorCounts([]engine.ErrorCount{})},
		{"no error counts", []engine.ErrorCount(nil), errorCounts(nil)},
		{"chain stops", []engine.ChainStop{{After: "c1", Reason: "saturated", Skipped: []string{"c2"}}},
			chainStops([]engine.ChainStop{{After: "c1", Reason: "saturated", Skipped: []string{"c2"}}})},
	} {
		want, err := json.Marshal(tc.from)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(tc.to)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: the document writes\n%s\nthe run's type wrote\n%s", tc.name, got, want)
		}
	}
}
