package executor

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// runArrivals runs an arrival-rate configuration on pool, in a bubble
// whose clock only moves when every goroutine waits (so that the load on
// the machine cannot make an iteration late), and returns how long Run
// took in that clock.
func runArrivals(t *testing.T, name, js string, pool *testPool) time.Duration {
	t.Helper()
	cfg := decode(t, name, js)
	var el time.Duration
	synctest.Test(t, func(t *testing.T) { el = runInBubble(t, cfg, pool) })
	return el
}

func TestConstantArrivalRateStartsRateTimesDuration(t *testing.T) {
	t.Parallel()
	f := &flight{work: time.Millisecond}
	pool := fixed(f.vus(5))
	el := runArrivals(t, "constant-arrival-rate", `{"rate": 50, "duration": "2s", "preAllocatedVUs": 5}`, pool)

	started := f.started.Load()
	if started != 100 {
		t.Errorf("started %d iterations, want 50/s × 2s = 100", started)
	}
	lags, warns := pool.recorded()
	if int64(len(lags)) != started {
		t.Errorf("%d iteration_lag samples for %d iterations", len(lags), started)
	}
	if slices.Min(lags) < 0 {
		t.Errorf("an iteration started %v before its planned start", -slices.Min(lags))
	}
	if pool.dropped.Load() != 0 || len(warns) != 0 || pool.created.Load() != 0 {
		t.Errorf("dropped %d, warnings %q, VUs created %d: want none", pool.dropped.Load(), warns, pool.created.Load())
	}
	// The last start is planned at 1.98s; Run waits for it.
	if el < 1980*time.Millisecond {
		t.Errorf("Run returned after %v, before the last planned start", el)
	}
}

func TestRampingArrivalRateStartsTheAreaUnderTheRate(t *testing.T) {
	t.Parallel()
	f := &flight{work: time.Millisecond}
	pool := fixed(f.vus(4))
	// 0 → 100/s over 1s: 50 iterations, more and more often.
	runArrivals(t, "ramping-arrival-rate", `{"startRate": 0, "stages": [{"duration": "1s", "target": 100}], "preAllocatedVUs": 4}`, pool)
	if started := f.started.Load(); started != 50 {
		t.Errorf("started %d iterations, want 50", started)
	}
	if pool.dropped.Load() != 0 {
		t.Errorf("dropped %d iterations", pool.dropped.Load())
	}
}

func TestArrivalRateDropsIterationsWhenEveryVUIsBusy(t *testing.T) {
	t.Parallel()
	f := &flight{work: 100 * time.Millisecond}
	pool := fixed(f.vus(2))
	// 50 planned starts in 500ms; 2 VUs busy 100ms per iteration run at
	// most about 12 of them.
	runArrivals(t, "constant-arrival-rate", `{"rate": 100, "duration": "500ms", "preAllocatedVUs": 2}`, pool)

	started, dropped := f.started.Load(), pool.dropped.Load()
	if started+dropped != 50 {
		t.Errorf("started %d + dropped %d = %d, want every planned start accounted for (50)", started, dropped, started+dropped)
	}
	if dropped < 30 {
		t.Errorf("dropped %d iterations, want most of the 50", dropped)
	}
	if f.peak.Load() > 2 {
		t.Errorf("%d iterations in flight on 2 VUs", f.peak.Load())
	}
	_, warns := pool.recorded()
	if len(warns) != 1 {
		t.Fatalf("warnings %q, want exactly one", warns)
	}
	for _, want := range []string{"dropped_iterations", "preAllocatedVUs", "maxVUs"} {
		if !strings.Contains(warns[0], want) {
			t.Errorf("warning %q does not mention %s", warns[0], want)
		}
	}
}

