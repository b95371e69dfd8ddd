package procstat

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	stat := "4242 (ll m) run) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 1000 200 18446744073709551615"
	cpu, threads, err := ParseStat([]byte(stat))
	if err != nil || cpu != 3*time.Second || threads != 9 {
		t.Errorf("ParseStat = %s, %d, %v; want 3s, 9", cpu, threads, err)
	}
	for _, bad := range []string{"", "4242 no name", "4242 (x) S 1 2", "4242 (x)"} {
		if _, _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

// The process's own CPU time is read where there is /proc; a finished
// child reports a peak resident set.
func TestCPUAndPeakRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, ok := CPU(os.Getpid()); !ok {
		t.Error("CPU(self): not read")
	}
	if _, ok := CPU(-1); ok {
		t.Error("CPU(-1): read")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if kib := PeakRSS(cmd.ProcessState); kib <= 0 {
		t.Errorf("PeakRSS = %d KiB, want the child's", kib)
	}
}
