package health

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Machine is what the machine llmrun ran on did during the measurement,
// from Linux's /proc: how much of it other processes used, and how long
// the OS kept llmrun's threads waiting for a CPU.
type Machine struct {
	// Seconds is the wall time the figures cover.
	Seconds float64 `json:"seconds"`
	// CPUs is the number of online CPUs.
	CPUs int `json:"cpus"`
	// Busy is the share of all the CPUs' time spent busy (user, nice,
	// system, irq, softirq), by every process, llmrun included (0–1).
	Busy float64 `json:"busy_share"`
	// Others is Busy less llmrun's own CPU time: the share of all the
	// CPUs other processes used (0–1).
	Others float64 `json:"others_share"`
	// Steal is the share of the CPUs' time the hypervisor gave to other
	// guests (0–1).
	Steal float64 `json:"steal_share"`
	// Load1 is the 1-minute load average when the measurement ended.
	Load1 float64 `json:"load_average_1m"`
	// OthersLoad is Load1 less llmrun's own threads on a CPU on average
	// (its CPU time over the wall time): the other processes' runnable
	// threads, about.
	OthersLoad float64 `json:"others_load"`
	// RunQueueWait is the mean time, in ms, one of llmrun's threads
	// waited on the OS run queue each time it was to run: runnable, but
	// the OS ran something else. The Go scheduler's histogram does not
	// see that wait.
	RunQueueWait float64 `json:"run_queue_wait_ms"`
}

// measureMachine computes what the machine did between two readings,
// given llmrun's own CPU time over the wall time between them.
func measureMachine(start, end procReading, own, wall time.Duration) (*Machine, error) {
	if end.cpu.total() <= start.cpu.total() {
		return nil, errors.New("no clock tick passed between the readings of /proc/stat")
	}
	if own < 0 || wall <= 0 {
		return nil, errors.New("llmrun's own CPU time is unknown")
	}
	ticks := float64(end.cpu.total() - start.cpu.total())
	share := func(from, to uint64) float64 {
		if to < from {
			return 0
		}
		return min(float64(to-from)/ticks, 1)
	}
	ownThreads := own.Seconds() / wall.Seconds()
	m := &Machine{
		Seconds:      wall.Seconds(),
		CPUs:         end.cpus,
		Busy:         share(start.cpu.busy, end.cpu.busy),
		Steal:        share(start.cpu.steal, end.cpu.steal),
		Load1:        end.load1,
		OthersLoad:   max(end.load1-ownThreads, 0),
		RunQueueWait: runQueueWait(start.tasks, end.tasks),
	}
	m.Others = max(m.Busy-ownThreads/float64(m.CPUs), 0)
	return m, nil
}

// runQueueWait is the mean time, in ms, the threads waited on a run queue
// each time they were put on a CPU between two readings. A thread that
// started in between counts from zero; one that ended is left out.
func runQueueWait(start, end map[string]taskSched) float64 {
	var wait, slices uint64
	for id, e := range end {
		s := start[id]
		if e.wait < s.wait || e.slices < s.slices {
			continue // a thread ID used again
		}
		wait += e.wait - s.wait
		slices += e.slices - s.slices
	}
	if slices == 0 {
		return 0
	}
	return float64(wait) / float64(slices) / float64(time.Millisecond)
}

// String is the machine's figures in one line, steal only when there was
// any.
func (m *Machine) String() string {
	parts := []string{
		fmt.Sprintf("other processes %.0f %% of %s", 100*m.Others, textfmt.Count(m.CPUs, "CPU")),
		fmt.Sprintf("load average %.2f on %s", m.Load1, textfmt.Count(m.CPUs, "CPU")),
		fmt.Sprintf("run-queue wait %.3f ms per run", m.RunQueueWait),
	}
	if m.Steal > 0 {
		parts = append(parts, fmt.Sprintf("steal %.1f %%", 100*m.Steal))
	}
	return strings.Join(parts, ", ")
}
