// Package threshold implements k6's thresholds: pass/fail criteria on a run's
// metrics, declared in `options.thresholds`, checked during the run (to abort
// it early) and at its end (to set the exit code).
//
//	thresholds: {
//	  llm_ttft: ['p(95)<500'],
//	  'llm_ttft{scenario:chat}': ['p(99)<800', { threshold: 'avg<300', abortOnFail: true, delayAbortEval: '10s' }],
//	  llm_failed: 'rate<0.01',
//	}
//
// A key is a metric name, optionally with a tag filter in braces (a
// sub-metric: the series whose tags include every listed tag); its value is
// one threshold or a list of them, each an expression string or an object
// {threshold, abortOnFail, delayAbortEval, noSamples}. An expression is
// "aggregation operator number" (see ParseExpression), and the aggregations
// allowed depend on the metric's type, as in k6:
//
//	counter  count (the sum of the values added), rate (count per second of the run)
//	gauge    value (the last value)
//	rate     rate (the fraction of non-zero values)
//	trend    avg, min, max, med, p(N)
//
// The engine calls Parse on the options, Validate once the init context has
// registered every custom metric and CheckTags once the scenarios are
// known, Evaluate on a fresh snapshot every few seconds during the run
// (ShouldAbort says whether to stop) and EvaluateEnd once at the end
// (AnyFailed decides the exit code).
//
// The latency objectives of --slo and --goodput (objective.go) are
// objectives on the same metrics: ttft_p99=500 is p(99)<=500 on llm_ttft,
// ttft:500 a bound each request's llm_ttft must meet. Their text and
// option are parsed here, by one parser (Objectives), in the spelling of
// each (SLO, Goodput).
//
// Thresholds on the server's and its GPUs' figures (server_kv_cache_usage,
// gpu_power, ...: server.go) are validated with the others and judged at
// the end from the result's server section (JudgeServer).
//
// Where k6 is silent or odd, this package decides:
//
//   - A metric or sub-metric without samples passes vacuously nowhere. At
//     the end of the run (EvaluateEnd) a counter counts 0 and a rate is 0
//     (nothing was counted, nothing failed: count<10 and rate<0.01 pass,
//     count>10 and rate>0.9 fail), and a gauge or a trend fails: it has
//     no value to judge, and a latency nobody measured is no latency
//     within bounds (k6 passes them: grafana/k6#4283 shows an empty rate
//     passing rate>=0.9). The object form's noSamples: 'pass' accepts no
//     samples, noSamples: 'fail' refuses them whatever the type. A
//     threshold whose selector names a scenario that never started
//     (skipped by a stopped chain, or given no VU in this execution
//     segment) is skipped: it passes, noted why. During the run
//     (Evaluate) no sample yet is no failure: only counters are judged,
//     at 0, so nothing aborts a run for want of samples.
//   - A selector naming a value its tag cannot take (CheckTags: a
//     scenario the options do not have) is refused when the script loads.
//   - Counter rate is count divided by the elapsed time given to Evaluate;
//     with an elapsed time of zero or less it is not evaluated.
//   - Each evaluation stands alone: a threshold that failed during the run
//     and passes at the end has passed. Only abortOnFail thresholds act on
//     a failure during the run.
//   - The object form is strict: an unknown field (say "abortOnfail") is an
//     error, where k6 ignores it.
//   - delayAbortEval takes options' durations ("10s", "1m30s", or a number
//     of milliseconds); negative is an error.
//   - Results come in the order of the options: keys as written in the
//     JSON, then each key's list.
package threshold

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Threshold is one parsed threshold: one entry of one key.
type Threshold struct {
	// Key is the thresholds key exactly as written: "llm_ttft{scenario:chat}".
	Key string
	// Metric is the metric name and Tags the sub-metric filter (nil for
	// the whole metric).
	Metric string
	Tags   *metrics.TagSet
	// Index is the entry's position in its key's list (0 when the key's
	// value is a single threshold).
	Index int
	// Source is the expression exactly as written: "p(95) < 500".
	Source string
	Expr   Expression
	// AbortOnFail stops the run when the threshold fails during it, once
	// DelayAbortEval of the run has elapsed.
	AbortOnFail    bool
	DelayAbortEval time.Duration
	// NoSamples is what the final evaluation makes of a metric without
	// samples: NoSamplesPass, NoSamplesFail, or "" for the metric type's
	// rule (see EvaluateEnd).
	NoSamples string

	// def is the metric's definition, set by Validate.
	def *metrics.Metric
	// server is what a threshold on a server figure reads, set by
	// Validate; nil for a metric of the run.
	server *ServerQuery
}

