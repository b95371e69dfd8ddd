package llm

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"
	"time"
)

// tracer records the connection phases of one request through
// net/http/httptrace, and the failures of its DNS lookup and TLS handshake.
// Its hooks may run on the transport's goroutines (a dial, the connection's
// read loop), hence the lock. A request takes one with newTracer, and
// gives it back with release once done with it.
type tracer struct {
	mu           sync.Mutex
	getConn      time.Time // the request start: a connection is asked for
	gotConn      time.Time
	reused       bool
	dnsStart     time.Time
	dnsEnd       time.Time
	connectStart time.Time
	connectEnd   time.Time // TCP connected
	tlsStart     time.Time
	tlsEnd       time.Time
	firstByte    time.Time
	dnsErr       error
	tlsErr       error
	conn         net.Conn // the connection the request got
	// asked counts the connections the request asked for (GetConn), and
	// idleAtOnce those it got at once from the idle ones (GotConn
	// WasIdle): when they are equal, the transport started no dial for
	// it, whose hooks could run after the request ended.
	asked, idleAtOnce int
	// hooks feed the tracer: made once with it, they serve each request
	// that takes it.
	hooks httptrace.ClientTrace
	// traced is parent with the hooks (context), kept for the next
	// request under the same parent.
	parent, traced context.Context
	// own says that the tracer is its request's alone, never given back:
	// its hooks took in those of a trace its context already had.
	own bool
}

// tracers holds the tracers that no hook can reach any more (release),
// each with its hooks, for the next requests.
var tracers = sync.Pool{New: func() any {
	t := new(tracer)
	t.hooks = t.newHooks()
	return t
}}

// newTracer returns a tracer with nothing recorded for a request under
// ctx: one given back by an earlier request, unless ctx already has a
// trace, which httptrace composes into the tracer's hooks.
func newTracer(ctx context.Context) *tracer {
	if httptrace.ContextClientTrace(ctx) != nil {
		t := &tracer{own: true}
		t.hooks = t.newHooks()
		return t
	}
	return tracers.Get().(*tracer)
}

// context returns parent with t's hooks, which the request's context
// derives from: the last one while parent stays the same (a VU's
// requests share one parent).
func (t *tracer) context(parent context.Context) context.Context {
	if t.traced == nil || t.parent != parent {
		t.parent, t.traced = parent, httptrace.WithClientTrace(parent, &t.hooks)
	}
	return t.traced
}

// release gives t back for another request, unless one of its hooks
// may still run: call it once the request's response was read, its
// first byte having come (the transport's read loop reports it before
// it returns the response); it keeps t only if the transport started
// no dial for the request (a dial may call its hooks later, such as
// when an idle connection came first) and the connection was HTTP/1
// (HTTP/2 reports its connections itself).
func (t *tracer) release(http1 bool) {
	if !t.own && t.reusable(http1) {
		*t = tracer{hooks: t.hooks, parent: t.parent, traced: t.traced}
		tracers.Put(t)
	}
}

// reusable reports whether no hook of t can run any more, as release
// says.
func (t *tracer) reusable(http1 bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return http1 && t.asked > 0 && t.asked == t.idleAtOnce && !t.firstByte.IsZero()
}

// newHooks returns the hooks that feed t. Only the first of repeated
// events counts.
func (t *tracer) newHooks() httptrace.ClientTrace {
	return httptrace.ClientTrace{
		GetConn: func(string) {
			t.mark(&t.getConn)
			t.mu.Lock()
			defer t.mu.Unlock()
			t.asked++
		},
		GotConn: func(info httptrace.GotConnInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if info.WasIdle {
				t.idleAtOnce++
			}
			if t.gotConn.IsZero() {
				t.gotConn, t.reused, t.conn = time.Now(), info.Reused, info.Conn
			}
		},
		DNSStart: func(httptrace.DNSStartInfo) { t.mark(&t.dnsStart) },
		DNSDone: func(info httptrace.DNSDoneInfo) {
			t.done(&t.dnsEnd, &t.dnsErr, info.Err)
		},
		ConnectStart: func(string, string) { t.mark(&t.connectStart) },
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				t.mark(&t.connectEnd)
			}
		},
		TLSHandshakeStart: func() { t.mark(&t.tlsStart) },
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			t.done(&t.tlsEnd, &t.tlsErr, err)
		},
		GotFirstResponseByte: t.markFirstByte,
	}
}

// markFirstByte records the first byte of the response headers at its
// receive time where the connection tells it, as token times are: TTFB
// and TTFT then compare on one clock.
func (t *tracer) markFirstByte() {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.firstByte.IsZero() {
		if c := connReceiveClock(t.conn); c != nil {
			now = c.receivedBy(now)
		}
		t.firstByte = now
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

// done marks the end of a phase that may fail: its end time when it
// succeeded, its first error otherwise.
func (t *tracer) done(at *time.Time, failed *error, err error) {
	if err == nil {
		t.mark(at)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if *failed == nil {
		*failed = err
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

// failures returns the errors of the DNS lookup and the TLS handshake, nil
// when they succeeded or did not happen.
func (t *tracer) failures() (dns, tls error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dnsErr, t.tlsErr
}

// timings returns the phases measured so far, relative to start.
func (t *tracer) timings(start time.Time) Timings {
	t.mu.Lock()
	defer t.mu.Unlock()
	var tm Timings
	if !t.gotConn.IsZero() {
		tm.Queue = ms(t.gotConn.Sub(start))
	}
	span := func(from, to time.Time) float64 {
		if t.reused || from.IsZero() || to.IsZero() {
			return 0
		}
		return ms(to.Sub(from))
	}
	tm.DNS = span(t.dnsStart, t.dnsEnd)
	tm.Connect = span(t.connectStart, t.connectEnd)
	tm.TLS = span(t.tlsStart, t.tlsEnd)
	if !t.firstByte.IsZero() {
		tm.TTFB = ms(t.firstByte.Sub(start))
	}
	return tm
}

// receiveClock is the arrival clock of the request's connection; nil when
// it has none.
func (t *tracer) receiveClock() receiveClock {
	t.mu.Lock()
	conn := t.conn
	t.mu.Unlock()
	return connReceiveClock(conn)
}

// firstBytes is what the server sent first on the request's connection,
// when it is a plain-text HTTP/1 one (headConn); nil otherwise.
func (t *tracer) firstBytes() []byte {
	t.mu.Lock()
	conn := t.conn
	t.mu.Unlock()
	if hc, ok := conn.(*headConn); ok {
		return hc.first()
	}
	return nil
}
