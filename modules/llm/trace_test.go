package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
)

// A tracer serves another request only when no hook can run any more:
// its connections all came at once from the idle ones (no dial that
// could report later), over HTTP/1, with the response's first byte in.
func TestTracerReusable(t *testing.T) {
	t.Parallel()
	idle := httptrace.GotConnInfo{Reused: true, WasIdle: true}
	dialed := httptrace.GotConnInfo{}
	tests := []struct {
		name  string
		conns []httptrace.GotConnInfo
		asked int
		first bool
		http1 bool
		want  bool
	}{
		{"idle connection", []httptrace.GotConnInfo{idle}, 1, true, true, true},
		{"idle connection twice (a retry)", []httptrace.GotConnInfo{idle, idle}, 2, true, true, true},
		{"dialed", []httptrace.GotConnInfo{dialed}, 1, true, true, false},
		{"handed over while dialing", []httptrace.GotConnInfo{{Reused: true}}, 1, true, true, false},
		{"retried on a dial", []httptrace.GotConnInfo{idle, dialed}, 2, true, true, false},
		{"asked again, not got", []httptrace.GotConnInfo{idle}, 2, true, true, false},
		{"no first byte", []httptrace.GotConnInfo{idle}, 1, false, true, false},
		{"HTTP/2", []httptrace.GotConnInfo{idle}, 1, true, false, false},
		{"nothing asked", nil, 0, true, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tracer{}
			tr.hooks = tr.newHooks()
			for range tc.asked {
				tr.hooks.GetConn("127.0.0.1:1")
			}
			for _, info := range tc.conns {
				tr.hooks.GotConn(info)
			}
			if tc.first {
				tr.hooks.GotFirstResponseByte()
			}
			if got := tr.reusable(tc.http1); got != tc.want {
				t.Errorf("reusable: %v, want %v", got, tc.want)
			}
		})
	}
}

// Requests that reuse tracers measure their own connections: a new
// connection's connect time, none on a kept-alive one, a first byte
// each.
func TestTimingsWithReusedTracers(t *testing.T) {
	t.Parallel()
	c := oneTokenClient(t)
	for i := range 12 {
		fresh := i%4 == 0
		if fresh {
			c.CloseIdleConnections()
		}
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if !res.OK {
			t.Fatalf("request %d: %s %s", i, res.Class, res.Error)
		}
		if tm := res.Timings; (tm.Connect > 0) != fresh || tm.TTFB <= 0 || tm.Queue < 0 || tm.DNS != 0 || tm.TLS != 0 {
			t.Errorf("request %d (new connection: %v): timings %+v", i, fresh, tm)
		}
	}
}

// A caller's own trace in the request's context sees each of its
// requests once, however many requests were traced before, its own or
// under another trace, and the request its timings.
func TestCallersTraceComposes(t *testing.T) {
	t.Parallel()
	c := oneTokenClient(t)
	var firstBytes [2]int
	ctxs := [2]context.Context{}
	for k := range ctxs {
		ctxs[k] = httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotFirstResponseByte: func() { firstBytes[k]++ }})
	}
	for i := range 10 {
		res := c.Stream(ctxs[i%2], Request{Body: chatBody})
		if !res.OK || res.Timings.TTFB <= 0 {
			t.Fatalf("request %d: %s %s, timings %+v", i, res.Class, res.Error, res.Timings)
		}
		if want := [2]int{(i + 2) / 2, (i + 1) / 2}; firstBytes != want {
			t.Fatalf("after request %d the callers' traces saw %v first bytes, want %v", i, firstBytes, want)
		}
	}
}

// oneTokenClient is a client of a server that answers every request with
// a stream of one token.
func oneTokenClient(t *testing.T) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		startSSE(w)
		send(w, contentChunk("a"))
		send(w, finishChunk)
		send(w, "[DONE]")
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}
