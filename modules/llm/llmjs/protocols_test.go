package llmjs

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
)

// The protocols and the result fields they fill, as scripts see them.

func TestJSAnthropic(t *testing.T) {
	const key = "sk-ant-js-secret"
	srv, seen := anthropicServer(t)
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	client := `llm.client({ api: 'anthropic', baseURL: '` + srv.URL + `', apiKey: '` + key + `' })`
	r := stream(t, v, client+`.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, ignore_eos: true })`)
	if !r.OK || r.API != "anthropic" || r.OutputTokens != 5 || r.Chunks != 5 || r.TTFT <= 0 || r.TokenSource != "usage" || r.FinishReason != "max_tokens" || r.PromptTokens == 0 {
		t.Errorf("result %+v", r)
	}
	r = stream(t, v, client+`.stream({ messages: [{ role: 'user', content: 'leak' }], max_tokens: 5 })`)
	if r.OK || r.ErrorClass != "http_4xx" || strings.Contains(r.Error, key) {
		t.Errorf("error result %+v", r)
	}
	r = stream(t, v, client+`.stream({ messages: [{ role: 'user', content: 'hi' }] })`)
	if r.ErrorClass != "invalid_request" || !strings.Contains(r.Error, "max_tokens") {
		t.Errorf("no max_tokens: result %+v", r)
	}
	if h := seen(); len(h) != 2 || h[0].Get("X-Api-Key") != key || h[0].Get("Authorization") != "" {
		t.Errorf("headers %v", h)
	}
}

func TestJSProtocols(t *testing.T) {
	srv, m := startJSSim(t)
	v := newJSVU(t, m)
	for _, expr := range []string{
		`llm.client({ api: 'ollama-chat', baseURL: '` + srv.URL() + `' }).stream({ messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 5, ignore_eos: true } })`,
		`llm.stream({ prompt: 'hi', options: { num_predict: 5, ignore_eos: true } }, { api: 'ollama-generate' })`,
		`llm.client({ api: 'tgi' }).stream({ inputs: 'hi', parameters: { max_new_tokens: 5, ignore_eos: true } })`,
	} {
		r := stream(t, v, expr)
		if !r.OK || r.OutputTokens != 5 || r.TTFT <= 0 || r.TokenSource != "usage" || r.FinishReason != "length" {
			t.Errorf("%s: result %+v", expr, r)
		}
	}
	if s := v.Run(`JSON.stringify(llm.stream({ prompt: 'hi', options: { num_predict: 2 } }, { api: 'ollama-generate' }).serverTimings)`).String(); !strings.Contains(s, `"eval"`) {
		t.Errorf("serverTimings %s", s)
	}
}

func TestJSTritonAndEmbeddings(t *testing.T) {
	srv, m := startJSSim(t)
	v := newJSVU(t, m)
	r := stream(t, v, `llm.client({ api: 'triton', baseURL: '`+srv.URL()+`' }).stream({ text_input: 'hi', max_tokens: 5, ignore_eos: true })`)
	if !r.OK || r.OutputTokens != 5 || r.TTFT <= 0 || r.TokenSource != "chunks" {
		t.Errorf("triton: result %+v", r)
	}
	s := v.Run(`JSON.stringify(llm.client({ api: 'embeddings' }).stream({ input: ['a', 'b'], dimensions: 8 }))`).String()
	for _, want := range []string{`"ok":true`, `"embeddings":2`, `"dimensions":8`, `"ttft":0`, `"stream":false`} {
		if !strings.Contains(s, want) {
			t.Errorf("embeddings result %s lacks %s", s, want)
		}
	}
	if s := v.Run(`JSON.stringify(llm.stream({ input: 'a' }, { api: 'embeddings' }).dimensions)`).String(); s != "768" {
		t.Errorf("dimensions %s", s)
	}
}

func TestJSToolCallsAndTokenizer(t *testing.T) {
	// A chat stream calling two tools, their deltas interleaved, as
	// modules/llm's tests read it.
	stream, err := os.ReadFile("../testdata/openai-chat-tools-interleaved.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		w.Write(stream)
	}))
	t.Cleanup(srv.Close)
	m, err := NewModule(llm.Config{BaseURL: srv.URL, Model: "m"}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	v := newJSVU(t, m)
	got := v.Run(`(() => {
		const r = llm.client({ tokenizer: 'o200k_base' }).stream({ messages: [{ role: 'user', content: 'hi' }] });
		return JSON.stringify({ calls: r.toolCalls, source: r.tokenSource, tokens: r.outputTokens,
			none: llm.stream({ messages: [{ role: 'user', content: 'hi' }] }).toolCalls.length });
	})()`).String()
	var r struct {
		Calls  []llm.ToolCall `json:"calls"`
		Source string         `json:"source"`
		Tokens int            `json:"tokens"`
		None   int            `json:"none"`
	}
	if err := json.Unmarshal([]byte(got), &r); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if !reflect.DeepEqual(r.Calls, []llm.ToolCall{
		{ID: "call_a", Type: "function", Name: "get_weather", Arguments: `{"city": "Paris"}`},
		{ID: "call_b", Type: "function", Name: "get_time", Arguments: `{"tz":"CET"}`},
	}) || r.Source != "tokenizer" || r.Tokens == 0 || r.None != 2 {
		t.Errorf("result %s", got)
	}
	if _, err := v.Runtime().RunString(`llm.client({ tokenizer: 'nope' })`); err == nil || !strings.Contains(err.Error(), "unknown tokenizer") {
		t.Errorf("unknown tokenizer: %v", err)
	}
}

// TestJSCachedTokens checks that a script sees cachedTokens and that the
// module records llm_cached_tokens.
func TestJSCachedTokens(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	system := strings.Repeat("Answer like a pirate would, with gusto. ", 30)
	req := func(q string) string {
		return `llm.stream({ messages: [{ role: 'system', content: '` + system + `' }, { role: 'user', content: '` + q + `' }], max_tokens: 2, ignore_eos: true })`
	}
	v.Run(`var first = ` + req("Hello?") + `; var second = ` + req("Where is the treasure?"))
	if got := v.Run(`first.cachedTokens`).ToInteger(); got != 0 {
		t.Errorf("first.cachedTokens %d, want 0", got)
	}
	cached := v.Run(`second.cachedTokens`).ToInteger()
	if prompt := v.Run(`second.promptTokens`).ToInteger(); cached < 160 || cached%llmsim.PrefixBlockTokens != 0 || cached >= prompt {
		t.Errorf("second.cachedTokens %d of %d prompt tokens", cached, prompt)
	}
	st := v.Stats("llm_cached_tokens")
	if st == nil || st.Count != 2 || st.Sum != float64(cached) {
		t.Errorf("llm_cached_tokens %+v, want 2 samples summing to %d", st, cached)
	}
}

// anthropicServer is a simulator behind a handler that records the
// headers of each request and answers a request whose body holds "leak"
// with a 401 quoting its x-api-key.
func anthropicServer(t *testing.T) (*httptest.Server, func() []http.Header) {
	t.Helper()
	sim := startSim(t)
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
		sim.Server().Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}
