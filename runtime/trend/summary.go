package trend

import "github.com/llmrun/llmrun/runtime/summary"

// latencyFields are the prefixes of the latency fields, by the metric of
// their latency row: the names of the llm_run points.
var latencyFields = map[string]string{"llm_ttft": "ttft", "llm_tpot": "tpot", "llm_itl": "itl", "llm_e2e": "e2e", "llm_ttfb": "ttfb"}

// FromSummary returns the figures of a result file's whole run under the
// names of the llm_run points (and so of Lookup): success_rate,
// request_throughput, output_throughput and total_token_throughput from
// the serving block, and L_mean, L_p50, L_p90, L_p95, L_p99 and L_max
// from each latency row. A figure the run lacks is absent: the success
// rate of a run without requests, throughputs without a window, the
// latencies of a run without completed requests.
func FromSummary(s *summary.Summary) Run {
	sv := s.Serving
	figs := map[string]float64{}
	if sv.Requests > 0 {
		figs["success_rate"] = sv.SuccessRate
	}
	if sv.DurationSeconds > 0 {
		figs["request_throughput"] = sv.RequestThroughput
		figs["output_throughput"] = sv.OutputTokenThroughput
		figs["total_token_throughput"] = sv.TotalTokenThroughput
	}
	for _, row := range s.Latency {
		l, ok := latencyFields[row.Metric]
		if !ok || row.Count == 0 {
			continue
		}
		figs[l+"_mean"], figs[l+"_max"] = row.Mean, row.Max
		for _, p := range []string{"p50", "p90", "p95", "p99"} {
			if v, ok := row.P[p]; ok {
				figs[l+"_"+p] = v
			}
		}
	}
	return Run{ID: s.Meta.RunID, Time: s.Meta.Start, Version: s.Meta.Version, Figures: figs}
}
