package engine

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/js"
)

func TestLoadShapeErrorsNameTheField(t *testing.T) {
	minute, ten, huge, decade := time.Minute, 10, 1_000_000_000_000, 10*365*24*time.Hour
	stages := []executor.Stage{executor.NewStage(time.Second, 2)}
	hugeStage := []executor.Stage{executor.NewStage(time.Second, 1e12)}
	tests := []struct {
		options string
		ov      Overrides
		want    string
	}{
		{`{"duration": "1m", "stages": [{"duration": "1s", "target": 2}]}`, Overrides{}, "options.stages: use either stages or duration, not both"},
		{`{"iterations": 3, "stages": [{"duration": "1s", "target": 2}]}`, Overrides{}, "options.stages: use either stages or iterations"},
		{`{"stages": [{"duration": "1s", "target": 2}], "scenarios": {"a": {"executor": "constant-vus", "duration": "1s"}}}`, Overrides{}, "options.scenarios: use either scenarios"},
		{`{"stages": [{"duration": "1s", "target": -2}]}`, Overrides{}, "options.stages: stages[0].target must be a non-negative number"},
		{`{"stages": [{"duration": "1s", "tagret": 2}]}`, Overrides{}, `options.stages: unknown field "tagret"`},
		{`{"stages": [{"duration": "1s", "target": "many"}]}`, Overrides{}, `options.stages: target must be a number, got "many"`},
		{`{"scenarios": {"a": {"executor": "ramping-arrival-rate", "preAllocatedVUs": 1, "stages": [{"duration": "soon", "target": 1}]}}}`, Overrides{}, `options.scenarios.a.stages: duration: invalid duration "soon"`},
		{`{"stages": [{"duration": "1s"}]}`, Overrides{}, "options.stages: stages[0].target is required"},
		{`{}`, Overrides{Stages: stages, Duration: &minute}, "--stage: use either stages or duration"},
		{`{}`, Overrides{Stages: stages, Iterations: &ten}, "--stage: use either stages or iterations"},
		{`{}`, Overrides{VUs: &huge, Duration: &minute}, "invalid options: --vus: 1000000000000 exceeds llmrun's limit of 100000 VUs per process (see docs/limits.md)"},
		{`{}`, Overrides{VUs: &huge, Iterations: &huge}, "--vus: 1000000000000 exceeds llmrun's limit"},
		{`{}`, Overrides{VUs: &huge, Stages: stages}, "--vus: 1000000000000 exceeds llmrun's limit"},
		{`{}`, Overrides{Stages: hugeStage}, "--stage: 1000000000000 exceeds llmrun's limit"},
		{`{}`, Overrides{Duration: &decade}, "--duration: 87600h0m0s exceeds llmrun's limit of 8760h0m0s"},
		{`{"vus": 2}`, Overrides{Duration: &decade}, "--duration: 87600h0m0s exceeds llmrun's limit"},
		{`{"scenarios": {"a": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 1}], "rate": 3}}}`, Overrides{}, "options.scenarios.a.rate: unknown field (executor ramping-vus)"},
		{`{"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": 3, "duration": "1s"}}}`, Overrides{}, "options.scenarios.a: preAllocatedVUs is required"},
		{`{"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": "fast", "duration": "1s", "preAllocatedVUs": 1}}}`, Overrides{}, "options.scenarios.a.rate: expected a number"},
	}
	for _, tc := range tests {
		o, err := ParseOptions([]byte(tc.options))
		if err == nil {
			_, err = ResolveScenarios(o, tc.ov)
		}
		var ce *ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: error %v, want a ConfigError containing %q", tc.options, tc.ov, err, tc.want)
		}
	}
}

