package executor

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// backingOffVU is a countingVU that asks for a pause after each iteration.
type backingOffVU struct {
	countingVU
	pause time.Duration
}

func (v *backingOffVU) Backoff() time.Duration { return v.pause }

// The closed-loop executors pause a VU for its Backoff before its next
// iteration, and not after its last; the arrival-rate executors keep
// their schedule.
func TestExecutorsHonourTheVUsBackoff(t *testing.T) {
	tests := []struct {
		name, js string
		pause    time.Duration
		// done is the iterations run, took when Run returned.
		done int64
		took time.Duration
	}{
		// 10 ms of work, 90 ms of pause: an iteration every 100 ms until
		// starting stops at 950 ms, which ends the last pause.
		{"constant-vus", `{"vus": 1, "duration": "950ms"}`, 90 * time.Millisecond, 10, 950 * time.Millisecond},
		{"ramping-vus", `{"startVUs": 1, "stages": [{"duration": "950ms", "target": 1}]}`, 90 * time.Millisecond, 10, 950 * time.Millisecond},
		// No pause after the last iteration: 5 × 10 ms + 4 × 90 ms.
		{"shared-iterations", `{"vus": 1, "iterations": 5}`, 90 * time.Millisecond, 5, 410 * time.Millisecond},
		{"per-vu-iterations", `{"vus": 2, "iterations": 3}`, 90 * time.Millisecond, 6, 210 * time.Millisecond},
		// 10 arrivals a second on one VU start as planned, pause or not.
		{"constant-arrival-rate", `{"rate": 10, "duration": "1s", "preAllocatedVUs": 1}`, 500 * time.Millisecond, 10, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := decode(t, tc.name, tc.js)
				raw := make([]*backingOffVU, cfg.PreAllocatedVUs())
				vs := make([]VU, len(raw))
				for i := range raw {
					raw[i] = &backingOffVU{countingVU: countingVU{work: 10 * time.Millisecond}, pause: tc.pause}
					vs[i] = raw[i]
				}
				start := time.Now()
				if err := cfg.NewExecutor(1).Run(t.Context(), fixed(vs)); err != nil {
					t.Fatal(err)
				}
				var done int64
				for _, v := range raw {
					done += v.done.Load()
				}
				if took := time.Since(start); done != tc.done || took != tc.took {
					t.Errorf("%d iterations in %v, want %d in %v", done, took, tc.done, tc.took)
				}
			})
		})
	}
}

// The end of the run ends a VU's pause at once.
func TestBackoffEndsWithTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := decode(t, "constant-vus", `{"vus": 1, "duration": "1h"}`)
		v := &backingOffVU{countingVU: countingVU{work: 10 * time.Millisecond}, pause: time.Hour}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := cfg.NewExecutor(1).Run(ctx, fixed([]VU{v})); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 50*time.Millisecond || v.done.Load() != 1 {
			t.Errorf("Run returned after %v and %d iterations, want at the cancel (50ms) after 1", took, v.done.Load())
		}
	})
}
