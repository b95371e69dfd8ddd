package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	tiktokenlib "github.com/tiktoken-go/tokenizer"

	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/modules/metrics"
)

// toolCallStream is a chat stream calling two tools, their deltas
// interleaved, as OpenAI documents them (index, then id, type and name in
// the first delta of a call, then fragments of its arguments); the
// binding's tests (llmjs) send it too.
var toolCallStream = func() string {
	data, err := os.ReadFile("testdata/openai-chat-tools-interleaved.sse")
	if err != nil {
		panic(err)
	}
	return string(data)
}()

var wantToolCalls = []ToolCall{
	{ID: "call_a", Type: "function", Name: "get_weather", Arguments: `{"city": "Paris"}`},
	{ID: "call_b", Type: "function", Name: "get_time", Arguments: `{"tz":"CET"}`},
}

func TestToolCallStreamTranscript(t *testing.T) {
	t.Parallel()
	for _, reuse := range []bool{false, true} {
		rr := getResponseReader()
		var res Result
		if err := rr.readSSE(strings.NewReader(toolCallStream), time.Now(), false, &res); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.ToolCalls, wantToolCalls) {
			t.Errorf("reuse %v: tool calls %+v, want %+v", reuse, res.ToolCalls, wantToolCalls)
		}
		// Every tool-call delta is generated output: 5 token-bearing
		// chunks; the role-only and the finishing ones are not.
		if res.Chunks != 5 || res.OutputTokens != 5 || res.TokenSource != TokensFromChunks || res.TTFO == 0 {
			t.Errorf("chunks %d, output tokens %d (%s), ttfo %v: want 5 from chunks, ttfo set", res.Chunks, res.OutputTokens, res.TokenSource, res.TTFO)
		}
		if res.FinishReason != "tool_calls" {
			t.Errorf("finish reason %q", res.FinishReason)
		}
		rr.release()
	}
	// A response without tool calls after one with them has none.
	rr := getResponseReader()
	defer rr.release()
	var res Result
	rr.readSSE(strings.NewReader(toolCallStream), time.Now(), false, &res)
	res = Result{}
	plain := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	if err := rr.readSSE(strings.NewReader(plain), time.Now(), false, &res); err != nil || res.ToolCalls != nil {
		t.Errorf("plain stream after tool calls: %v, tool calls %+v", err, res.ToolCalls)
	}
}

func TestToolCallsNonStreamed(t *testing.T) {
	t.Parallel()
	body := `{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},` +
		`{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"CET\"}"}}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":20,"completion_tokens":17,"total_tokens":37}}`
	rr := getResponseReader()
	defer rr.release()
	var res Result
	if err := rr.readJSON(strings.NewReader(body), time.Now(), false, &res); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.ToolCalls, wantToolCalls) {
		t.Errorf("tool calls %+v, want %+v", res.ToolCalls, wantToolCalls)
	}
	if res.Chunks != 1 || res.OutputTokens != 17 || res.TTFT != res.E2E {
		t.Errorf("chunks %d, output tokens %d, ttft %v e2e %v", res.Chunks, res.OutputTokens, res.TTFT, res.E2E)
	}
}

func TestToolCallsBadIndex(t *testing.T) {
	t.Parallel()
	stream := "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999,\"function\":{\"arguments\":\"x\"}}]}}]}\n\n"
	rr := getResponseReader()
	defer rr.release()
	var res Result
	err := rr.readSSE(strings.NewReader(stream), time.Now(), false, &res)
	var f *failure
	if !errors.As(err, &f) || f.class != ErrDecode {
		t.Errorf("error %v, want a decode failure", err)
	}
}

