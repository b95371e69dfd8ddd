package health

import (
	"math"
	"strings"
	"testing"
	"time"
)

func near(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

// Between two readings: 200 ticks, 150 busy and 10 stolen, on 2 CPUs;
// llmrun ran 1 s of CPU in 2 s. Thread 1 waited 2 ms over 10 runs, thread
// 2 did not run, thread 4 started (4 ms over 10 runs), thread 3 ended and
// thread 5's ID was used again (both left out).
func TestMeasureMachine(t *testing.T) {
	start := procReading{cpu: cpuTicks{busy: 1000, idle: 1000}, cpus: 2, load1: 9, tasks: map[string]taskSched{
		"1": {wait: 1e6, slices: 10}, "2": {wait: 5e6, slices: 5}, "3": {wait: 9e6, slices: 9}, "5": {wait: 9e6, slices: 9}}}
	end := procReading{cpu: cpuTicks{busy: 1150, idle: 1040, steal: 10}, cpus: 2, load1: 3, tasks: map[string]taskSched{
		"1": {wait: 3e6, slices: 20}, "2": {wait: 5e6, slices: 5}, "4": {wait: 4e6, slices: 10}, "5": {wait: 1e6, slices: 2}}}
	m, err := measureMachine(start, end, time.Second, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := Machine{Seconds: 2, CPUs: 2, Busy: 0.75, Others: 0.5, Steal: 0.05, Load1: 3, OthersLoad: 2.5, RunQueueWait: 0.3}
	if m.Seconds != want.Seconds || m.CPUs != want.CPUs || !near(m.Busy, want.Busy) || !near(m.Others, want.Others) || !near(m.Steal, want.Steal) ||
		!near(m.Load1, want.Load1) || !near(m.OthersLoad, want.OthersLoad) || !near(m.RunQueueWait, want.RunQueueWait) {
		t.Errorf("measureMachine\n got %+v\nwant %+v", *m, want)
	}

	// llmrun's own CPU time, counted with a finer clock than the ticks,
	// may exceed the machine's busy time: the others' share is then 0.
	if m, err := measureMachine(start, end, 4*time.Second, 2*time.Second); err != nil || m.Others != 0 || m.OthersLoad != 1 {
		t.Errorf("own time above the busy time: %+v, %v", m, err)
	}
	if _, err := measureMachine(start, start, time.Second, 2*time.Second); err == nil || !strings.Contains(err.Error(), "no clock tick") {
		t.Errorf("no tick between the readings: error %v", err)
	}
	if _, err := measureMachine(start, end, -1, 2*time.Second); err == nil || !strings.Contains(err.Error(), "own CPU time is unknown") {
		t.Errorf("own CPU unknown: error %v", err)
	}
}

func TestRunQueueWaitWithoutRuns(t *testing.T) {
	if w := runQueueWait(nil, map[string]taskSched{"1": {}}); w != 0 {
		t.Errorf("no run between the readings: %v ms, want 0", w)
	}
}

func TestMachineString(t *testing.T) {
	m := &Machine{CPUs: 2, Others: 0.42, Load1: 1.5, RunQueueWait: 0.05}
	if got, want := m.String(), "other processes 42 % of 2 CPUs, load average 1.50 on 2 CPUs, run-queue wait 0.050 ms per run"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	m.Steal = 0.125
	if got := m.String(); !strings.HasSuffix(got, ", steal 12.5 %") {
		t.Errorf("with steal: %q", got)
	}
}
