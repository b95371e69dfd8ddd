package executor

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// countingVU records iterations; each lasts work, or until ctx ends.
type countingVU struct {
	work        time.Duration
	done        atomic.Int64
	interrupted atomic.Int64
}

func (v *countingVU) RunIteration(ctx context.Context) {
	t := time.NewTimer(v.work)
	defer t.Stop()
	select {
	case <-t.C:
		v.done.Add(1)
	case <-ctx.Done():
		v.interrupted.Add(1)
	}
}

func vus(n int, work time.Duration) ([]VU, []*countingVU) {
	out, raw := make([]VU, n), make([]*countingVU, n)
	for i := range out {
		raw[i] = &countingVU{work: work}
		out[i] = raw[i]
	}
	return out, raw
}

func total(raw []*countingVU) (done, interrupted int64) {
	for _, v := range raw {
		done += v.done.Load()
		interrupted += v.interrupted.Load()
	}
	return done, interrupted
}

func decode(t testing.TB, name, js string) Config {
	t.Helper()
	cfg, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(js), cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestSharedIterationsRunsExactlyTheTotal(t *testing.T) {
	cfg := decode(t, "shared-iterations", `{"vus": 4, "iterations": 37}`)
	vs, raw := vus(cfg.MaxVUs(), time.Millisecond)
	cfg.NewExecutor(0).Run(context.Background(), fixed(vs))
	if done, _ := total(raw); done != 37 {
		t.Fatalf("ran %d iterations, want 37", done)
	}
}

func TestPerVUIterationsRunsEachVUsShare(t *testing.T) {
	cfg := decode(t, "per-vu-iterations", `{"vus": 3, "iterations": 5}`)
	vs, raw := vus(cfg.MaxVUs(), time.Millisecond)
	cfg.NewExecutor(0).Run(context.Background(), fixed(vs))
	for i, v := range raw {
		if v.done.Load() != 5 {
			t.Errorf("VU %d ran %d iterations, want 5", i, v.done.Load())
		}
	}
}

func TestConstantVUsStopsStartingAtDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := decode(t, "constant-vus", `{"vus": 2, "duration": "155ms"}`)
		vs, raw := vus(cfg.MaxVUs(), 10*time.Millisecond)
		start := time.Now()
		cfg.NewExecutor(0).Run(t.Context(), fixed(vs))
		if el := time.Since(start); el != 160*time.Millisecond {
			t.Errorf("returned after %s, want at the end of the iterations running at the duration (160ms)", el)
		}
		if done, interrupted := total(raw); done != 32 || interrupted != 0 {
			t.Errorf("done %d interrupted %d: want 16 iterations from each VU and none interrupted (graceful stop 30s)", done, interrupted)
		}
	})
}

func TestGracefulStopInterruptsLongIterations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := decode(t, "constant-vus", `{"vus": 2, "duration": "50ms", "gracefulStop": "50ms"}`)
		vs, raw := vus(cfg.MaxVUs(), time.Hour)
		start := time.Now()
		cfg.NewExecutor(0).Run(t.Context(), fixed(vs))
		if done, interrupted := total(raw); done != 0 || interrupted != 2 {
			t.Errorf("done %d interrupted %d, want 0 and 2", done, interrupted)
		}
		if el := time.Since(start); el != 100*time.Millisecond {
			t.Errorf("returned after %s, want at the end of the graceful stop (100ms)", el)
		}
	})
}

// A canceled context stops every executor at once: iterations in flight
// are interrupted, not given their graceful stop.
func TestCanceledContextStopsEveryExecutor(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := decode(t, name, configFor(name))
				if tf, ok := cfg.(TraceFile); ok {
					if err := tf.OpenTrace(t.Context(), identity); err != nil {
						t.Fatal(err)
					}
				}
				ctx, cancel := context.WithTimeout(t.Context(), 52*time.Millisecond)
				defer cancel()
				vs, raw := vus(cfg.PreAllocatedVUs(), 5*time.Millisecond)
				start := time.Now()
				if err := cfg.NewExecutor(1).Run(ctx, fixed(vs)); err != nil {
					t.Fatal(err)
				}
				if el := time.Since(start); el != 52*time.Millisecond {
					t.Errorf("Run returned %v after the start, want at the cancel (52ms)", el)
				}
				if done, interrupted := total(raw); done < 10 || interrupted != 2 {
					t.Errorf("ran %d iterations and interrupted %d, want 10 or more, then the 2 in flight at the cancel", done, interrupted)
				}
			})
		})
	}
}

func configFor(name string) string {
	switch name {
	case "constant-vus":
		return `{"vus": 2, "duration": "1h"}`
	case "ramping-vus":
		return `{"startVUs": 2, "stages": [{"duration": "1h", "target": 2}]}`
	case "constant-arrival-rate":
		return `{"rate": 1000, "duration": "1h", "preAllocatedVUs": 2}`
	case "ramping-arrival-rate":
		return `{"startRate": 1000, "stages": [{"duration": "1h", "target": 1000}], "preAllocatedVUs": 2}`
	case "trace-replay":
		return `{"trace": "testdata/every-ms.jsonl", "preAllocatedVUs": 2}`
	}
	return `{"vus": 2, "iterations": 1000000}`
}

