package health

import (
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDelaysFromHistogramDifference(t *testing.T) {
	buckets := []float64{0, 0.001, 0.002, 0.010, 0.100}
	start := &metrics.Float64Histogram{Counts: []uint64{5, 5, 0, 0}, Buckets: buckets}
	end := &metrics.Float64Histogram{Counts: []uint64{5 + 980, 5 + 10, 5, 5}, Buckets: buckets}
	p99, maxDelay := delays(start, end)
	// 1000 new waits: 980 under 1 ms, 10 under 2 ms, 5 under 10 ms, 5 under 100 ms.
	if p99 != 2 || maxDelay != 100 {
		t.Fatalf("p99 %g max %g, want 2 and 100 (ms)", p99, maxDelay)
	}
	if p, m := delays(start, start); p != 0 || m != 0 {
		t.Errorf("no new waits: %g %g", p, m)
	}
}

// The warnings follow the measurement: a busy process and long scheduling
// delays are each reported, a healthy one is not.
func TestJudge(t *testing.T) {
	tests := []struct {
		r    Report
		want []string
	}{
		{Report{CPU: 0.95, Procs: 2}, []string{"used 95 % of its 2 CPUs"}},
		{Report{CPU: 0.5, Procs: 2, SchedDelayP99: 12}, []string{"waited up to 12.0 ms (p99)"}},
		{Report{CPU: 0.9, Procs: 8, SchedDelayP99: 6}, []string{"used 90 % of its 8 CPUs", "waited up to 6.0 ms"}},
		{Report{CPU: 0.5, Procs: 2, SchedDelayP99: 1}, nil},
		{Report{CPU: -1, Procs: 2}, nil},
	}
	for _, tc := range tests {
		r := tc.r
		r.judge()
		if len(r.Warnings) != len(tc.want) {
			t.Errorf("%+v: warnings %q, want %d", tc.r, r.Warnings, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(r.Warnings[i], w) {
				t.Errorf("%+v: warning %q, want it to contain %q", tc.r, r.Warnings[i], w)
			}
		}
	}
}

// A process that spins measures CPU time: the reading is positive. (How
// much depends on what else the machine runs, so the share is not
// asserted; TestJudge covers what a share leads to.)
func TestBusyProcessIsMeasured(t *testing.T) {
	p := Start()
	var wg sync.WaitGroup
	deadline := time.Now().Add(200 * time.Millisecond)
	for range 2 * p.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := 0; time.Now().Before(deadline); x++ {
				_ = x * x
			}
		}()
	}
	wg.Wait()
	if r := p.Stop(); r.CPU <= 0 || r.CPU > 1.5 {
		t.Errorf("CPU %.2f after spinning", r.CPU)
	}
}

func TestIdleProcessIsHealthy(t *testing.T) {
	p := Start()
	time.Sleep(100 * time.Millisecond)
	r := p.Stop()
	if r.CPU > 0.5 || r.Procs < 1 {
		t.Errorf("an idle process: %+v", r)
	}
}