func TestArrivalRateInitialisesVUsUpToMaxVUs(t *testing.T) {
	t.Parallel()
	t.Run("enough", func(t *testing.T) {
		t.Parallel()
		// 100/s of 50ms iterations need about 5 VUs; 1 is preallocated.
		f := &flight{work: 50 * time.Millisecond}
		pool := &testPool{pre: f.vus(1), mk: f.vu, initDelay: 5 * time.Millisecond}
		runArrivals(t, "constant-arrival-rate", `{"rate": 100, "duration": "500ms", "preAllocatedVUs": 1, "maxVUs": 40}`, pool)
		created := pool.created.Load()
		if created < 4 || created > 39 {
			t.Errorf("initialised %d VUs, want at least 4 (to run 5 at once) and at most 39", created)
		}
		if pool.dropped.Load() != 0 || f.started.Load() != 50 {
			t.Errorf("started %d, dropped %d: want all 50 started", f.started.Load(), pool.dropped.Load())
		}
		// An iteration that waited for its VU's init started that late.
		if lags, _ := pool.recorded(); slices.Max(lags) < 5*time.Millisecond {
			t.Errorf("largest lag %v, want at least the 5ms init of a new VU", slices.Max(lags))
		}
	})
	t.Run("capped", func(t *testing.T) {
		t.Parallel()
		// 200ms iterations at 100/s need 20 VUs; maxVUs is 5.
		f := &flight{work: 200 * time.Millisecond}
		pool := &testPool{pre: f.vus(1), mk: f.vu, initDelay: time.Millisecond}
		runArrivals(t, "constant-arrival-rate", `{"rate": 100, "duration": "500ms", "preAllocatedVUs": 1, "maxVUs": 5}`, pool)
		if created := pool.created.Load(); created != 4 {
			t.Errorf("initialised %d VUs, want maxVUs − preAllocatedVUs = 4", created)
		}
		if f.peak.Load() > 5 {
			t.Errorf("%d iterations in flight, above maxVUs 5", f.peak.Load())
		}
		started, dropped := f.started.Load(), pool.dropped.Load()
		if dropped == 0 || started+dropped != 50 {
			t.Errorf("started %d, dropped %d: want drops, and 50 in all", started, dropped)
		}
		if _, warns := pool.recorded(); len(warns) != 1 {
			t.Errorf("warnings %q, want one", warns)
		}
	})
}

func TestMaxConcurrencyCapsIterationsInFlight(t *testing.T) {
	t.Parallel()
	// 200/s of 20ms iterations need 4 at once; the cap is 3, so arrivals
	// wait (their lag grows) instead of being dropped.
	f := &flight{work: 20 * time.Millisecond}
	pool := &testPool{pre: f.vus(3), mk: f.vu}
	runArrivals(t, "constant-arrival-rate", `{"rate": 200, "duration": "500ms", "preAllocatedVUs": 3, "maxVUs": 10, "maxConcurrency": 3, "arrival": "poisson"}`, pool)

	if peak := f.peak.Load(); peak > 3 {
		t.Errorf("%d iterations in flight, above maxConcurrency 3", peak)
	}
	started, dropped := f.started.Load(), pool.dropped.Load()
	total := int64(len(schedule(t, "constant-arrival-rate", `{"rate": 200, "duration": "500ms", "preAllocatedVUs": 3, "maxVUs": 10, "maxConcurrency": 3, "arrival": "poisson"}`, 1)))
	if started+dropped != total {
		t.Errorf("started %d + dropped %d, want the %d planned starts (those still waiting at the end are dropped)", started, dropped, total)
	}
	lags, warns := pool.recorded()
	if len(warns) != 0 || pool.created.Load() != 0 {
		t.Errorf("warnings %q, VUs created %d: waiting for the cap is neither a drop nor a reason for new VUs", warns, pool.created.Load())
	}
	if slices.Max(lags) < 50*time.Millisecond {
		t.Errorf("largest lag %v: arrivals held by the cap should have waited far longer", slices.Max(lags))
	}
}

