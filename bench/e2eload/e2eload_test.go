package main

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

func TestBearsToken(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`data: {"choices":[{"delta":{"role":"assistant","content":""}}]}` + "\n", false},
		{`data: {"choices":[{"delta":{"content":"world"}}]}` + "\n", true},
		{`data: {"choices":[{"delta":{},"finish_reason":"length"}]}` + "\n", false},
		{`data: {"choices":[],"usage":{"completion_tokens":5}}` + "\n", false},
		{`data: {"content":"`, false},
	} {
		if got := bearsToken([]byte(tc.line)); got != tc.want {
			t.Errorf("bearsToken(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestFloorAgainstTheSimulator runs the floor's closed loop against the
// built-in simulator: every request completes with all its tokens timed.
func TestFloorAgainstTheSimulator(t *testing.T) {
	cfg := llmsimtest.Fast()
	sim := llmsimtest.Start(t, cfg)

	const streams, requests, tokens = 4, 10, 5
	res := runFloor(context.Background(), floorLoad{URL: sim.URL(), Model: cfg.Model, Streams: streams, Requests: requests, Tokens: tokens, Timeout: time.Minute})
	if res.Completed != requests || res.Failed != 0 {
		t.Fatalf("completed %d, failed %d (%s), want %d and 0", res.Completed, res.Failed, res.FirstError, requests)
	}
	if st := sim.Server().Stats(); st.Tokens != requests*tokens || st.Received != requests {
		t.Errorf("simulator: %d requests, %d tokens, want %d and %d", st.Received, st.Tokens, requests, requests*tokens)
	}
	if res.TTFTMean <= 0 || res.TTFTP99 < res.TTFTMean || res.ITLP99 <= 0 {
		t.Errorf("timings TTFT mean %.3f p99 %.3f ms, ITL p99 %.3f ms: want positive, p99 ≥ mean", res.TTFTMean, res.TTFTP99, res.ITLP99)
	}
}

func TestPositiveList(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"", nil, false},
		{"1000", []int{1000}, false},
		{"1000, 2000", []int{1000, 2000}, false},
		{"1000,0", nil, true},
		{"x", nil, true},
	} {
		got, err := positiveList(tc.in, "arrival rate")
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("positiveList(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestPaceVerdict: a rate's verdict holds its median lag p99 and every
// run's drops against the targets.
func TestPaceVerdict(t *testing.T) {
	for _, tc := range []struct {
		row  paceRow
		want string
	}{
		{paceRow{1000, []pacing{{lagP99: 1.2}, {lagP99: 9}, {lagP99: 1.9}}}, "lag p99 1.90 ms (target ≤ 2 ms), 0 dropped (target 0): met"},
		{paceRow{1000, []pacing{{lagP99: 1.2}, {lagP99: 1.5, dropped: 3}, {lagP99: 1.8}}}, "lag p99 1.50 ms (target ≤ 2 ms), 3 dropped (target 0): MISSED"},
		{paceRow{2000, []pacing{{lagP99: 4, dropped: 50}}}, "lag p99 4.00 ms (target ≤ 5 ms), 50 dropped: met"},
		{paceRow{2000, []pacing{{lagP99: 6}}}, "lag p99 6.00 ms (target ≤ 5 ms), 0 dropped: MISSED"},
		{paceRow{300, []pacing{{lagP99: 0.5}}}, "lag p99 0.50 ms, 0 dropped (no target at this rate)"},
	} {
		if got := tc.row.verdict(); got != tc.want {
			t.Errorf("verdict(%d/s) = %q, want %q", tc.row.rate, got, tc.want)
		}
	}
}

func TestRSSText(t *testing.T) {
	for _, tc := range []struct {
		rss, floor float64
		want       string
	}{
		{52, 20, "52 MB (2.6×)"},
		{20, 0, "20 MB"},
		{52, -1, "52 MB"},
		{0, 20, "?"},
	} {
		if got := rssText(tc.rss, tc.floor); got != tc.want {
			t.Errorf("rssText(%v, %v) = %q, want %q", tc.rss, tc.floor, got, tc.want)
		}
	}
}

// The page e2eload attaches to a dashboard counts the events of a real
// SSE stream, and says so when it read none or was refused.
func TestAttachedPageCountsEvents(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		want    int64
		wantErr string
	}{
		{"three updates and a drop notice", http.StatusOK, "data: {\"v\":1}\n\nevent: dropped\ndata: 2\n\ndata: {\"v\":1}\n\ndata: {\"v\":1,\"done\":true}\n\n", 4, ""},
		{"an update longer than the reader's buffer", http.StatusOK, "data: {\"x\":\"" + strings.Repeat("x", 100<<10) + "\"}\n\n", 1, ""},
		{"no update", http.StatusOK, "", 0, "read no update"},
		{"too many pages", http.StatusServiceUnavailable, "too many", 0, "503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			n, err := attachPage(ctx, srv.URL+"/events").wait()
			if n != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("read %d events, error %v; want %d, error saying %q", n, err, tc.want, tc.wantErr)
			}
		})
	}
}

// The dashboard's cost is its own CPU in the profile and each pair's
// difference in CPU per second of run at equal tokens, both held against
// 1 % of one core at 1,000 streams.
func TestDashboardCostVerdict(t *testing.T) {
	run := func(cpu, wall float64, tokens uint64) dashboardRun {
		return dashboardRun{cpu: time.Duration(cpu * float64(time.Second)), wall: time.Duration(wall * float64(time.Second)), tokens: tokens}
	}
	profiled := func(r dashboardRun, seconds float64) dashboardRun {
		r.profiled = time.Duration(seconds * float64(time.Second))
		return r
	}
	for _, tc := range []struct {
		cost             dashboardCost
		text, verdictHas string
	}{
		{dashboardCost{1000, []dashboardRun{run(10, 20, 1000), run(10, 20, 1000), run(11, 20, 1000)},
			[]dashboardRun{profiled(run(10.1, 20, 1000), 0.02), profiled(run(9.9, 20, 1000), 0.01), profiled(run(11.4, 20, 1000), 0.04)}},
			"+0.50 (-0.50 to +2.00)", "own CPU is 0.100 % of one core, the run's CPU with it +0.50 (-0.50 to +2.00) % of one core more (target < 1 %): met"},
		{dashboardCost{1000, []dashboardRun{run(10, 20, 1000)}, []dashboardRun{profiled(run(10.4, 20, 1000), 0.02)}}, "+2.00", "(target < 1 %): MISSED"},
		{dashboardCost{1000, []dashboardRun{run(10, 20, 1000)}, []dashboardRun{profiled(run(10, 20, 1000), 0.3)}}, "+0.00", "own CPU is 1.500 % of one core, the run's CPU with it +0.00 % of one core more (target < 1 %): MISSED"},
		// The run with the dashboard streamed 10 % more tokens, for 10 %
		// more CPU: the dashboard cost nothing.
		{dashboardCost{1000, []dashboardRun{run(10, 20, 1000)}, []dashboardRun{run(11, 21, 1100)}}, "+0.00", "with it +0.00 % of one core more (target < 1 %): met"},
		{dashboardCost{100, []dashboardRun{run(2, 20, 1000)}, []dashboardRun{run(2, 20, 1000)}}, "+0.00", "no target at this count"},
	} {
		if got := tc.cost.differenceText(); got != tc.text {
			t.Errorf("differenceText = %q, want %q", got, tc.text)
		}
		if got := tc.cost.verdict(); !strings.Contains(got, tc.verdictHas) {
			t.Errorf("verdict = %q, want it to say %q", got, tc.verdictHas)
		}
	}
}

// dashboardCPU counts the samples of a real CPU profile whose stack
// passes through the dashboard's package, and only those: the test
// spends 300 ms of CPU in the dashboard's collector, then as much in
// code of its own.
func TestDashboardCPUCountsTheDashboardsSamples(t *testing.T) {
	if raceDetector() {
		t.Skip("the race detector's own CPU is sampled without the Go stack that called it")
	}
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Skipf("a CPU profile is being taken already: %v", err)
	}
	c := dashboard.NewCollector(time.Now(), func() engine.Progress { return engine.Progress{} }, nil)
	tags := metrics.NewTagSet(map[string]string{"scenario": "chat"})
	spend(t, 300*time.Millisecond, func(i int) {
		c.AddRequest(&llm.Record{Tags: tags, OK: true, TTFT: float64(i % 500), E2E: float64(i % 900)})
	})
	var sink float64
	spend(t, 300*time.Millisecond, func(i int) { sink += math.Sqrt(float64(i)) })
	pprof.StopCPUProfile()
	f.Close()
	own, all, err := dashboardCPU(path)
	if err != nil {
		t.Fatal(err)
	}
	// The profile samples at 100 Hz: some 30 samples of each part, of
	// which the profiler may miss some on a loaded machine, as many of
	// one part as of the other.
	if all == 0 || own < all/5 || own > all*4/5 {
		t.Errorf("the profile counts %s of CPU in the dashboard of %s in all, want about half", own, all)
	}
	if _, _, err := dashboardCPU(filepath.Join(t.TempDir(), "none.pprof")); err == nil || !strings.Contains(err.Error(), "none.pprof") {
		t.Errorf("a missing profile: %v, want an error naming it", err)
	}
}

// raceDetector says whether the test was built with -race.
func raceDetector() bool {
	info, ok := debug.ReadBuildInfo()
	return ok && slices.Contains(info.Settings, debug.BuildSetting{Key: "-race", Value: "true"})
}

// spend calls work with 0, 1, 2, … until the process has spent cpu more
// CPU time (user and system): a bound in CPU, not in time, which other
// processes' load does not shrink.
func spend(t *testing.T, cpu time.Duration, work func(int)) {
	t.Helper()
	start := processCPU(t)
	for i := 0; processCPU(t)-start < cpu; i++ {
		for j := range 1000 {
			work(i*1000 + j)
		}
	}
}

func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
