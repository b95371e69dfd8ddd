package engine

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// chainedLevels is a script of levels c1 → c2 → c3, each one VU looping
// 300 ms iterations for 1s and chained to the one before with startAfter;
// pause is their graceful stop, the most each may take to drain.
const chainedLevels = `
import { sleep } from 'llmrun';
const level = (after) => ({ executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '1h', startAfter: after });
export const options = {
  scenarios: { c1: level(undefined), c2: level('c1'), c3: level('c2'), side: { executor: 'constant-vus', vus: 1, duration: '500ms' } },
};
export default function () { sleep(0.3); }
`

// Each chained scenario starts when the one before it ended, not after
// its graceful stop: the run lasts the sum of its levels, with no pause
// between them.
func TestChainedScenariosStartWhenTheOneBeforeEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := load(t, testConfig(t, chainedLevels, nil, nil))
		if got := names(e.Scenarios()); !slices.Equal(got, []string{"c1", "side", "c2", "c3"}) {
			t.Errorf("scenarios in order %v: want each chained level after the one it starts after", got)
		}
		rep := mustRun(t, e)
		var levels time.Duration
		for _, name := range []string{"c1", "c2", "c3"} {
			w, ok := rep.Windows[name]
			if !ok {
				t.Fatalf("%s did not run", name)
			}
			if offset := w.Start.Sub(rep.Start); offset != levels {
				t.Errorf("%s started %s into the run, want %s: the sum of the levels before it", name, offset, levels)
			}
			if w.Duration() >= time.Hour {
				t.Errorf("%s lasted %s: it waited out its graceful stop", name, w.Duration())
			}
			levels += w.Duration()
		}
		if rep.Duration() != levels {
			t.Errorf("the run lasted %s, want %s: the sum of its levels", rep.Duration(), levels)
		}
		if w := rep.Windows["side"]; !w.Start.Equal(rep.Start) {
			t.Errorf("the unchained scenario started %s into the run, want with it", w.Start.Sub(rep.Start))
		}
		for _, name := range []string{"c1", "c2", "c3"} {
			if n := count(rep, "iterations", tags("scenario", name)); n != 4 {
				t.Errorf("%s ran %d iterations, want 4 (started within 1s, 300 ms apart)", name, n)
			}
		}
	})
}

// startTime with startAfter is a delay after the end of the scenario
// named.
func TestStartTimeAfterStartAfterIsADelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep := mustRun(t, load(t, testConfig(t, `
export const options = {
  scenarios: {
    a: { executor: 'shared-iterations', iterations: 1 },
    b: { executor: 'shared-iterations', iterations: 1, startAfter: 'a', startTime: '3s' },
  },
};
export default function () {}
`, nil, nil)))
		if gap := rep.Windows["b"].Start.Sub(rep.Windows["a"].End); gap != 3*time.Second {
			t.Errorf("b started %s after a ended, want its startTime, 3s", gap)
		}
	})
}

// A chain stopped after a level skips the levels after it, and only
// those; what the stop is asked sees the levels that ended.
func TestStopChainSkipsTheLevelsAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(t, chainedLevels, nil, nil)
		var (
			mu    sync.Mutex
			asked [][]string
		)
		cfg.StopChain = func(sofar *Report) string {
			ended := slices.Sorted(maps.Keys(sofar.Windows))
			mu.Lock()
			asked = append(asked, ended)
			mu.Unlock()
			if count(sofar, "iterations", tags("scenario", "c1")) != 4 {
				t.Errorf("the report so far lacks c1's iterations")
			}
			if _, ok := sofar.Windows["c2"]; ok {
				return "enough seen"
			}
			return ""
		}
		rep := mustRun(t, load(t, cfg))
		// c1 ends (1s) after side (500 ms), which starts nothing: the stop
		// is asked after c1, then after c2.
		if want := [][]string{{"c1", "side"}, {"c1", "c2", "side"}}; !slices.EqualFunc(asked, want, slices.Equal) {
			t.Errorf("the stop was asked with the windows %v, want %v", asked, want)
		}
		if _, ran := rep.Windows["c3"]; ran {
			t.Error("c3 ran after the chain stopped")
		}
		want := []ChainStop{{After: "c2", Reason: "enough seen", Skipped: []string{"c3"}}}
		if !slices.EqualFunc(rep.ChainStops, want, func(a, b ChainStop) bool {
			return a.After == b.After && a.Reason == b.Reason && slices.Equal(a.Skipped, b.Skipped)
		}) {
			t.Errorf("chain stops %+v, want %+v", rep.ChainStops, want)
		}
		if rep.Interrupted {
			t.Error("a stopped chain marked the run interrupted")
		}
	})
}

