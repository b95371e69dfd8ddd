package metrics

import (
	"testing"
	"time"
)

// A weighted sample counts as that many samples of its value: the same
// stats as adding them one by one.
func TestWeightedSamplesEqualRepeatedOnes(t *testing.T) {
	reg := NewRegistry()
	trend := reg.MustRegister(Metric{Name: "itl", Type: Trend, Contains: Time})
	rate := reg.MustRegister(Metric{Name: "failed", Type: Rate})
	now := time.Now()
	weighted, repeated := NewAggregator(1), NewAggregator(1)
	weighted.Shard(0).AddSamples([]Sample{
		{Metric: trend, Time: now, Value: 5, Weight: 1000},
		{Metric: trend, Time: now, Value: 12.5},
		{Metric: trend, Time: now, Value: 40, Weight: 30},
		{Metric: rate, Time: now, Value: 1, Weight: 3},
		{Metric: rate, Time: now, Value: 0, Weight: 7},
	})
	var one []Sample
	for range 1000 {
		one = append(one, Sample{Metric: trend, Time: now, Value: 5})
	}
	one = append(one, Sample{Metric: trend, Time: now, Value: 12.5})
	for range 30 {
		one = append(one, Sample{Metric: trend, Time: now, Value: 40})
	}
	for i := range 10 {
		v := 0.0
		if i < 3 {
			v = 1
		}
		one = append(one, Sample{Metric: rate, Time: now, Value: v})
	}
	repeated.Shard(0).AddSamples(one)
	for _, name := range []string{"itl", "failed"} {
		w, r := weighted.Snapshot().Stats(name, nil), repeated.Snapshot().Stats(name, nil)
		if w.Count != r.Count || w.Sum != r.Sum || w.SumSquares != r.SumSquares || w.Min != r.Min || w.Max != r.Max || w.NonZero != r.NonZero {
			t.Errorf("%s: weighted %+v, repeated %+v", name, *w, *r)
		}
		for _, p := range []float64{50, 97, 99, 100} {
			if w.Percentile(p) != r.Percentile(p) {
				t.Errorf("%s: p%g %g weighted, %g repeated", name, p, w.Percentile(p), r.Percentile(p))
			}
		}
	}
}
