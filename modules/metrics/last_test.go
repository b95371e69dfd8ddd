package metrics

import (
	"testing"
	"time"
)

// A gauge's Last is its most recent sample, whichever shard or tag set the
// sample went to and whatever order a snapshot merges them in.
func TestLastIsTheMostRecentSample(t *testing.T) {
	g := &Metric{Name: "g", Type: Gauge}
	t0 := time.Now()
	a, b := NewTagSet(map[string]string{"k": "a"}), NewTagSet(map[string]string{"k": "b"})
	tests := []struct {
		name    string
		samples map[int][]Sample // shard → samples, added shard by shard
		want    float64
	}{
		{"newest in the first shard", map[int][]Sample{
			0: {{Metric: g, Time: t0.Add(2 * time.Second), Value: 2}},
			1: {{Metric: g, Time: t0.Add(time.Second), Value: 1}},
		}, 2},
		{"newest in the last shard", map[int][]Sample{
			0: {{Metric: g, Time: t0.Add(time.Second), Value: 1}},
			1: {{Metric: g, Time: t0.Add(2 * time.Second), Value: 2}},
		}, 2},
		{"newest in the series merged first", map[int][]Sample{
			0: {{Metric: g, Tags: a, Time: t0.Add(2 * time.Second), Value: 2}, {Metric: g, Tags: b, Time: t0.Add(time.Second), Value: 1}},
		}, 2},
		{"a late batch with older samples", map[int][]Sample{
			0: {{Metric: g, Time: t0.Add(3 * time.Second), Value: 3}, {Metric: g, Time: t0.Add(time.Second), Value: 1}},
		}, 3},
		{"same time: the later one added", map[int][]Sample{
			0: {{Metric: g, Time: t0, Value: 1}, {Metric: g, Time: t0, Value: 4}},
		}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			agg := NewAggregator(2)
			for i := range 2 {
				agg.Shard(i).AddSamples(tc.samples[i])
			}
			st := agg.Snapshot().Stats("g", nil)
			if st == nil || st.Last != tc.want {
				t.Fatalf("Last = %+v, want %v", st, tc.want)
			}
		})
	}
}
