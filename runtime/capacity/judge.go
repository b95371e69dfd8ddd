package capacity

import "github.com/llmrun/llmrun/runtime/summary"

// LevelMeets reports whether a level as a result file holds it meets the
// SLO, by the rule a sweep's verdict judges its levels by (false without
// an SLO): a latency the level has no figure for does not meet it.
func LevelMeets(l summary.CapacityLevel, slo summary.SLO) bool {
	return meets(level{CapacityLevel: l, ok: l.SuccessRate > 0, hasTTFT: l.TTFTP99 > 0, hasTPOT: l.TPOTP99 > 0}, slo)
}

// RunMeets reports whether a whole run's figures meet the SLO, judged as
// one level of a sweep is (false without an SLO).
func RunMeets(s *summary.Summary, slo summary.SLO) bool {
	return meets(figures(summary.ScenarioSummary{Serving: s.Serving, Latency: s.Latency}, 0), slo)
}

// SLOWords says what meeting the SLO takes: "TTFT p99 ≤ 1000 ms, success
// rate ≥ 99 %".
func SLOWords(slo summary.SLO) string { return sloWords(slo) }
