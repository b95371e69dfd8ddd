package llm

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/internal/race"
	"github.com/llmrun/llmrun/modules/metrics"
)

// cachedSamples returns the values of the llm_cached_tokens samples of res.
func cachedSamples(res *Result) []float64 {
	m := RegisterMetrics(metrics.NewRegistry())
	var out []float64
	for _, s := range m.AppendSamples(nil, nil, res) {
		if s.Metric == m.CachedTokens {
			out = append(out, s.Value)
		}
	}
	return out
}

// TestCachedTokensParsed checks that the cached prompt tokens are read
// from OpenAI's usage.prompt_tokens_details.cached_tokens (chat and
// completions, streamed and not) and Anthropic's cache_read_input_tokens,
// and sampled in llm_cached_tokens only when the server reported them.
func TestCachedTokensParsed(t *testing.T) {
	t.Parallel()
	const (
		chatToken = `{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`
		textToken = `{"choices":[{"index":0,"text":"hi","finish_reason":"length"}]}`
		finish    = `{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`
	)
	usageChunk := func(u string) string { return `{"choices":[],"usage":` + u + `}` }
	anthropicStream := func(usage string) string {
		return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":" + usage + "}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	}
	for _, tc := range []struct {
		name        string
		api         API
		contentType string
		body        string
		class       ErrorClass
		prompt      int
		cached      int
		reported    bool
	}{
		{name: "chat stream", api: ChatCompletions, contentType: "text/event-stream",
			body:   sse(chatToken, finish, usageChunk(`{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41,"prompt_tokens_details":{"cached_tokens":32}}`), "[DONE]"),
			prompt: 40, cached: 32, reported: true},
		{name: "completions stream, a miss", api: Completions, contentType: "text/event-stream",
			body:   sse(textToken, usageChunk(`{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}}`), "[DONE]"),
			prompt: 40, cached: 0, reported: true},
		{name: "chat stream without details", api: ChatCompletions, contentType: "text/event-stream",
			body:   sse(chatToken, finish, usageChunk(`{"prompt_tokens":40,"completion_tokens":1}`), "[DONE]"),
			prompt: 40},
		{name: "null details", api: ChatCompletions, contentType: "text/event-stream",
			body:   sse(chatToken, finish, usageChunk(`{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":null}`), "[DONE]"),
			prompt: 40},
		{name: "null cached_tokens", api: ChatCompletions, contentType: "text/event-stream",
			body:   sse(chatToken, finish, usageChunk(`{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":null}}`), "[DONE]"),
			prompt: 40},
		{name: "details without cached_tokens", api: Completions, contentType: "text/event-stream",
			body:   sse(textToken, usageChunk(`{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":{"audio_tokens":0}}`), "[DONE]"),
			prompt: 40},
		{name: "no usage", api: ChatCompletions, contentType: "text/event-stream",
			body: sse(chatToken, finish, "[DONE]")},
		{name: "cached_tokens not a number", api: ChatCompletions, contentType: "text/event-stream",
			body:  sse(chatToken, finish, usageChunk(`{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":"32"}}`), "[DONE]"),
			class: ErrDecode},
		{name: "whole chat", api: ChatCompletions, contentType: "application/json",
			body:   `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":1,"total_tokens":1201,"prompt_tokens_details":{"cached_tokens":1024}}}`,
			prompt: 1200, cached: 1024, reported: true},
		{name: "whole completions without details", api: Completions, contentType: "application/json",
			body:   `{"choices":[{"index":0,"text":"hi","finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}`,
			prompt: 12},
		{name: "anthropic stream", api: Anthropic, contentType: "text/event-stream",
			body:   anthropicStream(`{"input_tokens":8,"cache_creation_input_tokens":0,"cache_read_input_tokens":48,"output_tokens":1}`),
			prompt: 56, cached: 48, reported: true},
		{name: "anthropic stream without cache fields", api: Anthropic, contentType: "text/event-stream",
			body:   anthropicStream(`{"input_tokens":8,"output_tokens":1}`),
			prompt: 8},
		{name: "anthropic whole", api: Anthropic, contentType: "application/json",
			body:   `{"type":"message","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"cache_read_input_tokens":0,"output_tokens":1}}`,
			prompt: 5, cached: 0, reported: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			}, Config{API: tc.api, Model: "m"})
			body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 1}
			if tc.api == Completions {
				body = map[string]any{"prompt": "hi", "max_tokens": 1}
			}
			res := c.Stream(t.Context(), Request{Body: body})
			if res.Class != tc.class {
				t.Fatalf("class %q (%s), want %q", res.Class, res.Error, tc.class)
			}
			if tc.class != ErrNone {
				return
			}
			if res.PromptTokens != tc.prompt || res.CachedTokens != tc.cached || res.cachedReported != tc.reported {
				t.Errorf("prompt %d, cached %d (reported %v); want %d, %d (%v)",
					res.PromptTokens, res.CachedTokens, res.cachedReported, tc.prompt, tc.cached, tc.reported)
			}
			samples := cachedSamples(res)
			switch {
			case tc.reported && (len(samples) != 1 || samples[0] != float64(tc.cached)):
				t.Errorf("llm_cached_tokens samples %v, want [%d]", samples, tc.cached)
			case !tc.reported && len(samples) != 0:
				t.Errorf("llm_cached_tokens samples %v for a response that reports none", samples)
			}
		})
	}
}

