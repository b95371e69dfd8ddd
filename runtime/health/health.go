// Package health watches the load generator itself: whether llmrun's own
// process had the CPU and the scheduling headroom to measure the server
// rather than its own queueing, and, when it did not, what took them. A
// goroutine that waits to be scheduled after its response bytes arrived
// adds that wait to every latency it measures; the Go scheduler's own
// latency histogram shows that wait directly, but only the part spent in
// Go's run queues. The OS may not run llmrun's threads at all while other
// processes (or, on a virtual machine, the hypervisor) hold the CPUs: on
// Linux the probe reads /proc for that, at its start and stop (every
// counter there is cumulative): the machine's busy and steal time, the
// load average, and how long llmrun's threads waited on the OS run queue.
// The Go runtime's own counters say how much of llmrun's CPU its garbage
// collector took and how long it paused the program.
// A Report names the cause it found: llmrun's own load (its garbage
// collection named as such), or the machine.
package health

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Limits above which a run is reported as limited by the client itself.
const (
	// MaxCPU is the share of the process's CPUs (GOMAXPROCS) in use.
	MaxCPU = 0.85
	// MaxSchedDelayP99 is the 99th percentile of the time a runnable
	// goroutine waited for a CPU.
	MaxSchedDelayP99 = 5 * time.Millisecond
	// BusyCPU is the share of its CPUs from which llmrun's own load is
	// taken to explain a scheduling delay above MaxSchedDelayP99: with
	// half of them busy on average, its bursts fill them all. Below it,
	// its own load is not blamed.
	BusyCPU = 0.5
)

// Limits above which other processes on the machine, or the hypervisor,
// are reported as having taken the CPU from llmrun (Linux only).
const (
	// MaxOthersShare is the share of all the machine's CPUs other
	// processes used: above half, a thread of llmrun's that wakes often
	// finds every CPU taken.
	MaxOthersShare = 0.5
	// MaxOthersLoadPerCPU is the other processes' runnable threads (the
	// 1-minute load average less llmrun's own) per online CPU: above one,
	// they outnumber the CPUs and some wait for one.
	MaxOthersLoadPerCPU = 1.0
	// MinLoadWindow is the shortest measurement whose load average
	// counts: the 1-minute average of a shorter one is mostly the time
	// before it.
	MinLoadWindow = time.Minute
	// MaxSteal is the share of the CPU time the hypervisor gave to other
	// guests.
	MaxSteal = 0.10
	// MaxRunQueueWait is the mean time llmrun's threads waited on the OS
	// run queue each time they were to run. Waits with an exponential
	// tail have their p99 at 4.6 times their mean: a 1 ms mean is about
	// the 5 ms p99 of MaxSchedDelayP99.
	MaxRunQueueWait = time.Millisecond
)

const schedLatencies = "/sched/latencies:seconds"

// Probe measures the process, and the machine it runs on, between Start
// and Stop.
type Probe struct {
	wall  time.Time
	cpu   time.Duration
	sched *metrics.Float64Histogram
	procs int
	// gc is the garbage collector's reading at Start; gcOK whether there
	// is one.
	gc   gcReading
	gcOK bool
	// machine is the /proc reading at Start; machineErr why there is none.
	machine    procReading
	machineErr error
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
	// Machine is what the rest of the machine did; nil when it was not
	// measured, and MachineError then says why.
	Machine      *Machine `json:"machine,omitempty"`
	MachineError string   `json:"machine_error,omitempty"`
	// GC is what the garbage collector did; it stays out of the result
	// file, whose schema it would change: Cause and Warnings carry what
	// it showed.
	GC GC `json:"-"`
	// Cause names, in words, what limited the client: llmrun's own load,
	// or what took the CPU from it; "" when no limit was found.
	Cause string `json:"cause,omitempty"`
	// Warnings say, in words, how the client may have limited the run.
	Warnings []string `json:"warnings,omitempty"`
}

// NotMeasured is the report of a run that ended before its measurement
// began (its setup failed): every figure unknown, and why in
// MachineError.
func NotMeasured(why string) Report {
	return Report{CPU: -1, MachineError: why}
}

// Measured says that a probe took the report's figures: false for
// NotMeasured's.
func (r Report) Measured() bool { return r.Procs > 0 }