// Set is the parsed thresholds of a run. It is read-only after Validate, so
// Evaluate may run from any goroutine. A nil *Set has no thresholds.
type Set struct {
	list []*Threshold
}

// Error is a problem with one threshold, one key or the whole thresholds
// option. Its text starts with the field it is about:
// thresholds["llm_ttft{scenario:chat}"][1]: unknown aggregation "p95", ...
type Error struct {
	// Key is the thresholds key; meaningless when Whole.
	Key string
	// Index is the entry's position in the key's list, -1 when the error
	// is about the key itself.
	Index int
	// Whole is true when the error is about the thresholds option as a
	// whole (it is not an object).
	Whole bool
	Err   error
}

// Field names what the error is about: thresholds, thresholds["key"] or
// thresholds["key"][i].
func (e *Error) Field() string {
	if e.Whole {
		return "thresholds"
	}
	f := "thresholds[" + strconv.Quote(e.Key) + "]"
	if e.Index >= 0 {
		f += "[" + strconv.Itoa(e.Index) + "]"
	}
	return f
}

func (e *Error) Error() string { return e.Field() + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func keyError(key string, format string, args ...any) *Error {
	return &Error{Key: key, Index: -1, Err: fmt.Errorf(format, args...)}
}

func entryError(key string, i int, err error) *Error {
	return &Error{Key: key, Index: i, Err: err}
}

// Parse parses the JSON of `options.thresholds`: an object whose keys are
// metric names with optional tag filters and whose values are a threshold or
// an array of them, each a string expression or an object
// {"threshold": "...", "abortOnFail": bool, "delayAbortEval": duration,
// "noSamples": "pass" or "fail"}.
// Empty input and null give an empty set. The first problem is returned as
// an *Error naming the key and entry. Metric names are checked for form
// only; Validate checks that they exist.
func Parse(data []byte) (*Set, error) {
	set := &Set{}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return set, nil
	}
	if data[0] != '{' {
		return nil, &Error{Whole: true, Err: fmt.Errorf("must be an object of metric names to thresholds, got %s", jsonKind(data))}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, &Error{Whole: true, Err: fmt.Errorf("invalid JSON: %v", err)}
	}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &Error{Whole: true, Err: fmt.Errorf("invalid JSON: %v", err)}
		}
		key := tok.(string) // object keys are strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, keyError(key, "invalid JSON: %v", err)
		}
		if seen[key] {
			return nil, keyError(key, "listed twice")
		}
		seen[key] = true
		list, err := parseKey(key, raw)
		if err != nil {
			return nil, err
		}
		set.list = append(set.list, list...)
	}
	if _, err := dec.Token(); err != nil { // the '}'
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, &Error{Whole: true, Err: fmt.Errorf("invalid JSON: %v", err)}
	}
	if dec.More() {
		return nil, &Error{Whole: true, Err: errors.New("invalid JSON: text after the object")}
	}
	return set, nil
}

func parseKey(key string, raw json.RawMessage) ([]*Threshold, error) {
	name, tags, err := ParseSelector(key)
	if err != nil {
		return nil, &Error{Key: key, Index: -1, Err: err}
	}
	var entries []json.RawMessage
	switch raw[0] {
	case '[':
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, keyError(key, "invalid JSON: %v", err)
		}
	case '"', '{':
		entries = []json.RawMessage{raw}
	default:
		return nil, keyError(key, "must be a threshold or an array of thresholds, got %s", jsonKind(raw))
	}
	out := make([]*Threshold, 0, len(entries))
	for i, e := range entries {
		t, err := parseEntry(e)
		if err != nil {
			return nil, entryError(key, i, err)
		}
		t.Key, t.Metric, t.Tags, t.Index = key, name, tags, i
		out = append(out, t)
	}
	return out, nil
}

