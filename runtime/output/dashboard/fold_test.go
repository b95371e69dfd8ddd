package dashboard

import "testing"

// Folding a report's updates keeps, as for TTFT, the higher ITL
// percentiles, and adds up a scenario's drops and lagged iterations, its
// lag their mean: the report's charts of a long run show the spikes and
// the drops of the updates it folds, not the later one's only.
func TestFoldKeepsITLDropsAndLag(t *testing.T) {
	a := Event{V: Version, Elapsed: 1, Period: 1, All: Figures{Requests: 1, ITL: Percentiles{P50: 10, P90: 40, P99: 400}},
		Scenarios: []Scenario{{Name: "open", PeriodDropped: 6, Lagged: 1, Lag: 8, Figures: Figures{Requests: 1, ITL: Percentiles{P50: 10, P90: 40, P99: 400}}}}}
	b := Event{V: Version, Elapsed: 2, Period: 1, All: Figures{Requests: 1, ITL: Percentiles{P50: 12, P90: 20, P99: 30}},
		Scenarios: []Scenario{{Name: "open", PeriodDropped: 2, Lagged: 3, Lag: 4, Figures: Figures{Requests: 1, ITL: Percentiles{P50: 12, P90: 20, P99: 30}}}}}
	got := fold(a, b)
	want := Percentiles{P50: 12, P90: 40, P99: 400}
	if got.All.ITL != want || got.Scenarios[0].ITL != want {
		t.Errorf("folded ITL %+v (all) and %+v (open), want the higher of each: %+v", got.All.ITL, got.Scenarios[0].ITL, want)
	}
	if s := got.Scenarios[0]; s.PeriodDropped != 8 || s.Lagged != 4 || s.Lag != 5 {
		t.Errorf("folded: %d dropped, %d lagged at %v ms; want 8, 4 at 5 ms", s.PeriodDropped, s.Lagged, s.Lag)
	}
}
