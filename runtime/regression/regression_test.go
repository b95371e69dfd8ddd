package regression

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

// runs returns runs, newest first, with one figure's values (newest
// first), each with an interval of ± half (relative) around it, from 1,000
// samples; math.NaN() leaves the figure out of that run.
func runs(name string, half float64, values ...float64) []Run {
	out := make([]Run, len(values))
	start := time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)
	for i, v := range values {
		out[i] = Run{ID: string(rune('a'+i)) + "-run", Time: start.Add(-time.Duration(i) * 24 * time.Hour), Version: "v1",
			Figures: map[string]Estimate{}, Confidence: DefaultConfidence}
		if !math.IsNaN(v) {
			out[i].Figures[name] = Estimate{Value: v, Lo: v * (1 - half), Hi: v * (1 + half), N: 1000}
		}
	}
	return out
}

func TestTrendCompare(t *testing.T) {
	lower, _ := Lookup("ttft_p99")
	higher, _ := Lookup("output_throughput")
	nan := math.NaN()
	tol := Options{Tolerance: 0.1}
	for _, c := range []struct {
		name   string
		fig    Figure
		half   float64 // each run's interval, relative
		values []float64
		o      Options
		want   Verdict
		base   float64
	}{
		{"stable latency", lower, 0.02, []float64{102, 100, 98, 101, 99, 103}, tol, Unchanged, 100},
		{"latency up 30 %", lower, 0.02, []float64{130, 100, 98, 101, 99, 103}, tol, Regression, 100},
		{"latency down 30 %", lower, 0.02, []float64{70, 100, 98, 101, 99, 103}, tol, Improved, 100},
		{"throughput down 30 %", higher, 0.02, []float64{70, 100, 98, 101, 99, 103}, tol, Regression, 100},
		{"throughput up 30 %", higher, 0.02, []float64{130, 100, 98, 101, 99, 103}, tol, Improved, 100},
		{"up 30 % within the runs' noise", lower, 0.3, []float64{130, 100}, tol, Inconclusive, 100},
		{"down 30 % within the runs' noise", lower, 0.3, []float64{70, 100}, tol, Inconclusive, 100},
		{"up 30 % within the previous runs' spread", lower, 0.02, []float64{130, 100, 70, 140, 95, 125}, tol, Inconclusive, 100},
		{"three close previous runs: their spread is small", lower, 0.02, []float64{125, 100, 101, 99}, tol, Regression, 100},
		{"three scattered previous runs: their spread is large", lower, 0.02, []float64{125, 100, 120, 90}, tol, Inconclusive, 100},
		{"even count: median of the middle two", lower, 0.02, []float64{120, 100, 120, 90, 130}, tol, Unchanged, 110},
		{"odd count: the middle one", lower, 0.02, []float64{125, 100, 101, 99}, tol, Regression, 100},
		{"one outlier moves neither the median nor the spread", lower, 0.02, []float64{115, 100, 101, 99, 1000}, tol, Regression, 100.5},
		{"exactly the tolerance worse is unchanged", lower, 0.02, []float64{110, 100}, tol, Unchanged, 100},
		{"just beyond the tolerance, credibly, is a regression", lower, 0.01, []float64{110.5, 100}, tol, Regression, 100},
		{"just beyond the tolerance, within the noise", lower, 0.1, []float64{110.5, 100}, tol, Inconclusive, 100},
		{"exactly the tolerance better is unchanged", higher, 0.02, []float64{110, 100}, tol, Unchanged, 100},
		{"throughput exactly the tolerance lower is unchanged", higher, 0.02, []float64{90, 100}, tol, Unchanged, 100},
		{"zero tolerance: any credible worsening", lower, 0.001, []float64{101, 100}, Options{}, Regression, 100},
		{"zero tolerance: no change is unchanged", lower, 0.02, []float64{100, 100}, Options{}, Unchanged, 100},
		{"a lower confidence finds a smaller change", lower, 0.05, []float64{113, 100}, Options{Tolerance: 0.1, Confidence: 0.5}, Regression, 100},
		{"a single run", lower, 0.02, []float64{100}, tol, NoHistory, 0},
		{"no previous value", lower, 0.02, []float64{100, nan, nan}, tol, NoHistory, 0},
		{"a baseline of 0", higher, 0.02, []float64{5, 0, 0}, tol, NoHistory, 0},
		{"previous runs without the figure are skipped", lower, 0.02, []float64{130, nan, 100}, tol, Regression, 100},
		{"the newest run lacks the figure", lower, 0.02, []float64{nan, 100, 100}, tol, NoData, 100},
	} {
		got := Compare(runs(c.fig.Name, c.half, c.values...), []Figure{c.fig}, c.o)
		if len(got) != 1 {
			t.Fatalf("%s: %d comparisons", c.name, len(got))
		}
		if g := got[0]; g.Verdict != c.want || (g.BaselineRuns > 0 && g.Baseline != c.base) {
			t.Errorf("%s: %v: verdict %q (%s) against baseline %v (change %+.4f, interval %+.4f..%+.4f), want %q against %v",
				c.name, c.values, g.Verdict, g.Reason, g.Baseline, g.Change, g.ChangeLo, g.ChangeHi, c.want, c.base)
		}
	}
	if got := Compare(nil, Headline(), tol); len(got) != len(Headline()) || got[0].Verdict != NoHistory {
		t.Errorf("no run: %+v", got)
	}
}

