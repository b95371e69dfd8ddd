package llm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/llmrun/llmrun/internal/race"
	"github.com/llmrun/llmrun/internal/redact"
	"github.com/llmrun/llmrun/modules/metrics"
)

// The hostile-server suite: in-process servers on 127.0.0.1 that misbehave
// on purpose, each test asserting the request's class, its message
// (escaped, redacted) and, where it matters, the memory the client kept.

// hostileServer starts a server on 127.0.0.1 answering every request with
// h, and a client of it for api.
func hostileServer(t *testing.T, api API, h http.HandlerFunc) *Client {
	t.Helper()
	_, c := newServer(t, h, Config{API: api, Model: "m"})
	return c
}

// replyWith answers with one body of the given content type.
func replyWith(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}
}

// hostileRequest is a request of api asking for a few tokens.
func hostileRequest(api API) Request {
	switch api {
	case OllamaChat, TGI:
		return Request{API: api, Body: protocolBody(api, 4)}
	case Anthropic:
		return Request{API: api, Body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 4}}
	case Triton:
		return Request{API: api, Body: map[string]any{"text_input": "hi", "max_tokens": 4}}
	}
	return Request{API: api, Body: maps.Clone(chatBody)}
}

func TestServerUsageIsValidated(t *testing.T) {
	t.Parallel()
	const sse, ndjson, jsonType = "text/event-stream", "application/x-ndjson", "application/json"
	huge := "9223372036854775807"
	for _, tc := range []struct {
		name, contentType, body string
		api                     API
		want                    string
	}{
		{"openai negative output", sse, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":-7}}\n\ndata: [DONE]\n\n",
			ChatCompletions, "the server reported -7 output tokens"},
		{"openai huge output", sse, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" + huge + "}}\n\ndata: [DONE]\n\n",
			ChatCompletions, "more than 2147483647 output tokens"},
		{"openai negative cached", jsonType, `{"choices":[{"message":{"content":"a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":-1}}}`,
			ChatCompletions, "-1 cached prompt tokens"},
		{"openai negative reasoning", jsonType, `{"choices":[{"message":{"content":"a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"completion_tokens_details":{"reasoning_tokens":-2}}}`,
			ChatCompletions, "-2 reasoning tokens"},
		{"ollama negative eval count", ndjson, "{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"eval_count\":-7,\"prompt_eval_count\":3}\n",
			OllamaChat, "-7 output tokens"},
		{"ollama negative duration", ndjson, "{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"eval_count\":1,\"eval_duration\":-5000000}\n",
			OllamaChat, "-5 ms as the eval duration"},
		{"tgi negative generated tokens", sse, "data: {\"token\":{\"text\":\"a\"},\"generated_text\":\"a\",\"details\":{\"finish_reason\":\"length\",\"generated_tokens\":-3}}\n\n",
			TGI, "-3 output tokens"},
		{"anthropic overflowing input", sse, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":" + huge + ",\"cache_read_input_tokens\":" + huge + "}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			Anthropic, "more than 2147483647 prompt tokens"},
		{"anthropic negative output", sse, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":-7}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			Anthropic, "-7 output tokens"},
		{"triton negative count", sse, "data: {\"text_output\":\"a\",\"num_output_tokens\":-7,\"finish_reason\":\"stop\"}\n\n",
			Triton, "num_output_tokens: want a count from 0 to 2147483647, got -7"},
		{"triton overflowing sum", sse, "data: {\"text_output\":\"a\",\"num_output_tokens\":2000000000}\n\ndata: {\"text_output\":\"b\",\"num_output_tokens\":2000000000,\"finish_reason\":\"stop\"}\n\n",
			Triton, "more than 2147483647 output tokens"},
		{"embeddings negative prompt", jsonType, `{"data":[{"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":-4}}`,
			Embeddings, "-4 prompt tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileServer(t, tc.api, replyWith(tc.contentType, tc.body))
			req := hostileRequest(tc.api)
			if tc.api == Embeddings {
				req.Body = map[string]any{"input": "hi"}
			}
			if tc.contentType == jsonType && tc.api == ChatCompletions {
				req.Body = map[string]any{"messages": chatBody["messages"], "stream": false}
			}
			res := c.Stream(t.Context(), req)
			if res.Class != ErrDecode || !strings.Contains(res.Error, tc.want) {
				t.Fatalf("class %q, error %q; want decode saying %q", res.Class, res.Error, tc.want)
			}
			// The result a script sees keeps none of the refused numbers.
			for name, n := range map[string]int{"output": res.OutputTokens, "prompt": res.PromptTokens, "cached": res.CachedTokens, "reasoning": res.ReasoningTokens} {
				if n < 0 || n > maxReportedTokens {
					t.Errorf("the result keeps %d %s tokens", n, name)
				}
			}
			for name, v := range res.ServerTimings {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("the result keeps %v ms as the %s duration", v, name)
				}
			}
		})
	}
}

