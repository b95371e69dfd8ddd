package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
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
func ParseDuration(s string) (time.Duration, error) {
	if ms, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: use a number with a unit, like \"30s\", \"2m\" or \"1h30m\"", s)
	}
	return d, nil
}

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
			return fmt.Errorf("invalid duration %s: use a string like \"30s\" or a number of milliseconds", b)
		}
		v = time.Duration(ms * float64(time.Millisecond))
	}
	*d = Duration{D: v, Set: true}
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.D.String()) }

// String is the duration's text.
func (d Duration) String() string { return d.D.String() }
