package llm

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
)

// startSim starts a simulator with 1 ms steps.
func startSim(t *testing.T) *llmsim.Running {
	t.Helper()
	return llmsimtest.Start(t, llmsimtest.Fast())
}

// protocolBodies are requests for n tokens in each API's format.
func protocolBody(api API, n int) map[string]any {
	msgs := []any{map[string]any{"role": "user", "content": "hello there"}}
	switch api {
	case OllamaChat:
		return map[string]any{"messages": msgs, "options": map[string]any{"num_predict": n, "ignore_eos": true}}
	case OllamaGenerate:
		return map[string]any{"prompt": "hello there", "options": map[string]any{"num_predict": n, "ignore_eos": true}}
	case TGI:
		return map[string]any{"inputs": "hello there", "parameters": map[string]any{"max_new_tokens": n, "ignore_eos": true}}
	}
	return nil
}

func TestProtocolsAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, api := range []API{OllamaChat, OllamaGenerate, TGI} {
		for _, base := range []string{srv.URL(), srv.URL() + "/", srv.URL() + "/v1", srv.URL() + "/api"} {
			if api == TGI && strings.HasSuffix(base, "/api") {
				continue
			}
			t.Run(string(api)+" "+strings.TrimPrefix(base, srv.URL()), func(t *testing.T) {
				c, err := NewClient(Config{BaseURL: base, Model: "m", API: api})
				if err != nil {
					t.Fatal(err)
				}
				defer c.CloseIdleConnections()
				res := c.Stream(t.Context(), Request{Body: protocolBody(api, 12), KeepText: true})
				if !res.OK {
					t.Fatalf("%s: %s", res.Class, res.Error)
				}
				if res.API != api || !res.Stream || res.OutputTokens != 12 || res.Chunks != 12 || res.TokenSource != TokensFromUsage ||
					res.TTFT <= 0 || res.TPOT <= 0 || len(res.ITL) != 11 || res.FinishReason != "length" || res.Text == "" || res.Model != "m" {
					t.Errorf("result %+v", res)
				}
				if api != TGI {
					if res.PromptTokens == 0 || res.ServerTimings["total"] <= 0 || res.ServerTimings["eval"] <= 0 {
						t.Errorf("prompt tokens %d, server timings %v", res.PromptTokens, res.ServerTimings)
					}
				}
			})
		}
	}
}

