// Package health watches the load generator itself: whether llmrun's own
// process had the CPU and the scheduling headroom to measure the server
// rather than its own queueing. A goroutine that waits to be scheduled
// after its response bytes arrived adds that wait to every latency it
// measures; the Go scheduler's own latency histogram shows that wait
// directly.
package health

import (
	"fmt"
	"math"
	goruntime "runtime"
	"runtime/metrics"
	"time"
)

// Limits above which a run is reported as limited by the client.
const (
	// MaxCPU is the share of the process's CPUs (GOMAXPROCS) in use.
	MaxCPU = 0.85
	// MaxSchedDelayP99 is the 99th percentile of the time a runnable
	// goroutine waited for a CPU.
	MaxSchedDelayP99 = 5 * time.Millisecond
)

const schedLatencies = "/sched/latencies:seconds"

// Probe measures the process between Start and Stop.
type Probe struct {
	wall  time.Time
	cpu   time.Duration
	sched *metrics.Float64Histogram
	procs int
}

// Report is what a probe saw.
type Report struct {
	// CPU is the process's CPU time over the wall time and GOMAXPROCS
	// (0–1); -1 when the platform does not report it.
	CPU float64 `json:"cpu_utilization"`
	// Procs is GOMAXPROCS.
	Procs int `json:"procs"`
	// SchedDelayP99 and SchedDelayMax are the 99th percentile and the
	// maximum time a runnable goroutine waited for a CPU, in ms (bucket
	// upper bounds of the Go runtime's histogram).
	SchedDelayP99 float64 `json:"sched_delay_p99_ms"`
	SchedDelayMax float64 `json:"sched_delay_max_ms"`
	// Warnings say, in words, how the client may have limited the run.
	Warnings []string `json:"warnings,omitempty"`
}

// Start begins a measurement.
func Start() *Probe {
	return &Probe{wall: time.Now(), cpu: processCPU(), sched: readSched(), procs: goruntime.GOMAXPROCS(0)}
}

// Stop ends the measurement and judges it.
func (p *Probe) Stop() Report {
	wall := time.Since(p.wall)
	r := Report{CPU: -1, Procs: p.procs}
	if cpu := processCPU(); cpu >= 0 && p.cpu >= 0 && wall > 0 {
		r.CPU = float64(cpu-p.cpu) / float64(wall) / float64(p.procs)
	}
	if end := readSched(); end != nil && p.sched != nil {
		r.SchedDelayP99, r.SchedDelayMax = delays(p.sched, end)
	}
	r.judge()
	return r
}

// judge adds the warnings the measurement calls for.
func (r *Report) judge() {
	if r.CPU > MaxCPU {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"llmrun's process used %.0f %% of its %d CPUs: the client, not only the server, may have limited this run and inflated its latencies", 100*r.CPU, r.Procs))
	}
	if p99 := time.Duration(r.SchedDelayP99 * float64(time.Millisecond)); p99 > MaxSchedDelayP99 {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"goroutines waited up to %.1f ms (p99) for a CPU: measured latencies include that client-side wait; run fewer VUs per process or on a bigger machine", r.SchedDelayP99))
	}
}

func readSched() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := s[0].Value.Float64Histogram()
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

// delays returns the p99 and the maximum of the waits recorded between two
// readings of the scheduler's histogram, in milliseconds.
func delays(start, end *metrics.Float64Histogram) (p99, maxDelay float64) {
	var total uint64
	counts := make([]uint64, len(end.Counts))
	for i := range end.Counts {
		counts[i] = end.Counts[i] - start.Counts[i]
		total += counts[i]
	}
	if total == 0 {
		return 0, 0
	}
	upper := func(i int) float64 {
		b := end.Buckets[i+1]
		if math.IsInf(b, 1) {
			b = end.Buckets[i]
		}
		return b * 1000
	}
	target := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	p99 = -1
	for i, c := range counts {
		seen += c
		if p99 < 0 && seen >= target {
			p99 = upper(i)
		}
		if c > 0 {
			maxDelay = upper(i)
		}
	}
	return p99, maxDelay
}
