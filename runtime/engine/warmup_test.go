package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWarmupForms(t *testing.T) {
	tests := []struct {
		in   string
		want Warmup
		err  string
	}{
		{`20`, Warmup{Iterations: 20}, ""},
		{`"30s"`, Warmup{Duration: 30 * time.Second}, ""},
		{`{"iterations": 5}`, Warmup{Iterations: 5}, ""},
		{`{"duration": "1m"}`, Warmup{Duration: time.Minute}, ""},
		{`null`, Warmup{}, ""},
		{`2.5`, Warmup{}, "whole number"},
		{`-1`, Warmup{}, "negative"},
		{`{"iterations": 5, "duration": "1s"}`, Warmup{}, "not both"},
		{`{"requests": 5}`, Warmup{}, "unknown field"},
		{`"soon"`, Warmup{}, "invalid duration"},
	}
	for _, tc := range tests {
		var w Warmup
		err := json.Unmarshal([]byte(tc.in), &w)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || w != tc.want {
			t.Errorf("%s → %+v, %v; want %+v", tc.in, w, err, tc.want)
		}
	}
}

func TestWarmupString(t *testing.T) {
	for w, want := range map[Warmup]string{
		{}:                           "none",
		{Iterations: 1}:              "first 1 iteration",
		{Iterations: 20}:             "first 20 iterations",
		{Duration: 30 * time.Second}: "first 30s",
	} {
		if got := w.String(); got != want {
			t.Errorf("%+v: %q, want %q", w, got, want)
		}
	}
}

func TestWarmupGate(t *testing.T) {
	start := time.Now()
	byCount := newWarmupGate(Warmup{Iterations: 2})
	byCount.begin(start)
	got := []bool{byCount.claim(start), byCount.claim(start), byCount.claim(start.Add(time.Second)), byCount.claim(start.Add(2 * time.Second))}
	if got[0] != true || got[1] != true || got[2] != false || got[3] != false {
		t.Errorf("claims %v, want the first two to be warmup", got)
	}
	if ms := byCount.measuredStart(start.Add(time.Hour)); !ms.Equal(start.Add(time.Second)) {
		t.Errorf("measured start %v, want the first measured iteration's start", ms.Sub(start))
	}
	byTime := newWarmupGate(Warmup{Duration: time.Second})
	byTime.begin(start)
	if !byTime.claim(start.Add(999*time.Millisecond)) || byTime.claim(start.Add(time.Second)) {
		t.Error("iterations starting within the first second must be warmup, the others not")
	}
	if ms := byTime.measuredStart(start.Add(time.Hour)); !ms.Equal(start.Add(time.Second)) {
		t.Errorf("measured start %v, want 1s", ms.Sub(start))
	}
	none := newWarmupGate(Warmup{})
	none.begin(start)
	if none.claim(start) || !none.measuredStart(start.Add(time.Hour)).Equal(start) {
		t.Error("no warmup: nothing is warmup and the measured part starts with the scenario")
	}
}

// Warmup iterations run, but no figure includes them: not the request
// counts, not checks, not custom metrics, not thresholds.
func TestWarmupIsExcludedFromEveryStatistic(t *testing.T) {
	e := load(t, testConfig(t, `
import llm from 'llm';
import { check } from 'llmrun';
import { Counter } from 'metrics';
const mine = new Counter('mine');
export const options = {
  scenarios: {
    a: { executor: 'shared-iterations', vus: 1, iterations: 10, warmup: 3 },
    b: { executor: 'per-vu-iterations', vus: 2, iterations: 2 },
  },
  warmup: 1,
  thresholds: { llm_requests: ['count==10'] },
};
export default function () {
  const r = llm.stream({ prompt: 'hi', max_tokens: 2 });
  check(r, { ok: (r) => r.ok });
  mine.add(1);
}`, startSim(t, 0), nil))
	rep := mustRun(t, e)
	count := func(name string) float64 {
		st := rep.Snapshot.Stats(name, nil)
		if st == nil {
			return 0
		}
		return st.Sum
	}
	// a: 10 iterations, 3 of them warmup; b: 4 iterations, the first one
	// (options.warmup applies to a scenario without its own) warmup.
	if got := count("llm_requests"); got != 7+3 {
		t.Errorf("llm_requests %g, want 10 measured", got)
	}
	if got := count("warmup_requests"); got != 3+1 {
		t.Errorf("warmup_requests %g, want 4", got)
	}
	if got := count("warmup_iterations"); got != 4 {
		t.Errorf("warmup_iterations %g, want 4", got)
	}
	if got := count("iterations"); got != 10 {
		t.Errorf("iterations %g, want 10", got)
	}
	if got := count("mine"); got != 10 {
		t.Errorf("custom counter %g, want 10", got)
	}
	if st := rep.Snapshot.Stats("checks", nil); st == nil || st.Count != 10 {
		t.Errorf("checks %+v, want 10", st)
	}
	if len(rep.Thresholds) != 1 || !rep.Thresholds[0].Passed {
		t.Errorf("thresholds %+v: count==10 must see measured requests only", rep.Thresholds)
	}
	// The output tokens counted as they arrived are the measured
	// requests' only: 7 of a's and 3 of b's, 2 tokens each.
	p := e.Progress()
	want := []TokenCount{{Scenario: "a", Model: testModel, Tokens: 7 * 2}, {Scenario: "b", Model: testModel, Tokens: 3 * 2}}
	if !slices.Equal(p.Arrived, want) || p.OutputTokens != int64(count("llm_output_tokens")) || p.OutputTokens != 20 {
		t.Errorf("arrived %+v (%d in all), want %+v, as llm_output_tokens %g", p.Arrived, p.OutputTokens, want, count("llm_output_tokens"))
	}
}

