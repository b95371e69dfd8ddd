// Package capacity reads a sweep out of a run's summary: scenarios that
// each hold the load at one level (a concurrency or an arrival rate), one
// after another. It finds where the server saturates and the level of
// highest load that meets a serving-level objective.
package capacity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/runtime/summary"
)

// The variables a sweep varies, as scenario tags name them.
const (
	Concurrency = "concurrency"
	Rate        = "rate"
)

// DefaultMinGain is the growth between levels, relative, that still
// counts unless the criteria say otherwise: the server saturates where
// output throughput grows by less while TTFT p50 grows by more.
const DefaultMinGain = 0.10

// Criteria are what a sweep is judged by.
type Criteria struct {
	// SLO is the objective a level must meet to be within it; none when
	// zero.
	SLO summary.SLO
	// MinGain is the relative growth that still counts (0.1: 10 %); 0
	// means DefaultMinGain.
	MinGain float64
	// Stop is when a sweep whose levels are chained (startAfter) skips
	// its remaining levels; "" is StopNever.
	Stop StopRule
}

// StopRule is when a sweep stops before its last level
// (options.capacity.stop).
type StopRule string

// The stop rules.
const (
	// StopNever runs every level.
	StopNever StopRule = "never"
	// StopAtSaturation stops once the levels run show a saturation point.
	StopAtSaturation StopRule = "saturation"
	// StopAtSLOMiss stops once a level misses the SLO.
	StopAtSLOMiss StopRule = "slo"
)

// Stops says whether the criteria stop a chained sweep early: a stop rule
// other than StopNever.
func (c Criteria) Stops() bool { return c.Stop != "" && c.Stop != StopNever }

// StopRules are the stop rules, as options.capacity.stop names them.
var StopRules = []StopRule{StopNever, StopAtSaturation, StopAtSLOMiss}

// StopReason says why a sweep whose ended levels s holds should skip the
// levels still to run under crit.Stop, "" when it should go on. Its
// judgement is the verdict's: the saturation point Assess would find
// among these levels, or a level that misses the SLO (any level, not
// only the last: levels run in the order the script chains them).
func StopReason(s *summary.Summary, crit Criteria) string {
	if s == nil || !crit.Stops() {
		return ""
	}
	variable, levels := sweep(s)
	name := func(l summary.CapacityLevel) string {
		return variable + " " + strconv.FormatFloat(l.Level, 'f', -1, 64)
	}
	switch crit.Stop {
	case StopAtSaturation:
		figures := make([]summary.CapacityLevel, len(levels))
		for i, l := range levels {
			figures[i] = l.CapacityLevel
		}
		gain := crit.EffectiveMinGain()
		if i := saturation(figures, gain); i >= 0 {
			return fmt.Sprintf("saturation at %s: from it to %s output throughput grew by less than %g %% while TTFT p50 grew by more",
				name(figures[i]), name(figures[i+1]), 100*gain)
		}
	case StopAtSLOMiss:
		for _, l := range levels {
			if !meets(l, crit.SLO) {
				return fmt.Sprintf("%s missed the SLO (%s)", name(l.CapacityLevel), sloWords(crit.SLO))
			}
		}
	}
	return ""
}

// CriteriaOf returns the criteria a result was judged by: its SLO, and
// the minimum gain its verdict used (the default when it has none).
func CriteriaOf(s *summary.Summary) Criteria {
	c := Criteria{SLO: s.Meta.SLO}
	if s.Capacity != nil {
		c.MinGain = s.Capacity.MinGain
	}
	return c
}

// EffectiveMinGain is the criteria's minimum gain, DefaultMinGain when
// unset (a result written before the criteria were stored has none).
func (c Criteria) EffectiveMinGain() float64 {
	if c.MinGain > 0 {
		return c.MinGain
	}
	return DefaultMinGain
}

// MinSuccessRate is the share of requests that must succeed at a level
// that meets the SLO.
const MinSuccessRate = 0.99

