package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
	"time"
)

// The connections' buffers and idle connections, shared by H1 and the
// net/http transport it hands other requests to.
const (
	// MaxIdleConnsPerHost keeps idle connections for far more VUs than a
	// run has, so that keep-alive never silently caps the load.
	MaxIdleConnsPerHost = 10000
	// RequestWriteBuffer is the buffer each connection writes its requests
	// through, 4 KiB by default in net/http: the connection keeps it, for
	// nothing, while it reads a stream. A request larger than it takes one
	// write more.
	RequestWriteBuffer = 2 << 10
	// ResponseReadBuffer is the buffer each connection reads its responses
	// through, 4 KiB by default in net/http: a stream brings a chunk of a
	// few hundred bytes at a time, and a read takes at most this much of
	// what has arrived.
	ResponseReadBuffer = 2 << 10
)

// H1 is an HTTP/1.1 round tripper for one plain-text server
// reached without a proxy. Unlike net/http's Transport, which keeps two
// goroutines, their stacks and channels per connection and hands each
// request and response between them, it does a request's I/O on the
// caller's goroutine (the VU's): it writes the request, reads the response
// head, and the response body reads the connection directly. Requests for
// any other scheme or host (a redirect elsewhere) go to net/http's.
//
// A connection goes back to the idle ones only when its response was read
// to the end and both sides allow keep-alive. A request that fails on a
// reused connection is sent again on another one only as net/http would:
// when nothing of it was written, or when the server closed the connection
// without a byte of answer and the request is replayable (GET, HEAD, or
// with an Idempotency-Key); a POST that may have reached the server is
// never sent twice.
type H1 struct {
	host string // the server's host:port; its requests go here
	// baseHost is the base URL's host as written: a request's URL host
	// equal to it is the server's, without building host:port.
	baseHost string
	// Dial dials the server's connections: the other transport's dial
	// unless set before the first request.
	Dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	maxConns    int           // idle ones included; 0: no cap
	idleTimeout time.Duration // how long an idle connection is kept
	other       *http.Transport

	mu   sync.Mutex
	idle []*h1Conn // the oldest first
	open int       // connections open or being dialled, idle ones included
	// waiting are the requests waiting, in the order they came, for a
	// connection under maxConns. A connection going idle is handed to the
	// first of them, and a connection closing hands it its place (nil: it
	// dials one), so that no request overtakes another that waits.
	waiting []chan *h1Conn
}

// h1Conn is one connection with its read buffer. Its write buffer is
// taken only while a request is written (h1Writers). What each request
// needs of it (written, interrupt, probe) is made once, with it, rather
// than by every request.
type h1Conn struct {
	conn      net.Conn
	br        *bufio.Reader // reads head
	head      headReader
	idleSince time.Time
	reused    bool
	// written counts the bytes of the request being written.
	written countingWriter
	// interrupt ends the connection's I/O under way, when the context of
	// its request ends.
	interrupt func()
	probe     peerProbe
}

// newH1Conn returns conn ready for requests.
func newH1Conn(conn net.Conn) *h1Conn {
	pc := &h1Conn{conn: conn, head: headReader{r: conn, left: -1}, written: countingWriter{w: conn}}
	pc.br = bufio.NewReaderSize(&pc.head, ResponseReadBuffer)
	pc.interrupt = func() { _ = conn.SetDeadline(time.Unix(1, 0)) }
	pc.probe.init(conn)
	return pc
}

// MaxResponseHead bounds a response's head, its status line and headers
// (1xx responses before it included), as net/http's Transport does by
// default (MaxResponseHeaderBytes).
const MaxResponseHead = 10 << 20

// ErrHeadTooLarge is the error of a response head over MaxResponseHead.
var ErrHeadTooLarge = errors.New("the response's head (status line and headers) is larger than 10 MiB")

// headReader is what a connection's bufio.Reader reads from: the
// connection, at most left bytes more while a response head is read
// (left ≥ 0), without a bound once it is (left < 0).
type headReader struct {
	r    io.Reader
	left int
}

func (h *headReader) Read(p []byte) (int, error) {
	if h.left < 0 {
		return h.r.Read(p)
	}
	if h.left == 0 {
		return 0, ErrHeadTooLarge
	}
	n, err := h.r.Read(p[:min(len(p), h.left)])
	h.left -= n
	return n, err
}

// h1Writers are the write buffers of requests being written.
var h1Writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, RequestWriteBuffer) }}

// NewH1 returns an H1 for the server at base that dials,
// caps connections and keeps idle ones as other does, and hands other
// every request it does not serve.
func NewH1(base *url.URL, other *http.Transport) *H1 {
	return &H1{host: hostPort(base), baseHost: base.Host, Dial: other.DialContext, maxConns: other.MaxConnsPerHost,
		idleTimeout: other.IdleConnTimeout, other: other}
}

// hostPort returns the host:port of an http URL.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// Conns reports the connections open or being dialled, idle ones
// included, and the requests waiting for one under the cap.
func (t *H1) Conns() (open, waiting int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open, len(t.waiting)
}

