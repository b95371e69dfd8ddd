package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/llmrun/llmrun/internal/race"
)

// spilled returns a trend holding values, its histograms made at once.
func spilled(values []float64) *Stats {
	st := newStats(Trend)
	for _, v := range values {
		st.add(v)
	}
	st.spill()
	return st
}

// A trend of few values keeps them one by one, and answers exactly as
// its histograms would: percentiles, histograms and merges, across the
// point where it makes them.
func TestSmallTrendsAnswerAsTheirHistograms(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, smallTrend - 1, smallTrend, smallTrend + 1, 3 * smallTrend} {
		values := make([]float64, n)
		for i := range values {
			values[i] = math.Exp(4+r.NormFloat64()) * float64(1-2*(i%7/6)) // some negative
		}
		kept, want := newStats(Trend), spilled(values)
		for _, v := range values {
			kept.add(v)
		}
		for _, p := range []float64{0, 1, 50, 90, 95, 99, 100} {
			if got, w := kept.Percentile(p), want.Percentile(p); got != w {
				t.Errorf("%d values: p%g = %g, want %g as from histograms", n, p, got, w)
			}
		}
		gotPos, gotNeg := kept.Histograms()
		wantPos, wantNeg := want.Histograms()
		if !gotPos.Equals(wantPos) || (wantNeg == nil) != (gotNeg == nil) || wantNeg != nil && !gotNeg.Equals(wantNeg) {
			t.Errorf("%d values: the histograms differ from those the values make", n)
		}

		a, b := newStats(Trend), newStats(Trend)
		for i, v := range values {
			if i%2 == 0 {
				a.add(v)
			} else {
				b.add(v)
			}
		}
		a.Merge(b)
		if a.Count != want.Count || a.Percentile(50) != want.Percentile(50) || a.Percentile(99) != want.Percentile(99) {
			t.Errorf("%d values merged in two halves: count %d, p50 %g, p99 %g; want %d, %g, %g",
				n, a.Count, a.Percentile(50), a.Percentile(99), want.Count, want.Percentile(50), want.Percentile(99))
		}
		if c := kept.Clone(); c.Percentile(90) != kept.Percentile(90) {
			t.Errorf("%d values: the clone's p90 %g differs from %g", n, c.Percentile(90), kept.Percentile(90))
		}
	}
}

// A series of a few samples, as a tag with a value per request makes,
// costs a few hundred bytes, not a histogram of about 180 KiB: 2000 such
// series took 360 MB before trends kept small ones value by value.
func TestSeriesOfFewSamplesAreSmall(t *testing.T) {
	m := &Metric{Name: "latency", Type: Trend, Contains: Time}
	agg := NewAggregator(1)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const series = 2000
	sink := agg.Shard(0)
	for i := range series {
		tags := NewTagSet(map[string]string{"id": strconv.Itoa(i)})
		sink.AddSamples([]Sample{{Metric: m, Tags: tags, Value: 120}, {Metric: m, Tags: tags, Value: 130}})
	}
	grown := int64(heap()) - int64(before)
	if limit := int64(8 << 20); grown > limit {
		t.Errorf("%d series of 2 samples hold %d MiB, want at most %d MiB", series, grown>>20, limit>>20)
	}
	st := agg.Snapshot().Stats("latency", nil)
	if st == nil || st.Count != 2*series {
		t.Fatalf("the series' merged stats: %+v, want %d samples", st, 2*series)
	}
	if p50 := st.Percentile(50); math.Abs(p50-120) > 0.2 {
		t.Errorf("p50 of the merged series %g, want 120 within the histograms' precision", p50)
	}
	runtime.KeepAlive(agg)
}

// Beyond MaxSeries of a metric, the samples of its new tag sets go into
// its one overflow series: memory stops growing with the tag's values,
// the metric's totals stay whole, and other metrics are not affected.
func TestSeriesBeyondTheLimitOverflow(t *testing.T) {
	m := &Metric{Name: "hits", Type: Counter}
	agg := NewAggregator(2)
	const extra = 10
	for i := range MaxSeries + extra {
		tags := NewTagSet(map[string]string{"id": strconv.Itoa(i)})
		agg.Shard(i).AddSamples([]Sample{{Metric: m, Tags: tags, Value: 1}})
	}
	snap := agg.Snapshot()
	if n := len(snap.Series()); n != MaxSeries+1 {
		t.Errorf("%d series, want %d and the overflow one", n, MaxSeries)
	}
	if st := snap.Stats("hits", overflowTags); st == nil || st.Count != extra {
		t.Errorf("overflow series %+v, want the %d samples over the limit", st, extra)
	}
	if st := snap.Stats("hits", nil); st == nil || st.Sum != MaxSeries+extra {
		t.Errorf("the metric's total %+v, want %d", st, MaxSeries+extra)
	}
	other := &Metric{Name: "other", Type: Counter}
	fresh := NewTagSet(map[string]string{"id": "new"})
	agg.Shard(1).AddSamples([]Sample{{Metric: other, Tags: fresh, Value: 1}})
	if st := agg.Snapshot().Stats("other", fresh); st == nil || st.Count != 1 {
		t.Errorf("another metric's new tag set: %+v, want a series of its own", st)
	}
	again := NewTagSet(map[string]string{"id": "0"})
	agg.Shard(0).AddSamples([]Sample{{Metric: m, Tags: again, Value: 1}})
	if st := agg.Snapshot().Stats("hits", again); st == nil || st.Count != 2 {
		t.Errorf("a tag set kept before the limit: %+v, want its 2 samples", st)
	}
}

// Percentile of a trend of few values records them into a pooled scratch
// histogram, not into two new ones of about 180 KiB each per call: the
// summary asks for several percentiles of every series, thresholds ask at
// every tick.
func TestSmallTrendPercentilesDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items: TestSmallTrendPercentilesDoNotAllocate counts allocations without -race, TestSmallTrendsAnswerAsTheirHistograms covers the percentiles under it")
	}
	values := make([]float64, smallTrend/2)
	st := newStats(Trend)
	for i := range values {
		values[i] = float64(i - 5)
		st.add(values[i])
	}
	var p float64
	if n := testing.AllocsPerRun(100, func() { p = st.Percentile(90) }); n != 0 {
		t.Errorf("Percentile of a trend of %d values: %g allocations a call, want 0", len(values), n)
	}
	if want := spilled(values).Percentile(90); p != want {
		t.Errorf("p90 = %g, want %g as from histograms", p, want)
	}
}

func BenchmarkSmallTrendPercentile(b *testing.B) {
	st := newStats(Trend)
	for i := range smallTrend / 2 {
		st.add(float64(100 + i))
	}
	b.ReportAllocs()
	for b.Loop() {
		st.Percentile(95)
	}
}