// Start begins a measurement.
func Start() *Probe {
	p := &Probe{wall: time.Now(), cpu: processCPU(), sched: readSched(), procs: runtime.GOMAXPROCS(0)}
	p.gc, p.gcOK = readGC()
	p.machine, p.machineErr = readMachine()
	return p
}

// Stop ends the measurement and judges it.
func (p *Probe) Stop() Report {
	wall := time.Since(p.wall)
	r := Report{CPU: -1, Procs: p.procs}
	own := time.Duration(-1)
	if cpu := processCPU(); cpu >= 0 && p.cpu >= 0 {
		own = cpu - p.cpu
	}
	if own >= 0 && wall > 0 {
		r.CPU = float64(own) / float64(wall) / float64(p.procs)
	}
	if end := readSched(); end != nil && p.sched != nil {
		r.SchedDelayP99, r.SchedDelayMax = delays(p.sched, end)
	}
	if end, ok := readGC(); ok && p.gcOK {
		r.GC = measureGC(p.gc, end)
	}
	var err error
	if r.Machine, err = p.stopMachine(own, wall); err != nil {
		r.MachineError = err.Error()
	}
	r.judge()
	return r
}

// stopMachine reads /proc again and measures the machine since Start,
// given llmrun's own CPU time over the wall time.
func (p *Probe) stopMachine(own, wall time.Duration) (*Machine, error) {
	if p.machineErr != nil {
		return nil, p.machineErr
	}
	end, err := readMachine()
	if err != nil {
		return nil, err
	}
	return measureMachine(p.machine, end, own, wall)
}

// OwnCause names llmrun's own load as what limited it, with the figure
// that shows it: its garbage collector taking MaxGCShare of its CPU or
// more while goroutines (or the collector's pauses) waited longer than
// MaxSchedDelayP99, its CPU above MaxCPU, or goroutines that waited
// longer than MaxSchedDelayP99 while it used at least BusyCPU of its
// CPUs; "" when none happened.
func (r Report) OwnCause() string {
	switch {
	case r.gcLimited():
		return r.gcCause()
	case r.CPU > MaxCPU:
		return "llmrun's own load (its process used " + r.OwnCPU() + ")"
	case r.schedDelayed() && r.CPU >= BusyCPU:
		return fmt.Sprintf("llmrun's own load (goroutines waited %.1f ms (p99) for a CPU with %s in use)", r.SchedDelayP99, r.OwnCPU())
	}
	return ""
}

// Limit names what limited the client's measurement, "" when nothing
// did: the cause the probe found (llmrun's own load, its garbage
// collector, other processes or the hypervisor taking the CPU), or else
// goroutines that waited longer than MaxSchedDelayP99 for a CPU for a
// cause not found. A run it names is machine-limited: its latencies may
// include the client's waits, and its throughputs the client's pace,
// rather than the server's (docs/results.md). It reads the report's
// stored figures, so a result file read back gives the same answer.
func (r Report) Limit() string {
	switch {
	case !r.Measured():
		return ""
	case r.Cause != "":
		return r.Cause
	case r.schedDelayed():
		return fmt.Sprintf("llmrun's goroutines waited %.1f ms (p99) for a CPU, for a cause not found", r.SchedDelayP99)
	}
	return ""
}

// schedDelayed says whether goroutines waited longer than
// MaxSchedDelayP99 for a CPU.
func (r Report) schedDelayed() bool {
	return time.Duration(r.SchedDelayP99*float64(time.Millisecond)) > MaxSchedDelayP99
}

// MachineCause names what took the CPU from llmrun, other processes on
// this machine or the hypervisor, with each figure above its limit that
// shows it; "" when none is, or the machine was not measured.
func (r Report) MachineCause() string {
	m := r.Machine
	if m == nil {
		return ""
	}
	var figures []string
	if m.Others > MaxOthersShare {
		figures = append(figures, fmt.Sprintf("other processes used %.0f %% of the %s", 100*m.Others, textfmt.Count(m.CPUs, "CPU")))
	}
	if m.Seconds >= MinLoadWindow.Seconds() && m.OthersLoad > MaxOthersLoadPerCPU*float64(m.CPUs) {
		figures = append(figures, fmt.Sprintf("the load average was %.2f on %s (%.2f without llmrun's threads)", m.Load1, textfmt.Count(m.CPUs, "CPU"), m.OthersLoad))
	}
	if time.Duration(m.RunQueueWait*float64(time.Millisecond)) > MaxRunQueueWait {
		figures = append(figures, fmt.Sprintf("llmrun's threads waited %.2f ms on the OS run queue each time they were to run", m.RunQueueWait))
	}
	who := "other processes on this machine"
	if m.Steal > MaxSteal {
		if len(figures) > 0 {
			who += " and the hypervisor"
		} else {
			who = "the hypervisor"
		}
		figures = append(figures, fmt.Sprintf("the hypervisor gave %.0f %% of the CPU time to other guests (steal)", 100*m.Steal))
	}
	if len(figures) == 0 {
		return ""
	}
	return who + " took the CPU (" + strings.Join(figures, "; ") + ")"
}

