package capacity

import (
	"strings"
	"testing"
	"time"
)

func TestSearchPlanLines(t *testing.T) {
	rate := SearchOptions{Variable: Rate, Start: 4, Max: 64, Width: 0.05, Budget: 15 * time.Minute, Step: 30 * time.Second,
		MaxStep: 90 * time.Second, Confidence: 0.95}
	vus := rate
	vus.Variable, vus.Start, vus.Max, vus.GoodputShare = Concurrency, 2, 2048, 0.9
	tests := []struct {
		name   string
		plan   SearchPlan
		want   []string
		shares []float64
	}{
		{"a rate search over a 3:1 mix", rate.Plan([]string{"chat", "rag"}, []float64{3, 1}), []string{
			"capacity search by rate, from 4 to at most 64 requests/s; it stops once the capacity is bracketed within ±5 %, or after 15m0s of levels",
			"each level runs 30s, one that is inconclusive up to 1m30s, and is judged against the SLO on 95 % confidence intervals",
			"mix: chat 75 %, rag 25 % of each level; the scenarios' rates below give the mix, not the load",
		}, []float64{0.75, 0.25}},
		{"a concurrency search of one scenario with goodput", vus.Plan([]string{"search"}, []float64{2}), []string{
			"capacity search by concurrency, from 2 to at most 2048 VUs;",
			"judged against the SLO and ≥ 90 % good requests on 95 % confidence intervals",
			"mix: search 100 % of each level; the scenarios' VUs below give the mix, not the load",
		}, []float64{1}},
		{"thirds", rate.Plan([]string{"a", "b", "c"}, []float64{1, 1, 1}), []string{"mix: a 33.3 %, b 33.3 %, c 33.3 % of each level"},
			[]float64{1. / 3, 1. / 3, 1. / 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Join(tt.plan.Lines(), "\n")
			for _, want := range tt.want {
				if !strings.Contains(text, want) {
					t.Errorf("the plan lacks %q:\n%s", want, text)
				}
			}
			if len(tt.plan.Mix) != len(tt.shares) {
				t.Fatalf("mix %+v, want %d shares", tt.plan.Mix, len(tt.shares))
			}
			for i, m := range tt.plan.Mix {
				if d := m.Share - tt.shares[i]; d > 1e-12 || d < -1e-12 {
					t.Errorf("share of %s = %g, want %g", m.Scenario, m.Share, tt.shares[i])
				}
			}
		})
	}
}
