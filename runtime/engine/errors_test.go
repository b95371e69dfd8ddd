package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

func TestRequestErrorLogKeepsTheFirstDistinctMessages(t *testing.T) {
	l := newRequestErrorLog()
	for _, m := range []string{"a", "b", "a", "c", "d", "a", "d", "c"} {
		l.Record("http_5xx", m)
	}
	l.Record("timeout", "t")
	want := map[string][]ErrorCount{
		"http_5xx": {{"a", 3}, {"b", 1}, {"c", 2}},
		"timeout":  {{"t", 1}},
	}
	if got := l.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("list %v, want %v (the first 3 distinct per class, with their counts)", got, want)
	}
}

// messageKeys are real messages and their keys: the ids in them are
// replaced, what tells failures apart (status codes, counts, addresses,
// model names, field names) is kept.
var messageKeys = []struct{ msg, want string }{
	// ids
	{"HTTP 500 Internal Server Error: request chatcmpl-123 failed", "HTTP 500 Internal Server Error: request chatcmpl-<id> failed"},
	{"stream of cmpl-7 cut", "stream of cmpl-<id> cut"},
	{`HTTP 529: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
		`HTTP 529: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_<id>"}`},
	{"HTTP 500 Internal Server Error: The server had an error while processing your request. Sorry about that! (Please include the request ID req_5f2b1c9e8a7d4e3f9a0b1c2d3e4f5a6b in your message.)",
		"HTTP 500 Internal Server Error: The server had an error while processing your request. Sorry about that! (Please include the request ID req_<id> in your message.)"},
	{"message msg_01XFDUDYJgAACzvnptvVoYEL: stream ended", "message msg_<id>: stream ended"},
	{"upstream request 3fa85f64-5717-4562-b3fc-2c963f66afa6 timed out", "upstream request <id> timed out"},
	{"Request chatcmpl-9b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e aborted; trace 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"Request chatcmpl-<id> aborted; trace <id>"},
	{"blob sha256:5f2b1c9e8a7d4e3f9a0b1c2d not found", "blob sha256:<id> not found"},
	// no ids
	{"HTTP 503 Service Unavailable", "HTTP 503 Service Unavailable"},
	{"HTTP 429 Too Many Requests: rate limit exceeded, retry after 20 s", "HTTP 429 Too Many Requests: rate limit exceeded, retry after 20 s"},
	{"dial tcp 127.0.0.1:8000: connect: connection refused", "dial tcp 127.0.0.1:8000: connect: connection refused"},
	{"HTTP 400 Bad Request: This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.",
		"HTTP 400 Bad Request: This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens."},
	{"HTTP 404 Not Found: The model `Meta-Llama-3-8B-Instruct` does not exist", "HTTP 404 Not Found: The model `Meta-Llama-3-8B-Instruct` does not exist"},
	{"model gpt-4o-mini, Qwen2.5-72B-Instruct-AWQ: max_tokens too large (http_5xx)", "model gpt-4o-mini, Qwen2.5-72B-Instruct-AWQ: max_tokens too large (http_5xx)"},
	{"8 bytes of base64, not float32s", "8 bytes of base64, not float32s"},
	{"script.js:3:9: Error: boom", "script.js:3:9: Error: boom"},
	{"", ""},
}

func TestMessageKey(t *testing.T) {
	for _, tc := range messageKeys {
		if got := MessageKey(tc.msg); got != tc.want {
			t.Errorf("MessageKey(%q)\n = %q\nwant %q", tc.msg, got, tc.want)
		}
	}
}

// A message without an id is its own key, with no allocation (an error
// storm of one message costs nothing); one with ids allocates its key once.
func TestMessageKeyAllocations(t *testing.T) {
	for _, tc := range messageKeys {
		want := 1.0
		if tc.want == tc.msg {
			want = 0
		}
		if n := testing.AllocsPerRun(10, func() { MessageKey(tc.msg) }); n != want {
			t.Errorf("MessageKey(%q): %v allocations, want %v", tc.msg, n, want)
		}
	}
}

// Messages that differ only by ids are one, shown as the first seen, with
// the count of all; the cap on distinct messages stays.
func TestRequestErrorLogGroupsMessagesByTheirKey(t *testing.T) {
	l := newRequestErrorLog()
	for i := range 100 {
		l.Record("http_5xx", fmt.Sprintf("HTTP 500 Internal Server Error: request chatcmpl-%d failed", i+1))
		l.Record("http_5xx", fmt.Sprintf("HTTP 502 Bad Gateway: upstream %08x-5717-4562-b3fc-2c963f66afa6 reset", i))
	}
	for i := range 10 {
		l.Record("http_5xx", fmt.Sprintf("HTTP 503 Service Unavailable: retry in %d s", i))
	}
	want := map[string][]ErrorCount{"http_5xx": {
		{"HTTP 500 Internal Server Error: request chatcmpl-1 failed", 100},
		{"HTTP 502 Bad Gateway: upstream 00000000-5717-4562-b3fc-2c963f66afa6 reset", 100},
		{"HTTP 503 Service Unavailable: retry in 0 s", 1},
	}}
	if got := l.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("list %v\nwant %v", got, want)
	}
	script := newErrorLog()
	for i := range 2 * maxDistinctErrors {
		script.record(fmt.Sprintf("script.js:4:3: Error: llm: request msg_01XFDUDYJgAACzvnptv%05d: stream ended", i))
	}
	if got, other := script.list(); len(got) != 1 || got[0].Count != 2*maxDistinctErrors || other != 0 {
		t.Errorf("script errors %v, %d other; want one message counted %d times", got, other, 2*maxDistinctErrors)
	}
}

func TestRequestErrorLogIsBounded(t *testing.T) {
	l := newRequestErrorLog()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				l.Record(fmt.Sprintf("class%d", i%100), fmt.Sprintf("message %d from %d ", i, g)+strings.Repeat("é", 1000))
			}
		})
	}
	wg.Wait()
	got := l.list()
	if len(got) != maxErrorClasses {
		t.Errorf("%d classes kept, want at most %d", len(got), maxErrorClasses)
	}
	for class, msgs := range got {
		if len(msgs) != maxMessagesPerClass {
			t.Errorf("%s: %d messages, want %d", class, len(msgs), maxMessagesPerClass)
		}
		for _, m := range msgs {
			if len(m.Message) > maxMessageLen+len("…") || !utf8.ValidString(m.Message) || !strings.HasSuffix(m.Message, "…") {
				t.Errorf("%s: message of %d bytes (valid UTF-8 %v), want at most %d ending in …", class, len(m.Message), utf8.ValidString(m.Message), maxMessageLen)
			}
		}
	}
}

