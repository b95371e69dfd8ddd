package llm

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/internal/race"
)

// sse joins data payloads into an event stream.
func sse(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		fmt.Fprintf(&b, "data: %s\n\n", d)
	}
	return b.String()
}

const (
	roleChunk     = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	roleOnlyChunk = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}`
	finishChunk   = `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	usageChunk    = `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`
)

func contentChunk(s string) string {
	return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, s)
}

func TestChunkTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		json              string
		reasoning, answer bool
	}{
		{"role and empty content", roleChunk, false, false},
		{"role only", roleOnlyChunk, false, false},
		{"null content", `{"choices":[{"delta":{"content":null}}]}`, false, false},
		{"content", contentChunk("hi"), false, true},
		{"whitespace content", contentChunk(" "), false, true},
		{"completions text", `{"choices":[{"text":"hi","index":0,"finish_reason":null}]}`, false, true},
		{"completions empty text", `{"choices":[{"text":"","finish_reason":"length"}]}`, false, false},
		{"reasoning_content", `{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`, true, false},
		{"reasoning", `{"choices":[{"delta":{"reasoning":"hmm","content":null}}]}`, true, false},
		{"tool call", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}}]}`, false, true},
		{"empty tool calls", `{"choices":[{"delta":{"tool_calls":[ ]}}]}`, false, false},
		{"usage only", usageChunk, false, false},
		{"finish only", finishChunk, false, false},
		{"non-streaming message", `{"choices":[{"message":{"role":"assistant","content":"hi"}}]}`, false, true},
		{"second choice", `{"choices":[{"delta":{}},{"delta":{"content":"x"}}]}`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				d chunkDecoder
				c chunk
			)
			if err := d.decode([]byte(tt.json), &c); err != nil {
				t.Fatal(err)
			}
			r, a := c.tokens()
			if r != tt.reasoning || a != tt.answer {
				t.Errorf("tokens() = %v, %v; want %v, %v", r, a, tt.reasoning, tt.answer)
			}
		})
	}
}

// TestChunkReuse checks that decoding into a reused chunk forgets the
// fields of the previous one.
func TestChunkReuse(t *testing.T) {
	t.Parallel()
	var (
		d chunkDecoder
		c chunk
	)
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"a","reasoning":"r","tool_calls":[{}]},"finish_reason":"stop"},{"text":"b"}],"usage":{"completion_tokens":1},"error":{"message":"x"}}`,
		usageChunk,
	} {
		if err := d.decode([]byte(s), &c); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.decode([]byte(`{"choices":[{"delta":{}},{"index":1}]}`), &c); err != nil {
		t.Fatal(err)
	}
	if r, a := c.tokens(); r || a {
		t.Errorf("stale tokens: %v, %v", r, a)
	}
	if reason, _ := c.finishReason(); reason != "" {
		t.Errorf("stale finish reason %q", reason)
	}
	if _, isErr := c.errorMessage(); isErr || present(c.Usage) {
		t.Errorf("stale error or usage: %s %s", c.Error, c.Usage)
	}
}

