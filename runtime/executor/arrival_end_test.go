package executor

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// startLog is a VU that records when each of its iterations started, in
// the bubble's time, and works for work.
type startLog struct {
	work   time.Duration
	starts *[]time.Duration
	origin time.Time
}

func (v *startLog) RunIteration(ctx context.Context) {
	*v.starts = append(*v.starts, time.Since(v.origin))
	t := time.NewTimer(v.work)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// runInBubble runs cfg on pool in the bubble, and returns how long Run took in that clock.
func runInBubble(t *testing.T, cfg Config, pool Pool) time.Duration {
	t.Helper()
	start := time.Now()
	if err := cfg.NewExecutor(1).Run(t.Context(), pool); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return time.Since(start)
}

// A rate far beyond what the VUs can serve ends with the scenario: the
// starts it could not make are counted as dropped, all of them, without
// the loop waking once for each.
func TestArrivalRateFallingBehindEndsOnTime(t *testing.T) {
	tests := []struct {
		name, js string
		cause    DropCause // of every drop
	}{
		{"constant-arrival-rate", `{"rate": 1000000, "duration": "1h", "preAllocatedVUs": 1, "gracefulStop": "0s"}`, DropBusy},
		{"ramping-arrival-rate", `{"startRate": 1000000, "stages": [{"duration": "1h", "target": 1000000}], "preAllocatedVUs": 1, "gracefulStop": "0s"}`, DropBusy},
		{"constant-arrival-rate", `{"rate": 1000000, "duration": "1h", "preAllocatedVUs": 1, "maxConcurrency": 1, "gracefulStop": "0s"}`, DropCapped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := decode(t, tc.name, tc.js)
				var starts []time.Duration
				vu := &startLog{work: 10 * time.Minute, starts: &starts, origin: time.Now()}
				pool := fixed([]VU{vu})
				el := runInBubble(t, cfg, pool)
				if el != time.Hour {
					t.Errorf("Run took %v, want the scenario's 1h (gracefulStop 0s)", el)
				}
				if len(starts) != 6 {
					t.Errorf("started %d iterations, want 6 (one VU busy 10 min each, for 1 h)", len(starts))
				}
				if got, want := int64(len(starts))+pool.dropped.Load(), int64(3_600_000_000); got != want {
					t.Errorf("started %d + dropped %d = %d, want every planned start (%d) accounted for", len(starts), pool.dropped.Load(), got, want)
				}
				if got := pool.byCause[tc.cause].Load(); got != pool.dropped.Load() {
					t.Errorf("%d of %d drops counted for cause %d, want all", got, pool.dropped.Load(), tc.cause)
				}
			})
		})
	}
}

// An iteration whose VU is still initialising at the scenario's end is
// dropped, not started after the end.
func TestArrivalRateStartsNoIterationAfterTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := decode(t, "constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 0, "maxVUs": 1}`)
		var starts []time.Duration
		origin := time.Now()
		pool := &testPool{initDelay: 2 * time.Second, mk: func() VU { return &startLog{starts: &starts, origin: origin} }}
		el := runInBubble(t, cfg, pool)
		if len(starts) != 0 {
			t.Errorf("iterations started at %v, after the scenario's end at 1s", starts)
		}
		if pool.dropped.Load() != 1 || pool.byCause[DropLateVU].Load() != 1 {
			t.Errorf("dropped %d iterations (%d for a VU ready late), want the 1 whose VU was ready only after the end", pool.dropped.Load(), pool.byCause[DropLateVU].Load())
		}
		if el > 3*time.Second {
			t.Errorf("Run took %v", el)
		}
	})
}

// With iterations, a constant-arrival-rate starts exactly that many, none
// dropped: at maxConcurrency an arrival waits for a slot, and the scenario
// ends once the last iteration ended, long before its duration.
func TestConstantArrivalRateIterations(t *testing.T) {
	tests := []struct {
		js       string
		peak     int64
		lastsFor time.Duration // what Run takes in the bubble's clock, at most
	}{
		// 25 arrivals over about 2.5 s, each busy 100 ms.
		{`{"rate": 10, "iterations": 25, "duration": "1h", "preAllocatedVUs": 25, "arrival": "gamma", "burstiness": 0.5}`, 25, time.Minute},
		// 2 in flight, each busy 1 s: the 25 take 13 s; the arrivals wait.
		{`{"rate": 100, "iterations": 25, "duration": "1h", "preAllocatedVUs": 2, "maxConcurrency": 2, "arrival": "poisson"}`, 2, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.js, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := decode(t, "constant-arrival-rate", tc.js)
				f := &flight{work: 100 * time.Millisecond}
				if tc.peak == 2 {
					f.work = time.Second
				}
				pool := fixed(f.vus(cfg.PreAllocatedVUs()))
				el := runInBubble(t, cfg, pool)
				if got := f.started.Load(); got != 25 || pool.dropped.Load() != 0 {
					t.Errorf("started %d, dropped %d; want exactly 25 started, none dropped", got, pool.dropped.Load())
				}
				if got := f.peak.Load(); got > tc.peak {
					t.Errorf("%d iterations in flight at once, want at most %d", got, tc.peak)
				}
				if el > tc.lastsFor {
					t.Errorf("Run took %v, want the scenario to end with its last iteration (within %v)", el, tc.lastsFor)
				}
				if p := cfg.Plan(); p.Iterations != 25 {
					t.Errorf("plan %+v, want its 25 iterations", p)
				}
			})
		})
	}
}

