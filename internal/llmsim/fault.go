package llmsim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fault names; the package documentation describes each.
const (
	faultRefuse           = "refuse"
	faultReset            = "reset"
	faultHTTP429          = "http_429"
	faultHTTP5xx          = "http_5xx"
	faultStall            = "stall"
	faultMalformed        = "malformed"
	faultBigLine          = "big_line"
	faultSlowHeaders      = "slow_headers"
	faultWrongContentType = "wrong_content_type"
	faultErrorEvent       = "error_event"
	faultEarlyClose       = "early_close"
)

// Fault parameters.
const (
	paramAfter      = "after"
	paramDuration   = "duration"
	paramRetryAfter = "retry_after"
	paramStatus     = "status"
)

// faultParams lists each fault's parameters, in the order Fault.String
// writes them. The faults that take after are the mid-stream ones.
var faultParams = map[string][]string{
	faultRefuse:           nil,
	faultReset:            {paramAfter},
	faultHTTP429:          {paramRetryAfter},
	faultHTTP5xx:          {paramStatus},
	faultStall:            {paramAfter, paramDuration},
	faultMalformed:        {paramAfter},
	faultBigLine:          {paramAfter},
	faultSlowHeaders:      {paramDuration},
	faultWrongContentType: nil,
	faultErrorEvent:       {paramAfter},
	faultEarlyClose:       {paramAfter},
}

// paramSpecs gives each parameter's default and, for errors, the values
// it takes.
var paramSpecs = map[string]struct{ def, want string }{
	paramAfter:      {"1", "a number of tokens, 0 or more"},
	paramDuration:   {"1s", "a positive duration (500ms, 2s, ...) or forever"},
	paramRetryAfter: {"1", "a number of seconds, 0 or more"},
	paramStatus:     {"500", "a status from 500 to 599"},
}

// Forever, as a Fault's Duration (written "forever"), makes a stall or
// slow_headers last until the client gives up or the server closes.
const Forever time.Duration = math.MaxInt64

// A Fault is a misbehaviour injected into one generation request. Name
// says which (see the package documentation); the other fields are the
// parameters of the faults that take them, and are ignored by the others.
type Fault struct {
	Name string
	// After is how many tokens a mid-stream fault lets through first; a
	// shorter output meets the fault just before its finish chunk.
	After int
	// Duration is how long a stall or slow_headers lasts, or Forever.
	Duration time.Duration
	// RetryAfter is http_429's Retry-After header, in seconds.
	RetryAfter int
	// Status is http_5xx's status code, 500 to 599.
	Status int
}

// ParseFault parses an X-Llmsim-Fault header, NAME[;PARAM=VALUE]..., such
// as "reset;after=10" or "stall;after=5;duration=forever". Parameters left
// out take their defaults: after=1, duration=1s, retry_after=1, status=500.
func ParseFault(s string) (Fault, error) {
	name, params, ok := strings.Cut(s, ";")
	if !ok {
		return parseFault(name, nil)
	}
	return parseFault(name, strings.Split(params, ";"))
}

// parseFault returns the fault name with its PARAM=VALUE params.
func parseFault(name string, params []string) (Fault, error) {
	f := Fault{Name: strings.TrimSpace(name)}
	takes, ok := faultParams[f.Name]
	if !ok {
		return Fault{}, unknownFault(f.Name)
	}
	for _, p := range takes {
		f.set(p, paramSpecs[p].def)
	}
	seen := map[string]bool{}
	for _, p := range params {
		key, value, ok := strings.Cut(p, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok:
			return Fault{}, fmt.Errorf("parameter %q is not PARAM=VALUE", p)
		case len(takes) == 0:
			return Fault{}, fmt.Errorf("fault %s takes no parameters, got %s", f.Name, key)
		case !slices.Contains(takes, key):
			return Fault{}, fmt.Errorf("fault %s takes %s, not %q", f.Name, strings.Join(takes, ", "), key)
		case seen[key]:
			return Fault{}, fmt.Errorf("parameter %s given twice", key)
		}
		seen[key] = true
		if err := f.set(key, value); err != nil {
			return Fault{}, err
		}
	}
	return f, f.validate()
}

// unknownFault is the error about a fault name that does not exist.
func unknownFault(name string) error {
	return fmt.Errorf("unknown fault %q; the faults are %s", name, strings.Join(slices.Sorted(maps.Keys(faultParams)), ", "))
}

// set parses value into the parameter key.
func (f *Fault) set(key, value string) error {
	var err error
	switch key {
	case paramAfter:
		f.After, err = strconv.Atoi(value)
	case paramDuration:
		if value == "forever" {
			f.Duration = Forever
		} else {
			f.Duration, err = time.ParseDuration(value)
		}
	case paramRetryAfter:
		f.RetryAfter, err = strconv.Atoi(value)
	case paramStatus:
		f.Status, err = strconv.Atoi(value)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: want %s", key, value, paramSpecs[key].want)
	}
	return nil
}

// param formats the value of the parameter key.
func (f *Fault) param(key string) string {
	switch key {
	case paramAfter:
		return strconv.Itoa(f.After)
	case paramDuration:
		if f.Duration == Forever {
			return "forever"
		}
		return f.Duration.String()
	case paramRetryAfter:
		return strconv.Itoa(f.RetryAfter)
	}
	return strconv.Itoa(f.Status)
}

// validate reports an unknown name or the first parameter out of range.
func (f *Fault) validate() error {
	takes, ok := faultParams[f.Name]
	if !ok {
		return unknownFault(f.Name)
	}
	for _, p := range takes {
		var bad bool
		switch p {
		case paramAfter:
			bad = f.After < 0
		case paramDuration:
			bad = f.Duration <= 0
		case paramRetryAfter:
			bad = f.RetryAfter < 0
		case paramStatus:
			bad = f.Status < 500 || f.Status > 599
		}
		if bad {
			return fmt.Errorf("%s=%s: want %s", p, f.param(p), paramSpecs[p].want)
		}
	}
	return nil
}

// params returns f's parameters as PARAM=VALUE.
func (f *Fault) params() []string {
	var out []string
	for _, p := range faultParams[f.Name] {
		out = append(out, p+"="+f.param(p))
	}
	return out
}

// String returns f in X-Llmsim-Fault syntax, every parameter spelt out.
func (f Fault) String() string {
	return strings.Join(append([]string{f.Name}, f.params()...), ";")
}

// midStream reports whether f strikes inside a stream, after some tokens.
func (f *Fault) midStream() bool {
	return slices.Contains(faultParams[f.Name], paramAfter)
}
