package influxdb

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/timeline"
)

// For the same requests, the percentiles of the timeline, of InfluxDB's
// llm_interval points and of the summary (the metrics' Stats) agree to
// the bit. They once disagreed: a run whose requests all fell in one
// interval had a timeline TTFT p99 of 43.007 ms and a summary one of
// 42.989 ms.
func TestIntervalPercentilesAreTheSummarys(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reg := metrics.NewRegistry()
	trend := func(name string) *metrics.Metric {
		return reg.MustRegister(metrics.Metric{Name: name, Type: metrics.Trend, Contains: metrics.Time})
	}
	ttft, tpot, e2e := trend("llm_ttft"), trend("llm_tpot"), trend("llm_e2e")
	agg := metrics.NewAggregator(1)
	sink := agg.Shard(0)
	rec := timeline.New(start, nil)
	intervals := newAggregates()

	rng := rand.New(rand.NewPCG(43, 7))
	for i := range 2000 {
		scenario := []string{"chat", "rag"}[i%2]
		r := okRecord(scenario, start.Add(time.Duration(i)*400*time.Microsecond))
		r.TTFT = 30 + math.Exp(rng.NormFloat64()*0.4+1.5)
		r.TPOT = math.Exp(rng.NormFloat64()*0.3 + 2.5)
		r.E2E = r.TTFT + r.TPOT*float64(r.OutputTokens-1)
		rec.AddRequest(r)
		intervals.add(r)
		sink.AddSamples([]metrics.Sample{
			{Metric: ttft, Tags: r.Tags, Time: r.Time, Value: r.TTFT},
			{Metric: tpot, Tags: r.Tags, Time: r.Time, Value: r.TPOT},
			{Metric: e2e, Tags: r.Tags, Time: r.Time, Value: r.E2E},
		})
	}
	end := start.Add(time.Second)
	points := rec.Points(end)
	if len(points) != 1 {
		t.Fatalf("%d timeline points, want 1", len(points))
	}
	summary := agg.Snapshot()
	percentile := func(name, scenario string, p float64) float64 {
		var filter *metrics.TagSet
		if scenario != allScenarios {
			filter = metrics.NewTagSet(map[string]string{"scenario": scenario})
		}
		return summary.Stats(name, filter).Percentile(p)
	}

	for _, point := range intervals.interval(runTags{id: "r"}, start, end, -1, nil) {
		f := fields(point)
		scenario := f["scenario"].(string)
		for _, c := range []struct {
			field, metric string
			p             float64
		}{
			{"ttft_p50", "llm_ttft", 50}, {"ttft_p90", "llm_ttft", 90}, {"ttft_p99", "llm_ttft", 99},
			{"tpot_p50", "llm_tpot", 50}, {"tpot_p99", "llm_tpot", 99},
			{"e2e_p50", "llm_e2e", 50}, {"e2e_p99", "llm_e2e", 99},
		} {
			if got, want := f[c.field], percentile(c.metric, scenario, c.p); got != want {
				t.Errorf("llm_interval %s %s = %v, the summary's p%g = %v", scenario, c.field, got, c.p, want)
			}
		}
	}
	for _, c := range []struct {
		name, metric string
		p, got       float64
	}{
		{"TTFT p50", "llm_ttft", 50, points[0].TTFTP50}, {"TTFT p99", "llm_ttft", 99, points[0].TTFTP99},
		{"E2E p50", "llm_e2e", 50, points[0].E2EP50}, {"E2E p99", "llm_e2e", 99, points[0].E2EP99},
	} {
		if want := percentile(c.metric, allScenarios, c.p); c.got != want {
			t.Errorf("timeline %s = %v, the summary's = %v", c.name, c.got, want)
		}
	}
}