// An arrival-rate scenario's warmup iterations leave no iteration_lag
// sample: its lag figures, as every other, are the measured iterations'.
func TestWarmupHasNoIterationLag(t *testing.T) {
	e := load(t, testConfig(t, `
import llm from 'llm';
export const options = {
  scenarios: {
    paced: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '500ms',
             preAllocatedVUs: 10, warmup: 4 },
  },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }`, startSim(t, 0), nil))
	rep := mustRun(t, e)
	scenario := tags("scenario", "paced")
	if warm := sum(rep, "warmup_iterations", scenario); warm != 4 {
		t.Fatalf("warmup_iterations = %v, want 4", warm)
	}
	measured := sum(rep, "iterations", scenario)
	lag := rep.Snapshot.Stats("iteration_lag", scenario)
	if measured == 0 || lag == nil || float64(lag.Count) != measured {
		t.Errorf("iteration_lag = %+v, want one sample per measured iteration (%v), none for the 4 warmup ones", lag, measured)
	}
}

// Arrivals dropped during the warmup (every VU busy) are not counted in
// dropped_iterations: the scenario's whole run here is warmup.
func TestWarmupHasNoDroppedIterations(t *testing.T) {
	e := load(t, testConfig(t, `
import { sleep } from 'llmrun';
export const options = {
  scenarios: {
    paced: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '500ms',
             preAllocatedVUs: 1, maxVUs: 1, warmup: '1h' },
  },
};
export default function () { sleep(0.3); }`, startSim(t, 0), nil))
	rep := mustRun(t, e)
	scenario := tags("scenario", "paced")
	if warm := sum(rep, "warmup_iterations", scenario); warm < 1 || warm > 2 {
		t.Fatalf("warmup_iterations = %v, want 1 or 2 (a VU busy 300 ms, for 500 ms)", warm)
	}
	if dropped := sum(rep, "dropped_iterations", scenario); dropped != 0 {
		t.Errorf("dropped_iterations = %v, want 0: every arrival was in the warmup", dropped)
	}
}

// The window's edges are told as they happen: MeasuredStart once, as the
// first iteration after the warmup starts (every warmup request done, no
// measured one sent), ScenariosEnded once the last measured request is
// over and before teardown's.
func TestWindowEdgesAreTold(t *testing.T) {
	sim := startSim(t, 0)
	cfg := testConfig(t, `
import llm from 'llm';
export const options = {
  scenarios: { a: { executor: 'shared-iterations', vus: 1, iterations: 6, warmup: 4 } },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
export function teardown() { llm.stream({ prompt: 'bye', max_tokens: 2 }); }
`, sim, nil)
	var measuredCalls, endedCalls int
	var atMeasured, atEnded uint64
	cfg.MeasuredStart = func() { measuredCalls++; atMeasured = sim.Server().Stats().Received }
	cfg.ScenariosEnded = func() { endedCalls++; atEnded = sim.Server().Stats().Received }
	mustRun(t, load(t, cfg))
	if measuredCalls != 1 || atMeasured != 4 {
		t.Errorf("MeasuredStart called %d times, after %d requests; want once, after the 4 of the warmup", measuredCalls, atMeasured)
	}
	if endedCalls != 1 || atEnded != 6 {
		t.Errorf("ScenariosEnded called %d times, after %d requests; want once, after the scenario's 6, before teardown's", endedCalls, atEnded)
	}
	if got := sim.Server().Stats().Received; got != 7 {
		t.Errorf("%d requests in all, want 7", got)
	}
}
