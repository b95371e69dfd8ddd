package health

import (
	"fmt"
	"math"
	"runtime/metrics"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

// MaxGCShare is the share of llmrun's CPU time its garbage collector may
// take (mark assists, dedicated mark workers and stop-the-world pauses;
// not the idle-time workers, which only use a CPU nothing else wanted)
// before a scheduling delay above MaxSchedDelayP99 is laid at its door.
// While the collector marks, its workers hold a quarter of the CPUs and a
// goroutine that allocates is made to mark in proportion: one that becomes
// runnable then waits behind them. At a tenth of all the CPU time, mark
// phases cover a large share of the run.
const MaxGCShare = 0.10

// GC is what the Go garbage collector did between a probe's Start and
// Stop.
type GC struct {
	// Cycles counts the collections that ended.
	Cycles uint64
	// Share is the collector's CPU time (assists, dedicated workers and
	// pauses) over the process's CPU time as the Go runtime accounts it
	// (0–1). The runtime brings these counters up to date at the end of
	// each cycle, so the share covers the cycles that ended between Start
	// and Stop; 0 when none did.
	Share float64
	// PauseP99 and PauseMax are the 99th percentile and the maximum of its
	// stop-the-world pauses, in ms (bucket upper bounds).
	PauseP99, PauseMax float64
	// Percent is the GOGC in force at Stop: llmrun's own heap goal
	// (runtime/gctune) unless GOGC was set; 0 when unknown or off.
	Percent int
}

// Measured says whether the collector ran at all.
func (g GC) Measured() bool { return g.Cycles > 0 }

// String gives the figures in words.
func (g GC) String() string {
	return fmt.Sprintf("garbage collection %.0f %% of llmrun's CPU in %s, pauses p99 %.2f ms (max %.2f ms)", 100*g.Share, textfmt.Count(g.Cycles, "cycle"), g.PauseP99, g.PauseMax)
}

// The runtime/metrics names a gcReading reads, in gcReading.samples order.
var gcMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/cpu/classes/gc/mark/dedicated:cpu-seconds",
	"/cpu/classes/gc/pause:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/cpu/classes/idle:cpu-seconds",
	"/sched/pauses/total/gc:seconds",
	"/gc/gogc:percent",
}

// gcReading is one reading of the collector's cumulative counters; two
// bound a measurement.
type gcReading struct {
	cycles uint64
	// gcCPU is the collector's CPU time that displaces goroutines, busy
	// the process's CPU time less its idle time, in seconds.
	gcCPU, busy float64
	pauses      *metrics.Float64Histogram
	// percent is the GOGC in force; 0 when unknown or off.
	percent int
}

// readGC reads the counters; ok is false when this Go runtime lacks one.
func readGC() (r gcReading, ok bool) {
	s := make([]metrics.Sample, len(gcMetrics))
	for i, name := range gcMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	for _, x := range s[:6] {
		if x.Value.Kind() == metrics.KindBad {
			return r, false
		}
	}
	if s[6].Value.Kind() != metrics.KindFloat64Histogram {
		return r, false
	}
	h := s[6].Value.Float64Histogram()
	percent := 0
	// GOGC=off reads as the largest uint64.
	if v := s[7].Value; v.Kind() == metrics.KindUint64 && v.Uint64() <= math.MaxInt32 {
		percent = int(v.Uint64())
	}
	return gcReading{
		percent: percent,
		cycles:  s[0].Value.Uint64(),
		gcCPU:   s[1].Value.Float64() + s[2].Value.Float64() + s[3].Value.Float64(),
		busy:    s[4].Value.Float64() - s[5].Value.Float64(),
		pauses:  &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets},
	}, true
}

// measureGC is what the collector did between two readings.
func measureGC(start, end gcReading) GC {
	g := GC{Cycles: end.cycles - start.cycles, Percent: end.percent}
	if busy := end.busy - start.busy; busy > 0 {
		g.Share = min(1, max(0, (end.gcCPU-start.gcCPU)/busy))
	}
	g.PauseP99, g.PauseMax = delays(start.pauses, end.pauses)
	return g
}

// gcLimited says whether the collector explains a long scheduling delay:
// goroutines waited longer than MaxSchedDelayP99 for a CPU, or its own
// pauses lasted longer, while it took at least MaxGCShare of llmrun's
// CPU; unless other processes took the CPU while llmrun used little of
// its own (then the OS, holding llmrun's threads off, stretched the
// delays and the pauses, and the machine is the cause).
func (r Report) gcLimited() bool {
	long := r.schedDelayed() || r.GC.PauseMax > float64(MaxSchedDelayP99)/1e6
	return long && r.GC.Share >= MaxGCShare && (r.CPU >= BusyCPU || r.MachineCause() == "")
}

// gcWait is how long the collector held goroutines up: the scheduling
// delay when that was long, else its longest pause.
func (r Report) gcWait() string {
	if r.schedDelayed() {
		return fmt.Sprintf("goroutines waited %.1f ms (p99) for a CPU", r.SchedDelayP99)
	}
	return fmt.Sprintf("the collector paused llmrun up to %.2f ms", r.GC.PauseMax)
}

// gcCause names the garbage collector as what limited llmrun, with its
// figures.
func (r Report) gcCause() string {
	return fmt.Sprintf("llmrun's own load: its garbage collection (%s; %s)", r.GC, r.gcWait())
}

// remedy is what to do when the garbage collector limited llmrun. A
// GOGC in the environment replaces llmrun's own heap goal, which may
// already be above 400, so the remedy starts from the GOGC in force.
func (g GC) remedy() string {
	room := "give the collector more room with GOGC (e.g. GOGC=400)"
	if g.Percent > 0 {
		room = fmt.Sprintf("give the collector more room with a GOGC above the %d in force (e.g. GOGC=%d; a GOGC you set replaces llmrun's own heap goal)", g.Percent, 4*g.Percent)
	}
	return room + " and cap the memory with GOMEMLIMIT, or run fewer VUs per process"
}
