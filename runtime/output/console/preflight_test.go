package console

import (
	"testing"

	"github.com/llmrun/llmrun/runtime/summary"
)

func TestProbeLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		probe summary.Probe
		want  string
	}{
		{"streamed chat", summary.Probe{Target: "http://h", Model: "m", OK: true, TTFT: 12, E2E: 30, Stream: true, UsageReported: true, OutputTokens: 4, TokensPerChunk: 1},
			"http://h (model m): ok, first token in 12.0 ms, usage reported, 1.00 tokens per chunk"},
		{"streamed without usage", summary.Probe{Target: "http://h", OK: true, TTFT: 12, E2E: 30, Stream: true},
			"http://h: ok, first token in 12.0 ms, no usage reported (tokens counted by chunk or --tokenizer)"},
		{"rerank: no token, nothing to count", summary.Probe{Target: "http://h", API: "rerank", OK: true, E2E: 41.5},
			"http://h: ok, answered in 41.5 ms, not streamed"},
		{"embeddings with usage", summary.Probe{Target: "http://h", API: "embeddings", OK: true, E2E: 8, UsageReported: true},
			"http://h: ok, answered in 8.000 ms, not streamed, usage reported"},
		{"failed", summary.Probe{Target: "http://h", Class: "http_5xx", Error: "503"},
			"http://h failed with http_5xx: 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ProbeLine(tc.probe); got != tc.want {
				t.Errorf("ProbeLine:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
