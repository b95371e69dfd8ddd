package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// searchField is the option a capacity search reads.
const searchField = "options.capacity.search"

// SearchOptions reads options.capacity.search for the engine e has
// loaded, with its defaults filled in: nil when the script asks for no
// search. goodput says whether goodput bounds are given (a goodput share
// needs them). Errors are *engine.ConfigError naming the field.
func SearchOptions(e *engine.Engine, crit capacity.Criteria, goodput bool) (*capacity.SearchOptions, error) {
	raw := e.Options().Capacity
	if len(raw) == 0 {
		return nil, nil
	}
	var wrapper struct {
		Search json.RawMessage `json:"search"`
	}
	if err := json.Unmarshal(raw, &wrapper); err != nil || len(wrapper.Search) == 0 || string(wrapper.Search) == "null" {
		return nil, nil
	}
	var in struct {
		Variable     *string            `json:"variable"`
		Start        *float64           `json:"start"`
		Max          *float64           `json:"max"`
		Width        *float64           `json:"width"`
		Budget       *executor.Duration `json:"budget"`
		Step         *executor.Duration `json:"step"`
		MaxStep      *executor.Duration `json:"maxStep"`
		Confidence   *float64           `json:"confidence"`
		GoodputShare *float64           `json:"goodputShare"`
	}
	dec := json.NewDecoder(bytes.NewReader(wrapper.Search))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, &engine.ConfigError{Field: searchField, Err: fmt.Errorf("want { variable: 'rate', start: 1, max: 64, width: 0.05, budget: '10m', step: '30s', maxStep: '90s', confidence: 0.95, goodputShare: 0.9 }: %w", err)}
	}
	bad := func(field, format string, args ...any) error {
		return &engine.ConfigError{Field: searchField + "." + field, Err: fmt.Errorf(format, args...)}
	}
	if field := nullField(wrapper.Search); field != "" {
		// The options reach Go as JSON, where NaN and Infinity become null.
		return nil, bad(field, "null: want a number (NaN and Infinity are not numbers; leave the field out for its default)")
	}
	if crit.SLO.TTFTP99 <= 0 && crit.SLO.TPOTP99 <= 0 && (in.GoodputShare == nil || *in.GoodputShare <= 0) {
		return nil, &engine.ConfigError{Field: searchField, Err: errors.New("a search finds the most load within an SLO, and none is given: set options.slo or --slo (ttft_p99, tpot_p99), or goodputShare with --goodput")}
	}
	o := capacity.SearchOptions{Width: capacity.DefaultSearchWidth, Confidence: capacity.DefaultSearchConfidence,
		Budget: capacity.DefaultSearchBudget, Step: capacity.DefaultSearchStep}
	scs := e.Scenarios()
	switch {
	case in.Variable != nil:
		o.Variable = *in.Variable
	case len(scs) > 0 && scs[0].Executor == "constant-vus":
		o.Variable = capacity.Concurrency
	default:
		o.Variable = capacity.Rate
	}
	if o.Variable != capacity.Rate && o.Variable != capacity.Concurrency {
		return nil, bad("variable", "%q: want 'rate' or 'concurrency'", o.Variable)
	}
	positive := func(field string, v *float64, into *float64) error {
		if v == nil {
			return nil
		}
		if !(*v > 0) || math.IsInf(*v, 0) {
			return bad(field, "%g: want a positive number", *v)
		}
		*into = *v
		return nil
	}
	o.Start = e.DeclaredLoad()
	if err := errors.Join(positive("start", in.Start, &o.Start), positive("max", in.Max, &o.Max),
		positive("confidence", in.Confidence, &o.Confidence), positive("width", in.Width, &o.Width),
		positive("goodputShare", in.GoodputShare, &o.GoodputShare)); err != nil {
		return nil, err
	}
	if o.Max == 0 {
		o.Max = o.Start * capacity.DefaultSearchMaxFactor
	}
	switch {
	case o.Variable == capacity.Concurrency && o.Start != math.Trunc(o.Start):
		return nil, bad("start", "%g: a concurrency search counts whole VUs: want a whole number", o.Start)
	case o.Variable == capacity.Concurrency && o.Max != math.Trunc(o.Max):
		return nil, bad("max", "%g: a concurrency search counts whole VUs: want a whole number", o.Max)
	case o.Max < o.Start:
		return nil, bad("max", "%g is below start %g", o.Max, o.Start)
	case o.Width >= 1 || o.Width < capacity.MinSearchWidth:
		return nil, bad("width", "%g: want a relative half-width from %g to below 1, such as 0.05 (±5 %%)", o.Width, capacity.MinSearchWidth)
	case o.Confidence >= 1 || o.Confidence < 0.5:
		return nil, bad("confidence", "%g: want a level between 0.5 and 1, such as 0.95", o.Confidence)
	case o.GoodputShare >= 1+1e-12:
		return nil, bad("goodputShare", "%g: want a share of requests between 0 and 1, such as 0.9", o.GoodputShare)
	case o.GoodputShare > 0 && !goodput:
		return nil, bad("goodputShare", "a share of good requests needs goodput bounds: options.goodput or --goodput")
	}
	for _, d := range []struct {
		field string
		in    *executor.Duration
		into  *time.Duration
	}{{"budget", in.Budget, &o.Budget}, {"step", in.Step, &o.Step}, {"maxStep", in.MaxStep, &o.MaxStep}} {
		if d.in == nil {
			continue
		}
		if d.in.D <= 0 {
			return nil, bad(d.field, "%s: want a positive duration such as '30s'", d.in.D)
		}
		*d.into = d.in.D
	}
	if o.MaxStep == 0 {
		o.MaxStep = 3 * o.Step
	}
	if o.MaxStep < o.Step {
		return nil, bad("maxStep", "%s is shorter than step %s", o.MaxStep, o.Step)
	}
	if err := checkLevels(e, o); err != nil {
		return nil, err
	}
	return &o, nil
}

