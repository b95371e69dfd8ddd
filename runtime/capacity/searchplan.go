package capacity

import (
	"fmt"
	"strings"
)

// SearchPlan is what a capacity search is set to do before it runs, as
// the run's banner and llmrun inspect describe it: its options and the
// mix every level keeps.
type SearchPlan struct {
	Variable   string  `json:"variable"`
	Start      float64 `json:"start"`
	Max        float64 `json:"max"`
	Width      float64 `json:"width"`
	Step       string  `json:"step"`
	MaxStep    string  `json:"max_step"`
	Budget     string  `json:"budget"`
	Confidence float64 `json:"confidence"`
	// GoodputShare is the share of good requests a level must have; 0
	// when none is asked.
	GoodputShare float64 `json:"goodput_share,omitempty"`
	// Mix is each scenario's share of every level's load, in the order
	// the scenarios run.
	Mix []MixShare `json:"mix"`
}

// MixShare is one scenario's share of a search's level.
type MixShare struct {
	Scenario string  `json:"scenario"`
	Share    float64 `json:"share"`
}

// Plan is the plan of a search with these options whose scenarios
// declare loads (requests per second, or VUs): each scenario's share is
// its load over their total.
func (o SearchOptions) Plan(scenarios []string, loads []float64) SearchPlan {
	p := SearchPlan{Variable: o.Variable, Start: o.Start, Max: o.Max, Width: o.Width,
		Step: o.Step.String(), MaxStep: o.MaxStep.String(), Budget: o.Budget.String(),
		Confidence: o.Confidence, GoodputShare: o.GoodputShare}
	total := 0.0
	for _, l := range loads {
		total += l
	}
	for i, name := range scenarios {
		p.Mix = append(p.Mix, MixShare{Scenario: name, Share: loads[i] / total})
	}
	return p
}

// Lines describe the plan in words, a line each: what is searched and
// when it stops, how levels run and are judged, and the mix, which the
// scenarios' own rates or VUs declare and the levels scale.
func (p SearchPlan) Lines() []string {
	unit, load := "requests/s", "rates"
	if p.Variable == Concurrency {
		unit, load = "VUs", "VUs"
	}
	bounds := "the SLO"
	if p.GoodputShare > 0 {
		bounds += fmt.Sprintf(" and ≥ %g %% good requests", 100*p.GoodputShare)
	}
	lines := []string{
		fmt.Sprintf("capacity search by %s, from %s to at most %s %s; it stops once the capacity is bracketed within ±%g %%, or after %s of levels",
			p.Variable, FormatLevel(p.Start), FormatLevel(p.Max), unit, 100*p.Width, p.Budget),
		fmt.Sprintf("each level runs %s, one that is inconclusive up to %s, and is judged against %s on %g %% confidence intervals",
			p.Step, p.MaxStep, bounds, 100*p.Confidence),
	}
	shares := make([]string, len(p.Mix))
	for i, m := range p.Mix {
		shares[i] = fmt.Sprintf("%s %s", m.Scenario, formatShare(m.Share))
	}
	lines = append(lines, fmt.Sprintf("mix: %s of each level; the scenarios' %s below give the mix, not the load", strings.Join(shares, ", "), load))
	return lines
}

// formatShare writes a share as a percentage, to a tenth where it is not
// whole.
func formatShare(s float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", 100*s), ".0") + " %"
}