func TestProtocolsNaturalEnd(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c, err := NewClient(Config{BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	// TGI: the EOS token is special, not an output chunk; generated_tokens
	// counts it, as TGI does.
	res := c.Stream(t.Context(), Request{API: TGI, Body: map[string]any{"inputs": "hi", "parameters": map[string]any{"max_new_tokens": 4000}}})
	if !res.OK || res.FinishReason != "eos_token" || res.OutputTokens != res.Chunks+1 {
		t.Errorf("tgi result %+v", res)
	}
	res = c.Stream(t.Context(), Request{API: OllamaChat, Body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
	if !res.OK || res.FinishReason != "stop" || res.OutputTokens != res.Chunks {
		t.Errorf("ollama result %+v", res)
	}
}

func TestProtocolFaults(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c, err := NewClient(Config{BaseURL: srv.URL(), IdleTimeout: faultIdle})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for _, api := range []API{OllamaChat, OllamaGenerate, TGI} {
		for fault, class := range map[string]ErrorClass{
			"http_5xx":    ErrHTTP5xx,
			"http_429":    ErrHTTP429,
			"refuse":      ErrCut,
			"error_event": ErrStreamError,
			"early_close": ErrCut,
			"reset":       ErrCut,
			"malformed":   ErrDecode,
			"big_line":    ErrNone, // 2 MiB is under the line limit
		} {
			res := c.Stream(t.Context(), Request{API: api, Body: protocolBody(api, 8), Headers: map[string]string{llmsim.FaultHeader: fault}})
			if res.Class != class {
				t.Errorf("%s %s: class %q (%s), want %q", api, fault, res.Class, res.Error, class)
			}
		}
	}
}

// faultIdle is the idle timeout of the fault tests: far above any pause
// of a working stream, even on a loaded machine (making big_line's 2 MiB
// chunk takes a while), and what a stall fault lasts before it ends as
// idle_timeout.
const faultIdle = 5 * time.Second

// replay replays a transcript through the reader of the protocol its
// name starts with (ollama, openai, else tgi), one byte at a time.
func replay(t *testing.T, file, contentType string) *Result {
	t.Helper()
	switch {
	case strings.HasPrefix(file, "testdata/ollama"):
		return replayAs(t, file, contentType, OllamaChat, ollamaProtocol{})
	case strings.HasPrefix(file, "testdata/openai"):
		return replayAs(t, file, contentType, ChatCompletions, openaiProtocol{})
	}
	return replayAs(t, file, contentType, TGI, tgiProtocol{})
}

// replayAs replays a transcript through proto's reader, one byte at a
// time.
func replayAs(t *testing.T, file, contentType string, api API, proto protocol) *Result {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{API: api, Start: time.Now()}
	rr := getResponseReader()
	defer rr.release()
	if err := proto.read(rr, contentType, iotest.OneByteReader(bytes.NewReader(data)), true, res); err != nil {
		f, ok := err.(*failure)
		if !ok {
			t.Fatalf("%s: error %v is not a failure", file, err)
		}
		res.Class, res.Error = f.class, f.Error()
	}
	res.OK = res.Class == ErrNone
	return res
}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, ct       string
		class          ErrorClass
		tokens, chunks int
		prompt         int
		reason, text   string
	}{
		{"testdata/ollama-chat.ndjson", "application/x-ndjson", ErrNone, 4, 4, 26, "stop", "The sky is blue."},
		{"testdata/ollama-generate.ndjson", "application/x-ndjson; charset=utf-8", ErrNone, 3, 3, 26, "length", "The sky is blue"},
		{"testdata/ollama-error.ndjson", "application/x-ndjson", ErrStreamError, 0, 1, 0, "", ""},
		{"testdata/tgi-generate-stream.sse", "text/event-stream", ErrNone, 4, 3, 0, "eos_token", "Deep learning is"},
		{"testdata/tgi-error.sse", "text/event-stream", ErrStreamError, 0, 1, 0, "", ""},
	} {
		res := replay(t, tc.file, tc.ct)
		if res.Class != tc.class || res.OutputTokens != tc.tokens || res.Chunks != tc.chunks || res.PromptTokens != tc.prompt ||
			res.FinishReason != tc.reason || (tc.class == ErrNone && res.Text != tc.text) {
			t.Errorf("%s: result %+v", tc.file, res)
		}
		if tc.class == ErrNone && (res.TTFT <= 0 || res.TokenSource != TokensFromUsage) {
			t.Errorf("%s: ttft %v, token source %q", tc.file, res.TTFT, res.TokenSource)
		}
	}
	res := replay(t, "testdata/ollama-chat.ndjson", "application/x-ndjson")
	if res.ServerTimings["total"] != 4883.583458 || res.ServerTimings["eval"] != 4535.599 || res.ServerTimings["promptEval"] != 342.546 {
		t.Errorf("server timings %v", res.ServerTimings)
	}
}

func TestProtocolCuts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ct, body string
		api            API
	}{
		{"ollama no done", "application/x-ndjson", `{"response":"a","done":false}` + "\n", OllamaGenerate},
		{"ollama cut mid-line", "application/x-ndjson", `{"response":"a","done":false}` + "\n" + `{"response":"b","do`, OllamaGenerate},
		{"tgi no final event", "text/event-stream", `data:{"token":{"id":1,"text":"a","special":false},"generated_text":null,"details":null}` + "\n\n", TGI},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				io.WriteString(w, tc.body)
			}
			srv := httptest.NewServer(http.HandlerFunc(h))
			defer srv.Close()
			c, err := NewClient(Config{BaseURL: srv.URL, API: tc.api})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			res := c.Stream(t.Context(), Request{Body: map[string]any{"prompt": "x"}})
			if res.Class != ErrCut || res.Chunks != 1 {
				t.Errorf("result %+v, want cut after 1 chunk", res)
			}
		})
	}
}

