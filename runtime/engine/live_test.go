package engine

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// A scenario's progress goes through its phases as the run goes: waiting
// before its startTime, warmup, running, graceful stop while its last
// iterations finish, done; its fraction and remaining time follow its
// duration, or its iterations for an iteration-based executor. Time is the
// bubble's, so each reading is at an exact offset from the start.
func TestScenarioProgressFollowsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := load(t, testConfig(t, `
import { sleep } from 'llmrun';
export const options = {
  scenarios: {
    first: { executor: 'constant-vus', vus: 2, duration: '1s', warmup: '400ms', gracefulStop: '2s' },
    second: { executor: 'per-vu-iterations', vus: 1, iterations: 4, startTime: '3s', exec: 'slow' },
  },
};
export default function () { sleep(0.3); }
export function slow() { sleep(0.5); }
`, nil, nil))
		type reading struct {
			at    time.Duration
			first ScenarioProgress
			sec   ScenarioProgress
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := e.Run(context.Background()); err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
		// The scenarios start once the VUs are initialised, which takes no
		// time in the bubble.
		synctest.Wait()
		start := time.Now()
		var readings []reading
		for _, at := range []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, 1100 * time.Millisecond, 2 * time.Second, 3600 * time.Millisecond} {
			time.Sleep(at - time.Since(start))
			synctest.Wait()
			p := e.Progress()
			if len(p.Scenarios) != 2 {
				t.Fatalf("Progress has %d scenarios, want 2", len(p.Scenarios))
			}
			readings = append(readings, reading{at, p.Scenarios[0], p.Scenarios[1]})
		}
		<-done
		end := e.Progress().Scenarios

		for _, r := range readings {
			if r.first.Name != "first" || r.sec.Name != "second" {
				t.Fatalf("scenarios %q, %q: want first, second in the options' order", r.first.Name, r.sec.Name)
			}
		}
		want := []struct {
			first, second Phase
		}{
			{PhaseWarmup, PhaseWaiting},
			{PhaseRunning, PhaseWaiting},
			{PhaseGracefulStop, PhaseWaiting},
			{PhaseDone, PhaseWaiting},
			{PhaseDone, PhaseRunning},
		}
		for i, r := range readings {
			if r.first.Phase != want[i].first || r.sec.Phase != want[i].second {
				t.Errorf("at %v: phases %q, %q; want %q, %q", r.at, r.first.Phase, r.sec.Phase, want[i].first, want[i].second)
			}
		}
		mid := readings[1].first
		if mid.Elapsed != 500*time.Millisecond || mid.Fraction() != 0.5 || mid.ActiveVUs != 2 || mid.MaxVUs != 2 {
			t.Errorf("first at 500ms: elapsed %v, fraction %v, VUs %d/%d; want 500ms, 0.5, 2/2", mid.Elapsed, mid.Fraction(), mid.ActiveVUs, mid.MaxVUs)
		}
		if left, ok := mid.Remaining(); !ok || left != 500*time.Millisecond {
			t.Errorf("first at 500ms: remaining %v, %v; want 500ms", left, ok)
		}
		if _, ok := readings[2].first.Remaining(); ok {
			t.Error("first in its graceful stop has a remaining time; want none")
		}
		// Two VUs, 300 ms iterations started until 1 s: 4 each.
		if d := readings[3].first; d.Elapsed != 1200*time.Millisecond || d.IterationsEnded != 8 || d.Fraction() != 1 || d.ActiveVUs != 0 {
			t.Errorf("first once done: elapsed %v, %d iterations, fraction %v, %d VUs active; want 1.2s, 8, 1, 0", d.Elapsed, d.IterationsEnded, d.Fraction(), d.ActiveVUs)
		}
		if w := readings[0].sec; w.StartTime != 3*time.Second || w.Fraction() != 0 {
			t.Errorf("second while waiting: startTime %v, fraction %v; want 3s, 0", w.StartTime, w.Fraction())
		}
		// 600 ms into second: one 500 ms iteration of 4 ended.
		s := readings[4].sec
		if s.Iterations != 4 || s.IterationsEnded != 1 || s.Fraction() != 0.25 {
			t.Errorf("second at 3.6s: %d of %d iterations, fraction %v; want 1 of 4, 0.25", s.IterationsEnded, s.Iterations, s.Fraction())
		}
		if left, ok := s.Remaining(); !ok || left != 1800*time.Millisecond {
			t.Errorf("second at 3.6s: remaining %v, %v; want 1.8s (3 iterations at 600ms each so far)", left, ok)
		}
		if end[0].Phase != PhaseDone || end[1].Phase != PhaseDone || end[1].IterationsEnded != 4 {
			t.Errorf("at the end: %q, %q with %d iterations; want done, done with 4", end[0].Phase, end[1].Phase, end[1].IterationsEnded)
		}
	})
}

