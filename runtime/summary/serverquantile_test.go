package summary_test

import (
	"testing"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// vllmQueue is vLLM's queue-time histogram (its first buckets 0.3, 0.5,
// 0.8 s) over a window of 100 requests: counts at or below each bound,
// the sum of their waits, and the p50 and p99 Prometheus interpolates.
func vllmQueue(counts [3]float64, sum, p50, p99 float64) summary.WindowFigure {
	return summary.WindowFigure{Kind: "histogram", Unit: "seconds", Count: summarytest.Num(100), Sum: summarytest.Num(sum),
		P50: summarytest.Num(p50), P99: summarytest.Num(p99),
		Buckets: []summary.HistogramBucket{{Le: 0.3, Count: counts[0]}, {Le: 0.5, Count: counts[1]}, {Le: 0.8, Count: counts[2]}}}
}

// A server quantile prints as a number only where its bucket is narrow;
// elsewhere as the interval its bucket and the exact mean bound it to.
func TestServerQuantileRule(t *testing.T) {
	ms := func(v float64) string { return textfmt.Millis(1000 * v) }
	tests := []struct {
		name  string
		f     summary.WindowFigure
		q     float64
		want  string
		exact bool
	}{
		{"the quickstart's queue: all in the first bucket, a mean of 0.1 ms: the p50 at most twice the mean, not 150 ms",
			vllmQueue([3]float64{100, 100, 100}, 0.01, 0.15, 0.297), 0.5, "≤ 0.200", false},
		{"its p99: at most 100 times the mean, not 297 ms",
			vllmQueue([3]float64{100, 100, 100}, 0.01, 0.15, 0.297), 0.99, "≤ 10.000", false},
		{"a first bucket the mean does not beat: its bound",
			vllmQueue([3]float64{100, 100, 100}, 25, 0.15, 0.297), 0.99, "≤ 300.0", false},
		{"no wait at all: the bounds meet at 0", vllmQueue([3]float64{100, 100, 100}, 0, 0.15, 0.297), 0.5, "0", true},
		{"a wide bucket above the first: the interval", vllmQueue([3]float64{0, 100, 100}, 40, 0.4, 0.498), 0.5, "300.0–500.0", false},
		{"above the highest bound: from it to the mean's bound", vllmQueue([3]float64{0, 0, 10}, 100, 0.8, 0.8), 0.5, "800.0–2000", false},
		{"a narrow bucket: the interpolation", summarytest.TTFTHistogram(), 0.5, "45.0", true},
		{"at the top of a narrow bucket", summarytest.TTFTHistogram(), 0.9, "100.0", true},
		{"no buckets: the stored value, as a number, not known to be exact", summarytest.Histogram(0.045, 0.1, 0.19), 0.99, "190.0", false},
		{"a quantile the file does not store, from the buckets: in (50, 80] ms, too wide", summarytest.TTFTHistogram(), 0.7, "50.0–80.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.f.Quantile(tt.q)
			if !ok {
				t.Fatalf("no q%v of %+v", tt.q, tt.f)
			}
			if s := got.Format(ms); s != tt.want || got.Exact() != tt.exact {
				t.Errorf("q%v = %q (exact %v; %+v), want %q (exact %v)", tt.q, s, got.Exact(), got, tt.want, tt.exact)
			}
			if number := tt.exact || tt.f.Buckets == nil; got.IsNumber() != number {
				t.Errorf("q%v prints as a number: %v, want %v", tt.q, got.IsNumber(), number)
			}
		})
	}
	if _, ok := (summary.WindowFigure{Kind: "histogram", Count: summarytest.Num(0)}).Quantile(0.5); ok {
		t.Error("an empty histogram has a quantile")
	}
}
