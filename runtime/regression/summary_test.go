package regression

import (
	"bytes"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

func TestTrendLookupAliases(t *testing.T) {
	for alias, want := range map[string]string{
		"p99_ttft_ms": "ttft_p99", "median_e2el_ms": "e2e_p50", "mean_tpot_ms": "tpot_mean", "p90_itl_ms": "itl_p90", "p95_e2el_ms": "e2e_p95",
	} {
		f, ok := Lookup(alias)
		if !ok || f.Name != want || f.Better != LowerIsBetter || f.Unit != "ms" {
			t.Errorf("Lookup(%q) = %+v, %v; want %s, lower is better", alias, f, ok, want)
		}
	}
	for _, bad := range []string{"std_ttft_ms", "p99_ttfb_ms", "p99_ttft", "p50_ttft_ms", "median_e2e_ms", "completed"} {
		if f, ok := Lookup(bad); ok {
			t.Errorf("Lookup(%q) = %+v, want no figure", bad, f)
		}
	}
	// An alias and its field are one figure.
	if figs, err := ParseFigures("p99_ttft_ms,ttft_p99"); err != nil || len(figs) != 1 {
		t.Errorf("ParseFigures of a field and its alias: %v, %v", figs, err)
	}
}

// measured builds the result of a run of one scenario over dur whose
// completed requests had these TTFTs (ms), each then streaming 20 tokens
// about 10 ms apart (jittered by rng), and failed requests more.
func measured(t testing.TB, rng *rand.Rand, dur time.Duration, failed int, ttfts ...float64) *summary.Summary {
	t.Helper()
	var results []*llm.Result
	for _, ttft := range ttfts {
		gaps := make([]float64, 19)
		for i := range gaps {
			gaps[i] = 10 * (0.8 + 0.4*rng.Float64())
		}
		results = append(results, summarytest.Streamed(ttft, gaps...))
	}
	for range failed {
		results = append(results, summarytest.Failed(llm.ErrHTTP5xx))
	}
	return summarytest.Build(t, dur, results...)
}

// lognormal draws n values whose median is median, with the spread sigma
// of their logarithms.
func lognormal(rng *rand.Rand, n int, median, sigma float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = median * math.Exp(sigma*rng.NormFloat64())
	}
	return out
}

// A result file's figures carry intervals from its histograms and counts:
// each holds its value; a p99 of few requests is unbounded, saying how
// many it takes; ITL stands on the requests, not on their gaps.
func TestTrendFromSummary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := measured(t, rng, 10*time.Second, 1, lognormal(rng, 1000, 50, 0.5)...)
	r := FromSummary(s, 0.99)
	if r.ID != "run" || r.Version != "test" || r.Confidence != 0.99 {
		t.Errorf("run %+v", r)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Figures)) {
		e := r.Figures[name]
		if _, ok := Lookup(name); !ok {
			t.Errorf("FromSummary gives %s, which Lookup does not know", name)
		}
		if strings.HasSuffix(name, "_max") {
			if e.Bounded() || !strings.Contains(e.Why, "a maximum has no confidence interval") {
				t.Errorf("%s: %+v, want no interval", name, e)
			}
			continue
		}
		if !e.Bounded() || e.Lo > e.Value || e.Value > e.Hi || e.Lo == e.Hi {
			t.Errorf("%s: %+v, want an interval around the value", name, e)
		}
	}
	want := map[string]int64{"ttft_p50": 1000, "itl_p99": 1000, "success_rate": 1001, "request_throughput": 1000}
	for name, n := range want {
		if r.Figures[name].N != n {
			t.Errorf("%s stands on %d samples, want %d", name, r.Figures[name].N, n)
		}
	}
	if v, want := r.Figures["ttft_p50"].Value, s.Latency[0].P["p50"]; v != want {
		t.Errorf("ttft_p50 %v, the latency row's %v", v, want)
	}
	// 1,000 requests bound a median within a few per cent.
	if e := r.Figures["ttft_p50"]; e.Hi/e.Lo > 1.15 {
		t.Errorf("ttft_p50 of 1,000 requests: %+v, want a narrow interval", e)
	}

	// A closed loop's throughput varies as its requests' durations do,
	// less than a Poisson count: a narrower interval.
	open := RunBlock(s)
	open.ClosedLoop = false
	closed, poisson := r.Figures["request_throughput"], Estimates(open, 0.99)["request_throughput"]
	if !(closed.Hi-closed.Lo < poisson.Hi-poisson.Lo) {
		t.Errorf("closed-loop throughput %+v, Poisson %+v: want the closed loop's narrower", closed, poisson)
	}
	for _, c := range []struct {
		executors []string
		want      bool
	}{
		{[]string{"constant-vus"}, true},
		{[]string{"ramping-vus", "shared-iterations", "per-vu-iterations"}, true},
		{[]string{"constant-vus", "constant-arrival-rate"}, false},
		{[]string{"ramping-arrival-rate"}, false},
		{[]string{"trace-replay"}, false},
		{nil, false},
	} {
		if got := ClosedLoop(c.executors...); got != c.want {
			t.Errorf("ClosedLoop(%v) = %t", c.executors, got)
		}
	}

	few := FromSummary(measured(t, rng, 10*time.Second, 0, lognormal(rng, 12, 50, 0.5)...), 0.99)
	if e := few.Figures["ttft_p99"]; e.Bounded() || e.Why != "12 requests cannot bound a p99 at 99 % confidence: it takes 528" {
		t.Errorf("ttft_p99 of 12 requests: %+v", e)
	}
	if e := few.Figures["itl_p99"]; e.Bounded() || !strings.HasPrefix(e.Why, "12 requests") {
		t.Errorf("itl_p99 of 12 requests (228 gaps): %+v, want unbounded, of 12 requests", e)
	}
	if empty := FromSummary(&summary.Summary{}, 0.99); len(empty.Figures) != 0 {
		t.Errorf("a run of nothing has figures %v", empty.Figures)
	}
}