func TestArrivalRateValidationNamesTheField(t *testing.T) {
	tests := []struct{ name, js, want string }{
		{"constant-arrival-rate", `{"duration": "1s", "preAllocatedVUs": 1}`, "rate"},
		{"constant-arrival-rate", `{"rate": 1, "preAllocatedVUs": 1}`, "duration"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s"}`, "preAllocatedVUs is required"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 5, "maxVUs": 2}`, "maxVUs (2) must not be less than preAllocatedVUs (5)"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 0}`, "maxVUs must be at least 1"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "timeUnit": "0s"}`, "timeUnit"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "arrival": "bursty"}`, "arrival must be"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "arrival": "gamma"}`, "burstiness is required"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "burstiness": 0.5}`, "burstiness applies only"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "arrival": "gamma", "burstiness": 0}`, "burstiness must be a positive"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "maxConcurrency": 0}`, "maxConcurrency must be at least 1"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "iterations": 0}`, "iterations must be at least 1"},
		{"constant-arrival-rate", `{"rate": 1, "duration": "1s", "preAllocatedVUs": 1, "maxVUs": 2, "maxConcurrency": 4}`, "maxConcurrency (4) is more than maxVUs (2)"},
		{"ramping-arrival-rate", `{"preAllocatedVUs": 1}`, "stages is required"},
		{"ramping-arrival-rate", `{"preAllocatedVUs": 1, "stages": [{"duration": "1s"}]}`, "stages[0].target is required"},
		{"ramping-arrival-rate", `{"preAllocatedVUs": 1, "stages": [{"target": 3}]}`, "stages[0].duration is required"},
		{"ramping-arrival-rate", `{"preAllocatedVUs": 1, "stages": [{"duration": "1s", "target": -3}]}`, "stages[0].target must be a non-negative"},
		{"ramping-arrival-rate", `{"preAllocatedVUs": 1, "startRate": -1, "stages": [{"duration": "1s", "target": 3}]}`, "startRate"},
		{"ramping-arrival-rate", `{"preAllocatedVUs": 1, "stages": [{"duration": "1s", "target": 0}]}`, "never start an iteration"},
		{"ramping-vus", `{"stages": []}`, "stages is required"},
		{"ramping-vus", `{"startVUs": -1, "stages": [{"duration": "1s", "target": 3}]}`, "startVUs"},
		{"ramping-vus", `{"stages": [{"duration": "1s", "target": 2.5}]}`, "stages[0].target must be a whole number"},
		{"ramping-vus", `{"stages": [{"duration": "-1s", "target": 2}]}`, "stages[0].duration must not be negative"},
		{"ramping-vus", `{"stages": [{"duration": "0s", "target": 2}]}`, "longer than 0s"},
		{"ramping-vus", `{"startVUs": 0, "stages": [{"duration": "1s", "target": 0}]}`, "never run a VU"},
		{"ramping-vus", `{"stages": [{"duration": "1s", "target": 2}], "gracefulRampDown": "-1s"}`, "gracefulRampDown"},
	}
	for _, tc := range tests {
		cfg, _ := New(tc.name)
		err := decodeStrictForTest(tc.js, cfg)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: error %v, want one containing %q", tc.name, tc.js, err, tc.want)
		}
	}
}

