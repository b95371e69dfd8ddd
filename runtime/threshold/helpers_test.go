package threshold

import (
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// fixture is a registry and an aggregator with the four metric types, fed
// with real samples through several shards.
type fixture struct {
	reg  *metrics.Registry
	agg  *metrics.Aggregator
	next int // shard of the next batch
	t0   time.Time
	n    int // samples so far, to give each a later time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	reg := metrics.NewRegistry()
	for _, m := range []metrics.Metric{
		{Name: "lat", Type: metrics.Trend, Contains: metrics.Time, Unit: "ms"},
		{Name: "llm_ttft", Type: metrics.Trend, Contains: metrics.Time},
		{Name: "reqs", Type: metrics.Counter, Unit: "requests"},
		{Name: "inflight", Type: metrics.Gauge},
		{Name: "failed", Type: metrics.Rate},
	} {
		reg.MustRegister(m)
	}
	return &fixture{reg: reg, agg: metrics.NewAggregator(4), t0: time.Unix(1_700_000_000, 0)}
}

// add records values of a metric with tags (nil: untagged), one sample per
// value, each later than the previous one, spreading batches over shards.
func (f *fixture) add(name string, tags map[string]string, values ...float64) {
	m := f.reg.Get(name)
	if m == nil {
		panic("unregistered metric " + name)
	}
	ts := metrics.NewTagSet(tags)
	var batch []metrics.Sample
	for _, v := range values {
		f.n++
		batch = append(batch, metrics.Sample{Metric: m, Tags: ts, Time: f.t0.Add(time.Duration(f.n) * time.Millisecond), Value: v})
	}
	f.agg.Shard(f.next).AddSamples(batch)
	f.next++
}

// mustParse parses thresholds JSON and validates them against the fixture.
func (f *fixture) mustParse(t *testing.T, js string) *Set {
	t.Helper()
	set, err := Parse([]byte(js))
	if err != nil {
		t.Fatalf("Parse(%s): %v", js, err)
	}
	if err := set.Validate(f.reg); err != nil {
		t.Fatalf("Validate(%s): %v", js, err)
	}
	return set
}
