package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
)

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