func TestValidationNamesTheField(t *testing.T) {
	tests := []struct{ name, js, want string }{
		{"constant-vus", `{"vus": 0, "duration": "1s"}`, "vus"},
		{"constant-vus", `{"vus": 2}`, "duration"},
		{"constant-vus", `{"vus": 2, "duration": "1s", "gracefulStop": "-1s"}`, "gracefulStop"},
		{"shared-iterations", `{"vus": 5, "iterations": 2}`, "iterations"},
		{"per-vu-iterations", `{"iterations": -1}`, "iterations"},
		{"per-vu-iterations", `{"maxDuration": "-2s"}`, "maxDuration"},
	}
	for _, tc := range tests {
		cfg, _ := New(tc.name)
		if err := json.Unmarshal([]byte(tc.js), cfg); err != nil {
			t.Fatal(err)
		}
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: error %v, want one naming %q", tc.name, tc.js, err, tc.want)
		}
	}
	if _, err := New("ramping-nonsense"); err == nil || !strings.Contains(err.Error(), "constant-vus") {
		t.Errorf("unknown executor: %v, want the list of known ones", err)
	}
}

func TestDurationParsing(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{`"30s"`, 30 * time.Second, true},
		{`"1m30s"`, 90 * time.Second, true},
		{`1500`, 1500 * time.Millisecond, true},
		{`"250"`, 250 * time.Millisecond, true},
		{`"soon"`, 0, false},
		{`true`, 0, false},
		{`"NaN"`, 0, false},
		{`"Infinity"`, 0, false},
		{`1e300`, 0, false},
		{`-1e300`, 0, false},
		{`1e400`, 0, false},
		{`"1e300"`, 0, false},
		{`"99999999999h"`, 0, false},
		{`"8760h"`, DurationLimit, true},
		{`"8760h1s"`, 0, false},
	}
	for _, tc := range tests {
		var d Duration
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err == nil) != tc.ok || (tc.ok && (d.D != tc.want || !d.Set)) {
			t.Errorf("%s → %v, %v; want %v ok=%v", tc.in, d.D, err, tc.want, tc.ok)
		}
	}
}

// Durations that are not finite or beyond the limit say so, with the
// value as written.
func TestDurationErrorsSayWhy(t *testing.T) {
	tests := []struct{ in, want string }{
		{`1e300`, "1e300 (milliseconds) exceeds llmrun's limit of 8760h0m0s (365 days) for a duration (see docs/limits.md)"},
		{`"NaN"`, "must be a finite duration"},
		{`"-Inf"`, "must be a finite duration"},
		{`"100000000000000h"`, `"100000000000000h" exceeds llmrun's limit`},
		{`"30mm"`, `invalid duration "30mm": use a number with a unit`},
		{`"1.2.3s"`, `invalid duration "1.2.3s": use a number with a unit`},
		{`"s30"`, `invalid duration "s30": use a number with a unit`},
	}
	for _, tc := range tests {
		var d Duration
		err := json.Unmarshal([]byte(tc.in), &d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
	if _, err := ParseStage("NaN:3"); err == nil || !strings.Contains(err.Error(), "must be a finite duration") {
		t.Errorf("--stage NaN:3: error %v, want it to say the duration must be finite", err)
	}
}

// Once the iterations are interrupted, no VU starts another, even when
// the timer of the duration has not fired yet (as on a loaded machine,
// where it may fire after the graceful stop's): starting stops with the
// iterations. A graceful stop that ends before the duration shows it.
func TestNoIterationStartsOnceInterrupted(t *testing.T) {
	start, iter, cancel := stopContexts(t.Context(), time.Hour, -time.Hour)
	defer cancel()
	if iter.Err() == nil || start.Err() == nil {
		t.Errorf("iterations interrupted: %v; starting stopped: %v; want both", iter.Err(), start.Err())
	}
}

// Each executor's plan is the duration it starts iterations for and, for
// the iteration-based ones, the iterations it runs in all.
func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name, js string
		want     Plan
	}{
		{"constant-vus", `{"vus":3,"duration":"20s"}`, Plan{Duration: 20 * time.Second}},
		{"ramping-vus", `{"stages":[{"duration":"10s","target":5},{"duration":"5s","target":0}]}`, Plan{Duration: 15 * time.Second}},
		{"constant-arrival-rate", `{"rate":10,"duration":"1m","preAllocatedVUs":2}`, Plan{Duration: time.Minute}},
		{"ramping-arrival-rate", `{"preAllocatedVUs":2,"stages":[{"duration":"30s","target":10},{"duration":"30s","target":10}]}`, Plan{Duration: time.Minute}},
		{"shared-iterations", `{"vus":2,"iterations":10}`, Plan{Duration: DefaultMaxDuration, Iterations: 10}},
		{"per-vu-iterations", `{"vus":3,"iterations":4,"maxDuration":"90s"}`, Plan{Duration: 90 * time.Second, Iterations: 12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decode(t, tc.name, tc.js).Plan(); got != tc.want {
				t.Errorf("Plan() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