// TestStreamOfNothingFails checks that a stream with no token, no usage
// and no finish reason is a failure, not a success with 0 tokens, and
// that an empty answer the model finished is still a success.
func TestStreamOfNothingFails(t *testing.T) {
	t.Parallel()
	const sse = "text/event-stream"
	for _, tc := range []struct {
		name, body string
		api        API
		ok         bool
	}{
		{"chat, only [DONE]", "data: [DONE]\n\n", ChatCompletions, false},
		{"chat, a role and [DONE]", "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: [DONE]\n\n", ChatCompletions, false},
		{"anthropic, only message_stop", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", Anthropic, false},
		{"chat, an empty answer finished", "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", ChatCompletions, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileServer(t, tc.api, replyWith(sse, tc.body))
			res := c.Stream(t.Context(), hostileRequest(tc.api))
			if tc.ok {
				if !res.OK {
					t.Fatalf("class %q, error %q; want ok", res.Class, res.Error)
				}
				return
			}
			if res.OK || res.Class != ErrDecode || !strings.Contains(res.Error, "the server answered nothing") {
				t.Fatalf("ok %t, class %q, error %q; want decode saying the server answered nothing", res.OK, res.Class, res.Error)
			}
		})
	}
}

// okChat streams a short chat answer.
func okChat(w http.ResponseWriter) {
	startSSE(w)
	send(w, `{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`)
	send(w, "[DONE]")
}

func TestRedirects(t *testing.T) {
	t.Parallel()
	const key = "sk-ant/abc+def=ghi"
	t.Run("a 301 on a POST is refused", func(t *testing.T) {
		for _, code := range []int{301, 302, 303} {
			_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					t.Errorf("the client sent a %s", r.Method)
				}
				http.Redirect(w, r, "/elsewhere?api_key="+url.QueryEscape(key), code)
			}, Config{APIKey: key})
			res := c.Stream(t.Context(), Request{Body: chatBody})
			want := fmt.Sprintf("(status %d); llmrun does not follow redirects that turn a POST into a GET", code)
			if res.Class != ErrDecode || !strings.Contains(res.Error, want) || !strings.Contains(res.Error, "/elsewhere?api_key=") {
				t.Errorf("%d: class %q, error %q; want decode saying %q", code, res.Class, res.Error, want)
			}
			if strings.Contains(res.Error, "abc") {
				t.Errorf("%d: the key is in the error %q", code, res.Error)
			}
		}
	})
	t.Run("a 307 is followed with its body", func(t *testing.T) {
		_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/moved" {
				http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
				return
			}
			b, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || !strings.Contains(string(b), `"messages"`) {
				http.Error(w, "lost the body", http.StatusBadRequest)
				return
			}
			okChat(w)
		}, Config{})
		if res := c.Stream(t.Context(), Request{Body: chatBody}); !res.OK {
			t.Errorf("class %q, error %q; want ok", res.Class, res.Error)
		}
	})
	t.Run("a redirect loop", func(t *testing.T) {
		var n atomic.Int32
		_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			http.Redirect(w, r, r.URL.Path, http.StatusPermanentRedirect)
		}, Config{})
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if res.Class != ErrDecode || !strings.Contains(res.Error, "redirected more than 5 times") {
			t.Errorf("class %q, error %q; want decode after 5 redirects", res.Class, res.Error)
		}
		if got := n.Load(); got != maxRedirects+1 {
			t.Errorf("%d requests, want %d", got, maxRedirects+1)
		}
	})
	t.Run("a redirect to another host", func(t *testing.T) {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("the client followed the redirect, sending x-api-key %q", r.Header.Get("x-api-key"))
		}))
		defer other.Close()
		_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/v1/messages", http.StatusTemporaryRedirect)
		}, Config{API: Anthropic, APIKey: key})
		res := c.Stream(t.Context(), hostileRequest(Anthropic))
		if res.Class != ErrDecode || !strings.Contains(res.Error, "does not follow redirects to another host") {
			t.Errorf("class %q, error %q; want decode", res.Class, res.Error)
		}
	})
}

