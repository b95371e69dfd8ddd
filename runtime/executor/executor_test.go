package executor

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
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
	cfg := decode(t, "constant-vus", `{"vus": 2, "duration": "150ms"}`)
	vs, raw := vus(cfg.MaxVUs(), 10*time.Millisecond)
	start := time.Now()
	cfg.NewExecutor(0).Run(context.Background(), fixed(vs))
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Fatalf("returned after %s, before the duration", el)
	}
	done, interrupted := total(raw)
	if done < 2 || interrupted != 0 {
		t.Fatalf("done %d interrupted %d: want iterations from both VUs and none interrupted (graceful stop 30s)", done, interrupted)
	}
}

func TestGracefulStopInterruptsLongIterations(t *testing.T) {
	cfg := decode(t, "constant-vus", `{"vus": 2, "duration": "50ms", "gracefulStop": "50ms"}`)
	vs, raw := vus(cfg.MaxVUs(), time.Hour)
	cfg.NewExecutor(0).Run(context.Background(), fixed(vs))
	if done, interrupted := total(raw); done != 0 || interrupted != 2 {
		t.Fatalf("done %d interrupted %d, want 0 and 2", done, interrupted)
	}
}

func TestCanceledContextStopsEveryExecutor(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			cfg := decode(t, name, configFor(name))
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			vs, raw := vus(cfg.PreAllocatedVUs(), 5*time.Millisecond)
			if err := cfg.NewExecutor(1).Run(ctx, fixed(vs)); err != nil {
				t.Fatal(err)
			}
			if done, _ := total(raw); done == 0 || done >= 1000000 {
				t.Fatalf("ran %d iterations before the cancel", done)
			}
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
	}
	for _, tc := range tests {
		var d Duration
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err == nil) != tc.ok || (tc.ok && (d.D != tc.want || !d.Set)) {
			t.Errorf("%s → %v, %v; want %v ok=%v", tc.in, d.D, err, tc.want, tc.ok)
		}
	}
}
