// Package regression judges whether a run's figures changed against earlier
// runs, as `llmrun compare` (two result files) and `llmrun trend` (the
// llm_run points stored in InfluxDB) do: each figure of the newest run
// against the median of the previous runs, in the figure's direction
// (throughputs and the success rate are better higher, latencies lower).
// A change counts only when it exceeds the tolerance and is credible given
// the samples behind both figures — their confidence intervals, from the
// runs' histograms and counts — and, with three previous runs or more, the
// spread of those runs. A run whose client was limited by its own machine
// (its Health) measured latencies and throughputs that may be the
// machine's: the newest run's are inconclusive, a previous run's are left
// out of the baseline. Each figure's verdict is a regression, an
// improvement, unchanged, or inconclusive with the reason. docs/results.md
// states the method with its formulas. The package holds no I/O but the
// rendering of its tables.
package regression

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Direction says which way a figure gets better.
type Direction int

const (
	// LowerIsBetter: latencies.
	LowerIsBetter Direction = iota
	// HigherIsBetter: throughputs and the success rate.
	HigherIsBetter
)

// Figure is one numeric field of the llm_run points.
type Figure struct {
	// Name is the field's name, e.g. ttft_p99.
	Name string
	// Unit is how it is shown: "ms", "req/s", "tok/s", or "%" for a
	// ratio (0..1) shown as a percentage.
	Unit string
	// Better is the direction in which it improves.
	Better Direction
}

// Headline returns the figures trend compares by default, in the order
// it shows them.
func Headline() []Figure {
	return []Figure{
		{"request_throughput", "req/s", HigherIsBetter},
		{"output_throughput", "tok/s", HigherIsBetter},
		{"success_rate", "%", HigherIsBetter},
		{"ttft_p50", "ms", LowerIsBetter},
		{"ttft_p99", "ms", LowerIsBetter},
		{"tpot_p50", "ms", LowerIsBetter},
		{"tpot_p99", "ms", LowerIsBetter},
		{"itl_p99", "ms", LowerIsBetter},
		{"e2e_p99", "ms", LowerIsBetter},
	}
}

// Lookup returns the figure of a field name: a headline figure,
// total_token_throughput, a server figure (ServerHeadline), or any latency field L_S of the schema (L one of
// ttft, tpot, itl, e2e, ttfb; S one of mean, p50, p90, p95, p99, max).
// The names of vLLM's benchmark_serving results (a result file's headline
// keys) are aliases of latency fields: S_L_ms, L one of ttft, tpot, itl,
// e2el (e2e), S one of mean, median (p50), p90, p95, p99; p99_ttft_ms is
// ttft_p99.
func Lookup(name string) (Figure, bool) {
	for _, f := range Headline() {
		if f.Name == name {
			return f, true
		}
	}
	if name == "total_token_throughput" {
		return Figure{name, "tok/s", HigherIsBetter}, true
	}
	if f, ok := lookupServer(name); ok {
		return f, true
	}
	latency, stat, ok := strings.Cut(name, "_")
	if ok && slices.Contains([]string{"ttft", "tpot", "itl", "e2e", "ttfb"}, latency) &&
		slices.Contains([]string{"mean", "p50", "p90", "p95", "p99", "max"}, stat) {
		return Figure{name, "ms", LowerIsBetter}, true
	}
	if stat, rest, ok := strings.Cut(name, "_"); ok {
		latency, ms := strings.CutSuffix(rest, "_ms")
		latency = map[string]string{"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e"}[latency]
		stat = map[string]string{"mean": "mean", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}[stat]
		if ms && latency != "" && stat != "" {
			return Figure{latency + "_" + stat, "ms", LowerIsBetter}, true
		}
	}
	return Figure{}, false
}

