package llmjs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer/hfhub/hfhubtest"
	"github.com/llmrun/llmrun/modules/llm"
)

// jsServer starts a test server of h and returns a module aimed at it,
// whose hooks record everything.
func jsServer(t *testing.T, h http.Handler) (*httptest.Server, *Module, *recorded) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	m, rec := newRecordedModule(t, llm.Config{BaseURL: srv.URL, Model: jsModel})
	return srv, m, rec
}

func TestJSRetry(t *testing.T) {
	const chat = `{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }`
	t.Run("client option and llm_retries", func(t *testing.T) {
		s := &script{steps: []http.HandlerFunc{fail(503), fail(500), okStream}}
		_, m, rec := jsServer(t, s)
		v := newJSVU(t, m)
		r := stream(t, v, `llm.client({ retry: { attempts: 3, on: ['http_5xx'], backoff: { base: 1, max: '5ms' } } }).stream(`+chat+`)`)
		if !r.OK || r.Attempts != 3 || !reflect.DeepEqual(r.Retried, []string{"http_5xx", "http_5xx"}) {
			t.Fatalf("result %+v, want ok after 2 retried http_5xx", r)
		}
		base := "model:" + jsModel + ",scenario:test"
		if st := v.Series("llm_retries")["error_class:http_5xx,"+base]; st == nil || st.Sum != 2 {
			t.Errorf("llm_retries %v, want 2 tagged http_5xx", v.Series("llm_retries"))
		}
		if st := v.Series("llm_requests")[base]; st == nil || st.Sum != 1 {
			t.Errorf("llm_requests %v, want 1: a retried request counts once", v.Series("llm_requests"))
		}
		if s := v.Series("llm_errors"); len(s) != 0 {
			t.Errorf("llm_errors %v for a request that succeeded in the end", s)
		}
		if e := rec.Errors(); len(e) != 0 {
			t.Errorf("errors recorded %v, want none: the retried attempts are not failures", e)
		}
	})
	t.Run("request option over the client's", func(t *testing.T) {
		s := &script{steps: []http.HandlerFunc{fail(429), fail(500), okStream}}
		_, m, _ := jsServer(t, s)
		v := newJSVU(t, m)
		// The request's attempts, the client's classes and backoff.
		r := stream(t, v, `llm.client({ retry: { on: ['http_429'], backoff: { base: 1, max: 1 } } }).stream(`+chat+`, { retry: { attempts: 5 } })`)
		if r.OK || r.ErrorClass != "http_5xx" || r.Attempts != 2 || !reflect.DeepEqual(r.Retried, []string{"http_429"}) {
			t.Errorf("result %+v, want the 429 retried, then the 500 not", r)
		}
	})
	t.Run("none by default", func(t *testing.T) {
		s := &script{steps: []http.HandlerFunc{fail(500), okStream}}
		_, m, rec := jsServer(t, s)
		v := newJSVU(t, m)
		r := stream(t, v, `llm.stream(`+chat+`)`)
		if r.OK || r.ErrorClass != "http_5xx" || r.Attempts != 1 || len(r.Retried) != 0 || s.n.Load() != 1 {
			t.Errorf("result %+v after %d requests, want one failed attempt", r, s.n.Load())
		}
		want := []recordedError{{Class: "http_5xx", Message: "HTTP 500 Internal Server Error: Internal Server Error"}}
		if e := rec.Errors(); !reflect.DeepEqual(e, want) {
			t.Errorf("errors recorded %v, want %v", e, want)
		}
	})
}

func TestJSClientTransportOptions(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(okStream))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	ca := writeCA(t, srv)
	data, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // with no script, caFile is relative to the working directory
	m, err := NewModule(llm.Config{BaseURL: srv.URL, Model: jsModel}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	v := newJSVU(t, m)
	v.EnterInit()
	v.Run(`
const viaCA = llm.client({ tls: { caFile: 'ca.pem' } });
const h2 = llm.client({ http2: true, tls: { insecureSkipVerify: true }, idleTimeout: 0 });
const idle = llm.client({ idleTimeout: '5s' });`)
	v.LeaveInit()
	const chat = `{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }`
	if r := stream(t, v, `viaCA.stream(`+chat+`)`); !r.OK || r.Proto != "HTTP/1.1" || r.Timings.TLS <= 0 {
		t.Errorf("custom CA: %+v", r)
	}
	if r := stream(t, v, `h2.stream(`+chat+`)`); !r.OK || r.Proto != "HTTP/2.0" {
		t.Errorf("http2: %+v", r)
	}
	if r := stream(t, v, `llm.stream(`+chat+`)`); r.OK || r.ErrorClass != "tls" {
		t.Errorf("default client without the CA: %+v, want a tls failure", r)
	}
	// The clients' idle timeouts as configured: the default's, none, 5 s.
	idles := map[time.Duration]bool{}
	for _, cfg := range clientConfigs(t, m) {
		idles[cfg.IdleTimeout] = true
	}
	if want := map[time.Duration]bool{0: true, llm.NoIdleTimeout: true, 5 * time.Second: true}; !reflect.DeepEqual(idles, want) {
		t.Errorf("idle timeouts %v, want %v", idles, want)
	}
}

