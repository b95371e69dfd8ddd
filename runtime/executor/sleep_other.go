//go:build !linux

package executor

import "time"

// coarseMargin is how long before a planned start the scheduling loop
// stops sleeping on a Go timer; elsewhere than Linux the timer is the
// finest sleep there is.
const coarseMargin = 0

// sleepUntil sleeps until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