// CloseIdleConnections closes the idle connections, the transport's own
// and net/http's.
func (t *H1) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	for _, pc := range idle {
		t.dropLocked(pc)
	}
	t.mu.Unlock()
	t.other.CloseIdleConnections()
}

// RoundTrip sends req and returns its response, whose body reads the
// connection on the caller's goroutine.
func (t *H1) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || req.URL.Host != t.baseHost && hostPort(req.URL) != t.host {
		return t.other.RoundTrip(req)
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	for {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(t.host)
		}
		pc, err := t.getConn(ctx, trace)
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		resp, err := t.exchange(ctx, pc, req, trace)
		if err == nil {
			return resp, nil
		}
		if !pc.reused || !resendable(req, err) {
			closeRequestBody(req)
			return nil, err
		}
		if req, err = rewound(req); err != nil {
			return nil, err
		}
	}
}

// closeRequestBody closes the body of a request that will not be sent.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// getConn returns an idle connection to the server, or a new one within
// maxConns, waiting its turn while the cap is reached.
func (t *H1) getConn(ctx context.Context, trace *httptrace.ClientTrace) (*h1Conn, error) {
	for {
		t.mu.Lock()
		if pc := t.takeIdle(); pc != nil {
			t.mu.Unlock()
			if pc = t.usable(pc); pc == nil {
				// The place of a connection that closed.
				return t.dialConn(ctx, trace)
			}
			return t.reuse(pc, trace), nil
		}
		if t.maxConns == 0 || t.open < t.maxConns {
			t.open++
			t.mu.Unlock()
			return t.dialConn(ctx, trace)
		}
		turn := make(chan *h1Conn, 1)
		t.waiting = append(t.waiting, turn)
		t.mu.Unlock()
		select {
		case pc := <-turn:
			if pc = t.usable(pc); pc == nil {
				// The place of a connection that closed.
				return t.dialConn(ctx, trace)
			}
			return t.reuse(pc, trace), nil
		case <-ctx.Done():
			t.leaveQueue(turn)
			return nil, ctx.Err()
		}
	}
}

// usable returns pc, an idle connection, unless the server closed it
// while it was idle: then it closes it and returns nil, the place kept.
// The peek is a system call, made without the pool's lock.
func (t *H1) usable(pc *h1Conn) *h1Conn {
	if pc == nil || !pc.probe.peerClosed() {
		return pc
	}
	_ = pc.conn.Close()
	return nil
}

// reuse says that the request got pc, an idle connection.
func (t *H1) reuse(pc *h1Conn, trace *httptrace.ClientTrace) *h1Conn {
	pc.reused = true
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: pc.conn, Reused: true, WasIdle: true, IdleTime: time.Since(pc.idleSince)})
	}
	return pc
}

// leaveQueue takes turn, a request that stopped waiting, out of the
// queue; what was handed to it meanwhile goes to the next.
func (t *H1) leaveQueue(turn chan *h1Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.waiting, turn); i >= 0 {
		t.waiting = slices.Delete(t.waiting, i, i+1)
		return
	}
	if pc := <-turn; pc != nil {
		t.putIdleLocked(pc)
	} else {
		t.freePlaceLocked()
	}
}

// takeIdle takes the most recently idle connection, closing those idle
// too long; nil when there is none. t.mu is held.
func (t *H1) takeIdle() *h1Conn {
	now := time.Now()
	stale := 0
	for stale < len(t.idle) && t.idleTimeout > 0 && now.Sub(t.idle[stale].idleSince) > t.idleTimeout {
		t.dropLocked(t.idle[stale])
		stale++
	}
	t.idle = t.idle[stale:]
	if len(t.idle) == 0 {
		return nil
	}
	pc := t.idle[len(t.idle)-1]
	t.idle[len(t.idle)-1] = nil
	t.idle = t.idle[:len(t.idle)-1]
	return pc
}

// dialConn opens a connection in a place already counted in t.open.
func (t *H1) dialConn(ctx context.Context, trace *httptrace.ClientTrace) (*h1Conn, error) {
	conn, err := t.dialAside(ctx)
	if err != nil {
		t.mu.Lock()
		t.freePlaceLocked()
		t.mu.Unlock()
		return nil, err
	}
	pc := newH1Conn(conn)
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: conn})
	}
	return pc, nil
}

// dialResult is what a dial returned.
type dialResult struct {
	conn net.Conn
	err  error
}

