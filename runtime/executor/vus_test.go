package executor

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// The iterations an iteration-based scenario did not start because its
// maxDuration ended it are counted as dropped (DropMaxDuration): started
// plus dropped is the plan. A scenario that ran all of them drops none,
// and one the run stopped (its context) counts none: that is an
// interruption, told as one.
func TestIterationsCutByMaxDurationAreCounted(t *testing.T) {
	tests := []struct {
		name, executor, js string
		stopRunAt          time.Duration // 0: the run is not stopped
		planned, started   int
	}{
		{"shared, cut", "shared-iterations", `{"vus": 2, "iterations": 100, "maxDuration": "4500ms", "gracefulStop": "0s"}`, 0, 100, 10},
		{"per-vu, cut", "per-vu-iterations", `{"vus": 2, "iterations": 50, "maxDuration": "4500ms", "gracefulStop": "0s"}`, 0, 100, 10},
		{"shared, all run", "shared-iterations", `{"vus": 2, "iterations": 4, "maxDuration": "10s"}`, 0, 4, 4},
		{"per-vu, all run", "per-vu-iterations", `{"vus": 2, "iterations": 2, "maxDuration": "10s"}`, 0, 4, 4},
		{"shared, run stopped", "shared-iterations", `{"vus": 2, "iterations": 100, "maxDuration": "4500ms", "gracefulStop": "0s"}`, 2500 * time.Millisecond, 100, 6},
		{"per-vu, run stopped", "per-vu-iterations", `{"vus": 2, "iterations": 50, "maxDuration": "4500ms", "gracefulStop": "0s"}`, 2500 * time.Millisecond, 100, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := decode(t, tc.executor, tc.js)
				var starts [2][]time.Duration
				origin := time.Now()
				pool := fixed([]VU{
					&startLog{work: time.Second, starts: &starts[0], origin: origin},
					&startLog{work: time.Second, starts: &starts[1], origin: origin},
				})
				ctx := t.Context()
				if tc.stopRunAt > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.stopRunAt)
					defer cancel()
				}
				if err := cfg.NewExecutor(1).Run(ctx, pool); err != nil {
					t.Fatalf("Run: %v", err)
				}
				started := len(starts[0]) + len(starts[1])
				if started != tc.started {
					t.Fatalf("%d iterations started, want %d", started, tc.started)
				}
				wantDropped := int64(tc.planned - tc.started)
				if tc.stopRunAt > 0 {
					wantDropped = 0
				}
				if got := pool.byCause[DropMaxDuration].Load(); got != wantDropped || pool.dropped.Load() != wantDropped {
					t.Errorf("dropped %d (%d for maxDuration), want %d for maxDuration", pool.dropped.Load(), got, wantDropped)
				}
			})
		})
	}
}
