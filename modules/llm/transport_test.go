package llm

import (
	"crypto/tls"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

// okStream answers a short, complete stream.
func okStream(w http.ResponseWriter, r *http.Request) {
	startSSE(w)
	send(w, contentChunk("a"))
	send(w, finishChunk)
	send(w, "[DONE]")
}

// newClient returns a client of cfg, failing the test on error.
func newClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// writeCA writes the certificate of a TLS test server to a PEM file and
// returns its path.
func writeCA(t testing.TB, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// quietServer returns an unstarted test server of h that does not log the
// TLS handshakes its clients fail or abandon.
func quietServer(h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	return srv
}

// TestConnectionErrorClasses produces dns, tls and connect failures with
// real names, servers and certificates.
func TestConnectionErrorClasses(t *testing.T) {
	t.Parallel()
	tlsSrv := quietServer(okStream)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(okStream))
	defer plain.Close()
	tests := []struct {
		name  string
		cfg   Config
		class ErrorClass
		msg   string
	}{
		// .invalid never resolves (RFC 6761).
		{"unknown name", Config{BaseURL: "http://llmrun-test.invalid:8000"}, ErrDNS, "lookup llmrun-test.invalid"},
		{"certificate of an unknown authority", Config{BaseURL: tlsSrv.URL}, ErrTLS, "certificate"},
		{"https to a plain HTTP server", Config{BaseURL: strings.Replace(plain.URL, "http:", "https:", 1)}, ErrTLS, "server gave HTTP response to HTTPS client"},
		{"refused", Config{BaseURL: "http://127.0.0.1:1"}, ErrConnect, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := newClient(t, tt.cfg).Stream(t.Context(), Request{Body: chatBody})
			if res.OK || res.Class != tt.class || !strings.Contains(res.Error, tt.msg) || res.Status != 0 || res.Attempts != 1 {
				t.Errorf("got class %q, status %d, attempts %d, error %q; want class %q, error containing %q",
					res.Class, res.Status, res.Attempts, res.Error, tt.class, tt.msg)
			}
		})
	}
}