func TestScenarioProgressFractionAndRemaining(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        ScenarioProgress
		fraction float64
		left     time.Duration
		ok       bool
	}{
		{"waiting", ScenarioProgress{Phase: PhaseWaiting, Duration: time.Minute}, 0, 0, false},
		{"by duration", ScenarioProgress{Phase: PhaseRunning, Duration: time.Minute, Elapsed: 15 * time.Second}, 0.25, 45 * time.Second, true},
		{"graceful stop", ScenarioProgress{Phase: PhaseGracefulStop, Duration: time.Minute, Elapsed: 70 * time.Second}, 1, 0, false},
		{"iterations, none ended yet", ScenarioProgress{Phase: PhaseRunning, Duration: 10 * time.Minute, Iterations: 10, Elapsed: time.Second}, 1.0 / 600, 0, false},
		{"iterations ahead of time", ScenarioProgress{Phase: PhaseRunning, Duration: 10 * time.Minute, Iterations: 10, IterationsEnded: 5, Elapsed: 10 * time.Second}, 0.5, 10 * time.Second, true},
		{"maxDuration nearer than the iterations", ScenarioProgress{Phase: PhaseRunning, Duration: 20 * time.Second, Iterations: 100, IterationsEnded: 10, Elapsed: 15 * time.Second}, 0.75, 5 * time.Second, true},
		{"done early", ScenarioProgress{Phase: PhaseDone, Duration: time.Minute, Elapsed: time.Second}, 1, 0, false},
		{"interrupted", ScenarioProgress{Phase: PhaseDone, Interrupted: true, Duration: time.Minute, Elapsed: 18 * time.Second}, 0.3, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Fraction(); got != tc.fraction {
				t.Errorf("Fraction() = %v, want %v", got, tc.fraction)
			}
			left, ok := tc.p.Remaining()
			if left != tc.left || ok != tc.ok {
				t.Errorf("Remaining() = %v, %v; want %v, %v", left, ok, tc.left, tc.ok)
			}
		})
	}
}

// A run stopped at 3 s of a 10 s scenario reports where that scenario
// stopped (30 %, not done), while one that had ended on its own is done;
// each reports the VUs it used at most beside its maxVUs.
func TestReportSaysWhereAnInterruptedScenarioStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := load(t, testConfig(t, `
import { sleep } from 'llmrun';
export const options = {
  scenarios: {
    short: { executor: 'constant-vus', vus: 3, duration: '1s' },
    long: { executor: 'constant-arrival-rate', rate: 2, timeUnit: '1s', duration: '10s', preAllocatedVUs: 1, maxVUs: 8 },
  },
};
export default function () { sleep(0.3); }
`, nil, nil))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		reports := make(chan *Report, 1)
		go func() {
			rep, _ := e.Run(ctx)
			reports <- rep
		}()
		synctest.Wait()
		time.Sleep(3 * time.Second)
		cancel()
		rep := <-reports
		if len(rep.Final) != 2 {
			t.Fatalf("Final has %d scenarios, want 2", len(rep.Final))
		}
		long, short := rep.Final[0], rep.Final[1] // in the order of their names
		if short.Phase != PhaseDone || short.Interrupted || short.Fraction() != 1 || short.PeakVUs != 3 || short.MaxVUs != 3 {
			t.Errorf("short: %q, interrupted %v, fraction %v, VUs used %d of %d; want done, not interrupted, 1, 3 of 3",
				short.Phase, short.Interrupted, short.Fraction(), short.PeakVUs, short.MaxVUs)
		}
		if long.Phase != PhaseDone || !long.Interrupted || long.Fraction() != 0.3 || long.PeakVUs != 1 || long.MaxVUs != 8 {
			t.Errorf("long: %q, interrupted %v, fraction %v, VUs used %d of %d; want done, interrupted, 0.3, 1 of 8",
				long.Phase, long.Interrupted, long.Fraction(), long.PeakVUs, long.MaxVUs)
		}
	})
}

// A scenario's live lag counts the iterations its arrival-rate executor
// started and sums their lags, as iteration_lag records them; a
// closed-loop scenario has none.
func TestScenarioProgressCountsArrivalLag(t *testing.T) {
	e := load(t, testConfig(t, `
export const options = {
  scenarios: {
    open: { executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s', duration: '500ms', preAllocatedVUs: 2 },
    closed: { executor: 'shared-iterations', vus: 1, iterations: 3 },
  },
};
export default function () {}`, nil, nil))
	rep := mustRun(t, e)
	p := e.Progress()
	open, closed := p.Scenarios[0], p.Scenarios[1]
	if open.Name != "open" {
		open, closed = closed, open
	}
	lag := rep.Snapshot.Stats("iteration_lag", tags("scenario", "open"))
	if lag == nil || lag.Count == 0 {
		t.Fatal("the arrival-rate scenario recorded no iteration_lag")
	}
	if open.Lagged != lag.Count {
		t.Errorf("Lagged = %d, want iteration_lag's %d samples", open.Lagged, lag.Count)
	}
	if got, want := open.LagTotal.Seconds()*1000, lag.Sum; math.Abs(got-want) > 1e-6*max(want, 1) {
		t.Errorf("LagTotal = %g ms, want iteration_lag's sum %g ms", got, want)
	}
	if closed.Lagged != 0 || closed.LagTotal != 0 {
		t.Errorf("the closed-loop scenario has a lag: %d, %v", closed.Lagged, closed.LagTotal)
	}
}
