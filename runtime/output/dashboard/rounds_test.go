package dashboard

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/runtime/engine"
)

// A capacity search's scenario runs as its rounds, each under its own
// name (search@8, search@16), its drops and lag counted since the
// scenario started: each period's drops and lag are those of the period,
// at a round's first period and at the run's end (no round) too, not
// the rounds' before it again.
func TestCollectorCountsASearchsDropsAndLagByPeriodAcrossRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := engine.ScenarioProgress{Name: "search", Phase: engine.PhaseRunning, Duration: time.Minute}
		progress := engine.Progress{Scenarios: []engine.ScenarioProgress{sp}}
		c := NewCollector(time.Now(), func() engine.Progress { return progress }, nil)
		// Each step: the round that runs (0: none, the run's end), and the
		// scenario's counters since it started.
		steps := []struct {
			round            float64
			dropped, lagged  int64
			lagTotal         time.Duration
			wantName         string
			wantDrops, wantN int64
		}{
			{8, 2, 4, 8 * time.Millisecond, "search@8", 2, 4},
			{8, 5, 6, 12 * time.Millisecond, "search@8", 3, 2},
			{16, 9, 10, 20 * time.Millisecond, "search@16", 4, 4},
			{0, 10, 11, 22 * time.Millisecond, "search", 1, 1},
		}
		for i, s := range steps {
			sp.Dropped[0], sp.Lagged, sp.LagTotal = s.dropped, s.lagged, s.lagTotal
			progress.Scenarios, progress.Round = []engine.ScenarioProgress{sp}, nil
			if s.round > 0 {
				progress.Round = &engine.RoundProgress{Variable: "rate", Level: s.round, Duration: 10 * time.Second}
			}
			time.Sleep(time.Second)
			got := c.Next(time.Now()).Scenarios[0]
			if got.Name != s.wantName || got.PeriodDropped != s.wantDrops || got.Lagged != s.wantN || got.Lag != 2 {
				t.Errorf("period %d: %s dropped %d, %d lagged at %v ms; want %s: %d, %d at 2 ms",
					i+1, got.Name, got.PeriodDropped, got.Lagged, got.Lag, s.wantName, s.wantDrops, s.wantN)
			}
		}
	})
}
