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

// A process that keeps every CPU busy is reported as saturated.
func TestBusyProcessIsReported(t *testing.T) {
	p := Start()
	procs := p.procs
	var wg sync.WaitGroup
	deadline := time.Now().Add(300 * time.Millisecond)
	for range 4 * procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := 0; time.Now().Before(deadline); x++ {
				_ = x * x
			}
		}()
	}
	wg.Wait()
	r := p.Stop()
	if r.CPU >= 0 && r.CPU < 0.5 {
		t.Errorf("CPU %.2f while every CPU spun", r.CPU)
	}
	if len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, " "), "CPU") {
		t.Errorf("no warning for a saturated process: %+v", r)
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
