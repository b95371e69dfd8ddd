package results

import (
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/summary"
)

// ApplySLO makes slo the SLO of s, for a report to draw, and judges a
// sweep's levels again against it, so that its verdict follows from it.
// It reports false, and leaves s as it was, when s is a sweep whose
// levels cannot be judged again from the result.
func ApplySLO(s *summary.Summary, slo summary.SLO) bool {
	crit := capacity.CriteriaOf(s)
	crit.SLO = slo
	if c := capacity.Assess(s, crit); c != nil {
		s.Capacity = c
	} else if s.Capacity != nil {
		return false
	}
	s.Meta.SLO = slo
	return true
}
