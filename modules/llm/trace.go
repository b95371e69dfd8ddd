package llm

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"time"
)

// tracer records the connection phases of one request through
// net/http/httptrace. Its hooks may run on the transport's goroutines (a
// dial, the connection's read loop), hence the lock.
type tracer struct {
	mu           sync.Mutex
	getConn      time.Time // the request start: a connection is asked for
	gotConn      time.Time
	reused       bool
	connectStart time.Time
	connectEnd   time.Time // TCP connected, or TLS handshake done
	firstByte    time.Time
}

// clientTrace returns the hooks that feed t. Only the first of repeated
// events counts, except that a TLS handshake extends the connect phase.
func (t *tracer) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) { t.mark(&t.getConn) },
		GotConn: func(info httptrace.GotConnInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.gotConn.IsZero() {
				t.gotConn, t.reused = time.Now(), info.Reused
			}
		},
		ConnectStart: func(string, string) { t.mark(&t.connectStart) },
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				t.mark(&t.connectEnd)
			}
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				t.mu.Lock()
				defer t.mu.Unlock()
				t.connectEnd = time.Now()
			}
		},
		GotFirstResponseByte: func() { t.mark(&t.firstByte) },
	}
}

func (t *tracer) mark(at *time.Time) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if at.IsZero() {
		*at = now
	}
}

// start returns the request start: when the transport asked for a
// connection, the last moment before the request is written that the
// transport reports; before, if it never got that far.
func (t *tracer) start(before time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.getConn.IsZero() {
		return before
	}
	return t.getConn
}

// connected reports whether the request got a connection.
func (t *tracer) connected() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.gotConn.IsZero()
}

// timings returns the phases measured so far, relative to start.
func (t *tracer) timings(start time.Time) Timings {
	t.mu.Lock()
	defer t.mu.Unlock()
	var tm Timings
	if !t.gotConn.IsZero() {
		tm.Queue = ms(t.gotConn.Sub(start))
	}
	if !t.reused && !t.connectStart.IsZero() && !t.connectEnd.IsZero() {
		tm.Connect = ms(t.connectEnd.Sub(t.connectStart))
	}
	if !t.firstByte.IsZero() {
		tm.TTFB = ms(t.firstByte.Sub(start))
	}
	return tm
}
