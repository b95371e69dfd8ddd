package executor

import (
	"fmt"
	"math"
	"time"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

// llmrun's limits on the load a script may ask for, listed in
// docs/limits.md. Beyond them the options are refused with an error that
// names the field, before anything is allocated for them.
const (
	// VULimit is the most VUs one process runs, all scenarios together.
	VULimit = 100_000
	// RateLimit is the highest arrival rate of a scenario, in iterations
	// per second.
	RateLimit = 1_000_000
	// DurationLimit is the longest duration an option may give: a
	// scenario's duration, a stage's, a timeout, a time unit.
	DurationLimit = 365 * 24 * time.Hour
)

// limitsDoc is where the limits are explained.
const limitsDoc = "(see docs/limits.md)"

// checkVUs refuses a number of VUs above VULimit, naming field.
func checkVUs[N int | float64](field string, n N) error {
	if n > VULimit {
		return &FieldError{Field: field, Err: fmt.Errorf("%s exceeds llmrun's limit of %d VUs per process %s", num(float64(n)), VULimit, limitsDoc)}
	}
	return nil
}

// checkRate refuses a rate (iterations per unit) above RateLimit per
// second, naming field.
func checkRate(field string, rate float64, unit time.Duration) error {
	perSecond := rate * float64(time.Second) / float64(unit)
	if perSecond > RateLimit {
		return &FieldError{Field: field, Err: fmt.Errorf("%s %s is %s iterations per second, above llmrun's limit of %d per second per scenario %s",
			num(rate), textfmt.Per(unit), num(perSecond), RateLimit, limitsDoc)}
	}
	return nil
}

// errDurationLimit is the error of a duration, as the user wrote it,
// longer than DurationLimit.
func errDurationLimit(written string) error {
	return fmt.Errorf("%s exceeds llmrun's limit of %s (365 days) for a duration %s", written, DurationLimit, limitsDoc)
}

// errNotFinite is the error of a duration given as NaN or Infinity.
var errNotFinite = fmt.Errorf("must be a finite duration, like \"30s\" or a number of milliseconds (NaN and Infinity are not durations)")

// msDuration converts a number of milliseconds, as written, to a duration
// within DurationLimit.
func msDuration(ms float64, written string) (time.Duration, error) {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return 0, errNotFinite
	}
	if math.Abs(ms) > float64(DurationLimit/time.Millisecond) {
		return 0, errDurationLimit(written)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// CheckDuration refuses a duration longer than DurationLimit (one from a
// command-line flag: those in options are checked as they are decoded).
func CheckDuration(d time.Duration) error {
	if d > DurationLimit || d < -DurationLimit {
		return errDurationLimit(d.String())
	}
	return nil
}