// ParseFigures parses a comma-separated list of figure names, such as
// "ttft_p99,output_throughput"; "" is the headline figures.
func ParseFigures(list string) ([]Figure, error) {
	if strings.TrimSpace(list) == "" {
		return Headline(), nil
	}
	var figs []Figure
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		f, ok := Lookup(name)
		if !ok {
			var known []string
			for _, h := range Headline() {
				known = append(known, h.Name)
			}
			var server []string
			for _, s := range ServerHeadline() {
				server = append(server, s.Name)
			}
			return nil, fmt.Errorf("unknown figure %q: want one of %s, total_token_throughput, a latency field such as e2e_p90 (ttft, tpot, itl, e2e, ttfb × mean, p50, p90, p95, p99, max; or vLLM's p90_e2el_ms), or a server figure: %s",
				name, strings.Join(known, ", "), strings.Join(server, ", "))
		}
		if !slices.Contains(figs, f) {
			figs = append(figs, f)
		}
	}
	return figs, nil
}

// ParseTolerance parses a relative tolerance written as a percentage,
// "10%", or as a fraction, "0.1".
func ParseTolerance(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("tolerance %q: want a percentage such as 10%% or a fraction such as 0.1", s)
	}
	if pct {
		return v / 100, nil
	}
	if v > 1 {
		return 0, fmt.Errorf("tolerance %q: a fraction is at most 1; for %s percent write %s%%", s, t, t)
	}
	return v, nil
}

// ParseConfidence parses a confidence level written as a percentage,
// "99%", or as a fraction, "0.99": from 50 % up to, not including, 100 %.
func ParseConfidence(s string) (float64, error) {
	c, err := ParseTolerance(s)
	if err != nil || c < 0.5 || c >= 1 {
		return 0, fmt.Errorf("confidence %q: want a level from 50%% up to, not including, 100%%, such as 99%% or 0.95", s)
	}
	return c, nil
}

// Run is one run's figures.
type Run struct {
	// ID is the run's run_id.
	ID string
	// Time is when it started; zero when unknown (SGLang's result file
	// saves no date).
	Time time.Time
	// LocalTime says Time is the measuring machine's local time, its zone
	// unknown (vLLM's result file), not an instant: shown as such, not
	// as UTC.
	LocalTime bool
	// Version is the llmrun version that ran it.
	Version string
	// Figures are its figures by name, each with its confidence
	// interval; a figure the run lacks is absent.
	Figures map[string]Estimate
	// Confidence is the level of the figures' intervals; 0 when they have
	// none (a run stored before llmrun kept them).
	Confidence float64
	// Health is what the run's client-health reading said of the machine
	// that measured it.
	Health Health
	// Unsaved, when not "", says why a figure the run lacks is unknown
	// rather than unmeasured: the run was read from another tool's
	// result file, which saves fewer figures. Such a figure is judged
	// inconclusive, for this reason, instead of NoData or NoHistory.
	Unsaved string
}

// Health is what a run's client-health reading says of the machine that
// measured it.
type Health struct {
	// Known says whether the run carries the reading: result files and
	// llm_run points written before llmrun judged it, or of a run that
	// ended before its measurement began, do not.
	Known bool
	// Limit names what limited the client (health.Report.Limit), "" when
	// nothing did.
	Limit string
}

// Limited says whether the run is machine-limited: its client-health
// reading named a limit.
func (h Health) Limited() bool { return h.Known && h.Limit != "" }

// String is the reading in a word: "ok", "limited" or "unknown".
func (h Health) String() string {
	switch {
	case !h.Known:
		return "unknown"
	case h.Limited():
		return "limited"
	}
	return "ok"
}

// MachineSensitive says whether a client short of CPU measures the figure
// wrong: a latency, which includes the client's waits, or a throughput,
// which follows the client's pace. The success rate counts the server's
// answers, which a busy client does not change, and the server's figures
// are the server's own measurements.
func (f Figure) MachineSensitive() bool { return f.Unit != "%" && !f.Server() }

// Options are how Compare judges.
type Options struct {
	// Tolerance is the relative change allowed before a figure counts as
	// changed (0.1: 10 %).
	Tolerance float64
	// Confidence is the level of the intervals a change must clear to be
	// credible (0.99); 0 means DefaultConfidence.
	Confidence float64
}