func TestRetryAfterIsNoted(t *testing.T) {
	t.Parallel()
	date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		header   string
		min, max float64 // seconds
		msg      string
	}{
		{"7", 7, 7, "HTTP 429 Too Many Requests (Retry-After 7s): slow down"},
		{date, 3590, 3600, "(Retry-After 59m"},
		{"soon", 0, 0, "HTTP 429 Too Many Requests: slow down"},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tt.header)
				http.Error(w, "slow down", http.StatusTooManyRequests)
			}, Config{})
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if res.Class != ErrHTTP429 || res.RetryAfter < tt.min || res.RetryAfter > tt.max || !strings.Contains(res.Error, tt.msg) {
				t.Errorf("class %q, retryAfter %v, error %q; want http_429, Retry-After in [%v, %v], error containing %q",
					res.Class, res.RetryAfter, res.Error, tt.min, tt.max, tt.msg)
			}
		})
	}
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	// pace streams n tokens: the first after first, the others every gap;
	// false when the client went away.
	pace := func(first, gap time.Duration, n int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			d := first
			for range n {
				if !sleep(r, d) {
					return
				}
				send(w, contentChunk("a"))
				d = gap
			}
			send(w, finishChunk)
			send(w, "[DONE]")
		}
	}
	// Time is what these tests measure: they run in synctest bubbles,
	// whose clock is exact whatever the load of the machine.
	t.Run("stalled after the first token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const idle = 150 * time.Millisecond
			c := pipeServer(t, pace(0, 10*time.Second, 2), Config{IdleTimeout: idle})
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if res.Class != ErrIdleTimeout || res.Status != 200 || res.Chunks != 1 {
				t.Fatalf("class %q status %d chunks %d (%s), want idle_timeout after one token", res.Class, res.Status, res.Chunks, res.Error)
			}
			if res.E2E != ms(idle) {
				t.Errorf("ended after %.1f ms, want %v", res.E2E, idle)
			}
		})
	})
	t.Run("the wait for the first token is not idle", func(t *testing.T) {
		// The headers come at once, the first token after twice the idle
		// timeout: queueing and prefill are bounded by the total timeout
		// only.
		synctest.Test(t, func(t *testing.T) {
			const idle = 300 * time.Millisecond
			c := pipeServer(t, pace(2*idle, 5*time.Millisecond, 5), Config{IdleTimeout: idle})
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if !res.OK || res.Chunks != 5 || res.TTFT != ms(2*idle) {
				t.Errorf("ok %v (%s %s), chunks %d, TTFT %.1f ms; want 5 tokens, the first after %v", res.OK, res.Class, res.Error, res.Chunks, res.TTFT, 2*idle)
			}
		})
	})
	t.Run("request overrides", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := pipeServer(t, pace(0, 400*time.Millisecond, 2), Config{IdleTimeout: NoIdleTimeout})
			if c.idle != 0 {
				t.Fatalf("idle %v with NoIdleTimeout", c.idle)
			}
			res := c.Stream(t.Context(), Request{Body: chatBody, IdleTimeout: 100 * time.Millisecond})
			if res.Class != ErrIdleTimeout || !strings.Contains(res.Error, "100ms (idle timeout)") {
				t.Errorf("class %q (%s), want the request's idle timeout", res.Class, res.Error)
			}
			c = pipeServer(t, pace(0, 400*time.Millisecond, 2), Config{IdleTimeout: 100 * time.Millisecond})
			if res := c.Stream(t.Context(), Request{Body: chatBody, IdleTimeout: NoIdleTimeout}); !res.OK {
				t.Errorf("%s %s, want ok with the idle timeout off for the request", res.Class, res.Error)
			}
		})
	})
	t.Run("the total timeout stays", func(t *testing.T) {
		// Never idle, but too long.
		synctest.Test(t, func(t *testing.T) {
			c := pipeServer(t, pace(0, 30*time.Millisecond, 1000), Config{IdleTimeout: time.Second, Timeout: 200 * time.Millisecond})
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if res.Class != ErrTimeout || res.E2E != 200 || res.Chunks != 7 {
				t.Errorf("class %q after %.1f ms and %d chunks (%s), want timeout after 200 ms and 7 chunks", res.Class, res.E2E, res.Chunks, res.Error)
			}
		})
	})
	t.Run("never idle, for many times the idle timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := pipeServer(t, pace(0, 100*time.Millisecond, 20), Config{IdleTimeout: 150 * time.Millisecond})
			if res := c.Stream(t.Context(), Request{Body: chatBody}); !res.OK || res.Chunks != 20 {
				t.Errorf("ok %v (%s %s), chunks %d; want 20 tokens", res.OK, res.Class, res.Error, res.Chunks)
			}
		})
	})
	t.Run("stalled after many tokens", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const idle = 150 * time.Millisecond
			c := pipeServer(t, func(w http.ResponseWriter, r *http.Request) {
				startSSE(w)
				for i := range 5 {
					if i > 0 && !sleep(r, 100*time.Millisecond) {
						return
					}
					send(w, contentChunk("a"))
				}
				sleep(r, time.Hour)
			}, Config{IdleTimeout: idle})
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if res.Class != ErrIdleTimeout || res.Chunks != 5 || res.E2E != ms(400*time.Millisecond+idle) {
				t.Errorf("class %q after %d chunks and %.1f ms (%s), want idle_timeout after 5 tokens and 550 ms", res.Class, res.Chunks, res.E2E, res.Error)
			}
		})
	})
	t.Run("default", func(t *testing.T) {
		if c := newClient(t, Config{BaseURL: "http://127.0.0.1:1"}); c.idle != DefaultIdleTimeout || c.timeout != DefaultTimeout {
			t.Errorf("idle %v timeout %v, want the defaults", c.idle, c.timeout)
		}
	})
}

func TestTLSOptions(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(okStream))
	defer srv.Close()
	t.Run("custom CA", func(t *testing.T) {
		c := newClient(t, Config{BaseURL: srv.URL, TLS: TLSConfig{CAFile: writeCA(t, srv)}})
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if !res.OK {
			t.Fatalf("%s: %s", res.Class, res.Error)
		}
		if res.Timings.TLS <= 0 || res.Timings.Connect <= 0 || res.Timings.Queue < res.Timings.TLS {
			t.Errorf("timings %+v, want a TCP connect and a TLS handshake within the wait for the connection", res.Timings)
		}
		if res.Proto != "HTTP/1.1" {
			t.Errorf("proto %q, want HTTP/1.1 without the http2 option", res.Proto)
		}
	})
	t.Run("skip verification", func(t *testing.T) {
		res := newClient(t, Config{BaseURL: srv.URL, TLS: TLSConfig{InsecureSkipVerify: true}}).Stream(t.Context(), Request{Body: chatBody})
		if !res.OK {
			t.Fatalf("%s: %s", res.Class, res.Error)
		}
	})
	t.Run("bad CA files", func(t *testing.T) {
		notPEM := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
			t.Fatal(err)
		}
		for path, msg := range map[string]string{
			filepath.Join(t.TempDir(), "missing.pem"): "tls: reading the CA file",
			notPEM:      "tls: no PEM certificate in the CA file",
			"/dev/zero": "tls: reading the CA file: /dev/zero is a device, not a regular file",
		} {
			if _, err := NewClient(Config{BaseURL: srv.URL, TLS: TLSConfig{CAFile: path}}); err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("CA file %s: error %v, want %q", path, err, msg)
			}
		}
	})
}

