package output

import (
	"maps"

	"github.com/llmrun/llmrun/runtime/summary"
)

// MaxDropReasons bounds the distinct reasons an Account keeps for what it
// dropped; further ones are counted together under its other label.
const MaxDropReasons = 16

// Account is what became of the items (records, points) an output was
// given: how many it wrote, how many it dropped and why. It is what the
// output's report (summary.OutputReport) says was written and lost. An
// Account is not safe for concurrent use: the output's queue keeps it
// under its own lock.
type Account struct {
	written, dropped int64
	reasons          map[string]int64
	// other is the reason under which drops are counted once
	// MaxDropReasons-1 others are: "other causes (see the error)".
	other string
}

// NewAccount returns an empty account whose drops beyond MaxDropReasons
// distinct reasons are counted under other.
func NewAccount(other string) Account {
	return Account{reasons: map[string]int64{}, other: other}
}

// Wrote counts n items written.
func (a *Account) Wrote(n int) { a.written += int64(n) }

// Drop counts n items dropped for reason; n of 0 or less counts nothing.
func (a *Account) Drop(n int, reason string) {
	if n <= 0 {
		return
	}
	if _, known := a.reasons[reason]; !known && len(a.reasons) >= MaxDropReasons-1 {
		reason = a.other
	}
	a.dropped += int64(n)
	a.reasons[reason] += int64(n)
}

// Report is the account as an output reports it: its counts and a copy
// of its reasons; the output fills in its name and error.
func (a *Account) Report() summary.OutputReport {
	return summary.OutputReport{Written: a.written, Dropped: a.dropped, Reasons: maps.Clone(a.reasons)}
}
