package engine

import "time"

// MaxDuration is the longest the scenarios can take together: the latest
// end of any of them (its latest start plus its executor's MaxDuration,
// graceful stop included), from the start of the run.
func (e *Engine) MaxDuration() time.Duration {
	var end time.Duration
	for _, sc := range e.scenarios {
		end = max(end, sc.LatestStart+sc.Config.MaxDuration())
	}
	return end
}

// MaxRunTime is the longest Run and HandleSummary can take once the VUs
// are ready: setup() and teardown() each within its timeout, the
// scenarios within MaxDuration, and handleSummary() within
// HandleSummaryTimeout when the script exports it.
func (e *Engine) MaxRunTime() time.Duration {
	d := e.timeout(e.options.SetupTimeout) + e.MaxDuration() + e.timeout(e.options.TeardownTimeout)
	if e.HasHandleSummary() {
		d += HandleSummaryTimeout
	}
	return d
}