// searchAlone refuses a capacity search in a process that runs part of
// the plan (an execution segment, or one instance of several, which
// SharePlan gives a segment): each process would judge its own share's
// requests and choose its next level alone, so that the processes' levels
// part ways and none judges the server's whole load.
func searchAlone(part segment.Part) error {
	if part.Whole() {
		return nil
	}
	return &engine.ConfigError{Field: searchField, Err: fmt.Errorf("this process runs only the execution segment %s of the load, and a search chooses each level from the whole load's figures: run it in one process, without --execution-segment or --instances", part.Segment())}
}

// nullField is the first field of a search's options given as null, or
// "".
func nullField(raw json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return ""
	}
	names := slices.Sorted(maps.Keys(fields))
	for _, name := range names {
		if string(fields[name]) == "null" {
			return name
		}
	}
	return ""
}

// checkLevels refuses a start or max whose level would run a scenario
// beyond its executor's limits (runtime/executor/limits.go), naming the
// field: every level lies between the two.
func checkLevels(e *engine.Engine, o capacity.SearchOptions) error {
	for _, lv := range []struct {
		field string
		level float64
	}{{"start", o.Start}, {"max", o.Max}} {
		for _, sc := range e.Scenarios() {
			cfg, ok := sc.Config.(executor.Scalable)
			if !ok {
				continue
			}
			if _, err := cfg.Scaled(lv.level/e.DeclaredLoad(), o.Step); err != nil {
				return &engine.ConfigError{Field: searchField + "." + lv.field,
					Err: fmt.Errorf("%g would run scenario %s beyond its limits: %w", lv.level, sc.Name, err)}
			}
		}
	}
	return nil
}

// SearchPlan is what the capacity search the script e has loaded asks
// for is set to do, read as a run reads it (goodput: the --goodput
// bounds), for llmrun inspect; nil when it asks for none.
func SearchPlan(e *engine.Engine, crit capacity.Criteria, goodput summary.GoodputBounds) (*capacity.SearchPlan, error) {
	bounds, err := Goodput(e.Options(), goodput)
	if err != nil {
		return nil, err
	}
	search, err := SearchOptions(e, crit, !bounds.IsZero())
	if err != nil || search == nil {
		return nil, err
	}
	return searchPlan(e, *search), nil
}

// searchPlan is what search o over the scenarios e has loaded is set to
// do, for the banner and llmrun inspect: its options and each scenario's
// share of a level.
func searchPlan(e *engine.Engine, o capacity.SearchOptions) *capacity.SearchPlan {
	var names []string
	var loads []float64
	for _, sc := range e.Scenarios() {
		if cfg, ok := sc.Config.(executor.Scalable); ok {
			names = append(names, sc.Name)
			loads = append(loads, cfg.Load())
		}
	}
	p := o.Plan(names, loads)
	return &p
}

// nextRound is the engine's Search.Next: the searcher's next level, read
// from the rounds that ran so far.
func (r *run) nextRound(sofar *engine.Report) (engine.Round, bool) {
	sum := summarize.Build(sofar, summary.Meta{SLO: r.criteria.SLO})
	if r.sinks.goodput != nil {
		r.sinks.goodput.set(sum)
	}
	level, step, ok := r.searcher.Next(sum)
	r.showLevels(sum)
	return engine.Round{Level: level, Duration: step}, ok
}