// An arrival-rate scenario against the simulator accounts for each of
// its rate × duration planned starts: started (one request each, with an
// iteration_lag sample tagged like its other samples) or dropped, with
// its cause. How many started depends on the machine's load;
// TestConstantArrivalRateStartsEachPlannedIteration counts them exactly.
func TestConstantArrivalRateAgainstTheSimulator(t *testing.T) {
	sim := startSim(t, 0)
	cfg := testConfig(t, `
import llm from 'llm';
export const options = {
  tags: { team: 'serving' },
  scenarios: {
    chat: { executor: 'constant-arrival-rate', rate: 50, duration: '2s', preAllocatedVUs: 4, maxVUs: 20, tags: { workload: 'chat' } },
  },
};
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, ignore_eos: true });
  if (!r.ok) throw new Error(r.error);
}
`, sim, nil)
	e := load(t, cfg)
	if e.MaxVUs() != 20 {
		t.Errorf("MaxVUs = %d, want maxVUs 20", e.MaxVUs())
	}
	rep := mustRun(t, e)

	want := tags("scenario", "chat", "workload", "chat", "team", "serving")
	iterations := sum(rep, "iterations", want)
	if got := count(rep, "llm_requests", want); float64(got) != iterations {
		t.Errorf("llm_requests = %d, want one per iteration (%v)", got, iterations)
	}
	lag := rep.Snapshot.Stats("iteration_lag", want)
	if lag == nil || float64(lag.Count) != iterations {
		t.Fatalf("iteration_lag{%s} = %+v, want one sample per iteration (%v)", want.Key(), lag, iterations)
	}
	if lag.Min < 0 {
		t.Errorf("iteration_lag min = %v ms: an iteration started before its planned start", lag.Min)
	}
	// On a loaded machine the last starts may come too late: they are
	// then dropped, never started after the scenario's end.
	dropped := sum(rep, "dropped_iterations", nil)
	if iterations+dropped != 100 {
		t.Errorf("iterations %v + dropped_iterations %v, want the 100 planned", iterations, dropped)
	}
	var byCause int64
	for _, n := range rep.Final[0].Dropped {
		byCause += n
	}
	if float64(byCause) != dropped {
		t.Errorf("drops by cause %v, want the %v dropped", rep.Final[0].Dropped, dropped)
	}
	if m := rep.Registry.Get("iteration_lag"); m == nil || m.Type != metrics.Trend || m.Contains != metrics.Time {
		t.Errorf("iteration_lag is registered as %+v, want a Trend of times", m)
	}
	if m := rep.Registry.Get("dropped_iterations"); m == nil || m.Type != metrics.Counter {
		t.Errorf("dropped_iterations is registered as %+v, want a Counter", m)
	}
}

// The same shape on the bubble's clock, each iteration as long as a
// request to a fast server: every one of the 100 planned starts (50/s for
// 2 s) starts at its planned time, and none is dropped.
func TestConstantArrivalRateStartsEachPlannedIteration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(t, `
import { sleep } from 'llmrun';
export const options = {
  scenarios: {
    chat: { executor: 'constant-arrival-rate', rate: 50, duration: '2s', preAllocatedVUs: 4, maxVUs: 20 },
  },
};
export default function () { sleep(0.02); }
`, nil, nil)
		rep := mustRun(t, load(t, cfg))
		want := tags("scenario", "chat")
		if got := sum(rep, "iterations", want); got != 100 {
			t.Errorf("iterations = %v, want 50/s × 2s = 100", got)
		}
		if got := sum(rep, "dropped_iterations", nil); got != 0 {
			t.Errorf("dropped_iterations = %v, want 0", got)
		}
		if lag := rep.Snapshot.Stats("iteration_lag", want); lag == nil || lag.Count != 100 || lag.Max != 0 {
			t.Errorf("iteration_lag = %+v, want 100 samples of 0 (each started at its planned time)", lag)
		}
	})
}

