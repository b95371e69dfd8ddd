package regression

import (
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summary"
)

// latencyFields are the prefixes of the latency fields, by the metric of
// their latency row: the names of the llm_run points.
var latencyFields = map[string]string{"llm_ttft": "ttft", "llm_tpot": "tpot", "llm_itl": "itl", "llm_e2e": "e2e", "llm_ttfb": "ttfb"}

// FromSummary returns the figures of a result file's whole run, with their
// confidence intervals at conf, under the names of the llm_run points (and
// so of Lookup): success_rate, request_throughput, output_throughput and
// total_token_throughput from the serving block, and L_mean, L_p50, L_p90,
// L_p95, L_p99 and L_max from each latency's histogram (see Estimates). A
// figure the run lacks is absent: the success rate of a run without
// requests, throughputs without a window, the latencies of a run without
// completed requests. Its Health is that of the file's client section.
func FromSummary(s *summary.Summary, conf float64) Run {
	return Run{ID: s.Meta.RunID, Time: s.Meta.Start, Version: s.Meta.Version,
		Figures: Estimates(RunBlock(s), conf), Confidence: conf, Health: HealthOf(s.Client)}
}

// HealthOf is what a client-health report says of the run: unknown when
// the report was not measured (a run that ended before its measurement
// began, or a result file written before llmrun kept the report).
func HealthOf(c health.Report) Health {
	return Health{Known: c.Measured(), Limit: c.Limit()}
}

// ScenarioBlock is scenario name of a result as Estimates reads it: its
// serving block and metrics, closed-loop as its executor is; false when
// the result keeps no figures of that name (a run of one scenario keeps
// the whole run's only).
func ScenarioBlock(s *summary.Summary, name string) (Block, bool) {
	for _, sc := range s.Scenarios {
		if sc.Name != name {
			continue
		}
		executor := ""
		for _, sh := range s.Meta.LoadShape {
			if sh.Name == name {
				executor = sh.Executor
			}
		}
		return Block{Serving: sc.Serving, Metrics: sc.Metrics, ClosedLoop: ClosedLoop(executor)}, true
	}
	return Block{}, false
}
