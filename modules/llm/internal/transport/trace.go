package transport

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"
	"time"
)

// Tracer records the connection phases of one request through
// net/http/httptrace, and the failures of its DNS lookup and TLS handshake.
// Its hooks may run on the transport's goroutines (a dial, the connection's
// read loop), hence the lock. A request takes one with NewTracer, and
// gives it back with Release once done with it.
type Tracer struct {
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
	// hooks feed the Tracer: made once with it, they serve each request
	// that takes it.
	hooks httptrace.ClientTrace
	// traced is parent with the hooks (context), kept for the next
	// request under the same parent.
	parent, traced context.Context
	// own says that the Tracer is its request's alone, never given back:
	// its hooks took in those of a trace its context already had.
	own bool
}

// tracers holds the tracers that no hook can reach any more (Release),
// each with its hooks, for the next requests.
var tracers = sync.Pool{New: func() any {
	t := new(Tracer)
	t.hooks = t.newHooks()
	return t
}}

// NewTracer returns a Tracer with nothing recorded for a request under
// ctx: one given back by an earlier request, unless ctx already has a
// trace, which httptrace composes into the Tracer's hooks.
func NewTracer(ctx context.Context) *Tracer {
	if httptrace.ContextClientTrace(ctx) != nil {
		t := &Tracer{own: true}
		t.hooks = t.newHooks()
		return t
	}
	return tracers.Get().(*Tracer)
}

// Context returns parent with t's hooks, which the request's context
// derives from: the last one while parent stays the same (a VU's
// requests share one parent).
func (t *Tracer) Context(parent context.Context) context.Context {
	if t.traced == nil || t.parent != parent {
		t.parent, t.traced = parent, httptrace.WithClientTrace(parent, &t.hooks)
	}
	return t.traced
}

// Release gives t back for another request, unless one of its hooks
// may still run: call it once the request's response was read, its
// first byte having come (the transport's read loop reports it before
// it returns the response); it keeps t only if the transport started
// no dial for the request (a dial may call its hooks later, such as
// when an idle connection came first) and the connection was HTTP/1
// (HTTP/2 reports its connections itself).
func (t *Tracer) Release(http1 bool) {
	if !t.own && t.reusable(http1) {
		*t = Tracer{hooks: t.hooks, parent: t.parent, traced: t.traced}
		tracers.Put(t)
	}
}

// reusable reports whether no hook of t can run any more, as Release
// says.
func (t *Tracer) reusable(http1 bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return http1 && t.asked > 0 && t.asked == t.idleAtOnce && !t.firstByte.IsZero()
}

// newHooks returns the hooks that feed t. Only the first of repeated
// events counts.
func (t *Tracer) newHooks() httptrace.ClientTrace {
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
func (t *Tracer) markFirstByte() {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.firstByte.IsZero() {
		if c := connReceiveClock(t.conn); c != nil {
			now = c.ReceivedBy(now)
		}
		t.firstByte = now
	}
}

func (t *Tracer) mark(at *time.Time) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if at.IsZero() {
		*at = now
	}
}

// done marks the end of a phase that may fail: its end time when it
// succeeded, its first error otherwise.
func (t *Tracer) done(at *time.Time, failed *error, err error) {
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

// Start returns the request start: when the transport asked for a
// connection, the last moment before the request is written that the
// transport reports; before, if it never got that far.
func (t *Tracer) Start(before time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.getConn.IsZero() {
		return before
	}
	return t.getConn
}

// Connected reports whether the request got a connection.
func (t *Tracer) Connected() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.gotConn.IsZero()
}

// Failures returns the errors of the DNS lookup and the TLS handshake, nil
// when they succeeded or did not happen.
func (t *Tracer) Failures() (dns, tls error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dnsErr, t.tlsErr
}

// Phases are the connection phases of a request, each 0 when it did not
// happen (a reused connection has no DNS, connect nor TLS).
type Phases struct {
	// Queue is the wait for a connection; DNS, Connect and TLS its lookup,
	// TCP connect and handshake; TTFB the wait for the response's first
	// byte. Queue and TTFB are since the request's start.
	Queue, DNS, Connect, TLS, TTFB time.Duration
}

// Phases returns the phases measured so far, relative to start.
func (t *Tracer) Phases(start time.Time) Phases {
	t.mu.Lock()
	defer t.mu.Unlock()
	var p Phases
	if !t.gotConn.IsZero() {
		p.Queue = t.gotConn.Sub(start)
	}
	span := func(from, to time.Time) time.Duration {
		if t.reused || from.IsZero() || to.IsZero() {
			return 0
		}
		return to.Sub(from)
	}
	p.DNS = span(t.dnsStart, t.dnsEnd)
	p.Connect = span(t.connectStart, t.connectEnd)
	p.TLS = span(t.tlsStart, t.tlsEnd)
	if !t.firstByte.IsZero() {
		p.TTFB = t.firstByte.Sub(start)
	}
	return p
}

// ReceiveClock is the arrival clock of the request's connection; nil when
// it has none.
func (t *Tracer) ReceiveClock() ReceiveClock {
	t.mu.Lock()
	conn := t.conn
	t.mu.Unlock()
	return connReceiveClock(conn)
}

// FirstBytes is what the server sent first on the request's connection,
// when it is a plain-text HTTP/1 one (headConn); nil otherwise.
func (t *Tracer) FirstBytes() []byte {
	t.mu.Lock()
	conn := t.conn
	t.mu.Unlock()
	if hc, ok := conn.(*headConn); ok {
		return hc.first()
	}
	return nil
}
