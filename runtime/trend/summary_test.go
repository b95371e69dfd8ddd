package trend

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/summary"
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

func TestTrendFromSummary(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &summary.Summary{
		Meta: summary.Meta{RunID: "r1", Start: start, Version: "v9"},
		Serving: summary.Serving{DurationSeconds: 10, Requests: 10, OK: 9, SuccessRate: 0.9,
			RequestThroughput: 0.9, OutputTokenThroughput: 90, TotalTokenThroughput: 120},
		Latency: []summary.LatencyRow{
			{Metric: "llm_ttft", Count: 9, Mean: 50, Max: 90, P: map[string]float64{"p50": 45, "p90": 80, "p95": 85, "p99": 89}},
			{Metric: "llm_itl", Count: 0, P: map[string]float64{}},
		},
	}
	r := FromSummary(s)
	want := map[string]float64{"success_rate": 0.9, "request_throughput": 0.9, "output_throughput": 90, "total_token_throughput": 120,
		"ttft_mean": 50, "ttft_max": 90, "ttft_p50": 45, "ttft_p90": 80, "ttft_p95": 85, "ttft_p99": 89}
	if !maps.Equal(r.Figures, want) || r.ID != "r1" || !r.Time.Equal(start) || r.Version != "v9" {
		t.Errorf("run %+v, want figures %v", r, want)
	}
	// Every figure is one Lookup knows, in the right unit.
	for _, name := range slices.Sorted(maps.Keys(r.Figures)) {
		if _, ok := Lookup(name); !ok {
			t.Errorf("FromSummary gives %s, which Lookup does not know", name)
		}
	}
	if empty := FromSummary(&summary.Summary{}); len(empty.Figures) != 0 {
		t.Errorf("a run of nothing has figures %v", empty.Figures)
	}
}

func TestTrendRenderPair(t *testing.T) {
	figs := []Figure{{"ttft_p99", "ms", LowerIsBetter}, {"output_throughput", "tok/s", HigherIsBetter}, {"itl_p99", "ms", LowerIsBetter}}
	current := Run{ID: "cur", Figures: map[string]float64{"ttft_p99": 130, "output_throughput": 1000, "itl_p99": 20}}
	baseline := Run{ID: "base", Figures: map[string]float64{"ttft_p99": 100, "output_throughput": 900}}
	rs := []Run{current, baseline}
	rep := Report{Title: "baseline a.json, current b.json", Runs: rs, Figures: figs, Comparisons: Compare(rs, figs, 0.1), Tolerance: 0.1}
	var b bytes.Buffer
	if err := RenderPair(&b, rep, console.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"baseline a.json, current b.json", "tolerance 10 %", "baseline", "current",
		"ttft_p99 (ms)", "100.0", "130.0", "+30.0 %", "regression", "+11.1 %", "improved", "no history",
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
	if err := RenderPair(&b, Report{Runs: rs[:1]}, console.Style{}); err == nil {
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
