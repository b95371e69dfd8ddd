package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/refused"
)

// A probe of the simulator succeeds in every API, and learns how the
// server streams: the chat API reports usage, one token per chunk and
// prefix-cache hits, and has no reasoning fields.
func TestProbeSimulator(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	for _, api := range APIs {
		t.Run(string(api), func(t *testing.T) {
			c, err := NewClient(Config{BaseURL: sim.URL(), Model: "llmsim-1", API: api})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			p := c.Probe(context.Background())
			if !p.OK || p.Fatal || p.API != api || p.Target != sim.URL() {
				t.Fatalf("probe %+v", p)
			}
			if api != ChatCompletions {
				return
			}
			if !p.Stream || !p.UsageReported || p.TokensPerChunk != 1 || p.Reasoning || !p.PrefixCacheReported || p.TTFT <= 0 {
				t.Errorf("chat probe %+v: want streamed, usage, 1 token per chunk, no reasoning, prefix cache reported", p)
			}
		})
	}
}

// A server that reasons first and sends two tokens a chunk shows both.
func TestProbeLearnsReasoningAndTokensPerChunk(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, `{"choices":[{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":null}]}`)
		send(w, contentChunk("hello"))
		send(w, finishChunk)
		send(w, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}`)
		send(w, "[DONE]")
	}, Config{Model: "m"})
	p := c.Probe(context.Background())
	if !p.OK || !p.Reasoning || p.TokensPerChunk != 2 || p.PrefixCacheReported || !p.UsageReported {
		t.Errorf("probe %+v: want reasoning, 2 tokens per chunk, no prefix cache reported", p)
	}
}

// Failures no load can fix are fatal, with what to fix; those load may get
// past (a busy or warming server) are not.
func TestProbeFailures(t *testing.T) {
	t.Parallel()
	refused := refused.URL(t)
	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Error(w, body, code) }
	}
	tests := []struct {
		name    string
		h       http.HandlerFunc // nil: the refused address
		class   ErrorClass
		fatal   bool
		fix     string
		listed  string
		apiKey  string
		noModel bool
	}{
		{name: "refused", class: ErrConnect, fatal: true, fix: "nothing accepts connections at " + refused},
		{name: "unauthorized", h: status(401, "bad key"), class: ErrHTTP4xx, fatal: true, fix: "the server refused the credentials", apiKey: "sk-secret"},
		{name: "no key sent", h: status(401, "missing key"), class: ErrHTTP4xx, fatal: true, fix: "the run sent none: export the API key in OPENAI_API_KEY, or in a variable of your own named with --api-key-env"},
		{name: "wrong path", h: status(404, "404 page not found"), class: ErrHTTP4xx, fatal: true, fix: "check the path of --base-url", noModel: true},
		{name: "unknown model", h: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				w.Write([]byte(`{"data":[{"id":"served-model"}]}`))
				return
			}
			http.Error(w, `{"error":{"message":"The model m does not exist."}}`, 404)
		}, class: ErrHTTP4xx, fatal: true, fix: `does not serve model "m"`, listed: "no"},
		{name: "not an LLM server", h: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>welcome</html>"))
		}, class: ErrDecode, fatal: true, fix: "serving endpoint"},
		{name: "a stream of nothing", h: func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, "[DONE]")
		}, class: ErrDecode, fatal: true, fix: "answered the preflight's request for up to 16 tokens with no token"},
		{name: "overloaded", h: status(503, "loading the model"), class: ErrHTTP5xx},
		{name: "rate limited", h: status(429, "slow down"), class: ErrHTTP429},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Model: "m", APIKey: tc.apiKey}
			if tc.noModel {
				cfg.Model = ""
			}
			var c *Client
			if tc.h == nil {
				cfg.BaseURL = refused
				var err error
				if c, err = NewClient(cfg); err != nil {
					t.Fatal(err)
				}
			} else {
				_, c = newServer(t, tc.h, cfg)
			}
			p := c.Probe(context.Background())
			if p.OK || p.Class != tc.class || p.Fatal != tc.fatal || p.ModelListed != tc.listed {
				t.Fatalf("probe %+v: want class %s, fatal %t, model listed %q", p, tc.class, tc.fatal, tc.listed)
			}
			if !strings.Contains(p.Fix, tc.fix) {
				t.Errorf("fix %q, want it to say %q", p.Fix, tc.fix)
			}
			if tc.apiKey != "" && strings.Contains(p.Error+p.Fix, tc.apiKey) {
				t.Errorf("the probe leaks the API key: %+v", p)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:8000/v1":          "http://127.0.0.1:8000/v1",
		"https://user:hunter2@host/v1":      "https://user:xxxxx@host/v1",
		"http://host/v1?api-key=sk-1&org=x": "http://host/v1?api-key=xxxxx&org=xxxxx",
		"":                                  "",
		"::not a url":                       "::not a url",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server whose certificate the client does not trust fails the probe as
// a TLS fault no load can fix.
func TestProbeUntrustedCertificate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	p := c.Probe(context.Background())
	if p.OK || p.Class != ErrTLS || !p.Fatal || !strings.Contains(p.Fix, "TLS handshake failed") {
		t.Errorf("probe %+v: want a fatal tls failure", p)
	}
	// The fix names what exists: caFile for a script's client, the system's
	// trust store for --base-url (which has no CA flag).
	for _, want := range []string{"tls: { caFile", "--base-url", "SSL_CERT_FILE"} {
		if !strings.Contains(p.Fix, want) {
			t.Errorf("fix %q does not name %q", p.Fix, want)
		}
	}
}