func TestInvalidHeadersAreInvalidRequests(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request with an invalid header was sent")
	}, Config{})
	for _, h := range []map[string]string{{"X Bad": "v"}, {"X-Api-Key": "sk-secret\r\nX-Injected: 1"}, {"X-Nul": "a\x00b"}} {
		res := c.Stream(t.Context(), Request{Body: chatBody, Headers: h})
		if res.Class != ErrInvalidRequest || !strings.Contains(res.Error, "header") || strings.Contains(res.Error, "sk-secret") {
			t.Errorf("headers %q: class %q, error %q; want invalid_request without the value", h, res.Class, res.Error)
		}
	}
	if _, err := NewClient(Config{BaseURL: "http://127.0.0.1:1", Headers: map[string]string{"Bad:Name": "v"}}); err == nil || !strings.Contains(err.Error(), `invalid header name "Bad:Name"`) {
		t.Errorf("NewClient with an invalid header: error %v", err)
	}
}

func TestBodiesThatAreNotEventStreams(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("data: {}\n\n"))
	zw.Close()
	for _, tc := range []struct{ name, body, want string }{
		{"gzip", gz.String(), "is gzip-compressed data"},
		{"html", "\n<!DOCTYPE html>\n<html><body>Bad gateway</body></html>", "is an HTML page"},
		{"ssh banner", "SSH-2.0-OpenSSH_9.6\r\n", "is an SSH banner"},
		{"binary", "\x00\x01\x02\x03garbage", "is binary data"},
		{"json", `{"error":{"message":"model not loaded"}}`, `is a JSON document, not an event stream: it starts with "{\"error\":{\"message\":\"model not loaded\"}}"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileServer(t, ChatCompletions, replyWith("text/event-stream", tc.body))
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if res.Class != ErrDecode || !strings.Contains(res.Error, tc.want) {
				t.Errorf("class %q, error %q; want decode saying %q", res.Class, res.Error, tc.want)
			}
			if strings.ContainsFunc(res.Error, unicode.IsControl) {
				t.Errorf("error %q holds control characters", res.Error)
			}
		})
	}
	t.Run("an SSH server", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				io.WriteString(conn, "SSH-2.0-OpenSSH_9.6\r\n")
				conn.Close()
			}
		}()
		c, err := NewClient(Config{BaseURL: "http://" + l.Addr().String()})
		if err != nil {
			t.Fatal(err)
		}
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if res.Class != ErrDecode || !strings.Contains(res.Error, "SSH-2.0") {
			t.Errorf("class %q, error %q; want decode", res.Class, res.Error)
		}
	})
}

func TestServerTextIsEscaped(t *testing.T) {
	t.Parallel()
	hostile := "\x1b[2J\x1b]0;pwned\x07red\x00\r\nnext\xff\xfe\u202egnp.exe\u2028end"
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"error body", func(w http.ResponseWriter, r *http.Request) { http.Error(w, hostile, http.StatusInternalServerError) }},
		{"error event", func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", strings.ReplaceAll(strings.ReplaceAll(hostile, "\r", ""), "\n", ""))
		}},
		{"error object", func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": hostile}})
			send(w, string(b))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileServer(t, ChatCompletions, tc.h)
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if res.OK || !utf8.ValidString(res.Error) || strings.ContainsFunc(res.Error, func(r rune) bool {
				return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028'
			}) {
				t.Fatalf("class %q, error %q: not escaped", res.Class, res.Error)
			}
			if !strings.Contains(res.Error, "pwned") {
				t.Errorf("error %q lost the server's text", res.Error)
			}
		})
	}
	t.Run("a long body is bounded", func(t *testing.T) {
		c := hostileServer(t, ChatCompletions, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, strings.Repeat("\x00", 1<<20), http.StatusBadGateway)
		})
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if res.Class != ErrHTTP5xx || len(res.Error) > maxErrorLen || !strings.HasSuffix(res.Error, "(truncated)") {
			t.Errorf("class %q, error of %d bytes ending %q", res.Class, len(res.Error), res.Error[max(0, len(res.Error)-20):])
		}
	})
}

func TestEscapeText(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"plain text, é and 漢字", 100, "plain text, é and 漢字"},
		{"a\x1b[2J\x00\x7f\u0085\xff\u202e\u2028\r\n\t", 100, `a\x1b[2J\x00\x7f\x85\xff\u202e\u2028\r\n\t`},
		{strings.Repeat("a", 30), 30, strings.Repeat("a", 15) + "... (truncated)"},
		{strings.Repeat("\x00", 30), 30, `\x00\x00\x00` + "... (truncated)"},
	} {
		if got := redact.Escape(tc.in, tc.limit); got != tc.want {
			t.Errorf("redact.Escape(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
	clean := strings.Repeat("a clean message, é 漢字 ", 20)
	if n := testing.AllocsPerRun(100, func() { redact.Escape(clean, maxErrorLen) }); n != 0 {
		t.Errorf("redact.Escape of clean text allocates %v times, want 0", n)
	}
}

func TestSecretsAreRedactedInAllForms(t *testing.T) {
	t.Parallel()
	const key = "sk-ant/abc+def=ghi"
	forms := []string{key, url.QueryEscape(key), url.PathEscape(key),
		base64.StdEncoding.EncodeToString([]byte(key)), base64.RawURLEncoding.EncodeToString([]byte(key)),
		"sk-ant/abc%2Bdef%3Dghi",   // Python's quote(), '/' kept
		"sk-ant%2fabc%2bdef%3dghi", // escapes in lower case
		"SK-ANT/ABC+DEF=GHI",       // the key upper-cased
	}
	t.Run("api key", func(t *testing.T) {
		_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "you sent "+strings.Join(forms, " and "), http.StatusUnauthorized)
		}, Config{APIKey: key})
		res := c.Stream(t.Context(), Request{Body: chatBody})
		for _, f := range forms {
			if strings.Contains(res.Error, f) {
				t.Errorf("error %q holds the key as %q", res.Error, f)
			}
		}
	})
	t.Run("base URL credentials", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, pass, _ := r.BasicAuth()
			http.Error(w, fmt.Sprintf("bad %s for %s:%s, query %s and %s", r.Header.Get("Authorization"), user, pass, r.URL.RawQuery, r.URL.Query().Get("api_key")), http.StatusUnauthorized)
		}))
		defer srv.Close()
		u, _ := url.Parse(srv.URL)
		base := "http://alice:PassW0rd@" + u.Host + "/v1?api_key=" + url.QueryEscape(key)
		c, err := NewClient(Config{BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if res.Class != ErrHTTP4xx || !strings.Contains(res.Error, "bad Basic [REDACTED]") {
			t.Fatalf("class %q, error %q; want the 401", res.Class, res.Error)
		}
		for _, leak := range append(forms, "PassW0rd", base64.StdEncoding.EncodeToString([]byte("alice:PassW0rd"))) {
			if strings.Contains(res.Error, leak) {
				t.Errorf("error %q holds %q", res.Error, leak)
			}
		}
	})
	t.Run("the key where the quoted body is cut", func(t *testing.T) {
		_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "you sent "+strings.Repeat("x", errorBodyLen-len("you sent ")-6)+key+" and more", http.StatusUnauthorized)
		}, Config{APIKey: key})
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if res.Class != ErrHTTP4xx || !strings.HasSuffix(res.Error, "xx[REDACTED]… (cut)") {
			t.Errorf("class %q, error %q; want the 401 with the start of the key at the cut redacted", res.Class, res.Error)
		}
	})
	t.Run("a request's header holding the key", func(t *testing.T) {
		const longer = key + "-and-more"
		_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "you sent "+r.Header.Get("X-Api-Key"), http.StatusUnauthorized)
		}, Config{APIKey: key})
		res := c.Stream(t.Context(), Request{Body: chatBody, Headers: map[string]string{"X-Api-Key": longer}})
		if res.Class != ErrHTTP4xx || !strings.HasSuffix(res.Error, "you sent [REDACTED]") {
			t.Errorf("class %q, error %q; want the 401 with the header redacted whole", res.Class, res.Error)
		}
	})
}

// endlessChat streams n chunks of one token each as fast as it can, then
// the usage and [DONE].
func endlessChat(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		startSSE(w)
		const per = 1000
		block := []byte(strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\"é\"}}]}\n\n", per))
		for range n / per {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", n)
	}
}

// heapInUse is the live heap after a garbage collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestEndlessStreamMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 2 million chunks: TestFoldedITLStatistics folds the gaps beyond the exact ones and TestWholeResponseTextIsCapped cuts the kept text; only the flat heap over a long stream is left out")
	}
	const chunks = 2_000_000
	_, c := newServer(t, endlessChat(chunks), Config{Timeout: 5 * time.Minute})
	before := heapInUse()
	res := c.Stream(t.Context(), Request{Body: chatBody, KeepText: true})
	grown := int64(heapInUse()) - int64(before)
	if !res.OK || res.Chunks != chunks || res.OutputTokens != chunks {
		t.Fatalf("class %q (%s), %d chunks, %d tokens; want ok with %d", res.Class, res.Error, res.Chunks, res.OutputTokens, chunks)
	}
	if len(res.ITL) != maxExactITL || res.itlCount() != chunks-1 {
		t.Errorf("%d exact gaps and %d in all, want %d and %d", len(res.ITL), res.itlCount(), maxExactITL, chunks-1)
	}
	if !res.TextTruncated || len(res.Text) > maxKeptText || !utf8.ValidString(res.Text) {
		t.Errorf("text of %d bytes, truncated %v: want it cut at %d bytes on a character boundary", len(res.Text), res.TextTruncated, maxKeptText)
	}
	if limit := int64(8 << 20); grown > limit {
		t.Errorf("the heap grew %d MiB with the result alive, want at most %d MiB", grown>>20, limit>>20)
	}
	m := RegisterMetrics(metrics.NewRegistry())
	samples := m.AppendSamples(nil, nil, res)
	if len(samples) > maxExactITL+itlBuckets+16 {
		t.Errorf("%d samples for one request", len(samples))
	}
	runtime.KeepAlive(res)
}

func TestFoldedITLStatistics(t *testing.T) {
	t.Parallel()
	res := &Result{OK: true, Stream: true}
	var all []float64
	for i := range 50_000 {
		gap := 5 + float64(i%997)/10 // 5 to 104.6 ms
		if i%50 == 0 {
			gap = 250 + float64(i%7)
		}
		all = append(all, gap)
		res.addGap(gap)
	}
	res.Chunks, res.OutputTokens = len(all)+1, len(all)+1
	if len(res.ITL) != maxExactITL || res.ITLFolded != len(all)-maxExactITL {
		t.Fatalf("%d exact, %d folded", len(res.ITL), res.ITLFolded)
	}
	sum := 0.0
	for _, g := range all {
		sum += g
	}
	sorted := slices.Sorted(slices.Values(all))
	p99 := sorted[int(math.Ceil(0.99*float64(len(sorted))))-1]

	var rec Record
	res.Record(&rec, nil, nil)
	if math.Abs(rec.ITLMean-sum/float64(len(all))) > 1e-9*sum {
		t.Errorf("ITL mean %g, want %g", rec.ITLMean, sum/float64(len(all)))
	}
	if math.Abs(rec.ITLP99-p99) > 0.005*p99 {
		t.Errorf("ITL p99 %g, want %g within 0.5 %%", rec.ITLP99, p99)
	}

	reg := metrics.NewRegistry()
	m := RegisterMetrics(reg)
	agg := metrics.NewAggregator(1)
	agg.Shard(0).AddSamples(m.AppendSamples(nil, nil, res))
	st := agg.Snapshot().Stats("llm_itl", nil)
	if st.Count != int64(len(all)) {
		t.Fatalf("llm_itl has %d samples, want %d", st.Count, len(all))
	}
	if math.Abs(st.Mean()-sum/float64(len(all))) > 0.005*st.Mean() {
		t.Errorf("llm_itl mean %g, want %g", st.Mean(), sum/float64(len(all)))
	}
	if got := st.Percentile(99); math.Abs(got-p99) > 0.01*p99 {
		t.Errorf("llm_itl p99 %g, want %g within 1 %%", got, p99)
	}
}

// repeatReader reads as n bytes of b.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

func TestGiantLineTakesAboutTheCap(t *testing.T) {
	if race.Enabled {
		t.Skip("a bound on the heap in one goroutine, where the race detector finds nothing: TestSSEReader reads lines of MiBs under it, TestGiantLineTakesAboutTheCap the bound without -race")
	}
	const limit = 8 << 20
	in := io.MultiReader(strings.NewReader("data: "), &repeatReader{'x', limit - 64}, strings.NewReader("\n\ndata: [DONE]\n\n"))
	s := NewSSEReader(in)
	s.SetMaxSize(limit)
	before := heapInUse()
	e, err := s.Next()
	grown := int64(heapInUse()) - int64(before)
	if err != nil || len(e.Data) != limit-64 {
		t.Fatalf("event of %d bytes, error %v", len(e.Data), err)
	}
	if slack := int64(1 << 20); grown > limit+slack {
		t.Errorf("reading one line of %d MiB holds %d MiB, want at most the cap and 1 MiB", limit>>20, grown>>20)
	}
	if e, err := s.Next(); err != nil || string(e.Data) != "[DONE]" {
		t.Errorf("next event %q, error %v", e.Data, err)
	}
	runtime.KeepAlive(s)
}

func TestLineOverTheCapIsDecode(t *testing.T) {
	t.Parallel()
	c := hostileServer(t, ChatCompletions, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		io.WriteString(w, "data: ")
		io.Copy(w, &repeatReader{'x', DefaultMaxLineSize + 1})
	})
	res := c.Stream(t.Context(), Request{Body: chatBody})
	if res.Class != ErrDecode || !strings.Contains(res.Error, "line over 4194304 bytes") {
		t.Errorf("class %q, error %q; want decode for a line over the cap", res.Class, res.Error)
	}
}

// FuzzLineReader checks that taking long data lines over (takeLine)
// reads the same events as copying them, and as the reference reader,
// whatever the splits of the input.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("data: aaaaaaaaaaaaaaaa\n\ndata: b\n\n"), []byte{3}, uint8(4), uint8(0))
	f.Add([]byte("data: 0123456789\rdata: 0123456789abcdef\r\n\r\n: c\ndata:x\n\n"), []byte{1, 7}, uint8(2), uint8(0))
	f.Add([]byte("\xEF\xBB\xBFdata: long long long line\r\n\r\ndata: tail without end"), []byte{5}, uint8(1), uint8(30))
	f.Add([]byte("event: e\nid: 7\ndata: {\"choices\":[]}\ndata: second\n\n"), []byte{2, 2, 9}, uint8(3), uint8(12))
	f.Fuzz(func(t *testing.T, in, splits []byte, take, max uint8) {
		sizes := make([]int, len(splits))
		for i, b := range splits {
			sizes[i] = int(b)%13 + 1
		}
		read := func(take int) ([]ev, error) {
			s := NewSSEReader(&chunkReader{data: in, sizes: sizes})
			s.take = take
			if max > 0 {
				s.SetMaxSize(int(max))
			}
			return readEvents(s)
		}
		taken, takenErr := read(int(take) % 32)
		copied, copiedErr := read(math.MaxInt)
		if !reflect.DeepEqual(taken, copied) || fmt.Sprint(takenErr) != fmt.Sprint(copiedErr) {
			t.Fatalf("taken %q, %v; copied %q, %v", taken, takenErr, copied, copiedErr)
		}
		if max == 0 {
			want, wantErr := refSSE(in)
			if !reflect.DeepEqual(taken, want) || takenErr != wantErr {
				t.Fatalf("got %q, %v; want %q, %v", taken, takenErr, want, wantErr)
			}
		}
	})
}

func TestModelListSkipsHostileIDs(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"data": []any{
			map[string]any{"id": "\x1b]0;pwned\x07model"},
			map[string]any{"id": strings.Repeat("m", maxModelID+1)},
			map[string]any{"id": "meta-llama/Llama-3.1-8B-Instruct"},
		}})
	}, Config{})
	ids, err := c.Models(t.Context())
	if err != nil || !slices.Equal(ids, []string{"meta-llama/Llama-3.1-8B-Instruct"}) {
		t.Errorf("models %q, %v; want only the plausible one", ids, err)
	}
}

func TestWholeResponseTextIsCapped(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("é", maxKeptText) // 2 MiB
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": text}, "finish_reason": "stop"}},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 5}})
	for _, api := range []API{ChatCompletions, OllamaChat} {
		body := string(b)
		if api == OllamaChat {
			o, _ := json.Marshal(map[string]any{"message": map[string]any{"content": text}, "done": true, "eval_count": 5})
			body = string(o)
		}
		c := hostileServer(t, api, replyWith("application/json", body))
		req := hostileRequest(api)
		req.Body["stream"], req.KeepText = false, true
		res := c.Stream(t.Context(), req)
		if !res.OK || !res.TextTruncated || len(res.Text) > maxKeptText || !utf8.ValidString(res.Text) || res.OutputTokens != 5 {
			t.Errorf("%s: ok %v (%s), truncated %v, %d bytes of text, %d tokens", api, res.OK, res.Error, res.TextTruncated, len(res.Text), res.OutputTokens)
		}
	}
}

func TestJSONArrayLen(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{
		`[]`: 0, ` [ ] `: 0, `[1]`: 1, `[1,2,3]`: 3, `[{"a":[1,2]},"x,y",[3,4]]`: 3,
		`["\"],[", 2]`: 2, `{"a":1}`: 0, `[{},{},{},{},{}]`: 5, `[1,2,3,4,5,6,7]`: 5, // over the limit of 4: stops at 5
	} {
		if got := jsonArrayLen([]byte(in), 4); got != want {
			t.Errorf("jsonArrayLen(%s) = %d, want %d", in, got, want)
		}
	}
	if got := choicesLen([]byte(`{"id":"x","choices" : [{},{},{},{},{},{}],"usage":{}}`), 4); got != 5 {
		t.Errorf("choicesLen = %d, want 5 (over the limit)", got)
	}
	for in, want := range map[string]int{
		`{"choices":[{"choices":[{},{},{},{},{},{}]}]}`:     0, // a nested object's choices are not the chunk's
		`{"x":{"choices":[{},{},{},{},{}]},"choices":[{}]}`: 0,
		`{"x":"\"choices\":[{},{},{},{},{}]"}`:              0,
		`{"choices":[{}],"choices":[{},{},{},{},{},{}]}`:    5, // each is decoded: the later one counts too
	} {
		if got := choicesLen([]byte(in), 4); got != want {
			t.Errorf("choicesLen(%s) = %d, want %d", in, got, want)
		}
	}
	// Nested choices were each counted to their array's end: a line of
	// 4 MiB took half an hour. One pass takes milliseconds; the bound only
	// keeps a regression from hanging the run.
	nested := []byte(strings.Repeat(`{"choices":[`, DefaultMaxLineSize/14) + strings.Repeat("]}", DefaultMaxLineSize/14))
	done := make(chan int, 1)
	go func() { done <- choicesLen(nested, maxChoices) }()
	select {
	case got := <-done:
		if got != 0 {
			t.Errorf("choicesLen of %d bytes of nested choices = %d, want 0", len(nested), got)
		}
	case <-time.After(time.Minute):
		t.Fatalf("choicesLen of %d bytes of nested choices did not end within a minute", len(nested))
	}
}

// TestToolDeltaCountFrom pins the length from which add counts a
// tool_calls array: the shortest array over the bound, of one-byte
// elements, is counted and refused.
func TestToolDeltaCountFrom(t *testing.T) {
	t.Parallel()
	shortest := "[" + strings.Repeat("0,", maxToolDeltas) + "0]"
	if len(shortest) < toolDeltaScanFrom {
		t.Fatalf("an array of %d elements takes %d bytes, under toolDeltaScanFrom (%d)", maxToolDeltas+1, len(shortest), toolDeltaScanFrom)
	}
	var tc toolCalls
	if err := tc.add(json.RawMessage(shortest)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("add of %d deltas: %v, want more than %d", maxToolDeltas+1, err, maxToolDeltas)
	}
}

func TestManyEmptyChoicesAreRefused(t *testing.T) {
	if race.Enabled {
		t.Skip("a bound on the heap, which the race detector inflates: TestJSONArrayLen and TestToolDeltaCountFrom refuse such arrays under it, TestManyEmptyChoicesAreRefused bounds the heap without -race")
	}
	line := "data: {\"choices\":[" + strings.Repeat("{},", DefaultMaxLineSize/3-10) + "{}]}\n\n"
	calls := "data: {\"choices\":[{\"delta\":{\"tool_calls\":[" + strings.Repeat("{},", DefaultMaxLineSize/3-20) + "{}]}}]}\n\n"
	for name, body := range map[string]string{"choices": line, "tool calls": calls} {
		t.Run(name, func(t *testing.T) {
			c := hostileServer(t, ChatCompletions, replyWith("text/event-stream", body))
			before := heapInUse()
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if grown := int64(heapInUse()) - int64(before); grown > 16<<20 {
				t.Errorf("the heap grew %d MiB", grown>>20)
			}
			if res.Class != ErrDecode || !strings.Contains(res.Error, "more than") {
				t.Errorf("class %q, error %.300q; want decode", res.Class, res.Error)
			}
		})
	}
}

func TestToolCallFieldsAreBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 10*maxToolName)
	var b strings.Builder
	b.WriteString(`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"` + long + `","type":"` + long + `","function":{"name":"f","arguments":""}}]}}]}` + "\n\n")
	for range 3 * maxKeptText / len(long) {
		b.WriteString(`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"` + long + `","arguments":"` + long + `"}}]}}]}` + "\n\n")
	}
	b.WriteString(`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	c := hostileServer(t, ChatCompletions, replyWith("text/event-stream", b.String()))
	res := c.Stream(t.Context(), Request{Body: chatBody})
	if !res.OK || len(res.ToolCalls) != 1 || !res.TextTruncated {
		t.Fatalf("ok %v (%s), %d calls, truncated %v", res.OK, res.Error, len(res.ToolCalls), res.TextTruncated)
	}
	call := res.ToolCalls[0]
	if len(call.ID) != maxToolName || len(call.Type) != maxToolName || len(call.Name) != maxToolName || len(call.Arguments) != maxKeptText {
		t.Errorf("id %d, type %d, name %d, arguments %d bytes; want %d, %d, %d, %d",
			len(call.ID), len(call.Type), len(call.Name), len(call.Arguments), maxToolName, maxToolName, maxToolName, maxKeptText)
	}
}