// confidence is the options' level, the default when unset.
func (o Options) confidence() float64 {
	if o.Confidence > 0 {
		return o.Confidence
	}
	return DefaultConfidence
}

// Verdict is the outcome of one figure's comparison.
type Verdict string

// The verdicts.
const (
	// Unchanged: within the tolerance of the baseline.
	Unchanged Verdict = "unchanged"
	// Regression: worse than the baseline by more than the tolerance,
	// and credibly worse: the change's interval lies on the worse side.
	Regression Verdict = "regression"
	// Improved: better by more than the tolerance, credibly.
	Improved Verdict = "improved"
	// Inconclusive: beyond the tolerance but within the noise, too few
	// samples to bound the figure, or measured by a machine-limited
	// client; Comparison.Doubt says which.
	Inconclusive Verdict = "inconclusive"
	// NoHistory: nothing to compare with: a single run, or no previous
	// run with the figure, or a baseline of 0.
	NoHistory Verdict = "no history"
	// NoData: the newest run lacks the figure (a latency of a run whose
	// requests all failed).
	NoData Verdict = "no data"
	// NotJudged: the change is shown without a verdict, because what the
	// figure was read from cannot bound its noise (Estimate.NoInterval: a
	// server's p99 without its buckets, a maximum, a count in bursts);
	// Reason says why. It fails no gate, --strict's neither.
	NotJudged Verdict = "not judged"
)

// minSpreadRuns is the fewest previous runs whose spread (their median
// absolute deviation) widens the band a change must clear.
const minSpreadRuns = 3

// Comparison is one figure of the newest run against its baseline.
type Comparison struct {
	Figure Figure
	// Newest is the newest run's figure; valid unless the verdict is
	// NoData.
	Newest Estimate
	// Baseline is the median of the previous runs' values, BaselineRuns
	// how many runs it is the median of (0: none), and BaselineN the
	// median of their samples.
	Baseline     float64
	BaselineRuns int
	BaselineN    int64
	// Spread is the previous runs' robust relative spread (1.4826 times
	// the median absolute deviation of their values' logarithms; of their
	// values for the success rate); NaN with fewer than minSpreadRuns.
	Spread float64
	// Change is (Newest − Baseline) / Baseline, and ChangeLo, ChangeHi
	// its interval at the options' confidence (±Inf on a side that is not
	// bounded); valid for every verdict but NoHistory and NoData.
	Change, ChangeLo, ChangeHi float64
	Verdict                    Verdict
	// Doubt is why a verdict is Inconclusive, TooFewSamples, TooNoisy or
	// MachineLimited ("" for other verdicts), and Reason the same in full:
	// how many samples it takes, the change's interval, or which runs'
	// clients were limited, and by what.
	Doubt, Reason string
	// LeftOut are the previous runs with the figure left out of the
	// baseline as machine-limited, newest first.
	LeftOut []Run
	// Unlimited is the verdict the figure would have had its runs'
	// machines not been limited, when Doubt is MachineLimited.
	Unlimited Verdict
}

// Why a verdict is Inconclusive.
const (
	// TooFewSamples: the samples do not bound the figure's interval.
	TooFewSamples = "too few samples"
	// TooNoisy: the change is beyond the tolerance, and its interval
	// reaches the other side of zero.
	TooNoisy = "too noisy"
	// MachineLimited: a latency or a throughput of a comparison whose
	// newest run, or every previous run, was measured by a client its own
	// machine limited: the change may be the machine's, not the server's.
	MachineLimited = "machine-limited"
)

// inconclusive makes c's verdict Inconclusive for doubt, detail saying more.
func (c *Comparison) inconclusive(doubt, detail string) {
	c.Verdict, c.Doubt, c.Reason = Inconclusive, doubt, doubt+": "+detail
}

