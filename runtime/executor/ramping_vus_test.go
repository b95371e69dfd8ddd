package executor

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestRampingVUsSteps(t *testing.T) {
	c := decode(t, "ramping-vus", `{"startVUs": 0, "stages": [{"duration": "10s", "target": 5}, {"duration": "5s", "target": 5}, {"duration": "0s", "target": 8}, {"duration": "4s", "target": 0}]}`).(*RampingVUs)
	tests := []struct {
		at   time.Duration
		want int
	}{
		{0, 0}, {1999 * time.Millisecond, 0}, {2 * time.Second, 1}, {9 * time.Second, 4}, {10 * time.Second, 5},
		{14 * time.Second, 5}, {15 * time.Second, 8}, {15*time.Second + 499*time.Millisecond, 8},
		{15*time.Second + 500*time.Millisecond, 7}, {19 * time.Second, 0}, {time.Hour, 0},
	}
	for _, tc := range tests {
		if got := c.targetAt(tc.at); got != tc.want {
			t.Errorf("at %v: %d VUs, want %d", tc.at, got, tc.want)
		}
	}
	if c.MaxVUs() != 8 {
		t.Errorf("MaxVUs = %d, want 8", c.MaxVUs())
	}
}

// The number of VUs in an iteration follows the stages: sampled every 5ms
// of the bubble's clock, it is within one of what the stages ask for
// around that time.
func TestRampingVUsFollowsTheStages(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := decode(t, "ramping-vus", `{"startVUs": 0, "gracefulRampDown": "1s",
			"stages": [{"duration": "400ms", "target": 8}, {"duration": "300ms", "target": 8}, {"duration": "400ms", "target": 0}]}`).(*RampingVUs)
		f := &flight{work: 5 * time.Millisecond}
		pool := fixed(f.vus(cfg.MaxVUs()))

		type sample struct {
			at time.Duration
			n  int
		}
		var samples []sample
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			if err := cfg.NewExecutor(0).Run(t.Context(), pool); err != nil {
				t.Error(err)
			}
		}()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
	sampling:
		for {
			select {
			case <-done:
				break sampling
			case <-tick.C:
				synctest.Wait()
				samples = append(samples, sample{time.Since(start), int(f.inFlight.Load())})
			}
		}
		if el := time.Since(start); el < 1100*time.Millisecond || el > 1105*time.Millisecond {
			t.Errorf("ran %v, want the stages' 1.1s and the last 5ms iteration", el)
		}
		for _, s := range samples {
			lo, hi := cfg.targetAt(s.at-5*time.Millisecond), cfg.targetAt(s.at)
			lo, hi = min(lo, hi), max(lo, hi)
			if s.n < lo-1 || s.n > hi+1 {
				t.Errorf("%d VUs in an iteration at %v, want %d to %d", s.n, s.at, lo, hi)
			}
		}
		if f.peak.Load() > 8 {
			t.Errorf("%d VUs in an iteration at once, above the largest target 8", f.peak.Load())
		}
		if started, finished := f.started.Load(), f.done.Load(); started != finished || started < 100 {
			t.Errorf("started %d, finished %d: want many iterations, none interrupted (gracefulRampDown 1s)", started, finished)
		}
	})
}

// VUs ramped down finish their iteration within gracefulRampDown, then it
// is cut; one ramped up again before that goes on undisturbed.
func TestGracefulRampDown(t *testing.T) {
	t.Parallel()
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			cfg := decode(t, "ramping-vus", `{"startVUs": 4, "gracefulRampDown": "50ms", "gracefulStop": "50ms",
				"stages": [{"duration": "100ms", "target": 4}, {"duration": "0s", "target": 1}, {"duration": "300ms", "target": 1}]}`)
			f := &flight{work: time.Hour}
			start := time.Now()
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := cfg.NewExecutor(0).Run(t.Context(), fixed(f.vus(4))); err != nil {
					t.Error(err)
				}
			}()
			time.Sleep(150*time.Millisecond - time.Nanosecond)
			synctest.Wait()
			if n := f.inFlight.Load(); n != 4 {
				t.Errorf("%d iterations in flight just before 100ms + gracefulRampDown 50ms, want 4", n)
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			if n := f.inFlight.Load(); n != 1 {
				t.Errorf("%d iterations in flight at 100ms + gracefulRampDown 50ms, want the 3 ramped down cut", n)
			}
			<-done
			if el := time.Since(start); el != 450*time.Millisecond {
				t.Errorf("Run took %v, want 400ms + gracefulStop 50ms", el)
			}
			if started, finished := f.started.Load(), f.done.Load(); started != 4 || finished != 0 {
				t.Errorf("started %d, finished %d: want 4 iterations, all cut", started, finished)
			}
		})
	})
	t.Run("ramped up again", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			cfg := decode(t, "ramping-vus", `{"startVUs": 2, "gracefulRampDown": "400ms", "gracefulStop": "10ms",
				"stages": [{"duration": "0s", "target": 1}, {"duration": "50ms", "target": 1}, {"duration": "0s", "target": 2}, {"duration": "550ms", "target": 2}]}`)
			f := &flight{work: time.Hour}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := cfg.NewExecutor(0).Run(t.Context(), fixed(f.vus(2))); err != nil {
					t.Error(err)
				}
			}()
			time.Sleep(500 * time.Millisecond)
			synctest.Wait()
			if n := f.inFlight.Load(); n != 2 {
				t.Errorf("%d iterations in flight at 500ms, want 2: the VU ramped up again kept its iteration", n)
			}
			<-done
			if started := f.started.Load(); started != 2 {
				t.Errorf("started %d iterations, want 2", started)
			}
		})
	})
}
