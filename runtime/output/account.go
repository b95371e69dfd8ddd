package output

import (
	"maps"
	"sync"

	"github.com/llmrun/llmrun/runtime/summary"
)

// MaxDropReasons bounds the distinct reasons an Account keeps for what it
// dropped; further ones are counted together under its Other label.
const MaxDropReasons = 16

// Account is what became of the items (records, points) an output was
// given: how many it wrote, how many it dropped and why. It is what the
// output's report (summary.OutputReport) says was written and lost. Its
// zero value is an empty account; it is safe for concurrent use and must
// not be copied once used.
type Account struct {
	// Other is the reason under which drops are counted once
	// MaxDropReasons-1 others are: "other causes (see the error)".
	Other string

	mu               sync.Mutex
	written, dropped int64
	reasons          map[string]int64
}

// Wrote counts n items written.
func (a *Account) Wrote(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.written += int64(n)
}

// Drop counts n items dropped for reason; n of 0 or less counts nothing.
func (a *Account) Drop(n int, reason string) {
	if n <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, known := a.reasons[reason]; !known && len(a.reasons) >= MaxDropReasons-1 {
		reason = a.Other
	}
	if a.reasons == nil {
		a.reasons = map[string]int64{}
	}
	a.dropped += int64(n)
	a.reasons[reason] += int64(n)
}

// Report is the account as an output reports it: its counts and a copy
// of its reasons; the output fills in its name and error.
func (a *Account) Report() summary.OutputReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	return summary.OutputReport{Written: a.written, Dropped: a.dropped, Reasons: maps.Clone(a.reasons)}
}