// unsaved makes c inconclusive, its change unknown, because a run's
// result file did not save the figure (Run.Unsaved says why).
func (c *Comparison) unsaved(why string) {
	c.Change, c.ChangeLo, c.ChangeHi = math.NaN(), math.Inf(-1), math.Inf(1)
	c.inconclusive(TooFewSamples, why)
}

// epsilon keeps a change of exactly the tolerance within it despite
// floating-point rounding (1.1 × 100 is 110.00000000000001).
const epsilon = 1e-9

// Compare compares the newest of runs (runs[0]; runs are newest first)
// with the median of the others, figure by figure, as Options says (see
// the package comment and docs/results.md). A machine-sensitive figure
// (MachineSensitive) leaves the previous machine-limited runs out of its
// baseline when any other run has it, and is inconclusive
// (MachineLimited) when the newest run is machine-limited or every
// previous one is; its change is still computed, for the record.
func Compare(runs []Run, figures []Figure, o Options) []Comparison {
	out := make([]Comparison, 0, len(figures))
	for _, f := range figures {
		c := Comparison{Figure: f, Verdict: NoHistory, Spread: math.NaN()}
		var prev, limited []Estimate
		var limitedRuns []Run
		if len(runs) > 0 {
			for _, r := range runs[1:] {
				e, ok := r.Figures[f.Name]
				if !ok {
					continue
				}
				e = rescale(e, r.Confidence, o.confidence(), f)
				if f.MachineSensitive() && r.Health.Limited() {
					limited, limitedRuns = append(limited, e), append(limitedRuns, r)
					continue
				}
				prev = append(prev, e)
			}
		}
		if len(prev) > 0 {
			c.LeftOut = limitedRuns
		} else {
			prev = limited
		}
		c.BaselineRuns = len(prev)
		if len(prev) > 0 {
			c.Baseline = Median(values(prev))
			c.BaselineN = int64(Median(sampleCounts(prev)))
		}
		newest, ok := Estimate{}, false
		if len(runs) > 0 {
			newest, ok = runs[0].Figures[f.Name]
			newest = rescale(newest, runs[0].Confidence, o.confidence(), f)
		}
		c.Newest = newest
		switch {
		case len(runs) < 2:
			// A single run: NoHistory.
		case !ok && runs[0].Unsaved != "":
			c.Newest = unbounded(math.NaN(), 0, runs[0].Unsaved)
			c.unsaved(runs[0].Unsaved)
		case !ok:
			c.Verdict = NoData
		case len(prev) == 0 && unsaved(runs[1:]) != "":
			c.unsaved(unsaved(runs[1:]))
		case len(prev) == 0 || c.Baseline <= 0:
			// No relative change to compute: NoHistory.
		default:
			judge(&c, prev, o)
			if f.MachineSensitive() {
				machineLimited(&c, runs[0], limitedRuns, len(c.LeftOut) == 0)
			}
		}
		out = append(out, c)
	}
	return out
}

// unsaved is the first of runs' Unsaved that is not "": why the figure
// the previous runs lack is unknown.
func unsaved(runs []Run) string {
	for _, r := range runs {
		if r.Unsaved != "" {
			return r.Unsaved
		}
	}
	return ""
}

// machineLimited makes c's verdict Inconclusive (MachineLimited) when
// the newest run was machine-limited, or, when baselineLimited, the
// previous runs limited, every one of which was. A figure too few samples
// bound keeps that doubt: a faster machine would not bound it either.
func machineLimited(c *Comparison, newest Run, limited []Run, baselineLimited bool) {
	if c.Doubt == TooFewSamples {
		return
	}
	var flagged []Run
	if newest.Health.Limited() {
		flagged = append(flagged, newest)
	}
	if baselineLimited {
		flagged = append(flagged, limited...)
	}
	if len(flagged) == 0 {
		return
	}
	// The runs of one limit are named together.
	var limits []string
	labels := map[string][]string{}
	for _, r := range flagged {
		if _, seen := labels[r.Health.Limit]; !seen {
			limits = append(limits, r.Health.Limit)
		}
		labels[r.Health.Limit] = append(labels[r.Health.Limit], r.Label())
	}
	who := make([]string, len(limits))
	for i, l := range limits {
		if runs := labels[l]; len(runs) == 1 {
			who[i] = "run " + runs[0] + "'s client was limited: " + l
		} else {
			who[i] = "the clients of runs " + strings.Join(runs, ", ") + " were limited: " + l
		}
	}
	c.Unlimited = c.Verdict
	c.inconclusive(MachineLimited, strings.Join(who, "; ")+"; the change may be the machine's, not the server's")
}

