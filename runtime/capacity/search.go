package capacity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// The defaults and bounds of a capacity search (options.capacity.search).
const (
	DefaultSearchWidth = 0.05
	// MinSearchWidth is the narrowest width a search takes: levels are
	// rounded to four significant digits, a step of up to 0.1 %.
	MinSearchWidth          = 0.001
	DefaultSearchConfidence = 0.95
	DefaultSearchBudget     = 10 * time.Minute
	DefaultSearchStep       = 30 * time.Second
	// DefaultSearchMaxFactor is the highest level tried, as a multiple of
	// the first, when no max is given.
	DefaultSearchMaxFactor = 1024
	// SearchGrowth is the factor between levels until one does not meet
	// the SLO.
	SearchGrowth = 2.0
)

// SearchOptions are the settings of a capacity search.
type SearchOptions struct {
	// Variable is Rate or Concurrency.
	Variable string
	// Start is the first level tried, Max the highest (both total loads
	// of every scenario together).
	Start, Max float64
	// Width is the relative half-width of the bracket at which the
	// search stops (0.05: ±5 %).
	Width float64
	// Budget bounds the time the levels run, Step is the time of a
	// level, MaxStep the most an inconclusive level may run in all.
	Budget, Step, MaxStep time.Duration
	// Confidence is the level of the intervals the verdicts read.
	Confidence float64
	// GoodputShare, when positive, is the share of requests that must be
	// good (the run's goodput bounds) at a level that meets the SLO.
	GoodputShare float64
}

// The verdicts of a level.
const (
	Met          = "met"
	Missed       = "missed"
	Inconclusive = "inconclusive"
)

// Judgement is the verdict of a level with the figure that decided it.
type Judgement struct {
	Verdict string
	// Figure names the deciding figure ("ttft_p99", or "chat:
	// ttft_p99", the scenario, without its level, and its figure, in a
	// mixed workload), Bound the SLO's bound on it.
	Figure   string
	Estimate regression.Estimate
	Bound    float64
	// PointsWithin says that every figure's measured value lies within
	// its bound: an inconclusive level's intervals, not its values, are
	// left open, for lack of requests.
	PointsWithin bool
}

// check is one bound a level's figure must meet: at most (upper) or at
// least the bound.
type check struct {
	figure string
	bound  float64
	upper  bool
}