// Checked lists every figure the judgement reads, with its value: what
// a warning that found no cause says it looked at.
func (r Report) Checked() string {
	machine := "the machine's figures unknown"
	if !r.Measured() {
		return "not measured (" + r.MachineError + ")"
	}
	if r.Machine != nil {
		machine = r.Machine.String()
	} else if r.MachineError != "" {
		machine += " (" + r.MachineError + ")"
	}
	checked := fmt.Sprintf("llmrun's CPU %s, Go scheduling delay p99 %.2f ms, %s", r.OwnCPU(), r.SchedDelayP99, machine)
	if r.GC.Measured() {
		checked += ", " + r.GC.String()
	}
	return checked
}

// OwnCPU is llmrun's CPU share in words: "4 % of its 2 CPUs".
func (r Report) OwnCPU() string {
	switch {
	case !r.Measured():
		return "not measured"
	case r.CPU < 0:
		return "unknown"
	}
	return fmt.Sprintf("%.0f %% of its %s", 100*r.CPU, textfmt.Count(r.Procs, "CPU"))
}

// judge names the cause of a limit, if it finds one, and adds the
// warnings the measurement calls for. It blames llmrun's own load only
// when its CPU, its scheduling delay with a busy CPU, or its garbage
// collector, says so; the collector's warning says how to give it room.
func (r *Report) judge() {
	own, machine, delayed := r.OwnCause(), r.MachineCause(), r.schedDelayed()
	r.Cause = strings.Join(slices.DeleteFunc([]string{own, machine}, func(c string) bool { return c == "" }), "; and ")
	if r.CPU > MaxCPU {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"llmrun's process used %s: the client, not only the server, may have limited this run and inflated its latencies; %s", r.OwnCPU(), ownRemedy))
	}
	switch {
	case r.gcLimited():
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"%s while llmrun's garbage collector took %.0f %% of its CPU (%s, pauses up to %.2f ms): %s; %s",
			r.gcWait(), 100*r.GC.Share, textfmt.Count(r.GC.Cycles, "cycle"), r.GC.PauseMax, waitEffect, r.GC.remedy()))
	case delayed && own != "":
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"goroutines waited up to %.1f ms (p99) for a CPU: %s; %s", r.SchedDelayP99, waitEffect, ownRemedy))
	}
	if machine != "" {
		r.Warnings = append(r.Warnings, r.machineWarning(machine, own != "", delayed))
	}
	if delayed && own == "" && machine == "" {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"goroutines waited up to %.1f ms (p99) for a CPU, not for llmrun's own load: %s; its cause was not found (checked: %s)", r.SchedDelayP99, waitEffect, r.Checked()))
	}
}

// ownRemedy is what to do when llmrun's own load limited it.
const ownRemedy = "run fewer VUs per process, on a bigger machine, or in more processes or on more machines"

// machineWarning says what took the CPU from llmrun (machine, its
// MachineCause) and what that did to the measurement; ownToo when
// llmrun's own load limited it as well, delayed when its goroutines
// waited long for a CPU.
func (r Report) machineWarning(machine string, ownToo, delayed bool) string {
	msg := machine
	if delayed && !ownToo {
		msg += fmt.Sprintf(", and llmrun's goroutines waited up to %.1f ms (p99) for a CPU", r.SchedDelayP99)
	}
	msg += ": measured latencies may include the time llmrun waited for it"
	if !ownToo && r.CPU >= 0 {
		msg += fmt.Sprintf("; llmrun's own load (CPU %s) did not cause it", r.OwnCPU())
	}
	return msg
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