// Assess returns the verdict of a sweep, nil when the run is not one: the
// levels are the scenarios tagged with a numeric concurrency or rate (all
// with the same one; concurrency wins when a scenario has both), or, when
// every scenario is constant-vus and none is tagged so, their VUs. A sweep
// has at least two levels with completed requests.
func Assess(s *summary.Summary, crit Criteria) *summary.Capacity {
	if s == nil {
		return nil
	}
	variable, levels := sweep(s)
	completed := 0
	for _, l := range levels {
		if l.ok {
			completed++
		}
	}
	if completed < 2 {
		return nil
	}
	slo, gain := crit.SLO, crit.EffectiveMinGain()
	c := &summary.Capacity{Variable: variable, SLO: slo, MinGain: gain, Levels: judged(levels, slo), Method: method(slo, gain)}
	if i := saturation(c.Levels, gain); i >= 0 {
		sat := c.Levels[i]
		c.Saturation = &sat
	}
	for i, l := range c.Levels {
		// Levels are sorted: the last that meets the SLO is the highest.
		if l.MeetsSLO {
			best := c.Levels[i]
			c.MaxWithinSLO = &best
		}
	}
	return c
}

// Levels are the levels of a sweep that have run so far, sorted, each
// with its figures and whether it meets crit's SLO, as Assess rows them,
// and the variable they vary; none when the run is not a sweep. Unlike
// Assess it needs no second level: a live view shows the first.
func Levels(s *summary.Summary, crit Criteria) (string, []summary.CapacityLevel) {
	variable, levels := sweep(s)
	if len(levels) == 0 {
		return "", nil
	}
	return variable, judged(levels, crit.SLO)
}

// judged are levels' rows, each judged against slo.
func judged(levels []level, slo summary.SLO) []summary.CapacityLevel {
	out := make([]summary.CapacityLevel, len(levels))
	for i, l := range levels {
		out[i] = l.CapacityLevel
		out[i].MeetsSLO = meets(l, slo)
	}
	return out
}

// level is a sweep level with what Assess needs to judge it.
type level struct {
	summary.CapacityLevel
	// ok says whether some requests completed; hasTTFT and hasTPOT
	// whether those latencies were measured.
	ok, hasTTFT, hasTPOT bool
}

// sweep returns the variable and the levels of a sweep, sorted, with
// their figures; no levels when the run is not a sweep (levels that vary
// different variables, or one level twice).
func sweep(s *summary.Summary) (string, []level) {
	variable, values := tagged(s.Meta.LoadShape)
	if variable == "" {
		variable, values = Concurrency, constantVUs(s.Meta.LoadShape)
	}
	if values == nil {
		return "", nil
	}
	var levels []level
	seen := map[float64]bool{}
	for _, sc := range s.Scenarios {
		v, ok := values[sc.Name]
		if !ok || sc.Serving.Requests == 0 {
			continue
		}
		if seen[v] {
			return "", nil
		}
		seen[v] = true
		levels = append(levels, figures(sc, v))
	}
	slices.SortFunc(levels, func(a, b level) int { return cmp.Compare(a.Level, b.Level) })
	return variable, levels
}

// tagged returns the variable the scenarios' tags vary and each tagged
// scenario's level; "" when no scenario is tagged, and no levels when
// they vary different variables.
func tagged(shapes []summary.ScenarioShape) (string, map[string]float64) {
	variable, values := "", map[string]float64{}
	for _, sh := range shapes {
		name, v := "", 0.0
		if c, ok := number(sh.Tags[Concurrency]); ok {
			name, v = Concurrency, c
		} else if r, ok := number(sh.Tags[Rate]); ok {
			name, v = Rate, r
		} else {
			continue
		}
		if variable != "" && name != variable {
			return variable, nil
		}
		variable, values[sh.Name] = name, v
	}
	return variable, values
}

