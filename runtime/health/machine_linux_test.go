//go:build linux

package health

import (
	"testing"
	"time"
)

// The probe reads this machine's /proc without an error, and its figures
// are within their ranges. What they are depends on what else the
// machine runs, so no value is asserted: TestJudge covers what values
// lead to.
func TestLiveMachine(t *testing.T) {
	p := Start()
	if p.machineErr != nil {
		t.Fatalf("reading /proc: %v", p.machineErr)
	}
	if len(p.machine.tasks) == 0 {
		t.Error("no thread of this process was read")
	}
	waitForTick(t, p.machine.cpu.total())
	r := p.Stop()
	if r.Machine == nil || r.MachineError != "" {
		t.Fatalf("no machine figures: %q", r.MachineError)
	}
	m := r.Machine
	for name, share := range map[string]float64{"busy": m.Busy, "others": m.Others, "steal": m.Steal} {
		if share < 0 || share > 1 {
			t.Errorf("%s share %v, want within [0, 1]", name, share)
		}
	}
	if m.Others > m.Busy {
		t.Errorf("others %v above busy %v", m.Others, m.Busy)
	}
	if m.CPUs < 1 || m.Load1 < 0 || m.OthersLoad < 0 || m.OthersLoad > m.Load1 || m.RunQueueWait < 0 {
		t.Errorf("figures out of range: %+v", *m)
	}
}

// waitForTick reads /proc until its CPU times move past total: a
// measurement needs one clock tick at least.
func waitForTick(t *testing.T, total uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := readMachine()
		if err != nil {
			t.Fatal(err)
		}
		if r.cpu.total() > total {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("/proc/stat's CPU times did not move in 10 s")
		}
	}
}