// With normalize, the N arrivals of iterations are vLLM's: the last
// starts at exactly N / rate, the first one gap after the start, and the
// gaps are those the same seed draws without normalize, each scaled by
// one factor.
func TestConstantArrivalRateNormalize(t *testing.T) {
	const common = `"rate": 20, "timeUnit": "2s", "iterations": 50, "duration": "1h", "preAllocatedVUs": 1`
	for _, process := range []string{`"arrival": "poisson"`, `"arrival": "gamma", "burstiness": 0.3`, `"arrival": "constant"`} {
		t.Run(process, func(t *testing.T) {
			var normalized []time.Duration
			synctest.Test(t, func(t *testing.T) {
				cfg := decode(t, "constant-arrival-rate", `{`+common+`, `+process+`, "normalize": true}`)
				// One VU, whose iterations take no time: each arrival finds it free.
				runInBubble(t, cfg, fixed([]VU{&startLog{starts: &normalized, origin: time.Now()}}))
			})
			if len(normalized) != 50 {
				t.Fatalf("%d iterations started, want 50", len(normalized))
			}
			// 50 arrivals at 20 per 2 s: the last at exactly 5 s.
			if last := normalized[49]; last != 5*time.Second {
				t.Errorf("the last of 50 arrivals started at %v, want exactly 50 / rate = 5s", last)
			}
			if normalized[0] <= 0 {
				t.Errorf("the first arrival started at %v, want one gap after the start, as vLLM's", normalized[0])
			}
			// The same seed without normalize starts at 0, then draws the
			// same gaps: the normalized starts are their sums, times one
			// factor (within the nanosecond each planned start is rounded
			// to).
			raw := schedule(t, "constant-arrival-rate", `{`+common+`, `+process+`}`, 1)
			factor := float64(normalized[49]) / float64(raw[50])
			for i, start := range normalized {
				want := float64(raw[i+1]) * factor
				if got := float64(start); math.Abs(got-want) > factor+1 {
					t.Fatalf("arrival %d at %v, want the unnormalized %v × %.6f = %v", i, start, raw[i+1], factor, time.Duration(want))
				}
			}
		})
	}
}

func TestNormalizeNeedsIterations(t *testing.T) {
	cfg := &ConstantArrivalRate{}
	err := decodeStrictForTest(`{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "normalize": true}`, cfg)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "normalize needs iterations") {
		t.Fatalf("got %v, want normalize refused without iterations", err)
	}
	// A last start past the longest duration is refused, not described
	// as an overflowed "the last at -2562047h47m16.854775808s".
	cfg = &ConstantArrivalRate{}
	err = decodeStrictForTest(`{"rate": 10, "duration": "8760h", "preAllocatedVUs": 1, "iterations": 1000000000000, "normalize": true}`, cfg)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "the last of 1000000000000 iterations at 10 per second would start at iterations / rate, after llmrun's limit of 8760h0m0s") {
		t.Fatalf("got %v (%s), want the last start refused", err, cfg.Describe())
	}
}

// Iterations planned beyond the duration (more than rate × duration, or a
// normalized schedule whose last start falls after the end) are counted
// as dropped for DropUnscheduled, not forgotten: started plus dropped is
// the iterations asked for, and the scenario ends with those started.
func TestConstantArrivalRateIterationsBeyondTheDuration(t *testing.T) {
	for _, js := range []string{
		`{"rate": 10, "iterations": 100, "duration": "5s", "preAllocatedVUs": 1, "arrival": "poisson", "normalize": true}`,
		`{"rate": 10, "iterations": 100, "duration": "5s", "preAllocatedVUs": 1}`,
	} {
		t.Run(js, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := decode(t, "constant-arrival-rate", js)
				var starts []time.Duration
				pool := fixed([]VU{&startLog{starts: &starts, origin: time.Now()}})
				el := runInBubble(t, cfg, pool)
				if len(starts) == 0 || len(starts) >= 100 {
					t.Fatalf("%d iterations started, want some but not all of 100 within 5 s at 10/s", len(starts))
				}
				if got := int64(len(starts)) + pool.dropped.Load(); got != 100 {
					t.Errorf("started %d + dropped %d = %d, want the 100 iterations accounted for", len(starts), pool.dropped.Load(), got)
				}
				if got := pool.byCause[DropUnscheduled].Load(); got != pool.dropped.Load() {
					t.Errorf("%d of %d drops counted as unscheduled, want all", got, pool.dropped.Load())
				}
				if el > 5*time.Second+30*time.Second {
					t.Errorf("Run took %v, want the 5 s duration and its graceful stop at most", el)
				}
			})
		})
	}
}

// A normalized schedule draws its gaps up front, a second per hundred
// million or so: a signal then stops the drawing, and the scenario ends
// without starting an iteration.
func TestNormalizedScheduleStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := decode(t, "constant-arrival-rate", `{"rate": 1000, "iterations": 2000000000, "duration": "8760h", "preAllocatedVUs": 1, "arrival": "poisson", "normalize": true}`).(*ConstantArrivalRate)
	if s, err := cfg.schedule(ctx, 1); err != context.Canceled || s != nil {
		t.Fatalf("schedule with a canceled context: %v, %v; want context.Canceled before the 2e9 gaps are drawn", s, err)
	}
	var starts []time.Duration
	pool := fixed([]VU{&startLog{starts: &starts, origin: time.Now()}})
	if err := cfg.NewExecutor(1).Run(ctx, pool); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(starts) != 0 || pool.dropped.Load() != 0 {
		t.Errorf("started %d, dropped %d after the signal; want none", len(starts), pool.dropped.Load())
	}
}