func TestToolCallsHTTP(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		for _, ev := range strings.Split(strings.TrimSpace(toolCallStream), "\n\n") {
			send(w, strings.TrimPrefix(ev, "data: "))
		}
	}, Config{})
	res := c.Stream(context.Background(), Request{Body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
	if !res.OK {
		t.Fatal(res.Error)
	}
	if !reflect.DeepEqual(res.ToolCalls, wantToolCalls) || res.Chunks != 5 {
		t.Errorf("tool calls %+v, chunks %d", res.ToolCalls, res.Chunks)
	}
}

// codec returns a tokenizer of the library, for expected counts.
func codec(t *testing.T, name string) tiktokenlib.Codec {
	t.Helper()
	c, err := tiktokenlib.Get(tiktokenlib.Encoding(name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func count(t *testing.T, name, text string) int {
	t.Helper()
	n, err := codec(t, name).Count(text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tokenServer streams words as chunks: with usage (completion_tokens
// usage) when usage >= 0, with reasoning first when reasoning != "".
func tokenServer(t *testing.T, cfg Config, reasoning string, words []string, usage int) *Client {
	t.Helper()
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		if reasoning != "" {
			b, _ := json.Marshal(reasoning)
			send(w, `{"choices":[{"delta":{"reasoning_content":`+string(b)+`}}]}`)
		}
		for _, word := range words {
			b, _ := json.Marshal(word)
			send(w, `{"choices":[{"delta":{"content":`+string(b)+`}}]}`)
		}
		send(w, `{"choices":[{"delta":{},"finish_reason":"stop"}]}`)
		if usage >= 0 {
			send(w, fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":%d}}`, usage))
		}
		send(w, "[DONE]")
	}, cfg)
	return c
}

func chat() Request {
	return Request{Body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}
}

func TestTokenizerCounts(t *testing.T) {
	t.Parallel()
	words := []string{"Hello", ",", " wörld", "! ", "Tokenization", " of", " 12345", " émojis 🚀"}
	answer := strings.Join(words, "")
	reasoning := "Let me think about internationalization."
	for _, name := range tokenizer.Encodings {
		want := count(t, name, answer) + count(t, name, reasoning)
		// No usage: the tokenizer counts, the text is not kept unless asked.
		c := tokenServer(t, Config{Tokenizer: name}, reasoning, words, -1)
		res := c.Stream(context.Background(), chat())
		if !res.OK || res.TokenSource != TokensFromTokenizer || res.OutputTokens != want || res.Text != "" || res.CheckSource != "" {
			t.Errorf("%s: ok %v (%s), %d tokens from %s, text %q, check %q: want %d from the tokenizer", name, res.OK, res.Error, res.OutputTokens, res.TokenSource, res.Text, res.CheckSource, want)
		}
		if wantTPOT := (res.E2E - res.TTFT) / float64(want-1); res.TPOT != wantTPOT {
			t.Errorf("%s: tpot %v, want %v", name, res.TPOT, wantTPOT)
		}
		req := chat()
		req.KeepText = true
		if res := c.Stream(context.Background(), req); res.Text != answer {
			t.Errorf("%s: text %q, want %q", name, res.Text, answer)
		}
		// Usage first; the tokenizer checks it.
		c = tokenServer(t, Config{Tokenizer: name}, reasoning, words, 42)
		res = c.Stream(context.Background(), chat())
		if res.TokenSource != TokensFromUsage || res.OutputTokens != 42 || res.CheckTokens != want || res.CheckSource != TokensFromTokenizer {
			t.Errorf("%s with usage: %d from %s, check %d from %s", name, res.OutputTokens, res.TokenSource, res.CheckTokens, res.CheckSource)
		}
	}
	// Tool calls count their names and arguments.
	var want int
	for _, call := range wantToolCalls {
		want += count(t, "o200k_base", call.Name) + count(t, "o200k_base", call.Arguments)
	}
	rr := getResponseReader()
	defer rr.release()
	rr.reasoning, rr.countText = rr.reasoning[:0], true
	var res Result
	if err := rr.readSSE(strings.NewReader(toolCallStream), time.Now(), true, &res); err != nil {
		t.Fatal(err)
	}
	tok, _ := newTokenCounter("o200k_base")
	settleTokens(tok, rr, &res)
	if res.OutputTokens != want || res.TokenSource != TokensFromTokenizer {
		t.Errorf("tool calls: %d tokens from %s, want %d", res.OutputTokens, res.TokenSource, want)
	}
}

func TestTokenSourceOrder(t *testing.T) {
	t.Parallel()
	words := []string{"a", " b", " c"}
	// No tokenizer, no usage: chunks, nothing to check.
	res := tokenServer(t, Config{}, "", words, -1).Stream(context.Background(), chat())
	if res.TokenSource != TokensFromChunks || res.OutputTokens != 3 || res.CheckSource != "" {
		t.Errorf("no usage: %d from %s, check %q", res.OutputTokens, res.TokenSource, res.CheckSource)
	}
	// No tokenizer, usage: usage, checked by the chunks of the stream.
	res = tokenServer(t, Config{}, "", words, 5).Stream(context.Background(), chat())
	if res.TokenSource != TokensFromUsage || res.OutputTokens != 5 || res.CheckSource != TokensFromChunks || res.CheckTokens != 3 {
		t.Errorf("usage: %d from %s, check %d from %s", res.OutputTokens, res.TokenSource, res.CheckTokens, res.CheckSource)
	}
	// A non-streamed response with usage has nothing to check without a
	// tokenizer.
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"content":"a b c"},"finish_reason":"stop"}],"usage":{"completion_tokens":3}}`)
	}, Config{})
	if res := c.Stream(context.Background(), chat()); res.TokenSource != TokensFromUsage || res.CheckSource != "" {
		t.Errorf("non-streamed: from %s, check %q", res.TokenSource, res.CheckSource)
	}
	if _, err := NewClient(Config{BaseURL: "http://127.0.0.1:1", Tokenizer: "gpt2"}); err == nil || !strings.Contains(err.Error(), "cl100k_base") {
		t.Errorf("unknown tokenizer: %v", err)
	}
}

// TestSimulatorTokensAgree checks that the simulator's words are single
// tokens in both encodings: the tokenizer agrees with its usage.
func TestSimulatorTokensAgree(t *testing.T) {
	t.Parallel()
	srv := llmsimtest.Start(t, llmsimtest.Fast())
	for _, name := range append([]string{""}, tokenizer.Encodings...) {
		c, err := NewClient(Config{BaseURL: srv.URL(), Model: "m", Tokenizer: name})
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range []map[string]any{
			{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 200, "ignore_eos": true},
			{"prompt": "Once upon a time", "max_tokens": 100, "ignore_eos": true},
		} {
			res := c.Stream(context.Background(), Request{Body: body})
			if !res.OK || res.TokenSource != TokensFromUsage || res.CheckSource == "" || res.CheckTokens != res.OutputTokens {
				t.Errorf("tokenizer %q: ok %v (%s), %d from %s, check %d from %s", name, res.OK, res.Error, res.OutputTokens, res.TokenSource, res.CheckTokens, res.CheckSource)
			}
		}
		c.CloseIdleConnections()
	}
}

func TestAppendSamplesCheck(t *testing.T) {
	m := RegisterMetrics(metrics.NewRegistry())
	res := &Result{OK: true, Stream: true, TTFT: 1, E2E: 3, TPOT: 1, ITL: []float64{1, 1}, Chunks: 3, OutputTokens: 4,
		TokenSource: TokensFromUsage, CheckTokens: 3, CheckSource: TokensFromChunks, Start: time.Now()}
	tags := metrics.NewTagSet(map[string]string{"model": "m"})
	got := map[string]float64{}
	for _, s := range m.AppendSamples(nil, tags, res) {
		if s.Metric == m.CheckTokens {
			src, _ := s.Tags.Get("source")
			check, _ := s.Tags.Get("check")
			model, _ := s.Tags.Get("model")
			got[src+"/"+check+"/"+model] = s.Value
		}
	}
	if want := map[string]float64{"usage/chunks/m": 4, "chunks/chunks/m": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("check samples %v, want %v", got, want)
	}
	buf := make([]metrics.Sample, 0, 16)
	if n := testing.AllocsPerRun(100, func() { buf = m.AppendSamples(buf[:0], tags, res) }); n != 0 {
		t.Errorf("%v allocations per checked request with a reused slice", n)
	}
}