func TestProtocolRequests(t *testing.T) {
	t.Parallel()
	var got []string
	h := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.Path+" "+string(b))
		w.WriteHeader(500)
	}
	srv := httptest.NewServer(http.HandlerFunc(h))
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL + "/api/", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	c.Stream(t.Context(), Request{API: OllamaChat, Body: map[string]any{"messages": []any{}}})
	c.Stream(t.Context(), Request{API: OllamaGenerate, Body: map[string]any{"prompt": "p", "stream": false, "model": "x"}})
	c.Stream(t.Context(), Request{API: TGI, Body: map[string]any{"inputs": "p", "parameters": map[string]any{"max_new_tokens": 3}}})
	c.Stream(t.Context(), Request{API: TGI, Body: map[string]any{"inputs": "p", "stream": false, "parameters": map[string]any{"details": false}}})
	want := []string{
		`/api/chat {"messages":[],"model":"m","stream":true}`,
		`/api/generate {"model":"x","prompt":"p","stream":false}`,
		`/api/generate_stream {"inputs":"p","parameters":{"details":true,"max_new_tokens":3}}`,
		`/api/generate {"inputs":"p","parameters":{"details":false}}`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests\n%q\nwant\n%q", got, want)
	}
	if _, err := NewClient(Config{BaseURL: srv.URL, API: "nope"}); err == nil || !strings.Contains(err.Error(), "ollama-chat") {
		t.Errorf("unknown API error %v", err)
	}
}

func FuzzNDJSONReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), 3)
	f.Fuzz(func(t *testing.T, data []byte, piece int) {
		piece = max(1, piece%64)
		want := [][]byte{}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				want = append(want, l)
			}
		}
		r := NewNDJSONReader(&chunked{data, piece})
		r.SetMaxSize(1 << 20)
		for i := 0; ; i++ {
			line, err := r.Next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("%d lines, want %d", i, len(want))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if i >= len(want) || !bytes.Equal(line, want[i]) {
				t.Fatalf("line %d %q, want %q", i, line, want)
			}
		}
	})
}

// chunked reads data n bytes at a time.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

func FuzzTGIStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, func(rr *responseReader, body io.Reader, res *Result) error { return rr.readTGI(body, true, res) })
		if res == nil {
			return
		}
		if res.OutputTokens < 0 && res.TokenSource == TokensFromChunks || res.Chunks < 0 {
			t.Fatalf("result %+v", res)
		}
	})
}

// fuzzRead feeds data to read in pieces of a size the data picks, as a
// fuzz target does: an error must be a classified failure (then it
// returns nil), else it returns the result.
func fuzzRead(t *testing.T, data []byte, read func(rr *responseReader, body io.Reader, res *Result) error) *Result {
	t.Helper()
	rr := getResponseReader()
	defer rr.release()
	res := &Result{Start: time.Now()}
	if err := read(rr, &chunked{data: data, n: 1 + len(data)%13}, res); err != nil {
		if _, ok := err.(*failure); !ok {
			t.Fatalf("error %v is not a classified failure", err)
		}
		return nil
	}
	return res
}

// mediaType gives what mime.ParseMediaType gives, the bare types servers
// send included.
func TestMediaType(t *testing.T) {
	t.Parallel()
	for _, ct := range []string{"text/event-stream", "application/json", "application/x-ndjson", "text/event-stream; charset=utf-8",
		"Text/Event-Stream", " application/json", "application/json; a=1; a=2", "", "bad"} {
		want, _, _ := mime.ParseMediaType(ct)
		if got := mediaType(ct); got != want {
			t.Errorf("%q: %q, want %q", ct, got, want)
		}
	}
}