// Describe counts in words: one iteration, VU or stage is singular, and a
// time unit of a second, minute or hour is named.
func TestDescribeCounts(t *testing.T) {
	for _, tc := range []struct {
		executor, js, want string
	}{
		{"constant-arrival-rate", `{"rate": 1, "duration": "1m", "preAllocatedVUs": 1}`, "1 iteration per second for 1m0s"},
		{"constant-arrival-rate", `{"rate": 1, "timeUnit": "1m", "duration": "1m", "preAllocatedVUs": 1}`, "1 iteration per minute for 1m0s"},
		{"constant-arrival-rate", `{"rate": 90, "timeUnit": "1h", "duration": "1m", "preAllocatedVUs": 1}`, "90 iterations per hour for 1m0s"},
		{"constant-arrival-rate", `{"rate": 2, "timeUnit": "500ms", "duration": "1m", "preAllocatedVUs": 1}`, "2 iterations per 500ms for 1m0s"},
		{"constant-arrival-rate", `{"rate": 0.5, "duration": "1m", "preAllocatedVUs": 1}`, "0.5 iterations per second for 1m0s"},
		{"ramping-arrival-rate", `{"preAllocatedVUs": 1, "stages": [{"duration": "10s", "target": 1}]}`, "from 0 up to 1 iteration per second over 1 stage for 10s"},
		{"ramping-arrival-rate", `{"startRate": 3, "timeUnit": "1m", "preAllocatedVUs": 1, "stages": [{"duration": "10s", "target": 6}, {"duration": "5s", "target": 0}]}`, "from 3 up to 6 iterations per minute over 2 stages for 15s"},
		{"constant-vus", `{"vus": 1, "duration": "10s"}`, "1 looping VU for 10s"},
		{"constant-vus", `{"vus": 2, "duration": "10s"}`, "2 looping VUs for 10s"},
		{"ramping-vus", `{"stages": [{"duration": "10s", "target": 1}]}`, "up to 1 looping VU over 1 stage for 10s, from 1"},
		{"shared-iterations", `{"vus": 1, "iterations": 1}`, "1 iteration shared among 1 VU"},
		{"shared-iterations", `{"vus": 2, "iterations": 3}`, "3 iterations shared among 2 VUs"},
		{"per-vu-iterations", `{"vus": 1, "iterations": 1}`, "1 iteration for each of 1 VU"},
	} {
		if d := decode(t, tc.executor, tc.js).Describe(); !strings.HasPrefix(d, tc.want) {
			t.Errorf("%s %s: Describe = %q, want it to start %q", tc.executor, tc.js, d, tc.want)
		}
	}
}

func TestArrivalRateDefaults(t *testing.T) {
	c := decode(t, "constant-arrival-rate", `{"rate": 5, "duration": "1m", "preAllocatedVUs": 3}`).(*ConstantArrivalRate)
	if c.MaxVUs() != 3 || c.PreAllocatedVUs() != 3 || c.ConcurrencyCap() != 0 || c.unit() != time.Second || c.process() != ArrivalConstant || c.MaxDuration() != time.Minute+DefaultGracefulStop {
		t.Errorf("defaults: maxVUs %d, preAllocated %d, cap %d, timeUnit %v, arrival %s, max duration %v", c.MaxVUs(), c.PreAllocatedVUs(), c.ConcurrencyCap(), c.unit(), c.process(), c.MaxDuration())
	}
	// maxConcurrency above preAllocatedVUs raises the default maxVUs to it.
	c = decode(t, "constant-arrival-rate", `{"rate": 5, "duration": "1m", "preAllocatedVUs": 3, "maxConcurrency": 8}`).(*ConstantArrivalRate)
	if c.MaxVUs() != 8 || c.PreAllocatedVUs() != 3 || c.ConcurrencyCap() != 8 {
		t.Errorf("with maxConcurrency 8: maxVUs %d, preAllocated %d, cap %d; want 8, 3 and 8", c.MaxVUs(), c.PreAllocatedVUs(), c.ConcurrencyCap())
	}
	if d := c.Describe(); !strings.Contains(d, "5 iterations per second for 1m0s") || !strings.Contains(d, "at most 8 in flight") {
		t.Errorf("Describe = %q", d)
	}
	r := decode(t, "ramping-vus", `{"stages": [{"duration": "10s", "target": 4}, {"duration": "5s", "target": 0}]}`).(*RampingVUs)
	if r.StartVUs != 1 || r.rampDown() != DefaultGracefulRampDown || r.MaxVUs() != 4 || r.MaxDuration() != 15*time.Second+DefaultGracefulStop {
		t.Errorf("ramping-vus defaults: startVUs %d, gracefulRampDown %v, maxVUs %d, max duration %v", r.StartVUs, r.rampDown(), r.MaxVUs(), r.MaxDuration())
	}
}