// JudgeLevel judges the scenarios of one level against the SLO from
// their confidence intervals at conf: a level meets it when every
// scenario's every interval lies within its bound (TTFT p99 and TPOT p99
// at most the SLO's, success rate at least MinSuccessRate, the share of
// good requests at least goodputShare when positive), misses it when an
// interval lies wholly outside, and is inconclusive otherwise, an
// interval that the samples leave open included. Each scenario is judged
// on its own figures: a percentile of a mix is the latency of none.
func JudgeLevel(scenarios []summary.ScenarioSummary, closedLoop bool, slo summary.SLO, goodputShare, conf float64) Judgement {
	var checks []check
	if slo.TTFTP99 > 0 {
		checks = append(checks, check{"ttft_p99", slo.TTFTP99, true})
	}
	if slo.TPOTP99 > 0 {
		checks = append(checks, check{"tpot_p99", slo.TPOTP99, true})
	}
	if goodputShare > 0 {
		checks = append(checks, check{"goodput_share", goodputShare, false})
	}
	// The success rate last: an inconclusive latency is the one to name.
	checks = append(checks, check{"success_rate", MinSuccessRate, false})
	var inconclusive, tightest *Judgement
	margin := math.Inf(1)
	pointsWithin := len(scenarios) > 0
	for _, sc := range scenarios {
		name := func(figure string) string {
			if len(scenarios) > 1 {
				// A round is named scenario@level: the row says the level.
				base := sc.Name
				if i := strings.LastIndex(base, "@"); i > 0 {
					base = base[:i]
				}
				return base + ": " + figure
			}
			return figure
		}
		if sc.Serving.Requests == 0 {
			pointsWithin = false
			j := Judgement{Verdict: Inconclusive, Figure: name("success_rate"), Bound: MinSuccessRate,
				Estimate: regression.ProportionEstimate(0, 0, conf)}
			if inconclusive == nil {
				inconclusive = &j
			}
			continue
		}
		est := regression.Estimates(regression.Block{Serving: sc.Serving, Metrics: sc.Metrics, ClosedLoop: closedLoop}, conf)
		if g := sc.Serving.Goodput; g != nil {
			est["goodput_share"] = regression.ProportionEstimate(g.Good, g.Requests, conf)
		}
		for _, c := range checks {
			e, ok := est[c.figure]
			if !ok {
				// No request completed: the latency was not measured.
				e = regression.Estimate{Value: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), Why: "not measured: no request completed"}
			}
			j := Judgement{Figure: name(c.figure), Estimate: e, Bound: c.bound}
			within, outside, point := e.Hi <= c.bound, e.Lo > c.bound, e.Value <= c.bound
			if !c.upper {
				within, outside, point = e.Lo >= c.bound, e.Hi < c.bound, e.Value >= c.bound
			}
			pointsWithin = pointsWithin && point
			switch {
			case outside:
				j.Verdict = Missed
				return j
			case !within:
				j.Verdict = Inconclusive
				if inconclusive == nil {
					inconclusive = &j
				}
			default:
				j.Verdict = Met
				// The met figure nearest its bound, relatively, is the
				// one that decides.
				m := math.Abs(c.bound-e.Hi) / c.bound
				if !c.upper {
					m = math.Abs(e.Lo-c.bound) / c.bound
				}
				if c.figure == "success_rate" {
					m = math.Inf(1) // a latency decides when there is one
				}
				if tightest == nil || m < margin {
					tightest, margin = &j, m
				}
			}
		}
	}
	switch {
	case inconclusive != nil:
		inconclusive.PointsWithin = pointsWithin
		return *inconclusive
	case tightest == nil:
		return Judgement{Verdict: Inconclusive, Figure: "success_rate", Bound: MinSuccessRate,
			Estimate: regression.Estimate{Value: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), Why: "not measured: no scenario ran at this level"}}
	}
	return *tightest
}

// Searcher runs a capacity search, one level after another: Next reads
// the levels run so far and says which to run next, or that the search
// is over; Result is what it found.
type Searcher struct {
	// mu guards the search: Progress reads it while Next changes it.
	mu   sync.Mutex
	opts SearchOptions
	slo  summary.SLO
	// levels are the levels judged, in order; current is the level
	// running, with the time it ran so far; its Seconds counts earlier
	// steps of it.
	levels  []summary.SearchLevel
	current *summary.SearchLevel
	// steps counts the steps the current level ran.
	steps int
	// short are the levels judged inconclusive whose figures were within
	// the SLO: too few requests to show it.
	short   map[float64]bool
	stop    string
	seconds float64
}

// NewSearcher starts a search with opts (defaults filled) against slo.
func NewSearcher(opts SearchOptions, slo summary.SLO) *Searcher {
	return &Searcher{opts: opts, slo: slo, short: map[float64]bool{}}
}

// Next judges the level that just ran, from sofar (the run's summary so
// far, whose scenarios are the levels that ran, tagged with Variable's
// level), and returns the level to run next and for how long; ok false
// ends the search (Result then says why).
func (s *Searcher) Next(sofar *summary.Summary) (level float64, step time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != "" {
		return 0, 0, false
	}
	if s.current != nil {
		scs, closed := LevelScenarios(sofar, s.opts.Variable, s.current.Level)
		j := JudgeLevel(scs, closed, s.slo, s.opts.GoodputShare, s.opts.Confidence)
		secs := 0.0
		for _, sc := range scs {
			secs = max(secs, sc.Serving.DurationSeconds)
		}
		s.seconds += secs - s.current.Seconds
		cur := *s.current
		cur.Seconds = secs
		cur.Requests = 0
		for _, sc := range scs {
			cur.Requests += sc.Serving.Requests
		}
		setJudgement(&cur, j)
		s.current = nil
		s.steps++
		short := j.Verdict == Inconclusive && j.PointsWithin
		// While no level has been met and every level tried is short of
		// requests only, the next level up has more requests in a step:
		// grow rather than run this one longer.
		growing := short && cur.Level < s.opts.Max && !slices.ContainsFunc(s.levels, func(l summary.SearchLevel) bool { return !s.short[l.Level] })
		if j.Verdict == Inconclusive && !growing && time.Duration(s.steps+1)*s.opts.Step <= s.opts.MaxStep && s.fits() {
			cur.Extended = true
			s.current = &cur
			return cur.Level, s.opts.Step, true
		}
		if short {
			s.short[cur.Level] = true
		}
		s.levels, s.steps = append(s.levels, cur), 0
	}
	next, reason := nextLevel(s.levels, s.short, s.opts)
	if reason == "" && !s.fits() {
		reason = fmt.Sprintf("the time budget (%s) ended before the next level", s.opts.Budget)
	}
	if reason != "" {
		s.stop = reason
		return 0, 0, false
	}
	s.current = &summary.SearchLevel{Level: next}
	return next, s.opts.Step, true
}