func TestJSIdleTimeout(t *testing.T) {
	_, m, _ := jsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, contentChunk("a"))
		sleep(r, 10*time.Second)
	}))
	v := newJSVU(t, m)
	r := stream(t, v, `llm.stream({ prompt: 'hi' }, { idleTimeout: 100 })`)
	if r.OK || r.ErrorClass != "idle_timeout" || r.E2E < 100 || !strings.Contains(r.Error, "100ms (idle timeout)") {
		t.Errorf("result %+v, want an idle timeout after 100 ms", r)
	}
}

func TestJSClientOptionErrors(t *testing.T) {
	_, m, _ := jsServer(t, http.HandlerFunc(okStream))
	tests := []struct{ src, want string }{
		{`llm.client({ retry: 3 })`, "TypeError: llm.client(options): retry: want an object such as { attempts: 3 }"},
		{`llm.client({ retry: { attempts: 1.5 } })`, "retry: attempts must be a whole number"},
		{`llm.client({ retry: { attempts: -1 } })`, "retry: negative attempts"},
		{`llm.client({ retry: { on: ['stream'] } })`, `retry: unknown error class "stream"`},
		{`llm.client({ retry: { on: 'http_429' } })`, "retry: on must be a list of error classes"},
		{`llm.client({ retry: { backoff: { base: 'soon' } } })`, `retry: backoff: base: "soon" is not a duration`},
		{`llm.client({ retry: { backoff: { base: '1m', max: '1s' } } })`, "backoff base 1m0s above its max 1s"},
		{`llm.client({ idleTimeout: -1 })`, "TypeError: llm.client(options): idleTimeout: must be positive"},
		{`llm.client({ tls: { caFile: 'no-such-ca.pem' } })`, `llm.client(options): tls.caFile "no-such-ca.pem": no such file: looked for no-such-ca.pem in the working directory`},
		{`llm.stream({ prompt: 'x' }, { retry: { on: ['canceled'] } })`, "TypeError: llm.stream(body, options): retry: canceled is never retried"},
		{`llm.stream({ prompt: 'x' }, { idleTimeout: 'never' })`, `TypeError: llm.stream(body, options): idleTimeout: "never" is not a duration`},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			v := newJSVU(t, m)
			_, err := v.Runtime().RunString(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A request the run stopped is not a failure: no message is recorded.
func TestJSCanceledRequestRecordsNoError(t *testing.T) {
	_, m, rec := jsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		sleep(r, 10*time.Second)
	}))
	v := newJSVU(t, m)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	v.Ctx = ctx
	if r := stream(t, v, `llm.stream({ prompt: 'hi' })`); r.ErrorClass != "canceled" {
		t.Fatalf("result %+v, want canceled", r)
	}
	if e := rec.Errors(); len(e) != 0 {
		t.Errorf("errors recorded %v for a canceled request", e)
	}
}

// A client's tokenizer downloaded from the hub stops with the VU: a
// stopped VU's llm.client() returns at once with its cancellation.
func TestJSClientTokenizerDownloadStopsWithTheVU(t *testing.T) {
	arrived := hfhubtest.StalledHub(t)
	_, m, _ := jsServer(t, http.HandlerFunc(okStream))
	v := newJSVU(t, m)
	ctx, stop := context.WithCancel(t.Context())
	v.Ctx = ctx
	go func() {
		<-arrived
		stop()
	}()
	_, err := v.Runtime().RunString(`llm.client({ tokenizer: 'llm-js-test/stalled' })`)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("error %v, want the VU's cancellation", err)
	}
}

// The result a script gets of a request whose server numbers were refused
// carries none of them: the summary refused them, and so does the script.
func TestJSResultKeepsNoRefusedServerNumber(t *testing.T) {
	for _, tc := range []struct {
		name, usage string
		prompt      int // the prompt count, kept when plausible
	}{
		{"negative", `{"prompt_tokens":3,"completion_tokens":-7}`, 3},
		{"over 2^31-1", `{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775807}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m, _ := jsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				startSSE(w)
				send(w, `{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}],"usage":`+tc.usage+`}`)
				send(w, "[DONE]")
			}))
			v := newJSVU(t, m)
			r := stream(t, v, `llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 })`)
			if r.OK || r.ErrorClass != "decode" {
				t.Fatalf("result %+v, want decode", r)
			}
			if r.OutputTokens != 0 || r.PromptTokens != tc.prompt {
				t.Errorf("outputTokens %d, promptTokens %d: want 0 and %d", r.OutputTokens, r.PromptTokens, tc.prompt)
			}
		})
	}
}
