package servermetrics

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseText is exposition text as a snapshot taken at at, parsed by
// expfmt as a scrape parses it.
func parseText(t testing.TB, exposition string, at time.Time) Snapshot {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatalf("parsing %q: %v", exposition, err)
	}
	return Snapshot{Time: at, Families: families}
}

// t0 is the time the snapshots of these tests start at.
var t0 = time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)

// at is t0 plus seconds.
func at(seconds float64) time.Time {
	return t0.Add(time.Duration(seconds * float64(time.Second)))
}

func TestCounterDelta(t *testing.T) {
	const counter = "# TYPE vllm:num_preemptions_total counter\n"
	tests := []struct {
		name     string
		from, to string
		sel      Selector
		want     float64
		ok       bool
	}{
		{name: "rise", from: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n", to: counter + `vllm:num_preemptions_total{engine="0"} 10` + "\n", want: 7, ok: true},
		{name: "restart: the new value counts whole", from: counter + `vllm:num_preemptions_total{engine="0"} 30` + "\n", to: counter + `vllm:num_preemptions_total{engine="0"} 4` + "\n", want: 4, ok: true},
		{name: "no change", from: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n", to: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n", want: 0, ok: true},
		{name: "summed over engines, one restarted",
			from: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n" + `vllm:num_preemptions_total{engine="1"} 50` + "\n",
			to:   counter + `vllm:num_preemptions_total{engine="0"} 5` + "\n" + `vllm:num_preemptions_total{engine="1"} 2` + "\n",
			want: 4, ok: true},
		{name: "a label set that appeared rose from 0",
			from: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n",
			to:   counter + `vllm:num_preemptions_total{engine="0"} 5` + "\n" + `vllm:num_preemptions_total{engine="1"} 6` + "\n",
			want: 8, ok: true},
		{name: "label order does not matter",
			from: counter + `vllm:num_preemptions_total{engine="0",model_name="m"} 3` + "\n",
			to:   counter + `vllm:num_preemptions_total{model_name="m",engine="0"} 5` + "\n",
			want: 2, ok: true},
		{name: "filtered by a label",
			from: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n" + `vllm:num_preemptions_total{engine="1"} 50` + "\n",
			to:   counter + `vllm:num_preemptions_total{engine="0"} 5` + "\n" + `vllm:num_preemptions_total{engine="1"} 70` + "\n",
			sel:  Selector{Labels: map[string]string{"engine": "1"}}, want: 20, ok: true},
		{name: "no label set matches the filter",
			from: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n",
			to:   counter + `vllm:num_preemptions_total{engine="0"} 5` + "\n",
			sel:  Selector{Labels: map[string]string{"engine": "7"}}, ok: false},
		{name: "absent from the later snapshot", from: counter + `vllm:num_preemptions_total{engine="0"} 3` + "\n", to: "# TYPE other gauge\nother 1\n", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := tt.sel
			sel.Name = "vllm:num_preemptions_total"
			got, ok := CounterDelta(parseText(t, tt.from, at(0)), parseText(t, tt.to, at(10)), sel)
			if got != tt.want || ok != tt.ok {
				t.Errorf("CounterDelta = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// Over a series, a restart between the ends is seen: 10 → 20 → 5 → 8
// rose by 10, then 5 (from the restart), then 3.
func TestCounterIncreaseSeesARestartInTheMiddle(t *testing.T) {
	var points []Snapshot
	for i, v := range []string{"10", "20", "5", "8"} {
		points = append(points, parseText(t, "# TYPE c counter\nc "+v+"\n", at(float64(i))))
	}
	sel := Selector{Name: "c"}
	if got, ok := CounterIncrease(points, sel); got != 18 || !ok {
		t.Errorf("CounterIncrease = %v, %v; want 18", got, ok)
	}
	if got, _ := CounterDelta(points[0], points[3], sel); got != 8 {
		t.Errorf("CounterDelta of the ends = %v, want 8 (a restart seen at the end only)", got)
	}
	if _, ok := CounterIncrease(points[:1], sel); ok {
		t.Error("one point gave an increase")
	}
}

// bucketText is a histogram's exposition of cumulative counts at the
// bounds 0.1, 0.2, 0.5 and 1 and +Inf.
func bucketText(labels string, counts [5]int, sum string) string {
	bounds := []string{"0.1", "0.2", "0.5", "1", "+Inf"}
	var b strings.Builder
	b.WriteString("# TYPE vllm:request_queue_time_seconds histogram\n")
	sep := ""
	if labels != "" {
		sep = ","
	}
	for i, le := range bounds {
		b.WriteString("vllm:request_queue_time_seconds_bucket{" + labels + sep + `le="` + le + `"} ` + strconv.Itoa(counts[i]) + "\n")
	}
	b.WriteString("vllm:request_queue_time_seconds_sum{" + labels + "} " + sum + "\n")
	b.WriteString("vllm:request_queue_time_seconds_count{" + labels + "} " + strconv.Itoa(counts[4]) + "\n")
	return b.String()
}

func TestHistogramQuantiles(t *testing.T) {
	queue := Selector{Name: "vllm:request_queue_time_seconds"}
	// From the first snapshot to the second, the window's observations
	// are 10 at or below 0.1 s, 20 in (0.1, 0.2], 60 in (0.2, 0.5], 10 in
	// (0.5, 1] and 0 above: 100, summing 31.5 s.
	from := parseText(t, bucketText(`engine="0"`, [5]int{5, 10, 30, 40, 40}, "12.5"), at(0))
	to := parseText(t, bucketText(`engine="0"`, [5]int{15, 40, 120, 140, 140}, "44"), at(60))
	window, ok := HistogramDelta(from, to, queue)
	if !ok || window.Count != 100 || window.Sum != 31.5 {
		t.Fatalf("window %+v (%v), want 100 observations summing 31.5", window, ok)
	}
	tests := []struct {
		q, want float64
	}{
		{q: 0.05, want: 0.05},   // rank 5 of 10 in [0, 0.1]: 0.1 × 5/10
		{q: 0.10, want: 0.1},    // rank 10: the top of the first bucket
		{q: 0.20, want: 0.15},   // rank 20: 10 into (0.1, 0.2] of 20
		{q: 0.50, want: 0.3},    // rank 50: 20 of 60 into (0.2, 0.5]
		{q: 0.90, want: 0.5},    // rank 90: the top of (0.2, 0.5]
		{q: 0.99, want: 0.95},   // rank 99: 9 of 10 into (0.5, 1]
		{q: 1.00, want: 1},      // rank 100: the top of (0.5, 1]
		{q: 0, want: 0},         // rank 0: the bottom of the first bucket
		{q: 0.999, want: 0.995}, // rank 99.9: 9.9 of 10 into (0.5, 1]
	}
	for _, tt := range tests {
		got, ok := window.Quantile(tt.q)
		if !ok || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("q%v = %v (%v), want %v", tt.q, got, ok, tt.want)
		}
	}
	if mean, ok := window.Mean(); !ok || mean != 0.315 {
		t.Errorf("mean %v (%v), want 0.315", mean, ok)
	}
}

func TestHistogramQuantileEdges(t *testing.T) {
	inf := math.Inf(+1)
	tests := []struct {
		name string
		h    Histogram
		q    float64
		want float64
		ok   bool
	}{
		{name: "the rank is in +Inf: the highest finite bound", h: Histogram{Buckets: []Bucket{{0.1, 10}, {inf, 20}}, Count: 20}, q: 0.9, want: 0.1, ok: true},
		{name: "empty: no value, not 0", h: Histogram{Buckets: []Bucket{{0.1, 0}, {inf, 0}}}, q: 0.5, ok: false},
		{name: "no +Inf bucket", h: Histogram{Buckets: []Bucket{{0.1, 1}, {1, 2}}, Count: 2}, q: 0.5, ok: false},
		{name: "one bucket", h: Histogram{Buckets: []Bucket{{inf, 3}}, Count: 3}, q: 0.5, ok: false},
		{name: "q above 1", h: Histogram{Buckets: []Bucket{{0.1, 1}, {inf, 1}}, Count: 1}, q: 1.5, ok: false},
		{name: "q NaN", h: Histogram{Buckets: []Bucket{{0.1, 1}, {inf, 1}}, Count: 1}, q: math.NaN(), ok: false},
		{name: "a negative lowest bound is returned as is", h: Histogram{Buckets: []Bucket{{-1, 5}, {0, 10}, {inf, 10}}, Count: 10}, q: 0.2, want: -1, ok: true},
		{name: "buckets out of order are sorted", h: Histogram{Buckets: []Bucket{{inf, 4}, {1, 4}, {0.5, 2}}, Count: 4}, q: 0.75, want: 0.75, ok: true},
		{name: "a decreasing count is raised", h: Histogram{Buckets: []Bucket{{1, 4}, {2, 3}, {4, 8}, {inf, 8}}, Count: 8}, q: 0.5, want: 1, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.h.Quantile(tt.q)
			if ok != tt.ok || (ok && math.Abs(got-tt.want) > 1e-12) {
				t.Errorf("Quantile(%v) = %v, %v; want %v, %v", tt.q, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// The bounds say which bucket a quantile fell in, tightened by the mean
// where Markov's inequality is tighter: vLLM's queue time, whose first
// bucket is 0–0.3 s, of requests that waited about a millisecond.
func TestHistogramQuantileBounds(t *testing.T) {
	inf := math.Inf(+1)
	vllmQueue := func(counts [3]float64, sum float64) Histogram {
		return Histogram{Buckets: []Bucket{{0.3, counts[0]}, {0.5, counts[1]}, {0.8, counts[2]}, {inf, counts[2]}}, Count: counts[2], Sum: sum}
	}
	tests := []struct {
		name         string
		h            Histogram
		q            float64
		lower, upper float64
		ok           bool
	}{
		{name: "all in the first bucket, mean 1 ms: p50 at most twice the mean", h: vllmQueue([3]float64{100, 100, 100}, 0.1), q: 0.5, lower: 0, upper: 0.002, ok: true},
		{name: "the same, p99 at most 100 times the mean", h: vllmQueue([3]float64{100, 100, 100}, 0.1), q: 0.99, lower: 0, upper: 0.1, ok: true},
		{name: "a mean the bucket bounds tighter: the bucket's bound", h: vllmQueue([3]float64{100, 100, 100}, 25), q: 0.99, lower: 0, upper: 0.3, ok: true},
		{name: "q = 1: no Markov bound", h: vllmQueue([3]float64{100, 100, 100}, 0.1), q: 1, lower: 0, upper: 0.3, ok: true},
		{name: "in the second bucket", h: vllmQueue([3]float64{10, 100, 100}, 40), q: 0.5, lower: 0.3, upper: 0.5, ok: true},
		{name: "in the second bucket, the mean tighter", h: vllmQueue([3]float64{10, 100, 100}, 16), q: 0.5, lower: 0.3, upper: 0.32, ok: true},
		{name: "a sum the buckets contradict never cuts below the lower bound", h: vllmQueue([3]float64{10, 100, 100}, 1), q: 0.5, lower: 0.3, upper: 0.3, ok: true},
		{name: "empty: no bounds", h: vllmQueue([3]float64{0, 0, 0}, 0), q: 0.5, ok: false},
		{name: "the rank in +Inf: above the highest bound, at most the Markov bound", h: Histogram{Buckets: []Bucket{{0.1, 10}, {inf, 20}}, Count: 20, Sum: 40}, q: 0.9, lower: 0.1, upper: 20, ok: true},
		{name: "no sum to bound by: the bucket", h: Histogram{Buckets: []Bucket{{0.1, 10}, {inf, 20}}, Count: 20, Sum: -1}, q: 0.9, lower: 0.1, upper: inf, ok: true},
		{name: "no +Inf bucket", h: Histogram{Buckets: []Bucket{{0.1, 1}, {1, 2}}, Count: 2}, q: 0.5, ok: false},
		{name: "q outside [0, 1]", h: vllmQueue([3]float64{1, 1, 1}, 0.1), q: 2, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lower, upper, ok := tt.h.QuantileBounds(tt.q)
			if ok != tt.ok || ok && (math.Abs(lower-tt.lower) > 1e-12 || upper != tt.upper && math.Abs(upper-tt.upper) > 1e-12) {
				t.Errorf("QuantileBounds(%v) = %v, %v, %v; want %v, %v, %v", tt.q, lower, upper, ok, tt.lower, tt.upper, tt.ok)
			}
		})
	}
}

func TestHistogramDelta(t *testing.T) {
	queue := Selector{Name: "vllm:request_queue_time_seconds"}
	tests := []struct {
		name     string
		from, to string
		sel      Selector
		count    float64
		buckets  []float64 // cumulative, bounds 0.1, 0.2, 0.5, 1, +Inf
		ok       bool
	}{
		{name: "restart: all of the later snapshot", from: bucketText(`engine="0"`, [5]int{50, 60, 70, 80, 80}, "30"), to: bucketText(`engine="0"`, [5]int{1, 2, 3, 4, 4}, "2"),
			count: 4, buckets: []float64{1, 2, 3, 4, 4}, ok: true},
		{name: "a bucket went down: a restart", from: bucketText(`engine="0"`, [5]int{5, 6, 7, 8, 8}, "3"), to: bucketText(`engine="0"`, [5]int{1, 6, 9, 10, 10}, "4"),
			count: 10, buckets: []float64{1, 6, 9, 10, 10}, ok: true},
		{name: "summed over engines",
			from:  bucketText(`engine="0"`, [5]int{1, 1, 1, 1, 1}, "0.1") + strings.SplitN(bucketText(`engine="1"`, [5]int{0, 0, 0, 0, 0}, "0"), "\n", 2)[1],
			to:    bucketText(`engine="0"`, [5]int{2, 3, 3, 3, 3}, "0.4") + strings.SplitN(bucketText(`engine="1"`, [5]int{0, 0, 5, 5, 6}, "3"), "\n", 2)[1],
			count: 8, buckets: []float64{1, 2, 7, 7, 8}, ok: true},
		{name: "filtered by engine",
			from: bucketText(`engine="0"`, [5]int{1, 1, 1, 1, 1}, "0.1") + strings.SplitN(bucketText(`engine="1"`, [5]int{0, 0, 0, 0, 0}, "0"), "\n", 2)[1],
			to:   bucketText(`engine="0"`, [5]int{2, 3, 3, 3, 3}, "0.4") + strings.SplitN(bucketText(`engine="1"`, [5]int{0, 0, 5, 5, 6}, "3"), "\n", 2)[1],
			sel:  Selector{Labels: map[string]string{"engine": "1"}}, count: 6, buckets: []float64{0, 0, 5, 5, 6}, ok: true},
		{name: "no observations in the window", from: bucketText("", [5]int{1, 2, 3, 4, 4}, "2"), to: bucketText("", [5]int{1, 2, 3, 4, 4}, "2"),
			count: 0, buckets: []float64{0, 0, 0, 0, 0}, ok: true},
		{name: "not a histogram", from: "# TYPE vllm:request_queue_time_seconds gauge\nvllm:request_queue_time_seconds 1\n", to: "# TYPE vllm:request_queue_time_seconds gauge\nvllm:request_queue_time_seconds 2\n", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := tt.sel
			sel.Name = queue.Name
			h, ok := HistogramDelta(parseText(t, tt.from, at(0)), parseText(t, tt.to, at(1)), sel)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			var counts []float64
			for _, b := range h.Buckets {
				counts = append(counts, b.Count)
			}
			if h.Count != tt.count || !slices.Equal(counts, tt.buckets) {
				t.Errorf("count %v buckets %v; want %v %v", h.Count, counts, tt.count, tt.buckets)
			}
			if tt.count == 0 {
				if _, ok := h.Quantile(0.5); ok {
					t.Error("an empty window has a quantile")
				}
			}
		})
	}
}

func TestGauge(t *testing.T) {
	gauge := func(v string) string {
		return "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine=\"0\"} " + v + "\n"
	}
	other := "# TYPE other gauge\nother 1\n"
	tests := []struct {
		name      string
		points    []Snapshot
		mean, max float64
		ok        bool
	}{
		// [0, 1] averages 5 over 1 s, [1, 3] 10 over 2 s (the scrape at
		// 2 s was skipped): 25 / 3 s. The points' plain mean is 6.67.
		{name: "weighted by time", points: []Snapshot{parseText(t, gauge("0"), at(0)), parseText(t, gauge("10"), at(1)), parseText(t, gauge("10"), at(3))}, mean: 25.0 / 3, max: 10, ok: true},
		{name: "one point", points: []Snapshot{parseText(t, gauge("7"), at(4))}, mean: 7, max: 7, ok: true},
		{name: "points without the gauge are left out", points: []Snapshot{parseText(t, gauge("2"), at(0)), parseText(t, other, at(1)), parseText(t, gauge("4"), at(2))}, mean: 3, max: 4, ok: true},
		{name: "two points at one time", points: []Snapshot{parseText(t, gauge("2"), at(0)), parseText(t, gauge("6"), at(0))}, mean: 4, max: 6, ok: true},
		{name: "none has it", points: []Snapshot{parseText(t, other, at(0))}, ok: false},
		{name: "no points", ok: false},
	}
	sel := Selector{Name: "vllm:num_requests_waiting"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mean, ok := GaugeMean(tt.points, sel)
			if ok != tt.ok || math.Abs(mean-tt.mean) > 1e-12 {
				t.Errorf("GaugeMean = %v, %v; want %v, %v", mean, ok, tt.mean, tt.ok)
			}
			peak, ok := GaugeMax(tt.points, sel)
			if ok != tt.ok || (ok && peak != tt.max) {
				t.Errorf("GaugeMax = %v, %v; want %v, %v", peak, ok, tt.max, tt.ok)
			}
		})
	}
}

func TestSumAndLabelValues(t *testing.T) {
	snap := parseText(t, `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="a",engine="0"} 3
vllm:num_requests_running{model_name="a",engine="1"} 4
vllm:num_requests_running{model_name="b",engine="0"} 10
`, at(0))
	tests := []struct {
		labels map[string]string
		want   float64
		ok     bool
	}{
		{want: 17, ok: true},
		{labels: map[string]string{"model_name": "a"}, want: 7, ok: true},
		{labels: map[string]string{"model_name": "a", "engine": "1"}, want: 4, ok: true},
		{labels: map[string]string{"model_name": "c"}, ok: false},
		{labels: map[string]string{"no_such_label": "x"}, ok: false},
	}
	for _, tt := range tests {
		got, ok := Sum(snap, Selector{Name: "vllm:num_requests_running", Labels: tt.labels})
		if got != tt.want || ok != tt.ok {
			t.Errorf("Sum(%v) = %v, %v; want %v, %v", tt.labels, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := Sum(snap, Selector{Name: "vllm:absent"}); ok {
		t.Error("an absent family has a sum")
	}
	later := parseText(t, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"c\",engine=\"0\"} 1\n", at(1))
	if got := LabelValues([]Snapshot{snap, later}, "vllm:num_requests_running", "model_name"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("models %v, want a, b, c", got)
	}
}

func TestBetween(t *testing.T) {
	var series []Snapshot
	for i := range 5 {
		series = append(series, Snapshot{Time: at(float64(i))})
	}
	tests := []struct {
		from, to float64
		want     int
		first    float64
	}{
		{from: 1, to: 3, want: 3, first: 1},
		{from: 0.5, to: 2.5, want: 2, first: 1},
		{from: -10, to: 10, want: 5, first: 0},
		{from: 6, to: 9, want: 0},
		{from: 3, to: 1, want: 0},
	}
	for _, tt := range tests {
		got := Between(series, at(tt.from), at(tt.to))
		if len(got) != tt.want || (tt.want > 0 && !got[0].Time.Equal(at(tt.first))) {
			t.Errorf("Between(%v, %v) = %d points, want %d from %v", tt.from, tt.to, len(got), tt.want, tt.first)
		}
	}
}
