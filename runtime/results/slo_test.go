package results

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/summary"
)

// sweep is the result of a concurrency sweep of levels 4, 8 and 16, whose
// TTFT p99 is 300, 700 and 2400 ms, judged against slo.
func sweep(slo summary.SLO) *summary.Summary {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{Tool: "llmrun", RunID: "sweep", Script: "stock:concurrency-sweep", SLO: slo, Start: start, End: start.Add(time.Minute)}}
	for _, l := range []struct{ c, tput, t99 float64 }{{4, 800, 300}, {8, 1500, 700}, {16, 2600, 2400}} {
		name := fmt.Sprintf("c%.0f", l.c)
		s.Meta.LoadShape = append(s.Meta.LoadShape, summary.ScenarioShape{Name: name, Executor: "constant-vus", MaxVUs: int(l.c),
			Tags: map[string]string{"concurrency": fmt.Sprint(l.c)}})
		ttft := summary.LatencyRow{Metric: "llm_ttft", Count: 100, Min: 10, Max: l.t99 * 2, P: map[string]float64{"p50": l.t99 / 3, "p90": l.t99 * 0.7, "p95": l.t99 * 0.8, "p99": l.t99}}
		s.Scenarios = append(s.Scenarios, summary.ScenarioSummary{Name: name,
			Serving: summary.Serving{Requests: 100, OK: 100, SuccessRate: 1, RequestThroughput: l.tput / 200, OutputTokenThroughput: l.tput},
			Latency: []summary.LatencyRow{ttft}})
	}
	s.Capacity = capacity.Assess(s, capacity.CriteriaOf(s))
	return s
}

// ApplySLO makes the SLO the result's and judges a sweep's levels again
// against it; a sweep whose levels the result cannot judge again keeps
// its verdict and its SLO.
func TestApplySLO(t *testing.T) {
	t.Parallel()
	tighter := summary.SLO{TTFTP99: 500}
	s := sweep(summary.SLO{TTFTP99: 1000})
	if !ApplySLO(s, tighter) || s.Meta.SLO != tighter || s.Capacity.SLO != tighter || s.Capacity.MaxWithinSLO == nil || s.Capacity.MaxWithinSLO.Level != 4 {
		t.Errorf("a sweep judged against TTFT p99 500 ms: SLO %+v, verdict %+v; want max within at concurrency 4", s.Meta.SLO, s.Capacity)
	}

	levelsLost := sweep(summary.SLO{TTFTP99: 1000})
	levelsLost.Scenarios = nil
	was := *levelsLost.Capacity
	if ApplySLO(levelsLost, tighter) || levelsLost.Meta.SLO.TTFTP99 != 1000 || levelsLost.Capacity.MaxWithinSLO.Level != was.MaxWithinSLO.Level {
		t.Errorf("a sweep without its levels: SLO %+v, verdict %+v; want both kept", levelsLost.Meta.SLO, levelsLost.Capacity)
	}

	single := sweep(summary.SLO{})
	single.Scenarios, single.Capacity = nil, nil
	if !ApplySLO(single, tighter) || single.Meta.SLO != tighter || single.Capacity != nil {
		t.Errorf("a run that is no sweep: SLO %+v, verdict %+v; want the SLO and no verdict", single.Meta.SLO, single.Capacity)
	}
}
