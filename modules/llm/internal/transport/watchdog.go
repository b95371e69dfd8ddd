package transport

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Watchdog ends one attempt of a request, through its cancel, at the
// attempt's total timeout, and, when it has an idle timeout, once its
// response body, after its first bytes, brings no byte for that long. One
// timer serves both, and a read that brings bytes only notes its time: the
// timer, when it fires before the deadline, sleeps again until the idle
// timeout after the latest bytes if some came since it was set. A stream
// thus resets no timer per chunk, and holds one timer, not two.
type Watchdog struct {
	cancel  context.CancelCauseFunc
	timeout time.Duration // the total timeout, for its error
	idle    time.Duration // 0: none
	start   time.Time
	timer   *time.Timer
	// body is the response body Read reads, set by Watch; begun is set
	// by the first Read that brings bytes. Both belong to the reading
	// goroutine.
	body  io.Reader
	begun bool
	// last is when the latest bytes came, since start.
	last atomic.Int64

	mu       sync.Mutex    // guards what follows, and the timer's resets
	deadline time.Duration // since start
	idling   bool          // the idle timeout runs: the body's first bytes came
	stopped  bool          // the attempt ended: the timer stays stopped
}

// NewWatchdog starts the Watchdog of an attempt that cancel ends, with its
// total timeout and its idle timeout (0: none).
func NewWatchdog(cancel context.CancelCauseFunc, timeout, idle time.Duration) *Watchdog {
	w := &Watchdog{cancel: cancel, timeout: timeout, idle: idle, start: time.Now(), deadline: timeout}
	w.mu.Lock()
	w.timer = time.AfterFunc(timeout, w.fire)
	w.mu.Unlock()
	return w
}

// Watch returns body, read through w when it has an idle timeout.
func (w *Watchdog) Watch(body io.Reader) io.Reader {
	if w.idle <= 0 {
		return body
	}
	w.body = body
	return w
}

// Read reads the body, noting when bytes came.
func (w *Watchdog) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 {
		now := time.Since(w.start)
		w.last.Store(int64(now))
		if !w.begun {
			w.begun = true
			w.mu.Lock()
			w.idling = true
			w.arm(now)
			w.mu.Unlock()
		}
	}
	return n, err
}

// fire ends the attempt at its deadline or its idle timeout, whichever
// came, or sets the timer again for the earlier of them.
func (w *Watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Since(w.start)
	switch {
	case w.stopped:
	case now >= w.deadline:
		w.cancel(&TimeoutError{w.timeout})
	case w.idling && now >= w.idleEnd():
		w.cancel(&IdleTimeoutError{w.idle})
	default:
		w.arm(now)
	}
}

// Shorten moves the deadline to d from now, for the drain of a finished
// response; the idle timeout still applies.
func (w *Watchdog) Shorten(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Since(w.start)
	w.deadline = now + d
	w.arm(now)
}

// arm sets the timer for the deadline or, when it comes first, the end of
// the idle timeout. now is the time since start. Call it with mu held.
func (w *Watchdog) arm(now time.Duration) {
	next := w.deadline
	if w.idling {
		next = min(next, w.idleEnd())
	}
	w.timer.Reset(next - now)
}

// idleEnd is when the idle timeout ends, since start, unless more bytes
// come.
func (w *Watchdog) idleEnd() time.Duration {
	return time.Duration(w.last.Load()) + w.idle
}

// Stop stops the timer for good.
func (w *Watchdog) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}

// TimeoutError is the cause of a request context canceled by the watchdog's
// total timeout.
type TimeoutError struct{ after time.Duration }

func (e *TimeoutError) Error() string { return "request timed out after " + e.after.String() }

// IdleTimeoutError is the cause of a request context canceled by the
// watchdog's idle timeout.
type IdleTimeoutError struct{ after time.Duration }

func (e *IdleTimeoutError) Error() string {
	return "no data from the server for " + e.after.String() + " (idle timeout)"
}
