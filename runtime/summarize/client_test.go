package summarize_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summarize"
)

// arrivals is what one constant-arrival-rate scenario was and recorded
// in a 10 s run: its maxConcurrency (0: none), n iterations that each
// started lag ms late and lasted duration ms, dropped iterations (for
// want of a VU, or of a slot under its cap), ended ones its schedule
// reached only after its end, and the most VUs busy at once (peak).
type arrivals struct {
	maxConcurrency int
	n              int
	lag, duration  float64
	dropped        float64
	ended          int64
	unscheduled    int64
	peak           int64
}

// arrivalReport is a 10 s run of the scenarios in by, measured by client.
func arrivalReport(t *testing.T, client health.Report, by map[string]arrivals) *engine.Report {
	t.Helper()
	f := summarytest.NewFixture()
	f.Reg.MustRegister(metrics.Metric{Name: "iteration_lag", Type: metrics.Trend, Contains: metrics.Time})
	f.Reg.MustRegister(metrics.Metric{Name: "iteration_duration", Type: metrics.Trend, Contains: metrics.Time})
	f.Reg.MustRegister(metrics.Metric{Name: "dropped_iterations", Type: metrics.Counter})
	var options []string
	windows := map[string]engine.Window{}
	for _, name := range slices.Sorted(maps.Keys(by)) {
		a, tags := by[name], summarytest.Tags("scenario", name)
		f.Value("iteration_lag", tags, summarytest.T0, slices.Repeat([]float64{a.lag}, a.n)...)
		f.Value("iteration_duration", tags, summarytest.T0, slices.Repeat([]float64{a.duration}, a.n)...)
		if all := a.dropped + float64(a.ended+a.unscheduled); all > 0 {
			f.Value("dropped_iterations", tags, summarytest.T0, all)
		}
		capField := ""
		if a.maxConcurrency > 0 {
			capField = fmt.Sprintf(`, "maxConcurrency": %d`, a.maxConcurrency)
		}
		options = append(options, fmt.Sprintf(`%q: {"executor": "constant-arrival-rate", "rate": 10, "duration": "10s", "preAllocatedVUs": 64%s}`, name, capField))
		windows[name] = engine.Window{Start: summarytest.T0, End: summarytest.T0.Add(10 * time.Second)}
	}
	scs := summarytest.Scenarios(t, `{"scenarios": {`+strings.Join(options, ", ")+`}}`)
	final := make([]engine.ScenarioProgress, len(scs))
	for i, sc := range scs {
		a := by[sc.Name]
		p := engine.ScenarioProgress{Name: sc.Name, Phase: engine.PhaseDone, PeakVUs: a.peak, MaxVUs: sc.Config.MaxVUs()}
		if a.maxConcurrency > 0 {
			p.Dropped[executor.DropCapped] = int64(a.dropped)
		} else {
			p.Dropped[executor.DropBusy] = int64(a.dropped)
		}
		p.Dropped[executor.DropEnded] = a.ended
		p.Dropped[executor.DropUnscheduled] = a.unscheduled
		final[i] = p
	}
	return &engine.Report{
		Snapshot:  f.Agg.Snapshot(),
		Registry:  f.Reg,
		Scenarios: scs,
		Final:     final,
		Start:     summarytest.T0,
		End:       summarytest.T0.Add(10 * time.Second),
		Windows:   windows,
		Client:    client,
	}
}