// Label names the run in a few characters: its run_id's first ones, else
// its start.
func (r Run) Label() string {
	switch {
	case len(r.ID) > shortID:
		return r.ID[:shortID]
	case r.ID != "":
		return r.ID
	}
	return r.started("2006-01-02 15:04:05")
}

// started is when the run started, in layout: in UTC, or the machine's
// local time marked so, or "–" when unknown.
func (r Run) started(layout string) string {
	switch {
	case r.Time.IsZero():
		return "–"
	case r.LocalTime:
		return r.Time.Format(layout) + " local"
	}
	return r.Time.UTC().Format(layout)
}

// judge sets the change, its interval and the verdict of c, whose newest
// figure and baseline are set, from the previous runs' figures prev.
func judge(c *Comparison, prev []Estimate, o Options) {
	c.Change = c.Newest.Value/c.Baseline - 1
	linear := c.Figure.Unit == "%" // a proportion: its interval holds 0 and 1
	scale := logScale
	if linear {
		scale = func(v float64) float64 { return v }
	}
	// The baseline's own interval: each side's width, the median of the
	// previous runs' on that side. With enough previous runs, their
	// spread below stands in for those stored without an interval.
	var below, above []float64
	for _, e := range prev {
		if len(prev) >= minSpreadRuns && !e.Bounded() {
			continue
		}
		below = append(below, scale(e.Value)-scale(e.Lo))
		above = append(above, scale(e.Hi)-scale(e.Value))
	}
	baseBelow, baseAbove := 0.0, 0.0
	if len(below) > 0 {
		baseBelow, baseAbove = Median(below), Median(above)
	}
	newBelow := scale(c.Newest.Value) - scale(c.Newest.Lo)
	newAbove := scale(c.Newest.Hi) - scale(c.Newest.Value)
	// The difference of the two, with each side's width combined from
	// the two intervals' (MOVER: Zou and Donner, 2008).
	diff := scale(c.Newest.Value) - scale(c.Baseline)
	down := math.Hypot(newBelow, baseAbove)
	up := math.Hypot(newAbove, baseBelow)
	// With enough previous runs, their spread: the band a new run of
	// the same kind falls in (a prediction interval of the median).
	if k := len(prev); k >= minSpreadRuns {
		scaled := make([]float64, k)
		for i, e := range prev {
			scaled[i] = scale(e.Value)
		}
		if spread := madScale * mad(scaled); !math.IsNaN(spread) && !math.IsInf(spread, 0) {
			c.Spread = spread
			band := tQuantile(1-(1-o.confidence())/2, int64(k-1)) * spread * math.Sqrt(1+1/float64(k))
			down, up = math.Max(down, band), math.Max(up, band)
		}
	}
	lo, hi := diff-down, diff+up
	if linear {
		c.ChangeLo, c.ChangeHi = lo/c.Baseline, hi/c.Baseline
	} else {
		c.ChangeLo, c.ChangeHi = math.Expm1(lo), math.Expm1(hi)
	}

	worse, worseLo, worseHi := c.Change, c.ChangeLo, c.ChangeHi
	if c.Figure.Better == HigherIsBetter {
		worse, worseLo, worseHi = -worse, -c.ChangeHi, -c.ChangeLo
	}
	switch {
	case !c.Newest.NoInterval && (!finite(newBelow) || !finite(newAbove)):
		c.inconclusive(TooFewSamples, unboundedWhy(c.Newest, "the newest run's"))
	case notJudgedWhy(c.Newest, prev) != "":
		c.Verdict, c.Reason = NotJudged, notJudgedWhy(c.Newest, prev)
	case !finite(worseLo) || !finite(worseHi):
		c.inconclusive(TooFewSamples, baselineWhy(prev))
	case math.Abs(c.Change) <= o.Tolerance+epsilon:
		c.Verdict = Unchanged
	case worse > 0 && worseLo > 0:
		c.Verdict = Regression
	case worse < 0 && worseHi < 0:
		c.Verdict = Improved
	default:
		c.inconclusive(TooNoisy, fmt.Sprintf("%s is within the noise (%s confidence interval %s to %s)",
			percent(c.Change, true), percent(o.confidence(), false), percent(c.ChangeLo, true), percent(c.ChangeHi, true)))
	}
}