// The intervals survive the llm_run point: IntervalFields and the values'
// fields read back by FromFields give the same estimates.
func TestTrendFieldsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := measured(t, rng, 10*time.Second, 2, lognormal(rng, 40, 50, 0.5)...)
	est := Estimates(RunBlock(s), DefaultConfidence)
	fields := IntervalFields(est, DefaultConfidence)
	for name, e := range est {
		fields[name] = e.Value
	}
	fields["requests"], fields["completed"] = float64(s.Serving.Requests), float64(s.Serving.OK)
	got, conf := FromFields(fields)
	if conf != DefaultConfidence || len(got) != len(est) {
		t.Fatalf("read %d figures at %v, want %d at %v", len(got), conf, len(est), DefaultConfidence)
	}
	for name, want := range est {
		g := got[name]
		if g.Value != want.Value || g.Lo != want.Lo || g.Hi != want.Hi || g.N != want.N || g.Bounded() != want.Bounded() {
			t.Errorf("%s: read %+v, stored %+v", name, g, want)
		}
	}
	if e := got["ttft_p99"]; e.Bounded() || e.Why != "40 requests cannot bound a p99 at 99 % confidence: it takes 528" {
		t.Errorf("an unbounded p99 read back: %+v", e)
	}
	old, conf := FromFields(map[string]float64{"ttft_p99": 120, "completed": 10})
	if conf != 0 || old["ttft_p99"].Bounded() || old["ttft_p99"].Why != "stored without a confidence interval" {
		t.Errorf("a run stored before intervals: %+v at %v", old, conf)
	}
}

// The method, on runs drawn from known distributions: pairs of runs of the
// same server (100 requests each) show no credible regression in any
// headline figure, while a server twice as slow to its first token is
// caught in nearly every pair.
func TestTrendCompareOnSimulatedRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	o := Options{Tolerance: 0.1}
	const pairs = 100
	falseAlarms, caught := 0, 0
	for range pairs {
		run := func(median float64) Run {
			return FromSummary(measured(t, rng, 10*time.Second, 0, lognormal(rng, 100, median, 0.4)...), o.confidence())
		}
		same := Compare([]Run{run(50), run(50)}, Headline(), o)
		falseAlarms += len(Regressions(same))
		slow := Compare([]Run{run(100), run(50)}, Headline(), o)
		for _, c := range slow {
			if c.Figure.Name == "ttft_p50" && c.Verdict == Regression {
				caught++
			}
		}
	}
	if falseAlarms > 0 {
		t.Errorf("%d false regressions in %d comparisons of identical runs", falseAlarms, pairs*len(Headline()))
	}
	if caught < pairs*95/100 {
		t.Errorf("a doubled TTFT was caught in %d of %d pairs, want 95 %%", caught, pairs)
	}
}

func TestTrendRenderPair(t *testing.T) {
	figs := []Figure{{"ttft_p99", "ms", LowerIsBetter}, {"output_throughput", "tok/s", HigherIsBetter}, {"itl_p99", "ms", LowerIsBetter}}
	est := func(v float64) Estimate { return Estimate{Value: v, Lo: 0.98 * v, Hi: 1.02 * v, N: 1200} }
	current := Run{ID: "cur", Figures: map[string]Estimate{"ttft_p99": est(130), "output_throughput": est(1000), "itl_p99": est(20)}}
	baseline := Run{ID: "base", Figures: map[string]Estimate{"ttft_p99": est(100), "output_throughput": est(900)}}
	rs := []Run{current, baseline}
	o := Options{Tolerance: 0.1}
	rep := Report{Title: "baseline a.json, current b.json", Runs: rs, Figures: figs, Comparisons: Compare(rs, figs, o), Options: o}
	var b bytes.Buffer
	if err := RenderPair(&b, rep, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"baseline a.json, current b.json", "tolerance 10 %, 99 % confidence", "baseline", "current",
		"ttft_p99 (ms)", "100.0", "130.0", " 1200 ", "+30.0 %", "+26.4 % … +33.7 %", "regression", "+11.1 %", "improved", "no history",
		"✗ regression beyond 10 %: ttft_p99 +30.0 %"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The baseline's column comes before the current one's.
	line := trendLine(out, "ttft_p99 (ms)")
	if strings.Index(line, "100.0") > strings.Index(line, "130.0") {
		t.Errorf("columns: %s", line)
	}
	if err := RenderPair(&b, Report{Runs: rs[:1]}, textfmt.Style{}); err == nil {
		t.Error("RenderPair of one run: no error")
	}
}

// trendLine is the line of a rendered table that holds s.
func trendLine(out, s string) string {
	for l := range strings.SplitSeq(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