func TestReadSSE(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stream string
		want   Result // the fields compared: see below
	}{
		{
			name:   "chat with usage-only final chunk",
			stream: sse(roleChunk, contentChunk("Hel"), contentChunk("lo"), finishChunk, usageChunk, "[DONE]"),
			want:   Result{Chunks: 2, OutputTokens: 7, TokenSource: TokensFromUsage, PromptTokens: 12, FinishReason: "stop", Text: "Hello"},
		},
		{
			name:   "role-only first chunk, no usage",
			stream: sse(roleOnlyChunk, contentChunk("a"), contentChunk(""), contentChunk("b"), finishChunk, "[DONE]"),
			want:   Result{Chunks: 2, OutputTokens: 2, TokenSource: TokensFromChunks, FinishReason: "stop", Text: "ab"},
		},
		{
			name: "completions",
			stream: sse(`{"choices":[{"text":"x","index":0,"finish_reason":null}]}`,
				`{"choices":[{"text":"y","index":0,"finish_reason":"length"}],"usage":null}`,
				`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, "[DONE]"),
			want: Result{Chunks: 2, OutputTokens: 2, TokenSource: TokensFromUsage, PromptTokens: 3, FinishReason: "length", Text: "xy"},
		},
		{
			name: "reasoning then answer",
			stream: sse(`{"choices":[{"delta":{"reasoning_content":"think"}}]}`,
				`{"choices":[{"delta":{"reasoning":"more"}}]}`, contentChunk("ok"), finishChunk,
				`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":2}}}`, "[DONE]"),
			want: Result{Chunks: 3, OutputTokens: 3, TokenSource: TokensFromUsage, PromptTokens: 5, ReasoningTokens: 2, FinishReason: "stop", Text: "ok"},
		},
		{
			name: "tool calls",
			stream: sse(roleChunk,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			want: Result{Chunks: 2, OutputTokens: 2, TokenSource: TokensFromChunks, FinishReason: "tool_calls"},
		},
		{
			name:   "continuous usage: the last one counts",
			stream: sse(`{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":4,"completion_tokens":1}}`, `{"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":2}}`, "[DONE]"),
			want:   Result{Chunks: 2, OutputTokens: 2, TokenSource: TokensFromUsage, PromptTokens: 4, FinishReason: "stop", Text: "ab"},
		},
		{
			name:   "EOF after finish, no [DONE]",
			stream: sse(contentChunk("a"), finishChunk),
			want:   Result{Chunks: 1, OutputTokens: 1, TokenSource: TokensFromChunks, FinishReason: "stop", Text: "a"},
		},
		{
			name:   "keep-alive comments and empty data",
			stream: ": ping\n\n" + sse("", contentChunk("a"), finishChunk, "[DONE]"),
			want:   Result{Chunks: 1, OutputTokens: 1, TokenSource: TokensFromChunks, FinishReason: "stop", Text: "a"},
		},
		{
			name:   "ends without [DONE] nor finish",
			stream: sse(contentChunk("a")),
			want:   Result{Class: ErrCut, Chunks: 1, Text: ""},
		},
		{
			name:   "error object",
			stream: sse(contentChunk("a"), `{"error":{"message":"out of KV cache","type":"InternalServerError","code":500}}`),
			want:   Result{Class: ErrStreamError, Chunks: 1, Error: "out of KV cache"},
		},
		{
			name:   "vLLM unwrapped error",
			stream: sse(`{"object":"error","message":"bad things","type":"BadRequestError","code":400}`),
			want:   Result{Class: ErrStreamError, Error: "bad things"},
		},
		{
			name:   "error event",
			stream: "event: error\ndata: overloaded\n\n",
			want:   Result{Class: ErrStreamError, Error: "overloaded"},
		},
		{
			name:   "malformed chunk",
			stream: sse(contentChunk("a"), `{"choices":[{"delta":{"content":"b"}]}`, contentChunk("c"), "[DONE]"),
			want:   Result{Class: ErrDecode, Chunks: 1, Error: "stream event 2"},
		},
		{
			name:   "chunk of the wrong shape",
			stream: sse(`{"choices":{"delta":"x"}}`),
			want:   Result{Class: ErrDecode, Error: "cannot unmarshal"},
		},
		{
			name:   "data after the JSON value",
			stream: sse(`{"choices":[]} {"choices":[]}`),
			want:   Result{Class: ErrDecode, Error: "invalid data after the JSON value"},
		},
		{
			name:   "cut inside an event",
			stream: sse(contentChunk("a")) + `data: {"choi`,
			want:   Result{Class: ErrCut, Chunks: 1, Error: "unexpected EOF"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr := getResponseReader()
			defer rr.release()
			var res Result
			err := rr.readSSE(strings.NewReader(tt.stream), time.Now(), true, &res)
			if err != nil {
				res.Class, res.Error = classify(t.Context(), err, "reading", readClass(err))
			}
			if res.Class != tt.want.Class || !strings.Contains(res.Error, tt.want.Error) {
				t.Fatalf("class %q, error %q; want %q, containing %q", res.Class, res.Error, tt.want.Class, tt.want.Error)
			}
			got := Result{Class: res.Class, Error: tt.want.Error, Chunks: res.Chunks, OutputTokens: res.OutputTokens,
				TokenSource: res.TokenSource, PromptTokens: res.PromptTokens, ReasoningTokens: res.ReasoningTokens,
				FinishReason: res.FinishReason, Text: res.Text}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if tt.want.Class == ErrNone && len(res.ITL) != max(res.Chunks-1, 0) {
				t.Errorf("%d ITL gaps for %d chunks", len(res.ITL), res.Chunks)
			}
		})
	}
}

// TestResponseReaderReuse reads a good stream with a reader that failed
// to decode the previous one.
func TestResponseReaderReuse(t *testing.T) {
	t.Parallel()
	rr := &responseReader{sse: NewSSEReader(nil)}
	for i, tt := range []struct {
		stream string
		ok     bool
	}{
		{sse(contentChunk("a"), `{"choices":[{}]} trailing`), false},
		{sse(contentChunk("a"), `{"choices":[`), false},
		{sse(contentChunk("a"), contentChunk("b"), finishChunk, "[DONE]"), true},
	} {
		var res Result
		err := rr.readSSE(strings.NewReader(tt.stream), time.Now(), true, &res)
		if (err == nil) != tt.ok || tt.ok && (res.Text != "ab" || res.Chunks != 2) {
			t.Errorf("stream %d: %v, %+v", i, err, res)
		}
	}
}

func TestReadSSETTFO(t *testing.T) {
	t.Parallel()
	// In a synctest bubble, the clock moves only by the reader's sleeps.
	synctest.Test(t, func(t *testing.T) {
		rr := getResponseReader()
		defer rr.release()
		stream := sse(`{"choices":[{"delta":{"reasoning":"r"}}]}`)
		body := &slowReader{parts: []string{stream, sse(contentChunk("a"), finishChunk, "[DONE]")}, gap: 20 * time.Millisecond}
		var res Result
		if err := rr.readSSE(body, time.Now(), false, &res); err != nil {
			t.Fatal(err)
		}
		if res.TTFT != 0 || res.TTFO != 20 || res.Chunks != 2 {
			t.Errorf("TTFT %v, TTFO %v, chunks %d: want TTFT 0 and TTFO 20ms", res.TTFT, res.TTFO, res.Chunks)
		}
	})
}

// slowReader returns its parts one per Read, sleeping gap before each but
// the first (in a synctest bubble, advancing its fake clock).
type slowReader struct {
	parts []string
	gap   time.Duration
	n     int
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	if s.n > 0 {
		time.Sleep(s.gap)
	}
	s.n++
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	if s.parts[0] == "" {
		s.parts = s.parts[1:]
	}
	return n, nil
}

func TestReadJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		want  Result
		class ErrorClass
	}{
		{
			name: "chat",
			body: `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
			want: Result{Chunks: 1, OutputTokens: 3, TokenSource: TokensFromUsage, PromptTokens: 9, FinishReason: "stop", Text: "Hi there"},
		},
		{
			name: "completions without usage",
			body: `{"choices":[{"text":"abc","finish_reason":"length"}]}`,
			want: Result{Chunks: 1, OutputTokens: 1, TokenSource: TokensFromChunks, FinishReason: "length", Text: "abc"},
		},
		{name: "error", body: `{"error":{"message":"nope"}}`, class: ErrStreamError},
		{name: "not JSON", body: `<html>`, class: ErrDecode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr := getResponseReader()
			defer rr.release()
			var res Result
			start := time.Now()
			err := rr.readJSON(strings.NewReader(tt.body), start, true, &res)
			class := ErrNone
			if err != nil {
				class, _ = classify(t.Context(), err, "reading", readClass(err))
			}
			if class != tt.class {
				t.Fatalf("err %v, want class %q", err, tt.class)
			}
			if err != nil {
				return
			}
			if res.Stream || res.TTFT != res.E2E || res.TTFO != res.E2E || res.TPOT != 0 || len(res.ITL) != 0 {
				t.Errorf("non-streamed timings: %+v", res)
			}
			got := Result{Chunks: res.Chunks, OutputTokens: res.OutputTokens, TokenSource: res.TokenSource,
				PromptTokens: res.PromptTokens, FinishReason: res.FinishReason, Text: res.Text}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// The finish reasons read without decoding are the ones encoding/json
// gives, escaped or not, and the usual ones cost no allocation.
func TestFinishReasonDecoded(t *testing.T) {
	for _, raw := range []string{`"stop"`, `"length"`, `"tool_calls"`, `"content_filter"`, `"st\u006fp"`, `"l\u0065ngth"`, `"Stop"`, `5`} {
		c := chunk{Choices: []choice{{FinishReason: []byte(raw)}}}
		want, wantErr := jsonString([]byte(raw))
		got, err := c.finishReason()
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: %q, %v; want %q, %v", raw, got, err, want, wantErr)
		}
	}
	if race.Enabled {
		return // allocation counts mean nothing under the race detector
	}
	c := chunk{Choices: []choice{{FinishReason: []byte(`"length"`)}}}
	if n := testing.AllocsPerRun(100, func() { c.finishReason() }); n != 0 {
		t.Errorf("a usual finish reason allocates %v times, want 0", n)
	}
}
