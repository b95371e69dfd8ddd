package transport

import (
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
			tr := &Tracer{}
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