// constantVUs returns each scenario's VUs when every scenario is
// constant-vus, nil otherwise.
func constantVUs(shapes []summary.ScenarioShape) map[string]float64 {
	if len(shapes) == 0 {
		return nil
	}
	values := map[string]float64{}
	for _, sh := range shapes {
		if sh.Executor != "constant-vus" || sh.MaxVUs <= 0 {
			return nil
		}
		values[sh.Name] = float64(sh.MaxVUs)
	}
	return values
}

// number parses a level: a positive finite number.
func number(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && v > 0 && !math.IsInf(v, 0)
}

// figures returns a scenario's figures as the level v.
func figures(sc summary.ScenarioSummary, v float64) level {
	sv := sc.Serving
	l := level{CapacityLevel: summary.CapacityLevel{Scenario: sc.Name, Level: v, RequestRate: sv.RequestThroughput,
		OutputThroughput: sv.OutputTokenThroughput, SuccessRate: sv.SuccessRate}, ok: sv.OK > 0}
	for _, row := range sc.Latency {
		switch row.Metric {
		case "llm_ttft":
			l.TTFTP50, l.TTFTP99, l.hasTTFT = row.P["p50"], row.P["p99"], row.Count > 0
		case "llm_tpot":
			l.TPOTP50, l.TPOTP99, l.hasTPOT = row.P["p50"], row.P["p99"], row.Count > 0
		}
	}
	return l
}

// meets reports whether a level meets the SLO; false without one. A
// latency the SLO bounds but the level did not measure does not meet it.
func meets(l level, slo summary.SLO) bool {
	if slo.TTFTP99 <= 0 && slo.TPOTP99 <= 0 {
		return false
	}
	if slo.TTFTP99 > 0 && !(l.hasTTFT && l.TTFTP99 <= slo.TTFTP99) {
		return false
	}
	if slo.TPOTP99 > 0 && !(l.hasTPOT && l.TPOTP99 <= slo.TPOTP99) {
		return false
	}
	return l.ok && l.SuccessRate >= MinSuccessRate
}

// saturation returns the index of the first level after which output
// throughput grows by less than minGain while TTFT p50 grows by more, -1
// when there is none.
func saturation(levels []summary.CapacityLevel, minGain float64) int {
	for i := 1; i < len(levels); i++ {
		prev, cur := levels[i-1], levels[i]
		gain := math.Inf(1)
		if prev.OutputThroughput > 0 {
			gain = cur.OutputThroughput/prev.OutputThroughput - 1
		}
		growth := 0.0
		if prev.TTFTP50 > 0 {
			growth = cur.TTFTP50/prev.TTFTP50 - 1
		}
		if gain < minGain && growth > minGain {
			return i - 1
		}
	}
	return -1
}

// method says in words how Assess judged the levels.
func method(slo summary.SLO, minGain float64) string {
	pct := fmt.Sprintf("%g %%", 100*minGain)
	m := fmt.Sprintf("Saturation is the first level after which output throughput grows by less than %s to the next level while TTFT p50 grows by more than %s. ", pct, pct)
	if slo.TTFTP99 <= 0 && slo.TPOTP99 <= 0 {
		return m + "No SLO was given, so no level was judged against one."
	}
	return m + "Within SLO is the highest level among those with " + sloWords(slo) + "."
}

// sloWords are the bounds of an SLO a level must meet, in words.
func sloWords(slo summary.SLO) string {
	var bounds []string
	if slo.TTFTP99 > 0 {
		bounds = append(bounds, fmt.Sprintf("TTFT p99 ≤ %g ms", slo.TTFTP99))
	}
	if slo.TPOTP99 > 0 {
		bounds = append(bounds, fmt.Sprintf("TPOT p99 ≤ %g ms", slo.TPOTP99))
	}
	bounds = append(bounds, fmt.Sprintf("success rate ≥ %g %%", 100*MinSuccessRate))
	return strings.Join(bounds, ", ")
}