func TestHTTP2(t *testing.T) {
	t.Parallel()
	var proto atomic.Int32
	h := func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		okStream(w, r)
	}
	t.Run("negotiated over TLS", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(h))
		srv.EnableHTTP2 = true
		srv.StartTLS()
		defer srv.Close()
		ca := writeCA(t, srv)
		for _, http2 := range []bool{false, true} {
			res := newClient(t, Config{BaseURL: srv.URL, HTTP2: http2, TLS: TLSConfig{CAFile: ca}}).Stream(t.Context(), Request{Body: chatBody})
			want, wantProto := int32(1), "HTTP/1.1"
			if http2 {
				want, wantProto = 2, "HTTP/2.0"
			}
			if !res.OK || proto.Load() != want || res.Proto != wantProto || res.OutputTokens != 1 {
				t.Errorf("http2 %v: ok %v (%s), server saw HTTP/%d, result proto %q; want HTTP/%d", http2, res.OK, res.Error, proto.Load(), res.Proto, want)
			}
		}
	})
	t.Run("h2c with prior knowledge", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(h))
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		defer srv.Close()
		res := newClient(t, Config{BaseURL: srv.URL, HTTP2: true}).Stream(t.Context(), Request{Body: chatBody})
		if !res.OK || proto.Load() != 2 || res.Proto != "HTTP/2.0" {
			t.Errorf("ok %v (%s), server saw HTTP/%d, result proto %q; want HTTP/2", res.OK, res.Error, proto.Load(), res.Proto)
		}
	})
}

// TestManyConnectionsHTTP2 checks that HTTP/2 multiplexes concurrent
// streams, all of them in flight together.
func TestManyConnectionsHTTP2(t *testing.T) {
	t.Parallel()
	const vus = 32
	release := make(chan struct{})
	var active atomic.Int32
	srv := quietServer(func(w http.ResponseWriter, r *http.Request) {
		if active.Add(1) == vus {
			close(release)
		}
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		okStream(w, r)
	})
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{}
	srv.StartTLS()
	defer srv.Close()
	c := newClient(t, Config{BaseURL: srv.URL, HTTP2: true, TLS: TLSConfig{InsecureSkipVerify: true}})
	results := make(chan *Result, vus)
	for range vus {
		go func() { results <- c.Stream(t.Context(), Request{Body: chatBody}) }()
	}
	for range vus {
		if res := <-results; !res.OK || res.Proto != "HTTP/2.0" {
			t.Errorf("%s %s %s", res.Proto, res.Class, res.Error)
		}
	}
	if n := active.Load(); n != vus {
		t.Errorf("%d requests reached the server, want %d", n, vus)
	}
}

// TestTransportDefaults pins what keeps the pool from capping the load:
// no per-host connection cap, idle connections kept for far more VUs than
// a run has, no total idle cap; and proxies from the environment, HTTP/1.1
// unless asked.
func TestTransportDefaults(t *testing.T) {
	t.Parallel()
	tr, err := newTransport(Config{}, "https")
	if err != nil {
		t.Fatal(err)
	}
	if tr.MaxConnsPerHost != 0 || tr.MaxIdleConnsPerHost < 10000 || tr.MaxIdleConns != 0 || tr.Proxy == nil || !tr.DisableCompression {
		t.Errorf("transport %+v", tr)
	}
	if p := tr.Protocols; !p.HTTP1() || p.HTTP2() || p.UnencryptedHTTP2() {
		t.Errorf("protocols %v, want HTTP/1.1 only", p)
	}
	if tr.TLSClientConfig != nil {
		t.Errorf("TLS config %+v without TLS options", tr.TLSClientConfig)
	}
	tr, err = newTransport(Config{MaxConns: 8, HTTP2: true}, "https")
	if err != nil || tr.MaxConnsPerHost != 8 || !tr.Protocols.HTTP2() || !tr.Protocols.HTTP1() {
		t.Errorf("with a cap and HTTP/2: %+v, %v", tr, err)
	}
}

