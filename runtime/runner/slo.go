package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

// sloKeys are the objectives --slo knows, with where each goes.
var sloKeys = map[string]func(*summary.SLO) *float64{
	"ttft_p99": func(s *summary.SLO) *float64 { return &s.TTFTP99 },
	"tpot_p99": func(s *summary.SLO) *float64 { return &s.TPOTP99 },
}

// ParseSLO parses a serving-level objective as --slo takes it:
// comma-separated KEY=VALUE pairs, the keys ttft_p99 and tpot_p99, each
// value a positive number of milliseconds (500) or a duration (500ms,
// 1.5s). "ttft_p99=500,tpot_p99=50".
func ParseSLO(s string) (summary.SLO, error) {
	var slo summary.SLO
	if strings.TrimSpace(s) == "" {
		return slo, errors.New("empty: want KEY=MS pairs such as ttft_p99=500,tpot_p99=50")
	}
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(s, ",") {
		key, value, ok := strings.Cut(pair, "=")
		key = strings.TrimSpace(key)
		field, known := sloKeys[key]
		switch {
		case !ok:
			return summary.SLO{}, fmt.Errorf("%q: want KEY=MS, as in ttft_p99=500", strings.TrimSpace(pair))
		case !known:
			return summary.SLO{}, fmt.Errorf("%q: unknown objective; want ttft_p99 or tpot_p99", key)
		case seen[key]:
			return summary.SLO{}, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		ms, err := parseMillis(strings.TrimSpace(value))
		if err != nil {
			return summary.SLO{}, fmt.Errorf("%s: %w", key, err)
		}
		*field(&slo) = ms
	}
	return slo, nil
}

// parseMillis parses a positive latency: a number of milliseconds, or a
// Go duration.
func parseMillis(v string) (float64, error) {
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil {
		d, derr := time.ParseDuration(v)
		if derr != nil {
			return 0, fmt.Errorf("%q: want milliseconds (500) or a duration (500ms, 1.5s)", v)
		}
		ms = float64(d) / float64(time.Millisecond)
	}
	if !(ms > 0) || math.IsInf(ms, 0) {
		return 0, fmt.Errorf("%q: want a positive latency", v)
	}
	return ms, nil
}

// Criteria returns what a run's sweep is judged by: slo when it is set
// (--slo), else the script's options.slo, and the minimum gain of
// options.capacity: its minimum gain and its stop rule. Errors are
// *engine.ConfigError naming the field.
func Criteria(o engine.Options, slo *summary.SLO) (capacity.Criteria, error) {
	var crit capacity.Criteria
	switch {
	case slo != nil:
		crit.SLO = *slo
	case len(o.SLO) > 0:
		fromScript, err := sloOption(o.SLO)
		if err != nil {
			return crit, &engine.ConfigError{Field: "options.slo", Err: err}
		}
		crit.SLO = fromScript
	}
	if len(o.Capacity) > 0 {
		var c struct {
			MinGain *float64 `json:"minGain"`
			Stop    *string  `json:"stop"`
		}
		dec := json.NewDecoder(bytes.NewReader(o.Capacity))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return crit, &engine.ConfigError{Field: "options.capacity", Err: fmt.Errorf("want { minGain: 0.1, stop: 'saturation' }: %w", err)}
		}
		if c.Stop != nil {
			rule := capacity.StopRule(*c.Stop)
			switch {
			case !slices.Contains(capacity.StopRules, rule):
				return crit, &engine.ConfigError{Field: "options.capacity.stop", Err: fmt.Errorf("%q: want one of %s", *c.Stop, stopRuleNames())}
			case rule == capacity.StopAtSLOMiss && crit.SLO.TTFTP99 <= 0 && crit.SLO.TPOTP99 <= 0:
				return crit, &engine.ConfigError{Field: "options.capacity.stop", Err: errors.New("'slo' stops at the first level that misses the SLO, and none is given (options.slo or --slo)")}
			}
			crit.Stop = rule
		}
		if c.MinGain != nil {
			if !(*c.MinGain > 0 && *c.MinGain < 10) {
				return crit, &engine.ConfigError{Field: "options.capacity.minGain", Err: fmt.Errorf("%g: want a relative growth such as 0.1 (10 %%)", *c.MinGain)}
			}
			crit.MinGain = *c.MinGain
		}
	}
	return crit, nil
}

// stopRuleNames lists the stop rules options.capacity.stop takes.
func stopRuleNames() string {
	names := make([]string, len(capacity.StopRules))
	for i, r := range capacity.StopRules {
		names[i] = "'" + string(r) + "'"
	}
	return strings.Join(names, ", ")
}

// sloOption reads options.slo: an object of the objectives --slo knows
// ({ ttft_p99: 2000, tpot_p99: '80ms' }), each a number of milliseconds or
// a duration string, or the same "ttft_p99=2000,tpot_p99=80" text --slo
// takes. null or an empty object is no objective.
func sloOption(raw json.RawMessage) (summary.SLO, error) {
	return millisOption(raw, sloKeys, ParseSLO,
		"want an object such as { ttft_p99: 2000, tpot_p99: 50 } (milliseconds)", "unknown objective; want ttft_p99 or tpot_p99")
}

// millisOption reads an option of latencies by key: an object whose keys
// are those of fields, each a number of milliseconds or a duration
// string (null skipped), or the text parseText takes. wantObject and
// unknownKey are the errors of a value that is neither and of a key
// fields lacks.
func millisOption[T any](raw json.RawMessage, fields map[string]func(*T) *float64, parseText func(string) (T, error), wantObject, unknownKey string) (T, error) {
	var zero, out T
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return parseText(text)
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(raw, &values); err != nil {
		return zero, errors.New(wantObject)
	}
	for _, key := range slices.Sorted(maps.Keys(values)) {
		field, known := fields[key]
		if !known {
			return zero, fmt.Errorf("%s: %s", key, unknownKey)
		}
		var v any
		if err := json.Unmarshal(values[key], &v); err != nil || v == nil {
			continue
		}
		ms, err := parseMillis(strings.TrimSpace(fmt.Sprint(v)))
		if err != nil {
			return zero, fmt.Errorf("%s: %w", key, err)
		}
		*field(&out) = ms
	}
	return out, nil
}
