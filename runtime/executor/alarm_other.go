//go:build !linux

package executor

import "time"

// coarseMargin is how long before a planned start the scheduling loop
// stops waiting on a timer it can leave for the end of the scenario;
// elsewhere than Linux the runtime's timer is the finest wait there is.
const coarseMargin = 0

// alarm wakes the scheduling loop at a planned start: a Go timer.
type alarm struct{}

func newAlarm() *alarm { return &alarm{} }

// sleepUntil blocks the calling goroutine until t.
func (*alarm) sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// Close releases nothing.
func (*alarm) Close() error { return nil }
