package llm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

// countedServer starts a test server of h and counts the connections it
// accepted and closed.
func countedServer(t *testing.T, h http.HandlerFunc) (srv *httptest.Server, accepted, closed *atomic.Int32) {
	t.Helper()
	accepted, closed = new(atomic.Int32), new(atomic.Int32)
	srv = httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			accepted.Add(1)
		case http.StateClosed, http.StateHijacked:
			closed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, accepted, closed
}

// h1Client returns a client of the server at base with cfg, failing the
// test unless it took h1Transport.
func h1Client(t *testing.T, base string, cfg Config) (*Client, *transport.H1) {
	t.Helper()
	cfg.BaseURL = base
	c := newClient(t, cfg)
	tr, ok := c.http.Transport.(*transport.H1)
	if !ok {
		t.Fatalf("transport %T, want *transport.H1", c.http.Transport)
	}
	return c, tr
}

// get sends a GET to url with c's HTTP client and reads the body to the
// end.
func get(ctx context.Context, c *Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestH1Chosen checks which clients take h1Transport: plain-text
// HTTP/1.1 servers reached without a proxy, and no other.
func TestH1Chosen(t *testing.T) {
	t.Parallel()
	noProxy := func(*http.Request) (*url.URL, error) { return nil, nil }
	proxy := http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.test:3128"})
	for _, tc := range []struct {
		name  string
		base  string
		cfg   Config
		proxy func(*http.Request) (*url.URL, error)
		want  bool
	}{
		{"http", "http://127.0.0.1:1/v1", Config{}, noProxy, true},
		{"capped", "http://127.0.0.1:1/v1", Config{MaxConns: 3}, noProxy, true},
		{"https", "https://127.0.0.1:1/v1", Config{}, noProxy, false},
		{"h2c", "http://127.0.0.1:1/v1", Config{HTTP2: true}, noProxy, false},
		{"proxy", "http://llm.test/v1", Config{}, proxy, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := url.Parse(tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if got := useH1(tc.cfg, base, tc.proxy); got != tc.want {
				t.Errorf("useH1 = %v, want %v", got, tc.want)
			}
		})
	}
	c := newClient(t, Config{BaseURL: "https://127.0.0.1:1"})
	if _, ok := c.http.Transport.(*http.Transport); !ok {
		t.Errorf("https client transport %T, want *http.Transport", c.http.Transport)
	}
}

// TestH1KeepAlive checks that one connection serves sequential requests
// whatever the body's framing, and that a server closing the connection
// after its response makes the next request dial.
func TestH1KeepAlive(t *testing.T) {
	t.Parallel()
	const requests = 3
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want int32 // connections accepted
	}{
		{"content-length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}, 1},
		{"chunked", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hel")
			w.(http.Flusher).Flush()
			io.WriteString(w, "lo")
		}, 1},
		{"connection close", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, "hello")
		}, requests},
		{"close-delimited", func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			buf.WriteString("HTTP/1.1 200 OK\r\n\r\nhello")
			buf.Flush()
		}, requests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, accepted, _ := countedServer(t, tc.h)
			c, _ := h1Client(t, srv.URL, Config{})
			for i := range requests {
				body, err := get(t.Context(), c, srv.URL)
				if err != nil || body != "hello" {
					t.Fatalf("request %d: %q, %v", i, body, err)
				}
			}
			if n := accepted.Load(); n != tc.want {
				t.Errorf("%d connections for %d requests, want %d", n, requests, tc.want)
			}
		})
	}
}

// TestH1ServerClosedIdle checks that a connection the server closed while
// idle is not used again: the next request dials and succeeds.
func TestH1ServerClosedIdle(t *testing.T) {
	t.Parallel()
	// With maxConns, the closed connection's place serves the new one: a
	// place lost would leave the request waiting for its context.
	for _, maxConns := range []int{0, 1} {
		t.Run(fmt.Sprintf("maxConns %d", maxConns), func(t *testing.T) {
			srv, accepted, closed := countedServer(t, okStream)
			c, _ := h1Client(t, srv.URL, Config{MaxConns: maxConns})
			if res := c.Stream(t.Context(), Request{Body: chatBody}); !res.OK {
				t.Fatalf("%s: %s", res.Class, res.Error)
			}
			srv.CloseClientConnections()
			waitUntil(t, "the server to close the idle connection", func() bool { return closed.Load() == 1 })
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			res := c.Stream(ctx, Request{Body: chatBody})
			if !res.OK || res.Attempts != 1 {
				t.Fatalf("after the server closed the idle connection: %s: %s (%d attempts)", res.Class, res.Error, res.Attempts)
			}
			if n := accepted.Load(); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
		})
	}
}