// fits says whether one more step fits in the budget.
func (s *Searcher) fits() bool {
	return s.opts.Budget <= 0 || s.seconds+s.opts.Step.Seconds() <= s.opts.Budget.Seconds()
}

// setJudgement puts a judgement into a level's row.
func setJudgement(l *summary.SearchLevel, j Judgement) {
	l.Verdict, l.Figure, l.Bound, l.Why = j.Verdict, j.Figure, j.Bound, j.Estimate.Why
	l.Value = finiteOr0(j.Estimate.Value)
	l.Lo, l.Hi = finitePtr(j.Estimate.Lo), finitePtr(j.Estimate.Hi)
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// bracket returns the highest level that met the SLO and the lowest
// level above it that did not (0: none); an inconclusive level counts as
// not met, but for one short of requests (short) while none is met: its
// figures were within the SLO.
func bracket(levels []summary.SearchLevel, short map[float64]bool) (lo, hi float64) {
	for _, l := range levels {
		if l.Verdict == Met && l.Level > lo {
			lo = l.Level
		}
	}
	for _, l := range levels {
		if l.Verdict != Met && l.Level > lo && (hi == 0 || l.Level < hi) && (lo > 0 || !short[l.Level]) {
			hi = l.Level
		}
	}
	return lo, hi
}

// nextLevel is the level to try after levels, or why the search stops:
// grow geometrically from Start until a level does not meet the SLO,
// then bisect (geometric midpoint) between the highest that met it and
// the lowest above that did not, until they are within ±Width of their
// midpoint (for concurrency, one apart).
func nextLevel(levels []summary.SearchLevel, short map[float64]bool, o SearchOptions) (float64, string) {
	if len(levels) == 0 {
		return o.Start, ""
	}
	lo, hi := bracket(levels, short)
	name := o.levelName
	switch {
	case lo == 0:
		return firstMet(levels, short, hi, o)
	case hi == 0 && lo >= o.Max:
		return 0, fmt.Sprintf("the highest level allowed, %s, met the SLO: the capacity is at least that; raise max", name(o.Max))
	case hi == 0:
		return roundLevel(math.Min(lo*SearchGrowth, o.Max), o.Variable), ""
	case o.Variable == Concurrency && hi-lo <= 1:
		return 0, fmt.Sprintf("bracketed: %s met the SLO and %s did not", name(lo), name(hi))
	case HalfWidth(lo, hi) <= o.Width:
		return 0, fmt.Sprintf("bracketed within ±%g %%: %s met the SLO and %s did not", 100*o.Width, name(lo), name(hi))
	}
	next := roundLevel(math.Sqrt(lo*hi), o.Variable)
	if o.Variable == Concurrency {
		next = math.Min(math.Max(next, lo+1), hi-1)
	}
	if next <= lo || next >= hi {
		// Rounded, the midpoint is one of the two: no level between them
		// can be tried.
		return 0, fmt.Sprintf("bracketed: %s met the SLO and %s did not, with no level between them at four significant digits", name(lo), name(hi))
	}
	return next, ""
}

// firstMet is the level to try while no level has met the SLO, or why
// the search stops: grow from a level short of requests (its figures
// within the SLO; a higher level has more requests in a step), else
// halve below the lowest level tried, down to MinLevel. hi is the lowest
// level not met that was not short of requests (0: none).
func firstMet(levels []summary.SearchLevel, short map[float64]bool, hi float64, o SearchOptions) (float64, string) {
	name := o.levelName
	lowest, highestShort := math.Inf(1), 0.0
	for _, l := range levels {
		lowest = min(lowest, l.Level)
		if short[l.Level] {
			highestShort = max(highestShort, l.Level)
		}
	}
	switch {
	case highestShort > 0 && hi == 0 && highestShort >= o.Max:
		return 0, fmt.Sprintf("no level met the SLO with confidence: the highest allowed, %s, had its figures within it but too few requests to show it; run a longer step or raise max", name(o.Max))
	case highestShort > 0 && hi == 0:
		return roundLevel(math.Min(highestShort*SearchGrowth, o.Max), o.Variable), ""
	case highestShort > 0:
		return 0, fmt.Sprintf("below %s: no level met the SLO with confidence (too few requests at levels ≤ %s): run a longer step", name(hi), FormatLevel(highestShort))
	}
	next := roundLevel(lowest/SearchGrowth, o.Variable)
	if floor := o.MinLevel(); next < floor || next >= lowest {
		return 0, fmt.Sprintf("no level down to %s met the SLO: the capacity is below it", name(lowest))
	}
	return next, ""
}

// MinLevel is the lowest level a search tries when its first does not
// meet the SLO: start / DefaultSearchMaxFactor, one VU at least.
func (o SearchOptions) MinLevel() float64 {
	if o.Variable == Concurrency {
		return 1
	}
	return o.Start / DefaultSearchMaxFactor
}

// roundLevel rounds a level: concurrency to a whole number, a rate to
// four significant digits.
func roundLevel(v float64, variable string) float64 {
	if variable == Concurrency {
		return math.Round(v)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return r
}

// FormatLevel writes a level as the search names it: in full, as the
// rounds' names carry it.
func FormatLevel(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// HalfWidth is a bracket's relative half-width, what the search's width
// bounds: (high − low) / (high + low).
func HalfWidth(low, high float64) float64 { return (high - low) / (high + low) }

// levelName names a level with the search's variable: "rate 83.36".
func (o SearchOptions) levelName(v float64) string { return o.Variable + " " + FormatLevel(v) }

// Result is what the search found so far: the bracket, the levels, why
// it stopped ("" while it goes on) and the time the levels ran.
func (s *Searcher) Result() *summary.CapacitySearch {
	s.mu.Lock()
	defer s.mu.Unlock()
	levels := slices.Clone(s.levels)
	if s.current != nil {
		levels = append(levels, *s.current)
	}
	lo, hi := bracket(s.levels, s.short)
	r := &summary.CapacitySearch{Variable: s.opts.Variable, Low: lo, High: hi, Width: s.opts.Width, Confidence: s.opts.Confidence,
		GoodputShare: s.opts.GoodputShare, Levels: levels, Stop: s.stop, Seconds: s.seconds}
	switch {
	case lo > 0 && hi > 0:
		r.Estimate = math.Sqrt(lo * hi)
	case lo > 0:
		r.Estimate = lo
	}
	if s.stop == "" {
		r.Stop = "the run ended before the search did"
	}
	return r
}

// Progress says how far the search is, for the live view: the levels
// judged, the bracket so far, the budget used.
func (s *Searcher) Progress() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lo, hi := bracket(s.levels, s.short)
	name := s.opts.levelName
	bracketed := "no level judged yet"
	switch {
	case lo > 0 && hi > 0:
		bracketed = fmt.Sprintf("capacity between %s and %s", name(lo), name(hi))
	case lo > 0:
		bracketed = "capacity at least " + name(lo)
	case hi > 0:
		bracketed = "capacity below " + name(hi)
	case len(s.levels) > 0:
		bracketed = "no level met with confidence yet"
	}
	used := (time.Duration(s.seconds) * time.Second).String()
	if s.opts.Budget > 0 {
		used += " of the " + s.opts.Budget.String() + " budget"
	}
	return fmt.Sprintf("%s tried, %s, %s", textfmt.Count(len(s.levels), "level"), bracketed, used)
}

// LevelScenarios are the scenarios of sofar that ran at level (tagged
// variable=level), and whether they are all closed-loop.
func LevelScenarios(sofar *summary.Summary, variable string, level float64) ([]summary.ScenarioSummary, bool) {
	names := map[string]bool{}
	var executors []string
	for _, sh := range sofar.Meta.LoadShape {
		if v, ok := number(sh.Tags[variable]); ok && math.Abs(v-level) <= 1e-9*level {
			names[sh.Name] = true
			executors = append(executors, sh.Executor)
		}
	}
	var out []summary.ScenarioSummary
	for _, sc := range sofar.Scenarios {
		if names[sc.Name] {
			out = append(out, sc)
		}
	}
	return out, regression.ClosedLoop(executors...)
}

// SearchVerdict is the capacity verdict of a search's run: its levels'
// rows (every scenario of every level, by level), each level's
// verdict, the highest level that met the SLO, and the search.
func SearchVerdict(s *summary.Summary, search *summary.CapacitySearch, slo summary.SLO) *summary.Capacity {
	c := &summary.Capacity{Variable: search.Variable, SLO: slo, MinGain: DefaultMinGain, Search: search, Method: searchMethod(search, slo)}
	for _, l := range search.Levels {
		scs, _ := LevelScenarios(s, search.Variable, l.Level)
		for _, sc := range scs {
			row := figures(sc, l.Level).CapacityLevel
			row.MeetsSLO = l.Verdict == Met
			c.Levels = append(c.Levels, row)
		}
	}
	slices.SortStableFunc(c.Levels, func(a, b summary.CapacityLevel) int { return cmp.Compare(a.Level, b.Level) })
	var low []summary.CapacityLevel
	for _, l := range c.Levels {
		if l.Level == search.Low && l.MeetsSLO {
			low = append(low, l)
		}
	}
	if len(low) > 0 {
		best := levelTotal(low)
		c.MaxWithinSLO = &best
	}
	return c
}

// levelTotal is one level's row over its scenarios' rows: their
// throughputs summed; the lowest success rate and the highest latency
// percentiles of any scenario (a percentile of a mix is the latency of
// none; the SLO bounds each scenario's). One scenario's row is itself.
func levelTotal(rows []summary.CapacityLevel) summary.CapacityLevel {
	total := rows[0]
	for _, r := range rows[1:] {
		total.Scenario += " + " + r.Scenario
		total.RequestRate += r.RequestRate
		total.OutputThroughput += r.OutputThroughput
		total.SuccessRate = min(total.SuccessRate, r.SuccessRate)
		total.TTFTP50, total.TTFTP99 = max(total.TTFTP50, r.TTFTP50), max(total.TTFTP99, r.TTFTP99)
		total.TPOTP50, total.TPOTP99 = max(total.TPOTP50, r.TPOTP50), max(total.TPOTP99, r.TPOTP99)
		total.MeetsSLO = total.MeetsSLO && r.MeetsSLO
	}
	return total
}

// searchMethod says in words how the search judged and chose its levels.
func searchMethod(search *summary.CapacitySearch, slo summary.SLO) string {
	bounds := sloWords(slo)
	if search.GoodputShare > 0 {
		bounds += fmt.Sprintf(", good requests ≥ %g %%", 100*search.GoodputShare)
	}
	words := []string{
		fmt.Sprintf("A level meets the SLO when, in every scenario, the %g %% confidence interval of each figure lies within its bound (%s); it misses it when an interval lies wholly outside; otherwise it is inconclusive, is run longer when it may, and counts as not met.", 100*search.Confidence, bounds),
		fmt.Sprintf("Levels grow ×%g until one does not meet the SLO (past levels whose figures are within it but too few requests to show it), or halve from a first level that misses, then bisect between the highest that met it and the lowest that did not, until the two are within ±%g %%.", SearchGrowth, 100*search.Width),
	}
	return strings.Join(words, " ")
}
