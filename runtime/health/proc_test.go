package health

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, text string
		want       cpuTicks
		cpus       int
		err        string
	}{
		{name: "two CPUs, guest fields",
			text: "cpu  100 2 30 500 7 1 4 6 50 1\ncpu0 50 1 15 250 3 0 2 3 25 0\ncpu1 50 1 15 250 4 1 2 3 25 1\nintr 1 2 3\nctxt 9\n",
			want: cpuTicks{busy: 100 + 2 + 30 + 1 + 4, idle: 500 + 7, steal: 6}, cpus: 2},
		{name: "exactly eight times", text: "cpu 1 2 3 4 5 6 7 8\ncpu3 1 2 3 4 5 6 7 8\n",
			want: cpuTicks{busy: 1 + 2 + 3 + 6 + 7, idle: 4 + 5, steal: 8}, cpus: 1},
		{name: "other lines starting with cpu are not CPUs", text: "cpu 1 2 3 4 5 6 7 8\ncpufreq 1\ncpu0 1 2 3 4 5 6 7 8\n",
			want: cpuTicks{busy: 19, idle: 9, steal: 8}, cpus: 1},
		{name: "empty", text: "", err: "no aggregate cpu line"},
		{name: "no aggregate line", text: "cpu0 1 2 3 4 5 6 7 8\n", err: "no aggregate cpu line"},
		{name: "no per-CPU line", text: "cpu 1 2 3 4 5 6 7 8\n", err: "no per-CPU line"},
		{name: "no steal", text: "cpu 1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n", err: "7 fields, want at least 8"},
		{name: "not a number", text: "cpu 1 2 x 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", err: "field 3"},
		{name: "negative", text: "cpu 1 2 3 -4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", err: "field 4"},
		{name: "a bare name", text: "cpu\ncpu0\n", err: "0 fields"},
		{name: "binary garbage", text: "\x00\xff\ncpu \xfe\n", err: "1 fields"},
	}
	for _, tc := range tests {
		got, cpus, err := parseStat(tc.text)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || cpus != tc.cpus {
			t.Errorf("%s: %+v, %d CPUs, %v; want %+v, %d CPUs", tc.name, got, cpus, err, tc.want, tc.cpus)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	if got, err := parseSchedstat("1142502 250000 10\n"); err != nil || got != (taskSched{wait: 250000, slices: 10}) {
		t.Errorf("parseSchedstat = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "\n", "1 2", "1 x 3", "1 2 -3", "18446744073709551616 0 1"} {
		if got, err := parseSchedstat(bad); err == nil {
			t.Errorf("parseSchedstat(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestParseLoadavg(t *testing.T) {
	if got, err := parseLoadavg("0.67 1.18 0.76 1/90 13690\n"); err != nil || got != 0.67 {
		t.Errorf("parseLoadavg = %v, %v; want 0.67", got, err)
	}
	for _, bad := range []string{"", " \n", "x 1 2", "-1 0 0", "NaN 0 0", "+Inf 0 0"} {
		if got, err := parseLoadavg(bad); err == nil {
			t.Errorf("parseLoadavg(%q) = %v, want an error", bad, got)
		}
	}
}

// readProc reads a procfs tree: thread 103 has no schedstat, as a thread
// that exits while the directory is read, and is left out.
func TestReadProc(t *testing.T) {
	got, err := readProc("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := procReading{
		cpu:   cpuTicks{busy: 52873 + 43 + 11002 + 0 + 437, idle: 48791 + 637, steal: 643},
		cpus:  2,
		load1: 0.67,
		tasks: map[string]taskSched{"101": {wait: 250000, slices: 10}, "102": {wait: 750000, slices: 30}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readProc\n got %+v\nwant %+v", got, want)
	}
	if _, err := readProc("testdata/missing"); err == nil || !strings.Contains(err.Error(), "testdata/missing/stat") {
		t.Errorf("a missing procfs: error %v, want one naming its stat file", err)
	}
	noSchedstat := t.TempDir()
	if err := os.Mkdir(filepath.Join(noSchedstat, "7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := readTasks(noSchedstat); err == nil || !strings.Contains(err.Error(), "does not keep run-queue times") {
		t.Errorf("threads without schedstat: error %v", err)
	}
}
