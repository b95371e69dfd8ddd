package executor

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/runtime/executor/segment"
)

// startsVU records when each of its iterations starts, from origin, in a
// log it shares with other VUs; each iteration lasts work.
type startsVU struct {
	work time.Duration
	log  *startsLog
}

type startsLog struct {
	origin time.Time
	mu     sync.Mutex
	starts []time.Duration
}

func (v *startsVU) RunIteration(ctx context.Context) {
	v.log.mu.Lock()
	v.log.starts = append(v.log.starts, time.Since(v.log.origin))
	v.log.mu.Unlock()
	t := time.NewTimer(v.work)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// runStarts runs cfg in a synctest bubble with the VUs it preallocates
// (and more on demand) and returns the sorted starts of its iterations
// and the number of iterations dropped.
func runStarts(t *testing.T, cfg Config, work time.Duration) (starts []time.Duration, dropped int64) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		log := &startsLog{origin: time.Now()}
		mk := func() VU { return &startsVU{work: work, log: log} }
		pre := make([]VU, cfg.PreAllocatedVUs())
		for i := range pre {
			pre[i] = mk()
		}
		pool := &testPool{pre: pre, mk: mk}
		if err := cfg.NewExecutor(7).Run(t.Context(), pool); err != nil {
			t.Fatalf("Run: %v", err)
		}
		starts, dropped = log.starts, pool.dropped.Load()
	})
	slices.Sort(starts)
	return starts, dropped
}

func parts(t *testing.T, text string) []segment.Part {
	t.Helper()
	seq, err := segment.ParseSequence(text)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]segment.Part, len(seq))
	for i, s := range seq {
		if out[i], err = segment.NewPart(seq, s); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestSegmentsAddUpToTheWholePlan runs every segment of a sequence for
// every executor: together they run the whole plan's iterations, at the
// whole plan's start times (for the arrival rates, the very same planned
// starts), with its VUs.
func TestSegmentsAddUpToTheWholePlan(t *testing.T) {
	tests := []struct {
		name, js string
		work     time.Duration
	}{
		{"constant-vus", `{"vus": 10, "duration": "10s"}`, 300 * time.Millisecond},
		{"ramping-vus", `{"startVUs": 2, "stages": [{"duration": "5s", "target": 11}, {"duration": "3s", "target": 11}, {"duration": "4s", "target": 1}], "gracefulRampDown": "0s"}`, 700 * time.Millisecond},
		{"shared-iterations", `{"vus": 7, "iterations": 100}`, 100 * time.Millisecond},
		{"per-vu-iterations", `{"vus": 7, "iterations": 13}`, 100 * time.Millisecond},
		{"constant-arrival-rate", `{"rate": 37, "duration": "10s", "preAllocatedVUs": 10}`, 50 * time.Millisecond},
		{"constant-arrival-rate", `{"rate": 20, "timeUnit": "1s", "duration": "10s", "preAllocatedVUs": 10, "arrival": "poisson"}`, 50 * time.Millisecond},
		{"constant-arrival-rate", `{"rate": 20, "duration": "30s", "preAllocatedVUs": 10, "arrival": "gamma", "burstiness": 0.5, "iterations": 101, "normalize": true}`, 50 * time.Millisecond},
		{"constant-arrival-rate", `{"rate": 20, "duration": "30s", "preAllocatedVUs": 10, "iterations": 77}`, 50 * time.Millisecond},
		{"constant-arrival-rate", `{"rate": 30, "duration": "5s", "preAllocatedVUs": 10, "maxConcurrency": 6}`, 50 * time.Millisecond},
		{"ramping-arrival-rate", `{"startRate": 0, "stages": [{"duration": "10s", "target": 50}, {"duration": "5s", "target": 5}], "preAllocatedVUs": 10, "arrival": "poisson"}`, 10 * time.Millisecond},
	}
	for _, tc := range tests {
		for _, seq := range []string{"0,1/3,2/3,1", "0,1/3,1/2,1", "0,1/10,1/4,3/5,1"} {
			t.Run(tc.name+" "+seq, func(t *testing.T) {
				whole := decode(t, tc.name, tc.js)
				want, wantDropped := runStarts(t, whole, tc.work)
				if len(want) == 0 || wantDropped != 0 {
					t.Fatalf("the whole plan started %d iterations and dropped %d", len(want), wantDropped)
				}
				var got []time.Duration
				var maxVUs, preVUs int
				var planned int64
				for _, p := range parts(t, seq) {
					cfg := whole.Segment(p)
					starts, dropped := runStarts(t, cfg, tc.work)
					if dropped != 0 {
						t.Errorf("segment %s dropped %d iterations", p.Segment(), dropped)
					}
					got = append(got, starts...)
					maxVUs += cfg.MaxVUs()
					preVUs += cfg.PreAllocatedVUs()
					planned += cfg.Plan().Iterations
				}
				slices.Sort(got)
				if tc.name == "shared-iterations" {
					// Which VU runs which iteration, and so when, depends
					// on how many VUs share them: only the count adds up.
					if len(got) != len(want) {
						t.Errorf("the segments started %d iterations, the whole plan %d", len(got), len(want))
					}
				} else if !slices.Equal(got, want) {
					t.Errorf("the segments started %d iterations, the whole plan %d; first starts %v, want %v", len(got), len(want), got[:min(8, len(got))], want[:min(8, len(want))])
				}
				if planned != whole.Plan().Iterations {
					t.Errorf("the segments plan %d iterations, the whole plan %d", planned, whole.Plan().Iterations)
				}
				if _, arrival := whole.(ConcurrencyCapped); !arrival && (maxVUs != whole.MaxVUs() || preVUs != whole.PreAllocatedVUs()) {
					t.Errorf("the segments have %d VUs (%d preallocated), the whole plan %d (%d)", maxVUs, preVUs, whole.MaxVUs(), whole.PreAllocatedVUs())
				}
			})
		}
	}
}

// TestRampingVUsSegmentsFollowTheWholeRamp: at every moment the segments'
// active VUs add up to the whole plan's.
func TestRampingVUsSegmentsFollowTheWholeRamp(t *testing.T) {
	whole := decode(t, "ramping-vus", `{"startVUs": 3, "stages": [{"duration": "10s", "target": 17}, {"duration": "0s", "target": 4}, {"duration": "7s", "target": 9}]}`).(*RampingVUs)
	ps := parts(t, "0,1/3,1/2,1")
	for at := time.Duration(0); at <= 18*time.Second; at += 50 * time.Millisecond {
		sum := 0
		for _, p := range ps {
			sum += whole.Segment(p).(*RampingVUs).targetAt(at)
		}
		if want := whole.targetAt(at); sum != want {
			t.Fatalf("at %s the segments run %d VUs, the whole plan %d", at, sum, want)
		}
	}
}

// A segment's share of a plan with fewer VUs than segments still runs its
// iterations: every iteration of the whole plan runs.
func TestSharedIterationsSegmentWithoutAVU(t *testing.T) {
	whole := decode(t, "shared-iterations", `{"vus": 1, "iterations": 10}`)
	total := 0
	for _, p := range parts(t, "0,1/3,2/3,1") {
		cfg := whole.Segment(p).(*SharedIterations)
		if cfg.VUs < 1 {
			t.Errorf("segment %s has %d VUs for %d iterations", p.Segment(), cfg.VUs, cfg.Iterations)
		}
		total += cfg.Iterations
	}
	if total != 10 {
		t.Errorf("the segments run %d iterations, want 10", total)
	}
}