// logScale is the logarithm of a positive v, −Inf otherwise (an interval
// that reaches 0 is unbounded in logarithms).
func logScale(v float64) float64 {
	if v > 0 {
		return math.Log(v)
	}
	return math.Inf(-1)
}

// finite reports whether v is a number and not infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// unboundedWhy says why e's interval is unbounded; whose names the run.
func unboundedWhy(e Estimate, whose string) string {
	if e.Why != "" {
		return e.Why
	}
	return whose + " interval reaches 0: its samples vary too much for their number"
}

// baselineWhy says why the previous runs' figures leave the change
// unbounded.
func baselineWhy(prev []Estimate) string {
	for _, e := range prev {
		if !e.Bounded() || e.Lo <= 0 {
			return unboundedWhy(e, "the baseline's")
		}
	}
	return "the baseline's interval is unbounded"
}

// rescale returns e with its interval widened or narrowed from the level
// from to the level to, as a normal interval would be (z(to) / z(from));
// e as it is when the levels agree or from is unknown. A proportion's
// interval scales linearly, others in logarithms.
func rescale(e Estimate, from, to float64, f Figure) Estimate {
	if from <= 0 || from == to || !e.Bounded() {
		return e
	}
	k := normalQuantile(1-(1-to)/2) / normalQuantile(1-(1-from)/2)
	if f.Unit == "%" {
		e.Lo, e.Hi = e.Value-k*(e.Value-e.Lo), e.Value+k*(e.Hi-e.Value)
		return e
	}
	if e.Lo > 0 && e.Value > 0 {
		e.Lo = e.Value * math.Pow(e.Lo/e.Value, k)
	}
	if e.Value > 0 {
		e.Hi = e.Value * math.Pow(e.Hi/e.Value, k)
	}
	return e
}

// values returns the estimates' values.
func values(es []Estimate) []float64 {
	out := make([]float64, len(es))
	for i, e := range es {
		out[i] = e.Value
	}
	return out
}

// sampleCounts returns the estimates' sample counts.
func sampleCounts(es []Estimate) []float64 {
	out := make([]float64, len(es))
	for i, e := range es {
		out[i] = float64(e.N)
	}
	return out
}

// Regressions returns the comparisons whose verdict is Regression.
func Regressions(cs []Comparison) []Comparison {
	return matching(cs, func(c Comparison) bool { return c.Verdict == Regression })
}

// Inconclusives returns the comparisons whose verdict is Inconclusive.
func Inconclusives(cs []Comparison) []Comparison {
	return matching(cs, func(c Comparison) bool { return c.Verdict == Inconclusive })
}

// withDoubt returns the comparisons whose doubt is d.
func withDoubt(cs []Comparison, d string) []Comparison {
	return matching(cs, func(c Comparison) bool { return c.Doubt == d })
}

// matching returns the comparisons for which keep is true.
func matching(cs []Comparison, keep func(Comparison) bool) []Comparison {
	var out []Comparison
	for _, c := range cs {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}