// dialAside dials t.host on a goroutine of its own, and waits for it. The
// frames of net's dial are deep (some 2.5 KB under net.Dialer.DialContext):
// on the caller's goroutine, a VU's, they would grow its stack to 16 KiB at
// its first request, which it would then keep while it streams.
func (t *H1) dialAside(ctx context.Context) (net.Conn, error) {
	done := make(chan dialResult, 1)
	go func() {
		conn, err := t.Dial(ctx, "tcp", t.host)
		done <- dialResult{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// putIdle hands pc to the first waiting request, or keeps it for the
// next, or closes it when as many are idle as are kept.
func (t *H1) putIdle(pc *h1Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.putIdleLocked(pc)
}

func (t *H1) putIdleLocked(pc *h1Conn) {
	pc.idleSince = time.Now()
	switch {
	case len(t.waiting) > 0:
		t.waiting[0] <- pc
		t.waiting = t.waiting[1:]
	case len(t.idle) >= MaxIdleConnsPerHost:
		t.dropLocked(pc)
	default:
		t.idle = append(t.idle, pc)
	}
}

// closeConn closes pc, which is not idle, and frees its place.
func (t *H1) closeConn(pc *h1Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropLocked(pc)
}

// dropLocked closes pc and frees its place; t.mu is held.
func (t *H1) dropLocked(pc *h1Conn) {
	_ = pc.conn.Close()
	t.freePlaceLocked()
}

// freePlaceLocked gives the place of a connection that closed (or was
// never dialled) to the first waiting request, else frees it; t.mu is
// held.
func (t *H1) freePlaceLocked() {
	if len(t.waiting) > 0 {
		t.waiting[0] <- nil
		t.waiting = t.waiting[1:]
		return
	}
	t.open--
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// nothingWritten is the failure of a request of which no byte reached the
// connection.
type nothingWritten struct{ err error }

func (e nothingWritten) Error() string { return e.err.Error() }
func (e nothingWritten) Unwrap() error { return e.err }

// errServerClosedIdle is the failure of a request on a reused connection
// that the server closed without a byte of answer, as net/http names it.
var errServerClosedIdle = errors.New("http: server closed idle connection")

// noAnswer is the failure to read any byte of an answer on a reused
// connection (a reset) other than its end: as with errServerClosedIdle,
// net/http sends a replayable request again.
type noAnswer struct{ err error }

func (e noAnswer) Error() string { return e.err.Error() }
func (e noAnswer) Unwrap() error { return e.err }

// exchange writes req on pc and reads the response head. The end of ctx
// interrupts the connection's I/O until the response body is closed; a
// failure closes pc.
func (t *H1) exchange(ctx context.Context, pc *h1Conn, req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	stop := context.AfterFunc(ctx, pc.interrupt)
	fail := func(err error) (*http.Response, error) {
		stop()
		t.closeConn(pc)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	cw := &pc.written
	cw.n = 0
	bw := h1Writers.Get().(*bufio.Writer)
	bw.Reset(cw)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	h1Writers.Put(bw)
	if err != nil {
		if cw.n == 0 {
			err = nothingWritten{err}
		}
		return fail(err)
	}
	if trace != nil && trace.WroteHeaders != nil {
		trace.WroteHeaders()
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	pc.head.left = MaxResponseHead
	defer func() { pc.head.left = -1 }()
	if _, err := pc.br.Peek(1); err != nil {
		switch {
		case !pc.reused || ctx.Err() != nil:
		case errors.Is(err, io.EOF):
			err = errServerClosedIdle
		default:
			err = noAnswer{err}
		}
		return fail(err)
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			b := &h1Body{t: t, pc: pc, body: resp.Body, stop: stop, ctx: ctx,
				keep: !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols}
			b.done = resp.ContentLength == 0 || req.Method == http.MethodHead
			resp.Body = b
			return resp, nil
		}
	}
}

// resendable reports whether req, which failed with err on a reused
// connection, is sent again, by net/http's rule: one of which no byte was
// written, when its body can be had again; one of which no byte of answer
// came back, when it is replayable.
func resendable(req *http.Request, err error) bool {
	var nw nothingWritten
	if errors.As(err, &nw) {
		return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	}
	var na noAnswer
	return (errors.Is(err, errServerClosedIdle) || errors.As(err, &na)) && replayable(req)
}

// replayable reports whether req may be sent twice: it is idempotent and
// its body can be had again.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// rewound returns req with its body from the start, for another attempt.
func rewound(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, fmt.Errorf("sending the request again: %w", err)
	}
	again := *req
	again.Body = body
	return &again, nil
}

// h1Body is a response body read on the caller's goroutine. Closed after
// its end, it gives its connection back for another request when both
// sides allow keep-alive; otherwise it closes the connection.
type h1Body struct {
	t    *H1
	pc   *h1Conn
	body io.ReadCloser
	stop func() bool // ends the watch of ctx
	ctx  context.Context
	keep bool // keep-alive allowed
	done bool // read to the end
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.pc == nil {
		return 0, errors.New("http: read on closed response body")
	}
	n, err := b.body.Read(p)
	switch {
	case err == io.EOF:
		b.done = true
	case err != nil && b.ctx.Err() != nil:
		err = b.ctx.Err()
	}
	return n, err
}

func (b *h1Body) Close() error {
	if b.pc == nil {
		return nil
	}
	pc := b.pc
	b.pc = nil
	watched := b.stop()
	if b.done && b.keep && watched && pc.br.Buffered() == 0 {
		b.t.putIdle(pc)
		return nil
	}
	b.t.closeConn(pc)
	return nil
}