// TestReaderThatHeldAHugeChunkIsNotPooled checks that a response reader
// which decoded one huge chunk is dropped rather than reused: its JSON
// decoder and chunk fields keep the chunk's size for as long as the reader
// lives, which in the pool is the whole run.
func TestReaderThatHeldAHugeChunkIsNotPooled(t *testing.T) {
	t.Parallel()
	stream := func(content string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + content + `"}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	}
	for _, tc := range []struct {
		name     string
		content  string
		poolable bool
	}{
		{"small chunk", "hello", true},
		{"chunk of 2 MiB", strings.Repeat("x", 2<<20), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := &responseReader{sse: NewSSEReader(nil)}
			res := &Result{API: ChatCompletions, Start: time.Now()}
			if err := rr.readSSE(strings.NewReader(stream(tc.content)), res.Start, false, res); err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if got := rr.poolable(); got != tc.poolable {
				t.Errorf("poolable %v after a %s, want %v", got, tc.name, tc.poolable)
			}
		})
	}
}

// TestHugeChunkIsDecodedWithoutACopy checks what one huge chunk costs to
// read: the line (its buffer growing to it, about twice its size
// allocated) and the content decoded out of it, not one more copy in a
// JSON decoder's buffer (19 MiB for a 3 MiB chunk when it had one).
func TestHugeChunkIsDecodedWithoutACopy(t *testing.T) {
	if race.Enabled {
		t.Skip("a measure of allocations in one goroutine, which mean nothing under the race detector: TestReaderThatHeldAHugeChunkIsNotPooled decodes a huge chunk under it, TestHugeChunkIsDecodedWithoutACopy measures it without -race")
	}
	const size = 3 << 20
	content := strings.Repeat("x", size)
	stream := `data: {"choices":[{"index":0,"delta":{"content":"` + content + `"}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	rr := &responseReader{sse: NewSSEReader(nil)}
	res := &Result{API: ChatCompletions, Start: time.Now()}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := rr.readSSE(strings.NewReader(stream), res.Start, false, res)
	runtime.ReadMemStats(&after)
	if err != nil || res.OutputTokens != 1 {
		t.Fatalf("reading the stream: %v, %d output tokens", err, res.OutputTokens)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 4*size {
		t.Errorf("reading a chunk of %d MiB allocated %.1f MiB, want at most %d MiB (the line as it grows, and its content)",
			size>>20, float64(allocated)/(1<<20), 4*size>>20)
	}
}

// TestWholeResponseOverTheCap sends a non-streamed answer that does not
// end: it is read up to the cap, in a buffer that does not grow past it,
// and fails as decode. The exchange runs in a synctest bubble, over
// in-memory connections: the client's idle and total timeouts count on
// the bubble's clock, which stands still while the 64 MiB flow, so that a
// loaded host cannot make the answer outlast them.
func TestWholeResponseOverTheCap(t *testing.T) {
	if race.Enabled {
		t.Skip("64 MiB, which the race detector takes minutes to check under load where it finds nothing the smaller answers do not: TestWholeResponseTextIsCapped reads a whole response under it, TestWholeResponseOverTheCap the cap without -race")
	}
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := pipeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"`)
			io.Copy(w, &repeatReader{'x', maxJSONResponse + 1})
		}, Config{API: ChatCompletions, Model: "m"})
		res := c.Stream(t.Context(), Request{Body: map[string]any{"model": "m", "messages": chatBody["messages"], "stream": false}})
		if res.Class != ErrDecode || !strings.Contains(res.Error, "response larger than 67108864 bytes") {
			t.Errorf("class %q, error %q; want decode for a response over the cap", res.Class, res.Error)
		}
	})

	const limit = 1 << 20
	body, more, err := readAtMost(nil, &repeatReader{'x', 3 * limit}, limit, -1)
	if err != nil || len(body) != limit || !more {
		t.Fatalf("read %d bytes, more %v, error %v; want %d and more", len(body), more, err, limit)
	}
	if cap(body) > limit+limit/8 {
		t.Errorf("the buffer grew to %d bytes to read %d: want about the limit", cap(body), limit+1)
	}
	// A declared length sizes the buffer at once, whatever dst holds.
	body, more, err = readAtMost([]byte("head"), &repeatReader{'x', 10}, limit, 2)
	if err != nil || more || string(body) != "headxxxxxxxxxx" {
		t.Errorf("read %q, more %v, error %v; want the 10 bytes after the head", body, more, err)
	}
}
