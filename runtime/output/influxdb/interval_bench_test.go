package influxdb

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
)

// latencyRecords are n successful requests of two scenarios whose
// latencies vary as a real run's do.
func latencyRecords(n int) []*llm.Record {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := make([]*llm.Record, n)
	for i := range recs {
		r := okRecord([]string{"chat", "rag"}[i%2], time.Now())
		r.TTFT = math.Exp(rng.NormFloat64()*0.5 + 5)
		r.TPOT = math.Exp(rng.NormFloat64()*0.3 + 2.5)
		r.E2E = r.TTFT + math.Exp(rng.NormFloat64()*0.3+8)
		recs[i] = r
	}
	return recs
}

// BenchmarkIntervalAdd counts requests into the current interval.
func BenchmarkIntervalAdd(b *testing.B) {
	recs := latencyRecords(1024)
	a := newAggregates()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		a.add(recs[i%len(recs)])
		i++
	}
}

// BenchmarkInterval turns an interval of 1,000 requests of two scenarios
// into its llm_interval points: the counting and the percentiles.
func BenchmarkInterval(b *testing.B) {
	recs := latencyRecords(1000)
	a := newAggregates()
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range recs {
			a.add(r)
		}
		a.interval(runTags{id: "r"}, start, start.Add(time.Second), 1, nil)
	}
}
