package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// ParseSLO parses a serving-level objective as --slo takes it
// (threshold.SLO): comma-separated KEY=VALUE pairs, the keys ttft_p99 and
// tpot_p99, each value a positive number of milliseconds (500) or a
// duration (500ms, 1.5s). "ttft_p99=500,tpot_p99=50".
func ParseSLO(s string) (summary.SLO, error) {
	objectives, err := threshold.SLO.Parse(s)
	return boundsOf(objectives, sloFields), err
}

// sloFields are where each metric's objective of threshold.SLO goes.
var sloFields = map[string]func(*summary.SLO) *float64{
	"llm_ttft": func(s *summary.SLO) *float64 { return &s.TTFTP99 },
	"llm_tpot": func(s *summary.SLO) *float64 { return &s.TPOTP99 },
}

// boundsOf puts each objective's bound, in order, into the field of T
// that fields gives its metric; fields has every metric of the
// objectives' spelling.
func boundsOf[T any](objectives []threshold.Objective, fields map[string]func(*T) *float64) T {
	var out T
	for _, o := range objectives {
		*fields[o.Metric](&out) = o.Bound
	}
	return out
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
			// Search is read by SearchOptions.
			Search json.RawMessage `json:"search"`
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
	objectives, err := threshold.SLO.ParseOption(raw)
	return boundsOf(objectives, sloFields), err
}
