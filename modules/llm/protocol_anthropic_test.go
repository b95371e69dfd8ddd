package llm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
)

// anthropicBody is a Messages request for n tokens.
func anthropicBody(n int, stream bool) map[string]any {
	return map[string]any{
		"messages":   []any{map[string]any{"role": "user", "content": "hello there"}},
		"system":     "Be brief.",
		"max_tokens": n, "ignore_eos": true, "stream": stream,
	}
}

func TestAnthropicAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, base := range []string{srv.URL(), srv.URL() + "/", srv.URL() + "/v1"} {
		c, err := NewClient(Config{BaseURL: base, Model: "m", API: Anthropic, APIKey: "sk-ant-test"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		res := c.Stream(t.Context(), Request{Body: anthropicBody(12, true), KeepText: true})
		if !res.OK {
			t.Fatalf("%s: %s: %s", base, res.Class, res.Error)
		}
		if res.API != Anthropic || !res.Stream || res.OutputTokens != 12 || res.Chunks != 12 || res.TokenSource != TokensFromUsage ||
			res.TTFT <= 0 || res.TTFO != res.TTFT || res.TPOT <= 0 || len(res.ITL) != 11 || res.FinishReason != "max_tokens" ||
			res.Text == "" || res.Model != "m" || res.PromptTokens != 3+3+2+3 { // 'hello there' and 'Be brief.' are 2 and 3 tokens in cl100k_base
			t.Errorf("%s: result %+v", base, res)
		}
		res = c.Stream(t.Context(), Request{Body: anthropicBody(5, false), KeepText: true})
		if !res.OK || res.Stream || res.OutputTokens != 5 || res.Chunks != 1 || res.TokenSource != TokensFromUsage ||
			res.TTFT != res.E2E || res.FinishReason != "max_tokens" || res.Text == "" || res.PromptTokens != 11 {
			t.Errorf("%s: whole result %+v", base, res)
		}
	}
	c, err := NewClient(Config{BaseURL: srv.URL(), API: Anthropic})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	res := c.Stream(t.Context(), Request{Body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 4000}})
	if !res.OK || res.FinishReason != "end_turn" || res.OutputTokens != res.Chunks {
		t.Errorf("natural end: result %+v", res)
	}
	// max_tokens is required: refused before sending.
	res = c.Stream(t.Context(), Request{Body: map[string]any{"messages": []any{}}})
	if res.Class != ErrInvalidRequest || !strings.Contains(res.Error, "max_tokens") {
		t.Errorf("no max_tokens: result %+v", res)
	}
	if st := srv.Server().Stats(); st.Rejected != 0 {
		t.Errorf("simulator rejected %d requests", st.Rejected)
	}
}

func TestAnthropicFaults(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c, err := NewClient(Config{BaseURL: srv.URL(), API: Anthropic, IdleTimeout: faultIdle})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for fault, class := range map[string]ErrorClass{
		"http_5xx":                       ErrHTTP5xx,
		"http_429":                       ErrHTTP429,
		"refuse":                         ErrCut,
		"error_event":                    ErrStreamError,
		"early_close":                    ErrCut,
		"reset":                          ErrCut,
		"malformed":                      ErrDecode,
		"stall;after=2;duration=forever": ErrIdleTimeout,
		"wrong_content_type":             ErrDecode,
		"big_line":                       ErrNone, // 2 MiB is under the line limit
	} {
		res := c.Stream(t.Context(), Request{Body: anthropicBody(8, true), Headers: map[string]string{llmsim.FaultHeader: fault}})
		if res.Class != class {
			t.Errorf("%s: class %q (%s), want %q", fault, res.Class, res.Error, class)
		}
		if fault == "error_event" && !strings.Contains(res.Error, "api_error: llmsim injected fault error_event") {
			t.Errorf("error_event message %q", res.Error)
		}
	}
}

// replayAnthropic reads a transcript, one byte at a time, as a Messages
// stream.
func replayAnthropic(t *testing.T, file string) *Result {
	t.Helper()
	return replayAs(t, file, "text/event-stream; charset=utf-8", Anthropic, anthropicProtocol{})
}