// A chain stopped after its first level skips every level after it,
// directly or not.
func TestStopChainSkipsEveryLevelAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(t, chainedLevels, nil, nil)
		cfg.StopChain = func(*Report) string { return "stop" }
		e := load(t, cfg)
		rep := mustRun(t, e)
		// The live view shows the skipped levels as not run.
		phases := map[string]Phase{}
		for _, sp := range e.Progress().Scenarios {
			phases[sp.Name] = sp.Phase
		}
		if want := map[string]Phase{"c1": PhaseDone, "c2": PhaseNotRun, "c3": PhaseNotRun, "side": PhaseDone}; !maps.Equal(phases, want) {
			t.Errorf("phases after the run %v, want %v", phases, want)
		}
		if len(rep.ChainStops) != 1 || rep.ChainStops[0].After != "c1" || !slices.Equal(rep.ChainStops[0].Skipped, []string{"c2", "c3"}) {
			t.Errorf("chain stops %+v, want c2 and c3 skipped after c1", rep.ChainStops)
		}
		if got := slices.Sorted(maps.Keys(rep.Windows)); !slices.Equal(got, []string{"c1", "side"}) {
			t.Errorf("scenarios that ran: %v, want c1 and side", got)
		}
	})
}

func TestStartAfterErrorsNameTheField(t *testing.T) {
	const a = `"a": {"executor": "shared-iterations"`
	for _, tc := range []struct{ options, want string }{
		{`{"scenarios": {` + a + `, "startAfter": "b"}}}`, `options.scenarios.a.startAfter: no scenario is named "b" (the scenarios are a)`},
		{`{"scenarios": {` + a + `, "startAfter": "a"}}}`, "options.scenarios.a.startAfter: a scenario cannot start after itself"},
		{`{"scenarios": {` + a + `, "startAfter": "c"}, "b": {"executor": "shared-iterations", "startAfter": "a"}, "c": {"executor": "shared-iterations", "startAfter": "b"}}}`,
			"options.scenarios.a.startAfter: a cycle (a → c → b → a, each starting after the next): none of them would ever start"},
		{`{"scenarios": {` + a + `, "startAfter": 3}}}`, "options.scenarios.a.startAfter: expected a string"},
		{`{"scenarios": {` + a + `, "startAfter": null}}}`, "options.scenarios.a.startAfter: must be a finite value"},
	} {
		o, err := ParseOptions([]byte(tc.options))
		if err == nil {
			_, err = ResolveScenarios(o, Overrides{})
		}
		var ce *ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a ConfigError containing %q", tc.options, err, tc.want)
		}
	}
}

// LatestStart adds up, along a chain, the startTimes and the longest each
// scenario before can take.
func TestLatestStartAlongAChain(t *testing.T) {
	o, err := ParseOptions([]byte(`{"scenarios": {
  "a": {"executor": "constant-vus", "duration": "10s", "gracefulStop": "5s", "startTime": "1s"},
  "b": {"executor": "constant-vus", "duration": "20s", "gracefulStop": "0s", "startAfter": "a", "startTime": "2s"},
  "c": {"executor": "constant-vus", "duration": "1s", "startAfter": "b"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	scs, err := ResolveScenarios(o, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"a": time.Second, "b": 18 * time.Second, "c": 38 * time.Second}
	for _, sc := range scs {
		if sc.LatestStart != want[sc.Name] {
			t.Errorf("%s: latest start %s, want %s", sc.Name, sc.LatestStart, want[sc.Name])
		}
	}
}

func names(scs []Scenario) []string {
	out := make([]string, len(scs))
	for i, sc := range scs {
		out[i] = sc.Name
	}
	return out
}

// Against the simulator, each chained level starts once the one before it
// has ended, its requests drained, and each level's requests are its own.
func TestChainedLevelsAgainstTheSimulator(t *testing.T) {
	sim := startSim(t, 0)
	rep := mustRun(t, load(t, testConfig(t, `
import llm from 'llm';
const level = (vus, after) => ({ executor: 'shared-iterations', vus, iterations: 3 * vus, gracefulStop: '1h', maxDuration: '1m',
  startAfter: after, tags: { concurrency: String(vus) } });
export const options = { scenarios: { c1: level(1), c2: level(2, 'c1'), c4: level(4, 'c2') } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, ignore_eos: true });
}
`, sim, nil)))
	order := []string{"c1", "c2", "c4"}
	for i, name := range order {
		w, ok := rep.Windows[name]
		if !ok {
			t.Fatalf("%s did not run", name)
		}
		if i > 0 {
			if before := rep.Windows[order[i-1]]; w.Start.Before(before.End) {
				t.Errorf("%s started at %s, before %s ended at %s", name, w.Start.Format(time.StampMicro), order[i-1], before.End.Format(time.StampMicro))
			}
		}
	}
	if d := rep.Duration(); d >= time.Hour {
		t.Errorf("the chain lasted %s: it waited out a graceful stop", d)
	}
	for _, tc := range []struct {
		name string
		want int64
	}{{"c1", 3}, {"c2", 6}, {"c4", 12}} {
		if got := count(rep, "llm_requests", tags("scenario", tc.name)); got != tc.want {
			t.Errorf("%s: %d requests, want %d", tc.name, got, tc.want)
		}
	}
}
