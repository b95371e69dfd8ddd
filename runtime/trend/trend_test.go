package trend

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/output/console"
)

func TestTrendMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{10, 10, 1000, 10, 9}, 10},
		{[]float64{1, 100}, 50.5},
	} {
		in := append([]float64(nil), c.xs...)
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
		for i := range in {
			if in[i] != c.xs[i] {
				t.Errorf("Median sorted its argument: %v", c.xs)
				break
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
}

// runs returns runs, newest first, with one figure's values (newest
// first); math.NaN() leaves the figure out of that run.
func runs(name string, values ...float64) []Run {
	out := make([]Run, len(values))
	start := time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)
	for i, v := range values {
		out[i] = Run{ID: string(rune('a'+i)) + "-run", Time: start.Add(-time.Duration(i) * 24 * time.Hour), Version: "v1", Figures: map[string]float64{}}
		if !math.IsNaN(v) {
			out[i].Figures[name] = v
		}
	}
	return out
}

func TestTrendCompare(t *testing.T) {
	lower, _ := Lookup("ttft_p99")
	higher, _ := Lookup("output_throughput")
	nan := math.NaN()
	for _, c := range []struct {
		name   string
		fig    Figure
		values []float64 // newest first
		tol    float64
		want   Verdict
		base   float64
	}{
		{"stable latency", lower, []float64{102, 100, 98, 101, 99, 103}, 0.1, OK, 100},
		{"latency up 30 %", lower, []float64{130, 100, 98, 101, 99, 103}, 0.1, Regression, 100},
		{"latency down 30 %", lower, []float64{70, 100, 98, 101, 99, 103}, 0.1, Improved, 100},
		{"throughput down 30 %", higher, []float64{70, 100, 98, 101, 99, 103}, 0.1, Regression, 100},
		{"throughput up 30 %", higher, []float64{130, 100, 98, 101, 99, 103}, 0.1, Improved, 100},
		{"even count: median of the middle two", lower, []float64{120, 100, 120, 90, 130}, 0.1, OK, 110},
		{"odd count: the middle one", lower, []float64{125, 100, 120, 90}, 0.1, Regression, 100},
		{"one outlier does not move the median", lower, []float64{105, 100, 100, 1000}, 0.1, OK, 100},
		{"exactly the tolerance worse is ok", lower, []float64{110, 100}, 0.1, OK, 100},
		{"just beyond the tolerance is a regression", lower, []float64{110.01, 100}, 0.1, Regression, 100},
		{"exactly the tolerance better is ok", higher, []float64{110, 100}, 0.1, OK, 100},
		{"just beyond it is an improvement", higher, []float64{110.01, 100}, 0.1, Improved, 100},
		{"throughput exactly the tolerance lower is ok", higher, []float64{90, 100}, 0.1, OK, 100},
		{"zero tolerance: any worsening", lower, []float64{100.5, 100}, 0, Regression, 100},
		{"zero tolerance: no change is ok", lower, []float64{100, 100}, 0, OK, 100},
		{"a single run", lower, []float64{100}, 0.1, NoHistory, 0},
		{"no previous value", lower, []float64{100, nan, nan}, 0.1, NoHistory, 0},
		{"a baseline of 0", higher, []float64{5, 0, 0}, 0.1, NoHistory, 0},
		{"previous runs without the figure are skipped", lower, []float64{130, nan, 100}, 0.1, Regression, 100},
		{"the newest run lacks the figure", lower, []float64{nan, 100, 100}, 0.1, NoData, 100},
	} {
		got := Compare(runs(c.fig.Name, c.values...), []Figure{c.fig}, c.tol)
		if len(got) != 1 {
			t.Fatalf("%s: %d comparisons", c.name, len(got))
		}
		if g := got[0]; g.Verdict != c.want || (g.BaselineRuns > 0 && g.Baseline != c.base) {
			t.Errorf("%s: %v: verdict %q against baseline %v (change %+.4f), want %q against %v", c.name, c.values, g.Verdict, g.Baseline, g.Change, c.want, c.base)
		}
	}
	if got := Compare(nil, Headline(), 0.1); len(got) != len(Headline()) || got[0].Verdict != NoHistory {
		t.Errorf("no run: %+v", got)
	}
}

func TestTrendRegressions(t *testing.T) {
	rs := runs("ttft_p99", 130, 100, 100)
	rs[0].Figures["output_throughput"], rs[1].Figures["output_throughput"], rs[2].Figures["output_throughput"] = 100, 100, 100
	cs := Compare(rs, Headline(), 0.1)
	reg := Regressions(cs)
	if len(reg) != 1 || reg[0].Figure.Name != "ttft_p99" || math.Abs(reg[0].Change-0.3) > 1e-12 {
		t.Errorf("regressions: %+v", reg)
	}
	for _, c := range cs {
		switch c.Figure.Name {
		case "output_throughput":
			if c.Verdict != OK {
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

func TestTrendRender(t *testing.T) {
	figs := []Figure{{"ttft_p99", "ms", LowerIsBetter}, {"success_rate", "%", HigherIsBetter}}
	rs := runs("ttft_p99", 130, 100, 102)
	for i, v := range []float64{0.999, 1, 1} {
		rs[i].Figures["success_rate"] = v
	}
	rs[0].ID = "0123456789abcdef"
	rep := Report{Title: "testid nightly", Runs: rs, Figures: figs, Comparisons: Compare(rs, figs, 0.1), Tolerance: 0.1}
	var b bytes.Buffer
	if err := Render(&b, rep, console.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"testid nightly: 3 runs, newest first", "2025-06-01 02:00", "01234567 ", "ttft_p99 (ms)", "130.0", "99.90",
		"tolerance 10 %", "+28.7 %", "regression", "-0.1 %", "✗ regression beyond 10 %: ttft_p99 +28.7 %"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0123456789") || strings.Contains(out, "\x1b[") {
		t.Errorf("a long run_id, or colours without Style.Color:\n%s", out)
	}
	b.Reset()
	if err := Render(&b, rep, console.Style{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[1m\x1b[31mregression\x1b[0m\x1b[0m") {
		t.Errorf("a regression is not red with Style.Color:\n%s", b.String())
	}

	one := rs[:1]
	b.Reset()
	if err := Render(&b, Report{Title: "testid t", Runs: one, Figures: figs, Comparisons: Compare(one, figs, 0.1), Tolerance: 0.1}, console.Style{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "1 run,") || strings.Count(out, "no history") != 3 {
		t.Errorf("a single run: want 'no history' for both figures and at the end:\n%s", out)
	}
}