// TestH1ClosedWithoutAnswer checks net/http's rule for a request whose
// reused connection the server closes without a byte of answer: a POST
// fails, as it may have reached the server; one with an Idempotency-Key
// is sent again on a new connection.
func TestH1ClosedWithoutAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		header   string
		reset    bool // the server resets the connection rather than closing it
		wantOK   bool
		wantErr  string
		accepted int32
	}{
		{"post", "", false, false, "server closed idle connection", 1},
		{"idempotent post", "Idempotency-Key", false, true, "", 2},
		{"post, reset", "", true, false, "connection reset by peer", 1},
		{"idempotent post, reset", "Idempotency-Key", true, true, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var accepted atomic.Int32
			var served atomic.Int32
			var wg sync.WaitGroup
			t.Cleanup(func() { l.Close(); wg.Wait() })
			wg.Go(func() {
				for {
					conn, err := l.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					wg.Go(func() { serveDroppingSecond(conn, &served, tc.reset) })
				}
			})
			base := "http://" + l.Addr().String()
			c, _ := h1Client(t, base, Config{})
			for i := range 2 {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base, strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				if tc.header != "" {
					req.Header.Set(tc.header, "k1")
				}
				resp, err := c.http.Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if i == 0 && err != nil {
					t.Fatalf("first request: %v", err)
				}
				if i == 1 && (err == nil) != tc.wantOK {
					t.Errorf("second request: error %v, want ok %v", err, tc.wantOK)
				}
				if i == 1 && err != nil && !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("second request: error %v, want %q", err, tc.wantErr)
				}
			}
			if n := accepted.Load(); n != tc.accepted {
				t.Errorf("%d connections, want %d", n, tc.accepted)
			}
		})
	}
}

// serveDroppingSecond answers the requests on conn with "ok", except the
// second the listener gets, on which it closes the connection unanswered,
// or resets it.
func serveDroppingSecond(conn net.Conn, served *atomic.Int32, reset bool) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		if served.Add(1) == 2 {
			if reset {
				_ = conn.(*net.TCPConn).SetLinger(0) // the close sends RST
			}
			return
		}
		if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
			return
		}
	}
}

// TestH1CancelMidStream checks that canceling a request whose body is
// being read stops the read at once with the context's error and closes
// the connection.
func TestH1CancelMidStream(t *testing.T) {
	t.Parallel()
	gone := make(chan struct{})
	srv, _, closed := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, contentChunk("a"))
		<-r.Context().Done()
		close(gone)
	})
	c, _ := h1Client(t, srv.URL, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v, want %v", err, context.Canceled)
	}
	resp.Body.Close()
	<-gone
	waitUntil(t, "the connection to close", func() bool { return closed.Load() == 1 })
}

// TestH1MaxConns checks that MaxConns bounds the connections: requests
// beyond it wait for one, and all are served.
func TestH1MaxConns(t *testing.T) {
	t.Parallel()
	const maxConns, requests = 2, 5
	release := make(chan struct{})
	var active, most atomic.Int32
	srv, accepted, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		defer active.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		io.WriteString(w, "hello")
	})
	releaseAll := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseAll) // before the server's, which waits for its handlers
	c, tr := h1Client(t, srv.URL, Config{MaxConns: maxConns})
	errs := make(chan error, requests)
	for range requests {
		go func() {
			_, err := get(t.Context(), c, srv.URL)
			errs <- err
		}()
	}
	waitUntil(t, "the capped requests at the server, the others waiting", func() bool {
		_, waiting := tr.Conns()
		return waiting == requests-maxConns && active.Load() == maxConns
	})
	releaseAll()
	for range requests {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n, m := accepted.Load(), most.Load(); n != maxConns || m != maxConns {
		t.Errorf("%d connections, at most %d requests at once; want %d", n, m, maxConns)
	}
}

// TestH1WaitCanceled checks that a request waiting for a connection under
// MaxConns stops when its context ends.
func TestH1WaitCanceled(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	c, tr := h1Client(t, srv.URL, Config{MaxConns: 1})
	go get(t.Context(), c, srv.URL)
	waitUntil(t, "the first request to hold the connection", func() bool {
		open, _ := tr.Conns()
		return open == 1
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		_, err := get(ctx, c, srv.URL)
		done <- err
	}()
	waitUntil(t, "the second request to wait", func() bool {
		_, waiting := tr.Conns()
		return waiting == 1
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("waiting request: %v, want %v", err, context.Canceled)
	}
}

// TestH1HeadBounded checks that a response head without end (a server
// that sends headers forever) fails the request as decode once it passes
// transport.MaxResponseHead, as net/http's Transport bounds it, instead of growing
// the client's memory.
func TestH1HeadBounded(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		go io.Copy(io.Discard, conn)
		line := "X-Filler: " + strings.Repeat("x", 1000) + "\r\n"
		if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\n"); err != nil {
			return
		}
		for range 2 * transport.MaxResponseHead / len(line) { // twice the bound, then it stops
			if _, err := io.WriteString(conn, line); err != nil {
				return
			}
		}
	})
	c, _ := h1Client(t, "http://"+l.Addr().String(), Config{})
	res := c.Stream(t.Context(), Request{Body: chatBody})
	if res.OK || res.Class != ErrDecode || !strings.Contains(res.Error, "larger than 10 MiB") {
		t.Errorf("an endless head: %s: %s, want decode naming the bound", res.Class, res.Error)
	}
}

// waitUntil polls cond until it holds, failing b after a minute.
func waitUntil(b testing.TB, what string, cond func() bool) {
	b.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	const limit = time.Minute
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("waited %s for %s", limit, what)
		}
		<-tick.C
	}
}