func TestAnthropicTranscripts(t *testing.T) {
	t.Parallel()
	// Two thinking deltas (reasoning), two text deltas and two non-empty
	// input_json_delta (tool use); ping, signature_delta and the empty
	// partial_json carry no token.
	res := replayAnthropic(t, "testdata/anthropic-messages.sse")
	if !res.OK || res.Chunks != 6 || res.OutputTokens != 89 || res.TokenSource != TokensFromUsage || res.PromptTokens != 472 || res.CachedTokens != 0 || !res.cachedReported ||
		res.FinishReason != "tool_use" || res.Text != "27 * 453 = 12,231. Let me check the weather." || len(res.ITL) != 5 {
		t.Errorf("result %+v", res)
	}
	if res.TTFT <= 0 || res.TTFO <= res.TTFT || res.E2E < res.TTFO {
		t.Errorf("ttft %v, ttfo %v (after the thinking), e2e %v", res.TTFT, res.TTFO, res.E2E)
	}
	res = replayAnthropic(t, "testdata/anthropic-error.sse")
	if res.Class != ErrStreamError || res.Chunks != 1 || res.PromptTokens != 25 ||
		!strings.Contains(res.Error, "overloaded_error: Overloaded") || !strings.Contains(res.Error, "overloaded mid-response") {
		t.Errorf("error result %+v", res)
	}
}

func TestAnthropicCuts(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		body  string
		class ErrorClass
	}{
		"no message_stop": {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n", ErrCut},
		"stop_reason, no message_stop": {"data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n" +
			"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n", ErrNone},
		"error without type": {"event: error\ndata: {\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n", ErrStreamError},
		"error not json":     {"event: error\ndata: Internal server error\n\n", ErrStreamError},
		"bad text":           {"data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":5}}\n\n", ErrDecode},
		"whole error":        {"", ErrStreamError},
	} {
		t.Run(name, func(t *testing.T) {
			ct, body := "text/event-stream", tc.body
			if body == "" {
				ct, body = "application/json", `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`
			}
			res := &Result{Start: time.Now()}
			rr := getResponseReader()
			defer rr.release()
			class := ErrNone
			if err := (anthropicProtocol{}).read(rr, ct, strings.NewReader(body), false, res); err != nil {
				class = err.(*failure).class
			}
			if class != tc.class {
				t.Errorf("class %q, want %q (result %+v)", class, tc.class, res)
			}
		})
	}
}

// anthropicServer is a simulator behind a handler that records the
// headers of each request and answers a request whose body holds "leak"
// with a 401 quoting its x-api-key.
func anthropicServer(t *testing.T) (*httptest.Server, func() []http.Header) {
	t.Helper()
	sim, err := llmsim.New(llmsimtest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	var mu sync.Mutex
	var seen []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		data, _ := io.ReadAll(r.Body)
		if bytes.Contains(data, []byte("leak")) {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+r.Header.Get("X-Api-Key")+`"}}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

func TestAnthropicHeaders(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-secret"
	srv, seen := anthropicServer(t)
	c, err := NewClient(Config{BaseURL: srv.URL, APIKey: key, Headers: map[string]string{"X-Other": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	res := c.Stream(t.Context(), Request{API: Anthropic, Body: anthropicBody(3, true)})
	if !res.OK {
		t.Fatalf("%s: %s", res.Class, res.Error)
	}
	body := anthropicBody(3, true)
	body["system"] = "leak"
	res = c.Stream(t.Context(), Request{API: Anthropic, Body: body})
	if res.Class != ErrHTTP4xx || strings.Contains(res.Error, key) || !strings.Contains(res.Error, "authentication_error") {
		t.Errorf("error %q: want http_4xx without the key", res.Error)
	}
	// A request's own x-api-key and anthropic-version win; other APIs
	// keep the Bearer key.
	res = c.Stream(t.Context(), Request{API: Anthropic, Body: anthropicBody(3, true), Headers: map[string]string{"x-api-key": "sk-other", "anthropic-version": "2099-01-01"}})
	if !res.OK {
		t.Fatalf("%s: %s", res.Class, res.Error)
	}
	c.Stream(t.Context(), Request{Body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 2}})
	h := seen()
	if len(h) != 4 {
		t.Fatalf("%d requests", len(h))
	}
	for i, want := range []struct{ key, version, auth string }{
		{key, AnthropicVersion, ""}, {key, AnthropicVersion, ""}, {"sk-other", "2099-01-01", "Bearer " + key}, {"", "", "Bearer " + key},
	} {
		if h[i].Get("X-Api-Key") != want.key || h[i].Get("Anthropic-Version") != want.version || h[i].Get("Authorization") != want.auth || h[i].Get("X-Other") != "1" {
			t.Errorf("request %d headers %v, want x-api-key %q, anthropic-version %q, authorization %q", i, h[i], want.key, want.version, want.auth)
		}
	}
}

func FuzzAnthropicStream(f *testing.F) {
	for _, file := range []string{"testdata/anthropic-messages.sse", "testdata/anthropic-error.sse"} {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, func(rr *responseReader, body io.Reader, res *Result) error { return rr.readAnthropic(body, true, res) })
		if res == nil {
			return
		}
		if res.Chunks < 0 || len(res.ITL) != max(0, res.Chunks-1) || res.TokenSource == TokensFromChunks && res.OutputTokens != res.Chunks {
			t.Fatalf("result %+v", res)
		}
	})
}