// TestCachedTokensFromSimulator sends, over HTTP, requests that share a
// long system prompt to the simulator, whose prefix cache serves the
// second one's leading blocks: each API reports them, and the simulator
// with its cache off reports none.
func TestCachedTokensFromSimulator(t *testing.T) {
	t.Parallel()
	system := strings.Repeat("You are a meticulous assistant who answers in plain words. ", 40) // about 400 tokens
	chat := func(question string) map[string]any {
		return map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": system},
			map[string]any{"role": "user", "content": question},
		}, "max_tokens": 2, "ignore_eos": true}
	}
	anthropic := func(question string) map[string]any {
		return map[string]any{"system": system, "messages": []any{map[string]any{"role": "user", "content": question}},
			"max_tokens": 2, "ignore_eos": true}
	}
	for _, cacheBlocks := range []int{1024, 0} {
		cfg := llmsimtest.Fast()
		cfg.PrefixCacheBlocks = cacheBlocks
		sim := llmsimtest.Start(t, cfg)
		for _, tc := range []struct {
			api    API
			stream bool
			body   func(string) map[string]any
		}{
			{ChatCompletions, true, chat},
			{ChatCompletions, false, chat},
			{Anthropic, true, anthropic},
			{Anthropic, false, anthropic},
		} {
			c, err := NewClient(Config{BaseURL: sim.URL(), Model: "m", API: tc.api})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			// Each case gets a system prompt of its own (the question
			// comes after it), so that its first request misses.
			prefix := string(tc.api) + " " + map[bool]string{true: "streamed", false: "whole"}[tc.stream] + ": "
			var results [2]*Result
			for i, question := range []string{"What is a prefix cache?", "Why does it help?"} {
				body := tc.body(question)
				body["stream"] = tc.stream
				if tc.api == Anthropic {
					body["system"] = prefix + system
				} else {
					body["messages"].([]any)[0].(map[string]any)["content"] = prefix + system
				}
				res := c.Stream(t.Context(), Request{Body: body})
				if !res.OK {
					t.Fatalf("%s stream %v, cache %d: %s: %s", tc.api, tc.stream, cacheBlocks, res.Class, res.Error)
				}
				results[i] = res
			}
			first, second := results[0], results[1]
			name := string(tc.api) + map[bool]string{true: " streamed", false: " whole"}[tc.stream]
			if cacheBlocks == 0 {
				for _, res := range results {
					if res.cachedReported || res.CachedTokens != 0 || len(cachedSamples(res)) != 0 {
						t.Errorf("%s without a prefix cache: cached %d (reported %v)", name, res.CachedTokens, res.cachedReported)
					}
				}
				continue
			}
			if !first.cachedReported || first.CachedTokens != 0 {
				t.Errorf("%s: first request cached %d (reported %v), want a reported miss", name, first.CachedTokens, first.cachedReported)
			}
			// The system prompt is about 400 tokens: all its full blocks
			// but the last, which the question may share, are cached.
			if !second.cachedReported || second.CachedTokens < 320 || second.CachedTokens%llmsim.PrefixBlockTokens != 0 ||
				second.CachedTokens >= second.PromptTokens {
				t.Errorf("%s: second request cached %d of %d prompt tokens (reported %v)", name, second.CachedTokens, second.PromptTokens, second.cachedReported)
			}
			t.Logf("%s: second request: %d of %d prompt tokens cached", name, second.CachedTokens, second.PromptTokens)
			if s := cachedSamples(second); len(s) != 1 || s[0] != float64(second.CachedTokens) {
				t.Errorf("%s: llm_cached_tokens samples %v, want [%d]", name, s, second.CachedTokens)
			}
		}
	}
}

// TestCachedTokensAllocations checks that reading cached_tokens costs no
// allocation per chunk, and per response what reading reasoning_tokens
// costs: encoding/json's for one more object and integer.
func TestCachedTokensAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts mean nothing under the race detector: TestCachedTokensAllocations counts them without -race, TestCachedTokensParsed covers the reading under it")
	}
	const plain = `"usage":{"prompt_tokens":512,"total_tokens":768,"completion_tokens":256}`
	with := func(chunks int, details string) []byte {
		stream, _ := openAIStream(chunks)
		if !bytes.Contains(stream, []byte(plain)) {
			t.Fatal("the benchmark stream's usage changed")
		}
		return bytes.Replace(stream, []byte(plain), []byte(strings.TrimSuffix(plain, "}")+details+"}"), 1)
	}
	allocs := func(data []byte, want int, reported bool) float64 {
		r := bytes.NewReader(data)
		return testing.AllocsPerRun(50, func() {
			r.Reset(data)
			rr := getResponseReader()
			var res Result
			if err := rr.readSSE(r, time.Now(), false, &res); err != nil || res.CachedTokens != want || res.cachedReported != reported {
				t.Fatalf("cached %d (reported %v), %v", res.CachedTokens, res.cachedReported, err)
			}
			rr.release()
		})
	}
	cached := `,"prompt_tokens_details":{"cached_tokens":496}`
	reasoning := `,"completion_tokens_details":{"reasoning_tokens":96}`
	for _, chunks := range []int{16, 256} {
		if got, base := allocs(with(chunks, cached), 496, true), allocs(with(chunks, reasoning), 0, false); got > base {
			t.Errorf("%d chunks: %v allocations with cached_tokens, %v with reasoning_tokens instead", chunks, got, base)
		}
	}
}
