package executor

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// coarseMargin is how long before a planned start the scheduling loop
// stops waiting on a plain Go timer (which it can leave for the end of
// the scenario) and waits on its alarm: on Linux the runtime's timers
// alone wake up to about a millisecond late on an idle CPU (the poller
// waits in whole milliseconds).
const coarseMargin = 2 * time.Millisecond

// alarm wakes the scheduling loop at a planned start, on time whether the
// process is idle or busy. It waits on two clocks at once, reading a
// timerfd through the runtime's poller with a read deadline at the same
// instant:
//   - on an idle CPU the timerfd ends the poller's wait to the microsecond,
//     where a Go timer alone would wait for the poller's next whole
//     millisecond;
//   - on a busy CPU the read deadline, a runtime timer, fires at the next
//     scheduling point and puts the loop at the head of the run queue,
//     where a thread sleeping in the kernel (nanosleep) would queue behind
//     every runnable goroutine on waking.
//
// Neither holds a CPU while it waits.
type alarm struct {
	f   *os.File // a non-blocking CLOCK_MONOTONIC timerfd; nil: timers only
	fd  int      // f's descriptor (f.Fd would make f blocking)
	buf [8]byte  // the expiration count a read returns
}

// newAlarm returns an alarm; without a timerfd (a sandbox that refuses
// it) it waits on Go timers only. Close releases it.
func newAlarm() *alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &alarm{}
	}
	return &alarm{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}
}

// sleepUntil blocks the calling goroutine until t.
func (a *alarm) sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		if a.f == nil || !a.wait(t, d) {
			a.Close() // a timerfd that failed once is not tried again
			time.Sleep(d)
			continue
		}
		if time.Until(t) == d {
			// The clock did not move while the goroutine waited on the
			// kernel's timer: it is the clock of a testing/synctest
			// bubble, which only the runtime's own sleeps advance.
			time.Sleep(d)
		}
	}
}

// wait arms the timerfd for d from now and reads it with a deadline at t;
// false when the timerfd failed (the caller sleeps instead).
func (a *alarm) wait(t time.Time, d time.Duration) bool {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(a.fd, 0, &spec, nil); err != nil {
		return false
	}
	if err := a.f.SetReadDeadline(t); err != nil {
		return false
	}
	_, err := a.f.Read(a.buf[:])
	return err == nil || errors.Is(err, os.ErrDeadlineExceeded)
}

// Close releases the timerfd; the alarm then waits on Go timers only.
func (a *alarm) Close() error {
	if a.f == nil {
		return nil
	}
	f := a.f
	a.f = nil
	return f.Close()
}