// A figure too few samples bound is inconclusive, whatever its change,
// saying why; one whose runs were stored without intervals is judged by
// the spread of three or more previous runs, and inconclusive with fewer.
func TestTrendCompareUnbounded(t *testing.T) {
	f, _ := Lookup("ttft_p99")
	o := Options{Tolerance: 0.1}
	rs := runs(f.Name, 0.02, 300, 100)
	rs[0].Figures[f.Name] = unbounded(300, 12, "12 requests cannot bound a p99 at 99 % confidence: it takes 528")
	if c := Compare(rs, []Figure{f}, o)[0]; c.Verdict != Inconclusive || !strings.Contains(c.Reason, "too few samples: 12 requests cannot bound a p99") {
		t.Errorf("a p99 of 12 requests: %q (%s)", c.Verdict, c.Reason)
	}
	old := func(values ...float64) []Run {
		rs := runs(f.Name, 0, values...)
		for i := range rs {
			rs[i].Figures[f.Name] = unbounded(values[i], 0, "stored without a confidence interval")
			rs[i].Confidence = 0
		}
		rs[0] = runs(f.Name, 0.02, values[0])[0]
		return rs
	}
	if c := Compare(old(150, 100, 101, 99), []Figure{f}, o)[0]; c.Verdict != Regression || math.IsNaN(c.Spread) {
		t.Errorf("against three old runs: %q (%s), spread %v", c.Verdict, c.Reason, c.Spread)
	}
	if c := Compare(old(150, 100), []Figure{f}, o)[0]; c.Verdict != Inconclusive || !strings.Contains(c.Reason, "stored without a confidence interval") {
		t.Errorf("against one old run: %q (%s)", c.Verdict, c.Reason)
	}
}

// A figure a run lacks because its result file, another tool's, saves
// none is inconclusive, the run's reason given, not "no data" or "no
// history"; one lacking from a run without such a reason keeps those.
func TestCompareUnsaved(t *testing.T) {
	f, _ := Lookup("success_rate")
	const why = "sglang.bench_serving's result file has no such figure"
	for _, tc := range []struct {
		name    string
		values  []float64
		unsaved int
		verdict Verdict
	}{
		{"the newest run's tool saved none", []float64{math.NaN(), 0.99}, 0, Inconclusive},
		{"the baseline's tool saved none", []float64{0.99, math.NaN()}, 1, Inconclusive},
		{"the newest run measured none", []float64{math.NaN(), 0.99}, -1, NoData},
		{"the baseline measured none", []float64{0.99, math.NaN()}, -1, NoHistory},
		{"saved by both", []float64{0.99, 0.99}, 0, Unchanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := runs(f.Name, 0.001, tc.values...)
			if tc.unsaved >= 0 {
				rs[tc.unsaved].Unsaved = why
			}
			c := Compare(rs, []Figure{f}, Options{Tolerance: 0.1})[0]
			if c.Verdict != tc.verdict || tc.verdict == Inconclusive && c.Reason != TooFewSamples+": "+why {
				t.Errorf("%q (%s), want %q", c.Verdict, c.Reason, tc.verdict)
			}
			change, _, _ := verdictCells(c, textfmt.Style{})
			if strings.Contains(change, "NaN") {
				t.Errorf("change shown as %q", change)
			}
		})
	}
}