// VUs initialised during the run, beyond preAllocatedVUs, are bound like
// the others: the scenario's function, env, tags and setup() data.
func TestArrivalRateInitialisesVUsDuringTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(t, `
import { sleep } from 'llmrun';
import { Counter } from 'metrics';
const byVU = new Counter('by_vu');
export const options = {
  scenarios: {
    burst: { executor: 'constant-arrival-rate', rate: 40, duration: '500ms', preAllocatedVUs: 1, maxVUs: 12,
             exec: 'work', env: { KIND: 'burst-env' }, tags: { workload: 'burst' } },
  },
};
export function setup() { return { label: 'from-setup' }; }
export function work(data) {
  byVU.add(1, { vu: String(__VU), kind: __ENV.KIND, label: data.label });
  sleep(0.1);
}
`, nil, nil)
		rep := mustRun(t, load(t, cfg))

		vus := rep.Snapshot.TagValues("by_vu", "vu")
		if len(vus) < 4 || len(vus) > 12 {
			t.Errorf("iterations ran on VUs %v: want more than preAllocatedVUs (40/s of 100ms iterations need 4) and at most maxVUs 12", vus)
		}
		bound := tags("kind", "burst-env", "label", "from-setup", "scenario", "burst", "workload", "burst")
		if got, all := sum(rep, "by_vu", bound), sum(rep, "by_vu", nil); got != all || all < 19 {
			t.Errorf("by_vu{%s} = %v of %v: every iteration, on every VU, should be bound to the scenario", bound.Key(), got, all)
		}
		if got := sum(rep, "dropped_iterations", nil); got != 0 {
			t.Errorf("dropped_iterations = %v, want 0", got)
		}
	})
}

func TestArrivalRateDropsAndWarnsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logBuffer{}
		cfg := testConfig(t, `
import { sleep } from 'llmrun';
export const options = {
  scenarios: { slow: { executor: 'constant-arrival-rate', rate: 40, duration: '500ms', preAllocatedVUs: 1 } },
};
export default function () { sleep(0.2); }
`, nil, logs)
		rep := mustRun(t, load(t, cfg))
		iterations, dropped := sum(rep, "iterations", nil), sum(rep, "dropped_iterations", tags("scenario", "slow"))
		if iterations+dropped != 20 || dropped < 15 {
			t.Errorf("iterations %v + dropped %v: want 20 planned, most dropped (one VU, 200ms iterations)", iterations, dropped)
		}
		if got := rep.Final[0].Dropped; got[executor.DropBusy] != int64(dropped) {
			t.Errorf("drops by cause %v, want all %v for want of a VU (one VU, busy throughout)", got, dropped)
		}
		out := logs.String()
		if n := strings.Count(out, "dropped_iterations"); n != 1 || !strings.Contains(out, "scenario=slow") || !strings.Contains(out, "WARN") {
			t.Errorf("want one warning naming the scenario, got %d:\n%s", n, out)
		}
	})
}

// A VU initialised during the run whose init code throws ends the run with
// that script error.
func TestVUInitialisedDuringTheRunFails(t *testing.T) {
	cfg := testConfig(t, `
import { sleep } from 'llmrun';
if (__VU > 1) throw new Error('no room for VU ' + __VU);
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 20, duration: '20s', preAllocatedVUs: 1, maxVUs: 5 } },
};
export default function () { sleep(0.5); }
`, nil, nil)
	start := time.Now()
	_, err := runBounded(t, t.Context(), load(t, cfg))
	var se *js.ScriptError
	if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), "no room for VU 2") || !strings.Contains(err.Error(), "initialising VU 2") {
		t.Fatalf("Run error = %v, want the init error of VU 2", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Run took %v: the failure did not stop the 20s scenario", el)
	}
}

func TestRampingVUsScenarioRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(t, `
import { sleep } from 'llmrun';
import { Counter } from 'metrics';
const byVU = new Counter('by_vu');
export const options = { stages: [{ duration: '300ms', target: 3 }, { duration: '200ms', target: 3 }] };
export default function () { byVU.add(1, { vu: String(__VU) }); sleep(0.02); }
`, nil, nil)
		e := load(t, cfg)
		if sc := e.Scenarios(); len(sc) != 1 || sc[0].Executor != "ramping-vus" || e.MaxVUs() != 3 {
			t.Fatalf("scenarios %+v, MaxVUs %d: want one ramping-vus of up to 3", sc, e.MaxVUs())
		}
		rep := mustRun(t, e)
		if vus := rep.Snapshot.TagValues("by_vu", "vu"); len(vus) != 3 {
			t.Errorf("iterations ran on VUs %v, want 1, 2 and 3", vus)
		}
		if got := sum(rep, "iterations", nil); got < 20 {
			t.Errorf("iterations = %v, want many", got)
		}
		if got := sum(rep, "iterations_interrupted", nil); got != 0 {
			t.Errorf("iterations_interrupted = %v, want 0", got)
		}
	})
}