// The messages of failed requests reach the report by class; warmup ones
// are left out as their samples are.
func TestRequestErrorMessagesReachTheReport(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch i := n.Add(1); {
		case i <= 2:
			http.Error(w, "warming", http.StatusInternalServerError)
		case i <= 5:
			http.Error(w, "boom A", http.StatusInternalServerError)
		case i <= 8:
			http.Error(w, fmt.Sprintf("boom %d", i), http.StatusBadGateway)
		default:
			http.Error(w, "no such model", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	cfg := testConfig(t, `
import llm from 'llm';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 10, warmup: 2 } } };
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`, nil, nil)
	cfg.LLM.BaseURL = srv.URL
	rep := mustRun(t, load(t, cfg))
	want := map[string][]ErrorCount{
		"http_5xx": {
			{"HTTP 500 Internal Server Error: boom A", 3},
			{"HTTP 502 Bad Gateway: boom 6", 1},
			{"HTTP 502 Bad Gateway: boom 7", 1},
		},
		"http_4xx": {{"HTTP 404 Not Found: no such model", 2}},
	}
	if !reflect.DeepEqual(rep.RequestErrors, want) {
		t.Errorf("RequestErrors %v\nwant %v", rep.RequestErrors, want)
	}
}

// A server whose error names each request's id (as OpenAI's do) gives one
// message for all its failures, the first one's, counted for all.
func TestRequestErrorsDifferingByIDAreOne(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error": {"message": "The server had an error while processing your request. Sorry about that! (Please include the request ID req_%032x in your message.)", "type": "server_error"}}`, 0xabc000+n.Add(1))
	}))
	defer srv.Close()
	cfg := testConfig(t, `
import llm from 'llm';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 8 } } };
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`, nil, nil)
	cfg.LLM.BaseURL = srv.URL
	rep := mustRun(t, load(t, cfg))
	msgs := rep.RequestErrors["http_5xx"]
	if len(rep.RequestErrors) != 1 || len(msgs) != 1 || msgs[0].Count != 8 || !strings.Contains(msgs[0].Message, "Please include the request ID req_00000000000000000000000000abc00") {
		t.Errorf("RequestErrors %v, want one http_5xx message, the first seen, counted 8 times", rep.RequestErrors)
	}
}

// BenchmarkMessageKey is an error storm: every failed request's message
// keyed, one message repeated with a new id each time, and one without an
// id.
func BenchmarkMessageKey(b *testing.B) {
	for _, bc := range []struct{ name, format string }{
		{"ids", "HTTP 500 Internal Server Error: request chatcmpl-%d failed (upstream 3fa85f64-5717-4562-b3fc-%012d)"},
		{"no id", "HTTP 503 Service Unavailable: the model `Meta-Llama-3-8B-Instruct` is overloaded, retry after %d s (%d in flight)"},
	} {
		msgs := make([]string, 64)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(bc.format, i, i)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				MessageKey(msgs[i%len(msgs)])
			}
		})
	}
}