// A success rate's interval is a proportion's (Wilson's), judged on the
// linear scale: a drop from 100 % to 50 % of 1,000 requests is credible,
// one to 90 % of 10 requests is not.
func TestTrendCompareSuccessRate(t *testing.T) {
	f, _ := Lookup("success_rate")
	rate := func(ok, n int64) Estimate {
		lo, hi := wilson(ok, n, DefaultConfidence)
		return Estimate{Value: float64(ok) / float64(n), Lo: lo, Hi: hi, N: n}
	}
	pair := func(cur, base Estimate) []Run {
		return []Run{{Figures: map[string]Estimate{f.Name: cur}}, {Figures: map[string]Estimate{f.Name: base}}}
	}
	o := Options{Tolerance: 0.1}
	if c := Compare(pair(rate(500, 1000), rate(1000, 1000)), []Figure{f}, o)[0]; c.Verdict != Regression {
		t.Errorf("100 %% → 50 %% of 1,000: %q (%s)", c.Verdict, c.Reason)
	}
	if c := Compare(pair(rate(8, 10), rate(10, 10)), []Figure{f}, o)[0]; c.Verdict != Inconclusive {
		t.Errorf("100 %% → 80 %% of 10: %q", c.Verdict)
	}
	if c := Compare(pair(rate(1000, 1000), rate(1000, 1000)), []Figure{f}, o)[0]; c.Verdict != Unchanged {
		t.Errorf("100 %% both: %q (%s)", c.Verdict, c.Reason)
	}
}

// An interval stored at one level is judged at another as a normal one
// would be: narrower at a lower level.
func TestRescale(t *testing.T) {
	f, _ := Lookup("ttft_p50")
	e := Estimate{Value: 100, Lo: 80, Hi: 125}
	got := rescale(e, 0.99, 0.95, f)
	k := normalQuantile(0.975) / normalQuantile(0.995)
	if math.Abs(got.Lo-100*math.Pow(0.8, k)) > 1e-9 || math.Abs(got.Hi-100*math.Pow(1.25, k)) > 1e-9 || got.Lo <= 80 || got.Hi >= 125 {
		t.Errorf("rescaled %+v", got)
	}
	if same := rescale(e, 0, 0.95, f); same != e {
		t.Errorf("an interval of unknown level rescaled: %+v", same)
	}
}

func TestTrendRegressions(t *testing.T) {
	rs := runs("ttft_p99", 0.02, 130, 100, 100)
	for i := range rs {
		rs[i].Figures["output_throughput"] = Estimate{Value: 100, Lo: 98, Hi: 102, N: 1000}
	}
	cs := Compare(rs, Headline(), Options{Tolerance: 0.1})
	reg := Regressions(cs)
	if len(reg) != 1 || reg[0].Figure.Name != "ttft_p99" || math.Abs(reg[0].Change-0.3) > 1e-12 {
		t.Errorf("regressions: %+v", reg)
	}
	for _, c := range cs {
		switch c.Figure.Name {
		case "output_throughput":
			if c.Verdict != Unchanged {
				t.Errorf("unchanged throughput: %q", c.Verdict)
			}
		case "ttft_p99":
		default:
			if c.Verdict != NoData {
				t.Errorf("%s, in no run: %q, want %q", c.Figure.Name, c.Verdict, NoData)
			}
		}
	}
}

func TestTrendDirections(t *testing.T) {
	for _, name := range []string{"request_throughput", "output_throughput", "success_rate", "total_token_throughput"} {
		if f, ok := Lookup(name); !ok || f.Better != HigherIsBetter {
			t.Errorf("%s: %+v %v, want higher is better", name, f, ok)
		}
	}
	for _, name := range []string{"ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "itl_p99", "e2e_p99", "ttfb_mean", "e2e_max", "itl_p90"} {
		if f, ok := Lookup(name); !ok || f.Better != LowerIsBetter || f.Unit != "ms" {
			t.Errorf("%s: %+v %v, want lower is better, in ms", name, f, ok)
		}
	}
	for _, name := range []string{"", "ttft", "ttft_p42", "foo_p99", "requests", "version"} {
		if f, ok := Lookup(name); ok {
			t.Errorf("%q is a figure: %+v", name, f)
		}
	}
	if n := len(Headline()); n != 9 {
		t.Errorf("%d headline figures, want the schema's 9", n)
	}
}

