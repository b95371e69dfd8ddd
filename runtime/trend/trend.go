// Package trend compares the newest of a series of runs with the runs
// before it, figure by figure, as `llmrun trend` does with the llm_run
// points stored in InfluxDB: each headline figure of the newest run against
// the median of the previous runs, within a relative tolerance, in the
// figure's direction (throughputs and the success rate are better higher,
// latency percentiles lower). It holds no I/O but the rendering of its
// tables.
package trend

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
// total_token_throughput, or any latency field L_S of the schema (L one of
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
			return nil, fmt.Errorf("unknown figure %q: want one of %s, total_token_throughput, or a latency field such as e2e_p90 (ttft, tpot, itl, e2e, ttfb × mean, p50, p90, p95, p99, max; or vLLM's p90_e2el_ms)",
				name, strings.Join(known, ", "))
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

// Run is one run's figures.
type Run struct {
	// ID is the run's run_id.
	ID string
	// Time is when it started.
	Time time.Time
	// Version is the llmrun version that ran it.
	Version string
	// Figures are its numeric fields by name; a figure the run lacks is
	// absent.
	Figures map[string]float64
}

// Verdict is the outcome of one figure's comparison.
type Verdict string

// The verdicts.
const (
	// OK: within the tolerance of the baseline.
	OK Verdict = "ok"
	// Regression: worse than the baseline by more than the tolerance.
	Regression Verdict = "regression"
	// Improved: better than the baseline by more than the tolerance.
	Improved Verdict = "improved"
	// NoHistory: nothing to compare with: a single run, or no previous
	// run with the figure, or a baseline of 0.
	NoHistory Verdict = "no history"
	// NoData: the newest run lacks the figure (a latency of a run whose
	// requests all failed).
	NoData Verdict = "no data"
)

// Comparison is one figure of the newest run against its baseline.
type Comparison struct {
	Figure Figure
	// Newest is the newest run's value; valid unless the verdict is
	// NoData.
	Newest float64
	// Baseline is the median of the previous runs' values, and
	// BaselineRuns how many runs it is the median of (0: none).
	Baseline     float64
	BaselineRuns int
	// Change is (Newest − Baseline) / Baseline; valid when the verdict is
	// OK, Regression or Improved.
	Change  float64
	Verdict Verdict
}

// epsilon keeps a change of exactly the tolerance within it despite
// floating-point rounding (1.1 × 100 is 110.00000000000001).
const epsilon = 1e-9

// Compare compares the newest of runs (runs[0]; runs are newest first)
// with the median of the others, for each figure: a change worse than
// tolerance (relative, 0.1 = 10 %) in the figure's direction is a
// regression, a better one an improvement, the rest ok.
func Compare(runs []Run, figures []Figure, tolerance float64) []Comparison {
	out := make([]Comparison, 0, len(figures))
	for _, f := range figures {
		c := Comparison{Figure: f, Verdict: NoHistory}
		var prev []float64
		if len(runs) > 0 {
			for _, r := range runs[1:] {
				if v, ok := r.Figures[f.Name]; ok {
					prev = append(prev, v)
				}
			}
		}
		c.BaselineRuns = len(prev)
		if len(prev) > 0 {
			c.Baseline = Median(prev)
		}
		newest, ok := 0.0, false
		if len(runs) > 0 {
			newest, ok = runs[0].Figures[f.Name]
		}
		c.Newest = newest
		switch {
		case len(runs) < 2:
			// A single run: NoHistory.
		case !ok:
			c.Verdict = NoData
		case len(prev) == 0 || c.Baseline == 0:
			// No relative change to compute: NoHistory.
		default:
			c.Change = (newest - c.Baseline) / c.Baseline
			worse := c.Change
			if f.Better == HigherIsBetter {
				worse = -worse
			}
			switch {
			case worse > tolerance+epsilon:
				c.Verdict = Regression
			case worse < -(tolerance + epsilon):
				c.Verdict = Improved
			default:
				c.Verdict = OK
			}
		}
		out = append(out, c)
	}
	return out
}

// Regressions returns the comparisons whose verdict is Regression.
func Regressions(cs []Comparison) []Comparison {
	var out []Comparison
	for _, c := range cs {
		if c.Verdict == Regression {
			out = append(out, c)
		}
	}
	return out
}

// Median returns the median of xs (the mean of the two middle values of
// an even count); xs is left as it is. It is NaN for no values.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
