package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/refused"
)

var chatBody = map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 8}

// send writes one SSE event and flushes it.
func send(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// sleep waits d, or until the request is canceled; it reports whether the
// full time passed. It reads the request body first: the server notices a
// client gone only once the body is read.
func sleep(r *http.Request, d time.Duration) bool {
	io.Copy(io.Discard, r.Body)
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
		return false
	}
}

// newServer starts a test server on 127.0.0.1 and a client of it.
func newServer(t testing.TB, h http.HandlerFunc, cfg Config) (*httptest.Server, *Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return srv, c
}

func TestStreamTimings(t *testing.T) {
	t.Parallel()
	const (
		first = 120 * time.Millisecond
		gap   = 60 * time.Millisecond
	)
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, roleChunk)
		for i, s := range []string{"a", "b", "c"} {
			d := gap
			if i == 0 {
				d = first
			}
			if !sleep(r, d) {
				return
			}
			send(w, contentChunk(s))
		}
		send(w, finishChunk)
		send(w, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}`)
		send(w, "[DONE]")
	}, Config{Model: "m"})

	res := c.Stream(t.Context(), Request{Body: chatBody})
	if !res.OK {
		t.Fatalf("request failed: %s %s", res.Class, res.Error)
	}
	msOf := func(d time.Duration) float64 { return ms(d) }
	// The server waits before it writes, so lower bounds are strict; upper
	// bounds are loose, for a loaded machine.
	if res.TTFT < msOf(first) || res.TTFT > msOf(first)+2000 {
		t.Errorf("TTFT %.1fms, want >= %v (the role chunk is not a token)", res.TTFT, first)
	}
	if res.TTFO != res.TTFT {
		t.Errorf("TTFO %.1f != TTFT %.1f without reasoning", res.TTFO, res.TTFT)
	}
	if res.E2E < msOf(first+2*gap) || res.E2E < res.TTFT || res.E2E > msOf(first+2*gap)+4000 {
		t.Errorf("E2E %.1fms, want >= %v", res.E2E, first+2*gap)
	}
	if len(res.ITL) != 2 {
		t.Fatalf("ITL %v, want 2 gaps", res.ITL)
	}
	var sum float64
	for _, g := range res.ITL {
		if g <= 0 {
			t.Errorf("gap %.3fms <= 0", g)
		}
		sum += g
	}
	// The last token and the end of the stream may arrive in one segment,
	// at one time: the sum may equal E2E-TTFT, up to rounding.
	if sum < msOf(gap) || sum > res.E2E-res.TTFT+1e-6 {
		t.Errorf("ITL sum %.1fms, want between %v and E2E-TTFT %.1f", sum, gap, res.E2E-res.TTFT)
	}
	if want := (res.E2E - res.TTFT) / 2; math.Abs(res.TPOT-want) > 1e-9 {
		t.Errorf("TPOT %.3f, want (E2E-TTFT)/(3-1) = %.3f", res.TPOT, want)
	}
	if res.OutputTokens != 3 || res.TokenSource != TokensFromUsage || res.PromptTokens != 5 || res.Chunks != 3 {
		t.Errorf("tokens: %+v", res)
	}
	if res.Timings.TTFB <= 0 || res.Timings.TTFB > res.TTFT || res.Timings.Queue < 0 || res.Timings.Connect <= 0 {
		t.Errorf("timings %+v (TTFT %.1f)", res.Timings, res.TTFT)
	}
	if res.Start.IsZero() || res.Model != "m" || res.API != ChatCompletions || !res.Stream || res.Status != 200 {
		t.Errorf("result %+v", res)
	}
}

func TestStreamErrors(t *testing.T) {
	t.Parallel()
	refused := refused.URL(t)
	// hijack answers with raw bytes and closes the connection.
	hijack := func(raw string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			defer conn.Close()
			buf.WriteString(raw)
			buf.Flush()
		}
	}
	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Error(w, body, code) }
	}
	stream := func(events ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			for _, e := range events {
				send(w, e)
			}
		}
	}
	stall := func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, contentChunk("a"))
		sleep(r, 10*time.Second)
	}
	tests := []struct {
		name    string
		baseURL string // instead of the server's
		h       http.HandlerFunc
		cfg     Config
		req     Request
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		class   ErrorClass
		status  int
		msg     string
	}{
		{name: "connection refused", baseURL: refused, class: ErrConnect, msg: "refused"},
		{name: "429", h: status(429, `{"error":{"message":"slow down"}}`), class: ErrHTTP429, status: 429, msg: "HTTP 429 Too Many Requests: {\"error\":{\"message\":\"slow down\"}}"},
		{name: "500", h: status(500, "boom\n"), class: ErrHTTP5xx, status: 500, msg: "HTTP 500 Internal Server Error: boom"},
		{name: "503 long body", h: status(503, strings.Repeat("x", 10000)), class: ErrHTTP5xx, status: 503, msg: strings.Repeat("x", 100)},
		{name: "404", h: http.NotFound, class: ErrHTTP4xx, status: 404, msg: "404 page not found"},
		{
			name:   "cut mid-stream, connection closed",
			h:      hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + sse(roleChunk, contentChunk("a"))),
			class:  ErrCut,
			status: 200,
			msg:    "before [DONE] or a finish_reason",
		},
		{
			name:   "cut mid-stream, inside a chunk",
			h:      hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + sse(contentChunk("a"))[:30]),
			class:  ErrCut,
			status: 200,
			msg:    "unexpected EOF",
		},
		{name: "closed before the response", h: hijack(""), class: ErrCut, msg: "EOF"},
		{name: "malformed chunk", h: stream(contentChunk("a"), `{"choices":[`, "[DONE]"), class: ErrDecode, status: 200, msg: "stream event 2"},
		{name: "error object in the stream", h: stream(contentChunk("a"), `{"error":{"message":"engine died"}}`), class: ErrStreamError, status: 200, msg: "engine died"},
		{
			name: "error event in the stream",
			h: func(w http.ResponseWriter, r *http.Request) {
				startSSE(w)
				send(w, contentChunk("a"))
				fmt.Fprint(w, "event: error\ndata: {\"message\":\"overloaded\"}\n\n")
			},
			class: ErrStreamError, status: 200, msg: `error event in the stream: "{\"message\":\"overloaded\"}"`,
		},
		{name: "stalled stream", h: stall, cfg: Config{IdleTimeout: 100 * time.Millisecond}, class: ErrIdleTimeout, status: 200, msg: "reading the response: no data from the server for 100ms (idle timeout)"},
		{name: "line too long", h: stream(contentChunk("a"), strings.Repeat("x", 17<<20)), class: ErrDecode, status: 200, msg: "line or event too long"},
		{name: "timeout before the response", h: func(w http.ResponseWriter, r *http.Request) { sleep(r, 10*time.Second) }, cfg: Config{Timeout: 100 * time.Millisecond}, class: ErrTimeout, msg: "timed out after 100ms"},
		{name: "timeout mid-stream", h: stall, cfg: Config{Timeout: 150 * time.Millisecond}, class: ErrTimeout, status: 200, msg: "reading the response: request timed out after 150ms"},
		{name: "request timeout overrides", h: stall, req: Request{Timeout: 50 * time.Millisecond}, class: ErrTimeout, status: 200, msg: "after 50ms"},
		{
			name: "context deadline: the run stopped it",
			h:    stall,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 50*time.Millisecond)
			},
			class: ErrCanceled, status: 200, msg: "canceled: context deadline exceeded",
		},
		{
			name: "context canceled",
			h:    stall,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(50*time.Millisecond, cancel)
				return ctx, cancel
			},
			class: ErrCanceled, status: 200, msg: "canceled",
		},
		{
			name: "plain text response",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, "hello")
			},
			class: ErrDecode, status: 200, msg: `unexpected content type "text/plain"`,
		},
		{name: "no messages nor prompt", req: Request{Body: map[string]any{"max_tokens": 1}}, class: ErrInvalidRequest, msg: `needs "messages"`},
		{name: "unknown API", req: Request{API: "nope", Body: chatBody}, class: ErrInvalidRequest, msg: "unknown API"},
		{name: "stream not a boolean", req: Request{Body: map[string]any{"prompt": "x", "stream": "yes"}}, class: ErrInvalidRequest, msg: `"stream" must be a boolean`},
		{name: "body not JSON", req: Request{Body: map[string]any{"prompt": math.NaN()}}, class: ErrInvalidRequest, msg: "encoding the request body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h
			if h == nil {
				h = func(w http.ResponseWriter, r *http.Request) { t.Error("unexpected request") }
			}
			srv, c := newServer(t, h, tt.cfg)
			if tt.baseURL != "" {
				cfg := tt.cfg
				cfg.BaseURL = tt.baseURL
				var err error
				if c, err = NewClient(cfg); err != nil {
					t.Fatal(err)
				}
			}
			ctx := t.Context()
			if tt.ctx != nil {
				var cancel context.CancelFunc
				ctx, cancel = tt.ctx(ctx)
				defer cancel()
			}
			req := tt.req
			if req.Body == nil {
				req.Body = chatBody
			}
			res := c.Stream(ctx, req)
			if res.OK || res.Class != tt.class || res.Status != tt.status || !strings.Contains(res.Error, tt.msg) {
				t.Errorf("got ok %v, class %q, status %d, error %q\nwant class %q, status %d, error containing %q",
					res.OK, res.Class, res.Status, res.Error, tt.class, tt.status, tt.msg)
			}
			if len(res.Error) > errorBodyLen+200 {
				t.Errorf("error message of %d bytes", len(res.Error))
			}
			if res.Start.IsZero() {
				t.Error("no start time")
			}
			srv.CloseClientConnections()
		})
	}
}

func TestAPIKeyNeverInError(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789abcdef"
	var seen atomic.Value
	tests := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"echoed in a 401", func(w http.ResponseWriter, r *http.Request) {
			seen.Store(r.Header.Get("Authorization"))
			http.Error(w, "bad credentials: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
		}},
		{"echoed in the stream", func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, fmt.Sprintf(`{"error":{"message":"key %s revoked"}}`, key))
		}},
		{"echoed in a malformed chunk", func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, "not json "+key)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newServer(t, tt.h, Config{APIKey: key, Headers: map[string]string{"X-Api-Key": "other-secret"}})
			res := c.Stream(t.Context(), Request{Body: chatBody, Headers: map[string]string{"X-Request-Token": "req-secret"}})
			if res.OK || res.Error == "" {
				t.Fatalf("want a failure, got %+v", res)
			}
			for _, secret := range []string{key, "other-secret", "req-secret"} {
				if strings.Contains(res.Error, secret) {
					t.Errorf("error %q contains %q", res.Error, secret)
				}
			}
		})
	}
	if got := seen.Load(); got != "Bearer "+key {
		t.Errorf("server saw Authorization %q", got)
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	var path atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.RequestURI())
		startSSE(w)
		send(w, contentChunk("a"))
		send(w, finishChunk)
		send(w, "[DONE]")
	}))
	defer srv.Close()
	tests := []struct {
		base string
		req  Request
		want string
	}{
		{srv.URL, Request{Body: chatBody}, "/v1/chat/completions"},
		{srv.URL + "/", Request{Body: chatBody}, "/v1/chat/completions"},
		{srv.URL + "/v1", Request{Body: chatBody}, "/v1/chat/completions"},
		{srv.URL + "/v1/", Request{Body: map[string]any{"prompt": "x"}}, "/v1/completions"},
		{srv.URL + "/proxy/openai", Request{Body: chatBody}, "/proxy/openai/v1/chat/completions"},
		{srv.URL + "/v1?api-version=2", Request{API: Completions, Body: chatBody}, "/v1/completions?api-version=2"},
	}
	for _, tt := range tests {
		t.Run(tt.base, func(t *testing.T) {
			c, err := NewClient(Config{BaseURL: tt.base})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			if res := c.Stream(t.Context(), tt.req); !res.OK {
				t.Fatalf("%s: %s", res.Class, res.Error)
			}
			if got := path.Load(); got != tt.want {
				t.Errorf("path %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewClientErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"empty URL", Config{}, "invalid base URL"},
		{"no scheme", Config{BaseURL: "localhost:8000"}, "invalid base URL: it has no scheme: add http:// (http://localhost:8000) or https://"},
		{"no scheme, an IP", Config{BaseURL: "127.0.0.1:18000/v1"}, "add http:// (http://127.0.0.1:18000/v1)"},
		{"no scheme, a password", Config{BaseURL: "user:hunter2@host:8000"}, "add http:// (http://user:xxxxx@host:8000)"},
		{"other scheme", Config{BaseURL: "ftp://host/v1"}, "invalid base URL"},
		{"no host", Config{BaseURL: "http:///v1"}, "invalid base URL"},
		{"bad URL", Config{BaseURL: "http://host:port:x"}, "invalid base URL"},
		{"password redacted", Config{BaseURL: "ftp://user:hunter2@host"}, "xxxxx"},
		{"negative timeout", Config{BaseURL: "http://h", Timeout: -1}, "negative timeout"},
		{"negative connection cap", Config{BaseURL: "http://h", MaxConns: -1}, "negative connection cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("err = %v, want it to contain %q", err, tt.msg)
			}
		})
	}
}

// TestRequestBody checks what the client sends: the fields it adds, the
// ones it leaves alone, and the headers.
func TestRequestBody(t *testing.T) {
	t.Parallel()
	type seenReq struct {
		body   map[string]any
		header http.Header
	}
	seen := make(chan seenReq, 1)
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		seen <- seenReq{body, r.Header}
		if body["stream"] == false {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1}}`)
			return
		}
		startSSE(w)
		send(w, contentChunk("a"))
		send(w, finishChunk)
		send(w, "[DONE]")
	}, Config{Model: "default-model", APIKey: "k", Headers: map[string]string{"X-Run": "1", "Accept": "text/event-stream, */*"}})

	tests := []struct {
		name   string
		req    Request
		body   map[string]any
		header map[string]string
	}{
		{
			name:   "defaults added",
			req:    Request{Body: map[string]any{"prompt": "p", "max_tokens": 3}},
			body:   map[string]any{"prompt": "p", "max_tokens": 3.0, "stream": true, "stream_options": map[string]any{"include_usage": true}, "model": "default-model"},
			header: map[string]string{"Authorization": "Bearer k", "X-Run": "1", "Content-Type": "application/json", "Accept": "text/event-stream, */*"},
		},
		{
			name:   "user fields kept",
			req:    Request{Body: map[string]any{"prompt": "p", "model": "mine", "stream_options": map[string]any{"include_usage": false}}, Headers: map[string]string{"X-Run": "2"}},
			body:   map[string]any{"prompt": "p", "model": "mine", "stream": true, "stream_options": map[string]any{"include_usage": false}},
			header: map[string]string{"X-Run": "2"},
		},
		{
			name: "not streaming",
			req:  Request{Body: map[string]any{"messages": []any{}, "stream": false}},
			body: map[string]any{"messages": []any{}, "stream": false, "model": "default-model"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.req.Body)
			res := c.Stream(t.Context(), tt.req)
			if !res.OK {
				t.Fatalf("%s: %s", res.Class, res.Error)
			}
			got := <-seen
			if !reflect.DeepEqual(got.body, tt.body) {
				t.Errorf("body %v\nwant %v", got.body, tt.body)
			}
			for k, v := range tt.header {
				if got.header.Get(k) != v {
					t.Errorf("header %s: %q, want %q", k, got.header.Get(k), v)
				}
			}
			if after := fmt.Sprint(tt.req.Body); after != before {
				t.Errorf("request body changed: %s -> %s", before, after)
			}
			if stream, _ := tt.body["stream"].(bool); res.Stream != stream {
				t.Errorf("Result.Stream %v", res.Stream)
			}
		})
	}
}

