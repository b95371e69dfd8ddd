package errorkey

import (
	"fmt"
	"testing"
)

// messages are real messages and their keys: the ids in them are
// replaced, what tells failures apart (status codes, counts, addresses,
// model names, field names) is kept.
var messages = []struct{ msg, want string }{
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

func TestOf(t *testing.T) {
	for _, tc := range messages {
		if got := Of(tc.msg); got != tc.want {
			t.Errorf("Of(%q)\n = %q\nwant %q", tc.msg, got, tc.want)
		}
	}
}

// A message without an id is its own key, with no allocation (an error
// storm of one message costs nothing); one with ids allocates its key once.
func TestOfAllocations(t *testing.T) {
	for _, tc := range messages {
		want := 1.0
		if tc.want == tc.msg {
			want = 0
		}
		if n := testing.AllocsPerRun(10, func() { Of(tc.msg) }); n != want {
			t.Errorf("Of(%q): %v allocations, want %v", tc.msg, n, want)
		}
	}
}

// BenchmarkOf is an error storm: every failed request's message
// keyed, one message repeated with a new id each time, and one without an
// id.
func BenchmarkOf(b *testing.B) {
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
				Of(msgs[i%len(msgs)])
			}
		})
	}
}
