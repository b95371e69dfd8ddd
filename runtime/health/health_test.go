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

// The rules: llmrun's own load is blamed for its own CPU above MaxCPU, or
// for a long scheduling delay while its CPU is busy, and never else;
// other processes, or the hypervisor, for the machine's figures above
// their limits, each named; a long delay with neither says its cause was
// not found.
func TestJudge(t *testing.T) {
	quiet := &Machine{CPUs: 2, Busy: 0.3, Others: 0.2, Load1: 0.9, OthersLoad: 0.8, RunQueueWait: 0.05}
	// The busy host of the bug: llmrun at 1 %, a 0.39 ms delay p99, and
	// other processes holding the CPUs.
	crowded := &Machine{Seconds: 300, CPUs: 2, Busy: 0.95, Others: 0.94, Load1: 4.2, OthersLoad: 4.18, RunQueueWait: 3.5}
	atLimits := &Machine{Seconds: 300, CPUs: 2, Others: MaxOthersShare, Load1: 2.5, OthersLoad: 2, RunQueueWait: 1, Steal: MaxSteal}
	tests := []struct {
		name      string
		r         Report
		cause     string // "" for none
		blamesOwn bool
		want      []string // one substring per warning, in order
	}{
		{name: "own CPU", r: Report{CPU: 0.95, Procs: 2, Machine: quiet},
			cause: "llmrun's own load (its process used 95 % of its 2 CPUs)", blamesOwn: true,
			want: []string{"used 95 % of its 2 CPUs: the client, not only the server"}},
		{name: "own CPU, one of it", r: Report{CPU: 0.95, Procs: 1},
			cause: "llmrun's own load (its process used 95 % of its 1 CPU)", blamesOwn: true,
			want: []string{"used 95 % of its 1 CPU: the client, not only the server"}},
		{name: "delay with a busy CPU", r: Report{CPU: 0.6, Procs: 2, SchedDelayP99: 12, Machine: quiet},
			cause: "llmrun's own load (goroutines waited 12.0 ms (p99) for a CPU with 60 % of its 2 CPUs in use)", blamesOwn: true,
			want: []string{"waited up to 12.0 ms (p99) for a CPU: " + waitEffect + "; run fewer VUs per process"}},
		{name: "own CPU and delay", r: Report{CPU: 0.9, Procs: 8, SchedDelayP99: 6}, cause: "llmrun's own load", blamesOwn: true,
			want: []string{"used 90 % of its 8 CPUs", "waited up to 6.0 ms"}},
		{name: "healthy", r: Report{CPU: 0.5, Procs: 2, SchedDelayP99: 1, Machine: quiet}},
		{name: "unknown", r: Report{CPU: -1, Procs: 2}},
		{name: "the figures at their limits", r: Report{CPU: MaxCPU, Procs: 2, SchedDelayP99: 5, Machine: atLimits}},
		{name: "other processes on a busy host", r: Report{CPU: 0.01, Procs: 2, SchedDelayP99: 0.39, Machine: crowded},
			cause: "other processes on this machine took the CPU (other processes used 94 % of the 2 CPUs; the load average was 4.20 on 2 CPUs (4.18 without llmrun's threads); llmrun's threads waited 3.50 ms on the OS run queue each time they were to run)",
			want:  []string{"other processes on this machine took the CPU (other processes used 94 %"}},
		{name: "others' share alone", r: Report{CPU: 0.1, Procs: 2, Machine: &Machine{CPUs: 4, Others: 0.7}},
			cause: "other processes on this machine took the CPU (other processes used 70 % of the 4 CPUs)",
			want:  []string{"measured latencies may include the time llmrun waited for it; llmrun's own load (CPU 10 % of its 2 CPUs) did not cause it"}},
		{name: "others' load alone", r: Report{CPU: 0.1, Procs: 2, Machine: &Machine{Seconds: 60, CPUs: 2, Load1: 3.1, OthersLoad: 2.9}},
			cause: "other processes on this machine took the CPU (the load average was 3.10 on 2 CPUs (2.90 without llmrun's threads))",
			want:  []string{"the load average was 3.10 on 2 CPUs"}},
		{name: "others' load in a run shorter than its average", r: Report{CPU: 0.1, Procs: 2, Machine: &Machine{Seconds: 59, CPUs: 2, Load1: 3.1, OthersLoad: 2.9}}},
		{name: "run-queue wait alone", r: Report{CPU: 0.1, Procs: 2, Machine: &Machine{CPUs: 2, RunQueueWait: 1.5}},
			cause: "other processes on this machine took the CPU (llmrun's threads waited 1.50 ms on the OS run queue",
			want:  []string{"waited 1.50 ms on the OS run queue"}},
		{name: "steal", r: Report{CPU: 0.1, Procs: 2, Machine: &Machine{CPUs: 2, Steal: 0.2}},
			cause: "the hypervisor took the CPU (the hypervisor gave 20 % of the CPU time to other guests (steal))",
			want:  []string{"the hypervisor took the CPU"}},
		{name: "others and steal", r: Report{CPU: 0.1, Procs: 2, Machine: &Machine{CPUs: 2, Others: 0.6, Steal: 0.2}},
			cause: "other processes on this machine and the hypervisor took the CPU",
			want:  []string{"other processes on this machine and the hypervisor took the CPU"}},
		{name: "delay explained by the machine", r: Report{CPU: 0.2, Procs: 2, SchedDelayP99: 12, Machine: &Machine{CPUs: 2, Others: 0.8}},
			cause: "other processes on this machine took the CPU",
			want:  []string{"(other processes used 80 % of the 2 CPUs), and llmrun's goroutines waited up to 12.0 ms (p99) for a CPU: measured latencies"}},
		{name: "delay without a cause", r: Report{CPU: 0.2, Procs: 2, SchedDelayP99: 12, Machine: quiet},
			want: []string{"waited up to 12.0 ms (p99) for a CPU, not for llmrun's own load: " + waitEffect + "; its cause was not found (checked: llmrun's CPU 20 % of its 2 CPUs, Go scheduling delay p99 12.00 ms, other processes 20 % of 2 CPUs, load average 0.90 on 2 CPUs, run-queue wait 0.050 ms per run)"}},
		{name: "delay, machine unknown", r: Report{CPU: 0.2, Procs: 2, SchedDelayP99: 12, MachineError: "not measured on darwin"},
			want: []string{"the machine's figures unknown (not measured on darwin)"}},
		{name: "own load and steal", r: Report{CPU: 0.95, Procs: 2, Machine: &Machine{CPUs: 2, Steal: 0.3}},
			cause: "llmrun's own load (its process used 95 % of its 2 CPUs); and the hypervisor took the CPU", blamesOwn: true,
			want: []string{"used 95 % of its 2 CPUs", "the hypervisor took the CPU (the hypervisor gave 30 % of the CPU time to other guests (steal)): measured latencies may include the time llmrun waited for it"}},
	}
	for _, tc := range tests {
		r := tc.r
		r.judge()
		if tc.cause == "" && r.Cause != "" || !strings.HasPrefix(r.Cause, tc.cause) {
			t.Errorf("%s: cause %q, want %q", tc.name, r.Cause, tc.cause)
		}
		if r.Cause != "" && r.Limit() != r.Cause {
			t.Errorf("%s: limit %q, want the cause %q", tc.name, r.Limit(), r.Cause)
		}
		if (r.OwnCause() != "") != tc.blamesOwn || strings.Contains(r.Cause, "own load") != tc.blamesOwn {
			t.Errorf("%s: own cause %q, cause %q; want llmrun's own load blamed: %v", tc.name, r.OwnCause(), r.Cause, tc.blamesOwn)
		}
		if len(r.Warnings) != len(tc.want) {
			t.Errorf("%s: warnings %q, want %d", tc.name, r.Warnings, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(r.Warnings[i], w) {
				t.Errorf("%s: warning %q, want it to contain %q", tc.name, r.Warnings[i], w)
			}
			if !tc.blamesOwn && strings.Contains(r.Warnings[i], "client") {
				t.Errorf("%s: warning %q blames the client", tc.name, r.Warnings[i])
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

// A run is machine-limited when the probe named a cause, or when its
// goroutines waited long for a CPU for a cause not found; the limit is
// read from the report's figures, as a result file stores them.
func TestLimit(t *testing.T) {
	quiet := &Machine{CPUs: 2, Others: 0.2, Load1: 0.9, OthersLoad: 0.8, RunQueueWait: 0.05}
	tests := []struct {
		name string
		r    Report
		want string // "" for none
	}{
		{"healthy", Report{CPU: 0.3, Procs: 2, SchedDelayP99: 1, Machine: quiet}, ""},
		{"other processes", Report{CPU: 0.1, Procs: 2, Machine: &Machine{CPUs: 2, Others: 0.99}}, "other processes on this machine took the CPU (other processes used 99 % of the 2 CPUs)"},
		{"own CPU", Report{CPU: 0.95, Procs: 2, Machine: quiet}, "llmrun's own load (its process used 95 % of its 2 CPUs)"},
		{"a delay without a cause", Report{CPU: 0.2, Procs: 2, SchedDelayP99: 12, Machine: quiet}, "llmrun's goroutines waited 12.0 ms (p99) for a CPU, for a cause not found"},
		{"a delay at its limit", Report{CPU: 0.2, Procs: 2, SchedDelayP99: 5, Machine: quiet}, ""},
		{"not measured", NotMeasured("setup() did not complete"), ""},
	}
	for _, tc := range tests {
		r := tc.r
		r.judge()
		if got := r.Limit(); got != tc.want {
			t.Errorf("%s: limit %q, want %q", tc.name, got, tc.want)
		}
	}
	stored := Report{CPU: 0.1, Procs: 2, Cause: "the hypervisor took the CPU (steal)"}
	if got := stored.Limit(); got != stored.Cause {
		t.Errorf("a report read back: limit %q, want its stored cause %q", got, stored.Cause)
	}
}

// A run that ended before its measurement says so, instead of reading as
// a process that used 0 % of 0 CPUs.
func TestNotMeasured(t *testing.T) {
	r := NotMeasured("setup() did not complete")
	if r.Measured() || r.CPU >= 0 || r.Cause != "" || len(r.Warnings) != 0 {
		t.Errorf("NotMeasured = %+v, want an unknown CPU and no cause or warning", r)
	}
	got := r.Checked()
	if strings.Contains(got, "0 CPUs") || !strings.Contains(got, "not measured") || !strings.Contains(got, "setup() did not complete") {
		t.Errorf("Checked() = %q, want it to say the figures were not measured, and why", got)
	}
}