// The values of a threshold's noSamples field.
const (
	// NoSamplesPass passes a threshold whose metric had no sample.
	NoSamplesPass = "pass"
	// NoSamplesFail fails it, a counter's and a rate's too.
	NoSamplesFail = "fail"
)

var entryFields = map[string]bool{"threshold": true, "abortOnFail": true, "delayAbortEval": true, "noSamples": true}

func parseEntry(raw json.RawMessage) (*Threshold, error) {
	raw = bytes.TrimSpace(raw)
	t := &Threshold{}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &t.Source); err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
	case '{':
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			if !entryFields[f] {
				return nil, fmt.Errorf("unknown field %q: want threshold, abortOnFail, delayAbortEval or noSamples", f)
			}
		}
		src, ok := fields["threshold"]
		if !ok {
			return nil, errors.New(`missing "threshold": want {threshold: "p(95)<500", abortOnFail: true}`)
		}
		if k := jsonKind(src); k != "a string" {
			return nil, fmt.Errorf(`"threshold" must be a string, got %s`, k)
		}
		_ = json.Unmarshal(src, &t.Source) // a JSON string: cannot fail
		if v, ok := fields["abortOnFail"]; ok {
			if err := json.Unmarshal(v, &t.AbortOnFail); err != nil || jsonKind(v) != "a boolean" {
				return nil, fmt.Errorf(`"abortOnFail" must be true or false, got %s`, jsonKind(v))
			}
		}
		if v, ok := fields["delayAbortEval"]; ok {
			d, err := parseDelay(v)
			if err != nil {
				return nil, fmt.Errorf(`"delayAbortEval": %v`, err)
			}
			if d < 0 {
				return nil, fmt.Errorf(`"delayAbortEval" must not be negative, got %s`, d)
			}
			t.DelayAbortEval = d
		}
		if v, ok := fields["noSamples"]; ok {
			if err := json.Unmarshal(v, &t.NoSamples); err != nil || (t.NoSamples != NoSamplesPass && t.NoSamples != NoSamplesFail) {
				return nil, fmt.Errorf(`"noSamples" must be %q or %q, got %s`, NoSamplesPass, NoSamplesFail, bytes.TrimSpace(v))
			}
		}
	default:
		return nil, fmt.Errorf("must be an expression string or an object, got %s", jsonKind(raw))
	}
	expr, err := ParseExpression(t.Source)
	if err != nil {
		return nil, err
	}
	t.Expr = expr
	return t, nil
}

// parseDelay reads a duration as options write them (runtime/executor's
// rules, repeated here so this package depends on metrics alone): a string
// such as "10s" or "1m30s", a bare number in a string or a JSON number of
// milliseconds, or null for none.
func parseDelay(raw json.RawMessage) (time.Duration, error) {
	switch jsonKind(raw) {
	case "null":
		return 0, nil
	case "a number":
		var ms float64
		if err := json.Unmarshal(raw, &ms); err != nil {
			return 0, fmt.Errorf("invalid duration %s: %v", bytes.TrimSpace(raw), err)
		}
		return milliseconds(ms)
	case "a string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("invalid duration %s: %v", raw, err)
		}
		if ms, ok := parseNumber(s); ok {
			return milliseconds(ms)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: use a number with a unit, like \"30s\", \"2m\" or \"1h30m\"", s)
		}
		return d, nil
	}
	return 0, fmt.Errorf("invalid duration %s: use a string like \"30s\" or a number of milliseconds", bytes.TrimSpace(raw))
}

func milliseconds(ms float64) (time.Duration, error) {
	d := ms * float64(time.Millisecond)
	if math.Abs(d) >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid duration %s ms: too long", formatNumber(ms))
	}
	return time.Duration(d), nil
}

// jsonKind names the kind of a JSON value in words: "a string", "null".
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// Thresholds returns the thresholds in the order of the options. The slice
// and its elements must not be modified.
func (s *Set) Thresholds() []*Threshold {
	if s == nil {
		return nil
	}
	return s.list
}

// Len is the number of thresholds.
func (s *Set) Len() int { return len(s.Thresholds()) }

// HasAbortOnFail reports whether any threshold can abort the run, that is
// whether evaluating during the run can change anything.
func (s *Set) HasAbortOnFail() bool {
	for _, t := range s.Thresholds() {
		if t.AbortOnFail {
			return true
		}
	}
	return false
}