// The late and dropped iterations' warnings name the cause found: a cap
// the scenario reached (by design), llmrun's own load, other processes
// (or the hypervisor), or none, listing what was checked; only llmrun's
// own load blames the client.
func TestClientReportNamesTheCause(t *testing.T) {
	quiet := &health.Machine{CPUs: 2, Busy: 0.3, Others: 0.2, Load1: 0.9, OthersLoad: 0.8, RunQueueWait: 0.05}
	// The busy host: llmrun at 1 %, a 0.39 ms scheduling delay p99, and
	// other processes holding the CPUs.
	busyHost := health.Report{CPU: 0.01, Procs: 2, SchedDelayP99: 0.39,
		Machine: &health.Machine{Seconds: 300, CPUs: 2, Busy: 0.95, Others: 0.94, Load1: 4.2, OthersLoad: 4.18, RunQueueWait: 3.5}}
	quietHost := health.Report{CPU: 0.05, Procs: 2, SchedDelayP99: 0.3, Machine: quiet}
	late := arrivals{n: 100, lag: 20, duration: 100}
	lateAndDropped := arrivals{n: 100, lag: 20, duration: 100, dropped: 3}
	// Cap 4 with 3.8 iterations in flight (38 s of iterations in 10 s).
	atCap := arrivals{maxConcurrency: 4, n: 38, lag: 200, duration: 1000}
	// Cap 64 with 10 in flight: far from it.
	belowCap := arrivals{maxConcurrency: 64, n: 100, lag: 20, duration: 1000}
	tests := []struct {
		name      string
		client    health.Report
		by        map[string]arrivals
		want      []string // one substring per warning, in order
		blamesOwn bool
	}{
		{name: "own CPU", client: health.Report{CPU: 0.95, Procs: 2, Machine: quiet}, by: map[string]arrivals{"open": lateAndDropped}, blamesOwn: true,
			want: []string{
				"arrival-rate iterations started up to 20.0 ms late (p99): the client, not the server, limited the arrival rate: llmrun's own load (its process used 95 % of its 2 CPUs)",
				"3 planned iterations were dropped: every one of maxVUs was busy at a planned start; the client, not the server, limited the run: llmrun's own load",
			}},
		{name: "own scheduling delay", client: health.Report{CPU: 0.6, Procs: 2, SchedDelayP99: 12}, by: map[string]arrivals{"open": late}, blamesOwn: true,
			want: []string{"limited the arrival rate: llmrun's own load (goroutines waited 12.0 ms (p99) for a CPU with 60 % of its 2 CPUs in use)"}},
		{name: "the busy host", client: busyHost, by: map[string]arrivals{"open": lateAndDropped},
			want: []string{
				"started up to 20.0 ms late (p99): other processes on this machine took the CPU (other processes used 94 % of the 2 CPUs; the load average was 4.20 on 2 CPUs (4.18 without llmrun's threads); llmrun's threads waited 3.50 ms on the OS run queue each time they were to run) and delayed the start of iterations, not llmrun's own load nor the server",
				"3 planned iterations were dropped: every one of maxVUs was busy at a planned start; other processes on this machine took the CPU (other processes used 94 %",
			}},
		{name: "steal", client: health.Report{CPU: 0.05, Procs: 2, Machine: &health.Machine{CPUs: 2, Steal: 0.3}}, by: map[string]arrivals{"open": late},
			want: []string{"the hypervisor took the CPU (the hypervisor gave 30 % of the CPU time to other guests (steal)) and delayed the start of iterations"}},
		{name: "no cause found", client: quietHost, by: map[string]arrivals{"open": lateAndDropped},
			want: []string{
				"started up to 20.0 ms late (p99): the cause was not found (checked: llmrun's CPU 5 % of its 2 CPUs, Go scheduling delay p99 0.30 ms, other processes 20 % of 2 CPUs, load average 0.90 on 2 CPUs, run-queue wait 0.050 ms per run; none above its limit)",
				"3 planned iterations were dropped: every one of maxVUs was busy at a planned start; raise preAllocatedVUs/maxVUs (about rate × iteration time), or the server is too slow for this rate; no cause was found in the load generator (checked: llmrun's CPU 5 %",
			}},
		{name: "machine not measured", client: health.Report{CPU: 0.05, Procs: 2, MachineError: "not measured on darwin"}, by: map[string]arrivals{"open": late},
			want: []string{"the cause was not found (checked: llmrun's CPU 5 % of its 2 CPUs, Go scheduling delay p99 0.00 ms, the machine's figures unknown (not measured on darwin); none above its limit)"}},
		{name: "a cap reached, whatever the probe found", client: health.Report{CPU: 0.95, Procs: 2}, by: map[string]arrivals{"capped": atCap},
			want: []string{"arrival-rate iterations of scenario capped (maxConcurrency 4, 3.8 iterations in flight on average) started up to 200.0 ms late (p99): arrivals that found the maxConcurrency cap reached waited for a free slot, by design"}},
		{name: "a cap that dropped arrivals was reached", client: quietHost,
			by: map[string]arrivals{"capped": {maxConcurrency: 64, n: 100, lag: 20, duration: 1000, dropped: 5}},
			want: []string{
				"of scenario capped (maxConcurrency 64, 10.0 iterations in flight on average) started up to 20.0 ms late (p99): arrivals that found the maxConcurrency cap reached waited for a free slot, by design",
				"5 planned iterations of scenario capped were still waiting for its maxConcurrency cap (64) when it ended and were not started, by design",
			}},
		{name: "a cap far from reached", client: quietHost, by: map[string]arrivals{"capped": belowCap},
			want: []string{"started up to 20.0 ms late (p99): the cause was not found"}},
		// 50 in flight is within 2√50 ≈ 14.1 of 64; 49 is not.
		{name: "at the edge of a cap", client: quietHost, by: map[string]arrivals{"capped": {maxConcurrency: 64, n: 500, lag: 20, duration: 1000}},
			want: []string{"by design"}},
		{name: "just short of a cap's edge", client: quietHost, by: map[string]arrivals{"capped": {maxConcurrency: 64, n: 490, lag: 20, duration: 1000}},
			want: []string{"the cause was not found"}},
		{name: "a cap reached and an open scenario late", client: busyHost, by: map[string]arrivals{"capped": atCap, "open": late, "prompt": {n: 100, lag: 1, duration: 100}},
			want: []string{
				"arrival-rate iterations of scenario capped (maxConcurrency 4, 3.8 iterations in flight on average) started up to 200.0 ms late (p99): arrivals that found the maxConcurrency cap reached waited",
				"arrival-rate iterations of scenario open started up to 20.0 ms late (p99): other processes on this machine took the CPU",
			}},
		{name: "iterations planned beyond the duration", client: quietHost, by: map[string]arrivals{"open": {n: 42, lag: 1, duration: 100, unscheduled: 58}},
			want: []string{"58 planned iterations of scenario open were not started: its duration ended before their planned start"}},
		{name: "dropped at the end with VUs free", client: quietHost, by: map[string]arrivals{"open": {n: 100, lag: 1, duration: 100, ended: 1, peak: 7}},
			want: []string{
				"1 planned iterations of scenario open were not started: the scenario ended before its schedule, running late, reached them, not for want of VUs (at most 7 of its 64 VUs ran at once); the cause was not found",
			}},
		{name: "on time", client: busyHost, by: map[string]arrivals{"open": {n: 100, lag: 1, duration: 100}}},
	}
	for _, tc := range tests {
		s := summarize.Build(arrivalReport(t, tc.client, tc.by), summarytest.Meta)
		got := s.Client.Warnings
		if len(got) != len(tc.want) {
			t.Errorf("%s: warnings %q, want %d", tc.name, got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: warning\n%q\nwant it to contain\n%q", tc.name, got[i], w)
			}
			if !tc.blamesOwn && strings.Contains(got[i], "client, not the server") {
				t.Errorf("%s: warning %q blames the client", tc.name, got[i])
			}
		}
	}
}