func TestTrendParseFigures(t *testing.T) {
	figs, err := ParseFigures(" ttft_p99, output_throughput,ttft_p99,e2e_p90")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "ttft_p99,output_throughput,e2e_p90" {
		t.Errorf("figures %s", got)
	}
	if figs, err := ParseFigures(""); err != nil || len(figs) != len(Headline()) {
		t.Errorf("no list: %v %v, want the headline figures", figs, err)
	}
	if _, err := ParseFigures("ttft_p99,latency"); err == nil || !strings.Contains(err.Error(), `"latency"`) || !strings.Contains(err.Error(), "output_throughput") {
		t.Errorf("an unknown figure: %v", err)
	}
}

func TestTrendParseTolerance(t *testing.T) {
	for in, want := range map[string]float64{"10%": 0.1, "0.1": 0.1, " 2.5 %": 0.025, "0": 0, "0%": 0, "150%": 1.5, "1": 1} {
		if got, err := ParseTolerance(in); err != nil || math.Abs(got-want) > 1e-15 {
			t.Errorf("ParseTolerance(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "%", "ten", "-5%", "-0.1", "10", "NaN", "Inf%", "10%%"} {
		if got, err := ParseTolerance(in); err == nil {
			t.Errorf("ParseTolerance(%q) = %v, want an error", in, got)
		}
	}
}

func TestTrendParseConfidence(t *testing.T) {
	for in, want := range map[string]float64{"99%": 0.99, "0.95": 0.95, "50%": 0.5, "99.9 %": 0.999} {
		if got, err := ParseConfidence(in); err != nil || math.Abs(got-want) > 1e-15 {
			t.Errorf("ParseConfidence(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"100%", "1", "0.4", "40%", "high", ""} {
		if got, err := ParseConfidence(in); err == nil {
			t.Errorf("ParseConfidence(%q) = %v, want an error", in, got)
		}
	}
}

func TestTrendRender(t *testing.T) {
	figs := []Figure{{"ttft_p99", "ms", LowerIsBetter}, {"success_rate", "%", HigherIsBetter}, {"itl_p99", "ms", LowerIsBetter}}
	rs := runs("ttft_p99", 0.02, 130, 100, 102)
	for i, v := range []float64{0.999, 1, 1} {
		rs[i].Figures["success_rate"] = Estimate{Value: v, Lo: v - 0.01, Hi: 1, N: 1000}
		rs[i].Figures["itl_p99"] = unbounded(20, 12, "12 requests cannot bound a p99 at 99 % confidence: it takes 528")
	}
	rs[0].ID = "0123456789abcdef"
	o := Options{Tolerance: 0.1}
	rep := Report{Title: "testid nightly", Runs: rs, Figures: figs, Comparisons: Compare(rs, figs, o), Options: o}
	var b bytes.Buffer
	if err := Render(&b, rep, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"testid nightly: 3 runs, newest first", "2025-06-01 02:00", "01234567 ", "ttft_p99 (ms)", "130.0", "99.90",
		"tolerance 10 %, 99 % confidence", "99 % CI", " 1000 ", "+28.7 %", "regression", "-0.1 %", "unchanged",
		"inconclusive (too few samples)", "itl_p99 inconclusive: too few samples: 12 requests cannot bound a p99",
		"✗ regression beyond 10 %: ttft_p99 +28.7 %"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0123456789") || strings.Contains(out, "\x1b[") {
		t.Errorf("a long run_id, or colours without Style.Color:\n%s", out)
	}
	if !rep.Failed() {
		t.Error("a regression does not fail the report")
	}
	b.Reset()
	if err := Render(&b, rep, textfmt.Style{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[1m\x1b[31mregression\x1b[0m\x1b[0m") {
		t.Errorf("a regression is not red with Style.Color:\n%s", b.String())
	}

	// Without the regression: inconclusive passes, unless strict.
	calm := runs("ttft_p99", 0.02, 101, 100, 102)
	for i := range calm {
		calm[i].Figures["itl_p99"] = rs[i].Figures["itl_p99"]
	}
	rep = Report{Title: "testid calm", Runs: calm, Figures: figs, Comparisons: Compare(calm, figs, o), Options: o}
	b.Reset()
	if err := Render(&b, rep, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if rep.Failed() || !strings.Contains(b.String(), "✓ no credible regression beyond 10 % (1 figure inconclusive; --strict fails them)") {
		t.Errorf("failed %t:\n%s", rep.Failed(), b.String())
	}
	rep.Strict = true
	b.Reset()
	if err := Render(&b, rep, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if !rep.Failed() || !strings.Contains(b.String(), "--strict fails the inconclusive figures: itl_p99") {
		t.Errorf("strict, failed %t:\n%s", rep.Failed(), b.String())
	}

	one := rs[:1]
	b.Reset()
	if err := Render(&b, Report{Title: "testid t", Runs: one, Figures: figs, Comparisons: Compare(one, figs, o), Options: o}, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "1 run,") || strings.Count(out, "no history") != 4 {
		t.Errorf("a single run: want 'no history' for the three figures and at the end:\n%s", out)
	}
}

// A machine-limited run's latencies and throughputs prove nothing: the
// newest run's are inconclusive, naming it and its limit; a previous
// one's are left out of the baseline, or make the figure inconclusive
// when every previous run was limited. The success rate is judged as
// always, and a run without a reading is judged as measured.
func TestTrendCompareMachineLimited(t *testing.T) {
	const limit = "other processes on this machine took the CPU (other processes used 99 % of the 2 CPUs)"
	limited, healthy, unknown := Health{Known: true, Limit: limit}, Health{Known: true}, Health{}
	tol := Options{Tolerance: 0.1}
	for _, c := range []struct {
		name      string
		figure    string
		values    []float64 // newest first
		health    []Health
		want      Verdict
		doubt     string
		base      float64
		leftOut   int
		flagged   []string // run labels the reason names
		unflagged []string
		unlimited Verdict // the verdict but for the machine's limit
	}{
		{"a limited newest run's regression", "tpot_p50", []float64{115.4, 100}, []Health{limited, healthy},
			Inconclusive, MachineLimited, 100, 0, []string{"a-run"}, []string{"b-run"}, Regression},
		{"a limited newest run's unchanged figure", "ttft_p50", []float64{101, 100}, []Health{limited, healthy},
			Inconclusive, MachineLimited, 100, 0, []string{"a-run"}, nil, Unchanged},
		{"a limited baseline's throughput", "output_throughput", []float64{80, 100}, []Health{healthy, limited},
			Inconclusive, MachineLimited, 100, 0, []string{"b-run"}, []string{"a-run"}, Regression},
		{"both limited", "e2e_p99", []float64{130, 100}, []Health{limited, limited},
			Inconclusive, MachineLimited, 100, 0, []string{"the clients of runs a-run, b-run were"}, nil, Regression},
		{"the success rate of a limited run is judged", "success_rate", []float64{0.5, 0.99}, []Health{limited, healthy},
			Regression, "", 0.99, 0, nil, nil, ""},
		{"a limited previous run is left out of the median", "ttft_p50", []float64{100, 100, 200, 101, 99}, []Health{healthy, healthy, limited, healthy, healthy},
			Unchanged, "", 100, 1, nil, nil, ""},
		{"a regression against the healthy previous runs stands", "ttft_p50", []float64{130, 100, 200, 101, 99}, []Health{healthy, healthy, limited, healthy, healthy},
			Regression, "", 100, 1, nil, nil, ""},
		{"runs without a reading are judged as measured", "tpot_p50", []float64{130, 100}, []Health{unknown, unknown},
			Regression, "", 100, 0, nil, nil, ""},
		{"healthy runs", "tpot_p50", []float64{130, 100}, []Health{healthy, healthy},
			Regression, "", 100, 0, nil, nil, ""},
		{"a p99 too few samples bound stays so in a limited run", "ttft_p99", []float64{130, 100}, []Health{limited, healthy},
			Inconclusive, TooFewSamples, 100, 0, nil, nil, ""},
	} {
		fig, _ := Lookup(c.figure)
		rs := runs(c.figure, 0.01, c.values...)
		for i := range rs {
			rs[i].Health = c.health[i]
			if c.doubt == TooFewSamples {
				e := rs[i].Figures[c.figure]
				e.Hi = math.Inf(1)
				rs[i].Figures[c.figure] = e
			}
		}
		got := Compare(rs, []Figure{fig}, tol)[0]
		if got.Verdict != c.want || got.Doubt != c.doubt || math.Abs(got.Baseline-c.base) > 1e-9 || len(got.LeftOut) != c.leftOut {
			t.Errorf("%s: %s (%s), baseline %g, %d left out; want %s (%s), %g, %d: %s",
				c.name, got.Verdict, got.Doubt, got.Baseline, len(got.LeftOut), c.want, c.doubt, c.base, c.leftOut, got.Reason)
		}
		for _, id := range c.flagged {
			if !strings.Contains(got.Reason, id) || !strings.Contains(got.Reason, "limited: "+limit) {
				t.Errorf("%s: the reason does not name run %s and its limit: %q", c.name, id, got.Reason)
			}
		}
		for _, id := range c.unflagged {
			if strings.Contains(got.Reason, id) {
				t.Errorf("%s: the reason names run %s, which was not limited: %q", c.name, id, got.Reason)
			}
		}
		if c.doubt == MachineLimited && math.Abs(got.Change-(c.values[0]/c.base-1)) > 1e-9 {
			t.Errorf("%s: change %g, want it computed for the record", c.name, got.Change)
		}
		if c.doubt == MachineLimited && got.Unlimited != c.unlimited {
			t.Errorf("%s: %s but for the machine's limit, want %s", c.name, got.Unlimited, c.unlimited)
		}
	}
}

// The output names the run whose client was limited, by its role and
// with its limit, groups the figures it made inconclusive on one line,
// passes unless --strict, and shows each run's client health.
func TestTrendRenderMachineLimited(t *testing.T) {
	const limit = "other processes on this machine took the CPU (other processes used 99 % of the 2 CPUs)"
	figs := []Figure{{"tpot_p50", "ms", LowerIsBetter}, {"output_throughput", "tok/s", HigherIsBetter}, {"success_rate", "%", HigherIsBetter}}
	est := func(v float64) Estimate { return Estimate{Value: v, Lo: 0.99 * v, Hi: 1.01 * v, N: 1000} }
	pair := func(current, baseline Health) []Run {
		return []Run{
			{ID: "current-run-id", Health: current, Figures: map[string]Estimate{"tpot_p50": est(23.08), "output_throughput": est(850), "success_rate": est(1)}},
			{ID: "baseline-run-id", Health: baseline, Figures: map[string]Estimate{"tpot_p50": est(20), "output_throughput": est(1000), "success_rate": est(1)}},
		}
	}
	o := Options{Tolerance: 0.1}
	render := func(rs []Run, strict bool, show func(io.Writer, Report, textfmt.Style) error) (Report, string) {
		t.Helper()
		rep := Report{Title: "baseline a.json, current b.json", Runs: rs, Figures: figs, Comparisons: Compare(rs, figs, o), Options: o, Strict: strict}
		var b bytes.Buffer
		if err := show(&b, rep, textfmt.Style{}); err != nil {
			t.Fatal(err)
		}
		return rep, b.String()
	}
	healthy, limited := Health{Known: true}, Health{Known: true, Limit: limit}

	rep, out := render(pair(limited, healthy), false, RenderPair)
	for _, want := range []string{
		"machine-limited: the current run: its client was limited: " + limit + "; its latencies and throughputs are inconclusive",
		"inconclusive (machine-limited)", "+15.4 %",
		"  tpot_p50, output_throughput inconclusive: machine-limited: run current-'s client was limited: " + limit,
		"? machine-limited, no verdict beyond 10 %: tpot_p50 +15.4 %, output_throughput -15.0 % (a regression but for the machine's limit): no verdict, exit 112; rerun on a quieter machine"} {
		if !strings.Contains(out, want) {
			t.Errorf("a limited current run: the output lacks %q:\n%s", want, out)
		}
	}
	if rep.Failed() || !rep.Undecided() || strings.Contains(out, "the baseline:") || strings.Contains(out, "│ regression") {
		t.Errorf("a limited current run: failed %t, undecided %t (want false, true), or the baseline named, or a regression:\n%s", rep.Failed(), rep.Undecided(), out)
	}
	steady := runs("tpot_p50", 0.01, 20.1, 20)
	steady[0].Health = limited
	if rep, out := render(steady, false, RenderPair); rep.Failed() || rep.Undecided() ||
		!strings.Contains(out, "✓ no credible regression beyond 10 % (1 figure inconclusive, 1 of them machine-limited; --strict fails them)") {
		t.Errorf("a limited current run, unchanged: failed %t:\n%s", rep.Failed(), out)
	}
	if rep, out := render(pair(limited, healthy), true, RenderPair); !rep.Failed() || rep.Undecided() || !strings.Contains(out, "--strict fails the inconclusive figures: tpot_p50 +15.4 %, output_throughput -15.0 %") {
		t.Errorf("a limited current run under --strict: failed %t:\n%s", rep.Failed(), out)
	}
	if rep, out := render(pair(healthy, limited), false, RenderPair); rep.Failed() ||
		!strings.Contains(out, "machine-limited: the baseline: its client was limited: "+limit+"; the latencies and throughputs compared with it are inconclusive") ||
		strings.Contains(out, "the current run:") {
		t.Errorf("a limited baseline: failed %t:\n%s", rep.Failed(), out)
	}
	if rep, out := render(pair(Health{}, healthy), false, RenderPair); !rep.Failed() ||
		!strings.Contains(out, "client health unknown (no reading stored: written before llmrun kept it, or not measured), judged as measured: the current run") {
		t.Errorf("a current run without a reading: failed %t:\n%s", rep.Failed(), out)
	}

	// Other reasons keep a line per figure, even when they are the same.
	few := unbounded(20, 12, "12 requests cannot bound a p99 at 99 % confidence: it takes 528")
	fewRuns := []Run{{ID: "cur", Health: healthy, Figures: map[string]Estimate{"tpot_p99": few, "itl_p99": few}},
		{ID: "base", Health: healthy, Figures: map[string]Estimate{"tpot_p99": few, "itl_p99": few}}}
	fewFigs := []Figure{{"tpot_p99", "ms", LowerIsBetter}, {"itl_p99", "ms", LowerIsBetter}}
	var b bytes.Buffer
	if err := RenderPair(&b, Report{Runs: fewRuns, Figures: fewFigs, Comparisons: Compare(fewRuns, fewFigs, o), Options: o}, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "\n  tpot_p99 inconclusive: too few samples") || !strings.Contains(out, "\n  itl_p99 inconclusive: too few samples") {
		t.Errorf("figures too few samples bound: not a line each:\n%s", out)
	}

	// trend: the runs table has each run's health, and the limited
	// previous run is left out of the baseline.
	rs := runs("tpot_p50", 0.01, 20.1, 20, 30, 20.2, 19.9)
	for i, h := range []Health{healthy, healthy, limited, {}, healthy} {
		rs[i].Health = h
	}
	rep, out = render(rs, false, Render)
	for _, want := range []string{"client", " limited ", " unknown ", " ok ",
		"machine-limited: run c-run (2025-05-30 02:00): its client was limited: " + limit + "; left out of the baseline of latencies and throughputs",
		"client health unknown (no reading stored: written before llmrun kept it, or not measured), judged as measured: run d-run (2025-05-29 02:00)",
		"✓ no regression beyond 10 %"} {
		if !strings.Contains(out, want) {
			t.Errorf("trend: the output lacks %q:\n%s", want, out)
		}
	}
	if rep.Failed() {
		t.Errorf("trend: a stable history fails:\n%s", out)
	}
}

// A run whose start is unknown (SGLang's file saves none) shows a dash,
// not year 1; one whose start is its machine's local time (vLLM's) says
// so instead of passing it for UTC.
func TestRenderRunStarts(t *testing.T) {
	figs := []Figure{{"ttft_p99", "ms", LowerIsBetter}}
	rs := runs("ttft_p99", 0.02, 100, 100)
	rs[0].Time, rs[0].ID = time.Time{}, ""
	rs[1].Time, rs[1].LocalTime, rs[1].ID = time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC), true, ""
	figs = append(figs, Figure{"server_x", "", HigherIsBetter})
	rs[0].Figures["server_x"], rs[1].Figures["server_x"] = Estimate{Value: 1}, Estimate{Value: 1}
	o := Options{Tolerance: 0.1}
	rep := Report{Title: "files", Runs: rs, Figures: figs, Comparisons: Compare(rs, figs, o), Options: o}
	var b bytes.Buffer
	if err := Render(&b, rep, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "0001") {
		t.Errorf("an unknown start shows as year 1:\n%s", out)
	}
	for _, want := range []string{"2026-12-05 14:00 local", "12-05 14:00 local"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
