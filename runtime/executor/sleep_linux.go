package executor

import (
	"runtime"
	"syscall"
	"time"
)

// coarseMargin is how long before a planned start the scheduling loop
// stops sleeping on a Go timer: on Linux the runtime's timers wake up to
// about a millisecond late (the poller waits in whole milliseconds).
const coarseMargin = 2 * time.Millisecond

// sleepUntil blocks the calling thread until t with nanosleep, which wakes
// within tens of microseconds. It is only ever asked for the last
// coarseMargin before a start.
func sleepUntil(t time.Time) {
	if time.Until(t) <= 0 {
		return
	}
	// nanosleep keeps this goroutine's P: first let the goroutines waiting
	// on it (the iteration just started) run.
	runtime.Gosched()
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil) // EINTR: the loop sleeps what is left
		if time.Until(t) == d {
			// The clock did not move while the thread slept: it is the
			// clock of a testing/synctest bubble, which only the
			// runtime's own sleeps advance.
			time.Sleep(d)
		}
	}
}
