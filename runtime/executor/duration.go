package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Duration is a duration in options: a Go/k6 duration string ("30s",
// "1m30s", "500ms") or a number of milliseconds. Set records whether it was
// given, so defaults apply only to absent fields.
type Duration struct {
	D   time.Duration
	Set bool
}

// ParseDuration parses a duration string as options accept it; a bare
// number is milliseconds.
// A duration beyond DurationLimit, NaN or Infinity is an error.
func ParseDuration(s string) (time.Duration, error) {
	if ms, err := strconv.ParseFloat(s, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return msDuration(ms, strconv.Quote(s)+" (milliseconds)")
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && wellFormed(s):
		return 0, errDurationLimit(strconv.Quote(s))
	case err != nil:
		return 0, fmt.Errorf("invalid duration %q: use a number with a unit, like \"30s\", \"2m\" or \"1h30m\"", s)
	case CheckDuration(d) != nil:
		return 0, errDurationLimit(strconv.Quote(s))
	}
	return d, nil
}

// durationSyntax is a Go duration as time.ParseDuration reads it: signed
// numbers, each with a unit.
var durationSyntax = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

// wellFormed says that s is written as a duration with units ("3h20m"),
// so that time.ParseDuration refusing it means it overflowed, not a typo
// ("30mm").
func wellFormed(s string) bool { return durationSyntax.MatchString(s) }

// UnmarshalJSON accepts a string or a number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*d = Duration{}
		return nil
	}
	var v time.Duration
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		parsed, err := ParseDuration(s)
		if err != nil {
			return err
		}
		v = parsed
	} else {
		var ms float64
		if err := json.Unmarshal(b, &ms); err != nil {
			if len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
				return errDurationLimit(string(b) + " (milliseconds)")
			}
			return fmt.Errorf("invalid duration %s: use a string like \"30s\" or a number of milliseconds", b)
		}
		parsed, err := msDuration(ms, string(b)+" (milliseconds)")
		if err != nil {
			return err
		}
		v = parsed
	}
	*d = Duration{D: v, Set: true}
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.D.String()) }

// String is the duration's text.
func (d Duration) String() string { return d.D.String() }