func TestNonStreamingResponse(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		// Answers JSON whatever was asked, after a known time.
		sleep(r, 50*time.Millisecond)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"choices":[{"message":{"content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":4}}`)
	}, Config{})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			res := c.Stream(t.Context(), Request{Body: map[string]any{"messages": []any{}, "stream": stream}, KeepText: true})
			if !res.OK {
				t.Fatalf("%s: %s", res.Class, res.Error)
			}
			if res.Stream || res.TTFT < 50 || res.TTFT != res.E2E || res.TTFO != res.E2E || res.TPOT != 0 || len(res.ITL) != 0 {
				t.Errorf("timings: %+v", res)
			}
			if res.OutputTokens != 4 || res.PromptTokens != 2 || res.Text != "hello" || res.FinishReason != "stop" {
				t.Errorf("result: %+v", res)
			}
		})
	}
}

// TestConnectionReuse checks that sequential requests, ended by [DONE] or
// by an error status, share one keep-alive connection.
func TestConnectionReuse(t *testing.T) {
	t.Parallel()
	var n, conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			http.Error(w, "busy", http.StatusTooManyRequests)
			return
		}
		startSSE(w)
		send(w, contentChunk("a"))
		send(w, finishChunk)
		send(w, "[DONE]")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for i := range 6 {
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if res.OK == (i%3 == 2) {
			t.Fatalf("request %d: %s %s", i, res.Class, res.Error)
		}
		if i > 0 && res.Timings.Connect != 0 {
			t.Errorf("request %d opened a connection: %+v", i, res.Timings)
		}
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("%d connections, want 1", got)
	}
}

// TestManyConnections checks that the transport opens a connection per
// concurrent request, with no hidden cap.
func TestManyConnections(t *testing.T) {
	t.Parallel()
	const vus = 64
	release := make(chan struct{})
	var (
		active   atomic.Int32
		timedOut atomic.Bool
	)
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if active.Add(1) == vus {
			close(release)
		}
		select {
		case <-release:
		case <-time.After(10 * time.Second):
			timedOut.Store(true)
		}
		startSSE(w)
		send(w, contentChunk("a"))
		send(w, finishChunk)
		send(w, "[DONE]")
	}, Config{})
	results := make(chan *Result, vus)
	for range vus {
		go func() { results <- c.Stream(t.Context(), Request{Body: chatBody}) }()
	}
	for range vus {
		if res := <-results; !res.OK {
			t.Errorf("%s: %s", res.Class, res.Error)
		}
	}
	if timedOut.Load() {
		t.Errorf("only %d of %d concurrent requests reached the server together", active.Load(), vus)
	}
}

// The Accept header says what the request asks for, unless the request
// sets its own; a request's own headers do not leak into the next.
func TestAcceptHeader(t *testing.T) {
	t.Parallel()
	accepts := make(chan string, 1)
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		accepts <- r.Header.Get("Accept") + r.Header.Get("X-Extra")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1}}`)
	}, Config{Model: "m"})
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Body: map[string]any{"prompt": "p"}}, "text/event-stream"},
		{Request{Body: map[string]any{"prompt": "p"}, Headers: map[string]string{"accept": "*/*", "X-Extra": "+x"}}, "*/*+x"},
		{Request{Body: map[string]any{"prompt": "p", "stream": false}}, "application/json"},
		{Request{Body: map[string]any{"prompt": "p"}}, "text/event-stream"},
		{Request{Body: map[string]any{"prompt": "p"}, Headers: map[string]string{"X-Extra": "+y"}}, "text/event-stream+y"},
		{Request{Body: map[string]any{"prompt": "p", "stream": false}}, "application/json"},
	} {
		c.Stream(t.Context(), tc.req)
		if got := <-accepts; got != tc.want {
			t.Errorf("%v, %v: Accept %q, want %q", tc.req.Body, tc.req.Headers, got, tc.want)
		}
	}
}
