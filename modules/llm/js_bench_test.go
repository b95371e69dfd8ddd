package llm

import (
	"testing"

	"github.com/dop251/goja"
)

// benchResult is a completed streamed request as a script usually sees
// it: timings, usage, a tool call, no text nor ITL kept.
func benchResult() *Result {
	return &Result{
		OK: true, Status: 200, Attempts: 1, Proto: "HTTP/1.1", API: ChatCompletions, Model: "m", Stream: true,
		TTFT: 41.5, TTFO: 41.5, TPOT: 3.25, E2E: 450.75, Chunks: 128, OutputTokens: 128, TokenSource: TokensFromUsage,
		PromptTokens: 512, CachedTokens: 256, FinishReason: "stop", CheckTokens: 128, CheckSource: TokensFromChunks,
		ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		Timings:   Timings{Queue: 0.25, DNS: 0.5, Connect: 1, TLS: 2, TTFB: 40},
		ITL:       []float64{3, 3.5, 2.5},
	}
}

// BenchmarkResultObject measures building the object llm.stream()
// returns, which every request pays for.
func BenchmarkResultObject(b *testing.B) {
	for _, tc := range []struct {
		name    string
		withITL bool
	}{{"plain", false}, {"itl", true}} {
		b.Run(tc.name, func(b *testing.B) {
			rt := goja.New()
			r := benchResult()
			b.ReportAllocs()
			for b.Loop() {
				resultObject(rt, r, tc.withITL)
			}
		})
	}
}