// TestConnectionPhases checks that a new connection by name reports its
// DNS lookup and TCP connect within the wait for the connection, and a
// reused one none of them.
func TestConnectionPhases(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(okStream))
	defer srv.Close()
	c := newClient(t, Config{BaseURL: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)})
	res := c.Stream(t.Context(), Request{Body: chatBody})
	if !res.OK {
		t.Fatalf("%s: %s", res.Class, res.Error)
	}
	tm := res.Timings
	if tm.DNS <= 0 || tm.Connect <= 0 || tm.TLS != 0 || tm.Queue < tm.DNS+tm.Connect || tm.TTFB < tm.Queue {
		t.Errorf("timings %+v, want a lookup and a connect within the queue, before the first byte", tm)
	}
	if res := c.Stream(t.Context(), Request{Body: chatBody}); !res.OK || res.Timings.DNS != 0 || res.Timings.Connect != 0 {
		t.Errorf("reused connection: %+v (%s)", res.Timings, res.Error)
	}
}

// TestRequestsAroundTheWriteBuffer sends requests smaller and larger than
// the buffer a connection writes them through, on one connection: each
// arrives whole.
func TestRequestsAroundTheWriteBuffer(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.Store(string(body))
		okStream(w, r)
	}, Config{})
	for _, n := range []int{10, transport.RequestWriteBuffer - 300, transport.RequestWriteBuffer, 2 * transport.RequestWriteBuffer, 100 << 10} {
		prompt := strings.Repeat("x", n)
		res := c.Stream(t.Context(), Request{Body: map[string]any{"prompt": prompt}})
		if !res.OK {
			t.Fatalf("a prompt of %d bytes: %s: %s", n, res.Class, res.Error)
		}
		if body, _ := got.Load().(string); !strings.Contains(body, `"prompt":"`+prompt+`"`) {
			t.Errorf("a prompt of %d bytes: the server got a body of %d bytes without it", n, len(body))
		}
		if n > 10 && res.Timings.Connect != 0 {
			t.Errorf("a prompt of %d bytes took a new connection", n)
		}
	}
}

// TestDrainBounded reads a response that does not end after its [DONE]:
// the request ends well, and its drain lasts drainGrace, or until the idle
// timeout after the last bytes when that comes first.
func TestDrainBounded(t *testing.T) {
	t.Parallel()
	endless := func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, contentChunk("a"))
		send(w, finishChunk)
		send(w, "[DONE]")
		sleep(r, time.Hour)
	}
	for _, tt := range []struct {
		idle, want time.Duration
	}{
		{NoIdleTimeout, drainGrace},
		{10 * time.Second, drainGrace},
		{300 * time.Millisecond, 300 * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			c := pipeServer(t, endless, Config{IdleTimeout: tt.idle})
			start := time.Now()
			res := c.Stream(t.Context(), Request{Body: chatBody})
			if took := time.Since(start); !res.OK || took != tt.want {
				t.Errorf("idle timeout %v: ok %v (%s %s), returned after %v; want ok after %v", tt.idle, res.OK, res.Class, res.Error, took, tt.want)
			}
		})
	}
}

// TestResponsesAroundTheReadBuffer reads responses whose header lines,
// chunks and events are smaller and larger than the buffer a connection
// reads them through: each is read whole.
func TestResponsesAroundTheReadBuffer(t *testing.T) {
	t.Parallel()
	for _, n := range []int{10, transport.ResponseReadBuffer - 100, transport.ResponseReadBuffer, 3 * transport.ResponseReadBuffer, 100 << 10} {
		text := strings.Repeat("y", n)
		_, c := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Long", text)
			startSSE(w)
			send(w, contentChunk(text))
			send(w, contentChunk(text))
			send(w, finishChunk)
			send(w, "[DONE]")
		}, Config{})
		res := c.Stream(t.Context(), Request{Body: chatBody, KeepText: true})
		if !res.OK || res.Chunks != 2 || res.Text != text+text {
			t.Errorf("%d bytes a chunk: ok %v (%s %s), %d chunks, %d bytes of text; want 2 chunks of it", n, res.OK, res.Class, res.Error, res.Chunks, len(res.Text))
		}
	}
}
