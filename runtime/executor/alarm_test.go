package executor

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestAlarmNeverEarly: whichever clock wakes it (the kernel's timer or the
// runtime's), the alarm never returns before the time it was given, also
// when an expiration left over from the previous wait is still pending.
func TestAlarmNeverEarly(t *testing.T) {
	a := newAlarm()
	defer a.Close()
	for i, d := range []time.Duration{0, -time.Millisecond, 50 * time.Microsecond, time.Millisecond, 10 * time.Microsecond, 2 * time.Millisecond, 300 * time.Microsecond} {
		planned := time.Now().Add(d)
		a.sleepUntil(planned)
		if now := time.Now(); now.Before(planned) {
			t.Fatalf("wait %d (%s): returned %s before the planned time", i, d, planned.Sub(now))
		}
	}
}

// TestAlarmInBubble: in a testing/synctest bubble, whose clock only the
// runtime's sleeps move, the alarm still returns, at the planned time.
func TestAlarmInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAlarm()
		defer a.Close()
		start := time.Now()
		for _, d := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 500 * time.Microsecond} {
			planned := time.Now().Add(d)
			a.sleepUntil(planned)
			if got := time.Now(); !got.Equal(planned) {
				t.Fatalf("woke at %s, planned %s", got.Sub(start), planned.Sub(start))
			}
		}
	})
}

// TestAlarmAfterClose: a closed alarm falls back to the runtime's timers.
func TestAlarmAfterClose(t *testing.T) {
	a := newAlarm()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	planned := time.Now().Add(time.Millisecond)
	a.sleepUntil(planned)
	if time.Now().Before(planned) {
		t.Fatal("returned early")
	}
}
