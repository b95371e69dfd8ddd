package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// startDyingSim starts a simulator that dies once it has taken answered
// requests (the preflight's included): it cuts the requests in flight,
// closes its listener and its connections, so that every later request
// is refused.
func startDyingSim(t *testing.T, answered int64) string {
	t.Helper()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var taken atomic.Int64
	die := make(chan struct{})
	var dying atomic.Bool
	kill := func() {
		if dying.CompareAndSwap(false, true) {
			close(die)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if taken.Add(1) == answered {
			kill()
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	dead := make(chan struct{})
	go func() {
		defer close(dead)
		<-die
		sim.Close()
		srv.Close()
	}()
	t.Cleanup(func() {
		kill()
		<-dead
	})
	return srv.URL
}

// Issue 26's case: llmrun run -d 20s -u 4 against a server that dies
// after its first 40 requests. The run stops some 5 s later (the early
// stop's mid-run rule) with exit 111, the summary, stderr and the result
// file say when and why, the VUs back off meanwhile (tens of refused
// requests, not thousands), and the low success rate is a warning.
func TestServerDyingMidRunStopsTheRun(t *testing.T) {
	t.Parallel()
	url := startDyingSim(t, 40)
	script := writeScript(t, "simple.js", fmt.Sprintf(chatScript, 4))
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "--base-url", url, "-d", "20s", "-u", "4",
		"--summary-export", export, script)
	if code != exitcode.NoSuccess || !strings.Contains(stderr, "stopped early: the server stopped answering: from ") ||
		!strings.Contains(stderr, "connect: connection refused") {
		t.Fatalf("exit %d, want %d and the mid-run early stop on stderr\n%s\n%s", code, exitcode.NoSuccess, stdout, stderr)
	}
	if !strings.Contains(stdout, "stopped early: the server stopped answering: from ") || !strings.Contains(stdout, "WARNING: only ") {
		t.Errorf("the summary does not say the run stopped early, or does not warn of its success rate:\n%s", stdout)
	}
	s := readSummary(t, export)
	if s.EarlyStopAt < 5 || s.EarlyStopAt > 15 || !strings.Contains(s.EarlyStop, fmt.Sprintf("the run was stopped at %.1f s", s.EarlyStopAt)) {
		t.Errorf("early stop at %v s: %q; want some 5 s after the death, well before 20 s, in both fields", s.EarlyStopAt, s.EarlyStop)
	}
	// 4 VUs, each pausing 10 ms, 20 ms, … up to 1 s between refused
	// requests: about 9 each in the first 1.3 s, then one a second, some
	// 60 in all by the stop, where VUs without a pause send thousands.
	if s.Serving.OK < 30 || s.Serving.Failed < 10 || s.Serving.Failed > 100 {
		t.Errorf("%d ok, %d failed: want about 40 ok, then a paced few refused", s.Serving.OK, s.Serving.Failed)
	}
	if !strings.Contains(s.LowSuccess, fmt.Sprintf("only %d of %d requests succeeded", s.Serving.OK, s.Serving.Requests)) ||
		!strings.Contains(stderr, "WARNING: "+s.LowSuccess) {
		t.Errorf("low success %q, not on stderr:\n%s", s.LowSuccess, stderr)
	}
	t.Logf("%d ok, %d failed; stopped at %.1f s: %s", s.Serving.OK, s.Serving.Failed, s.EarlyStopAt, s.EarlyStop)
}

// With options.earlyStop.midRun false, a server that dies does not stop
// the run, which runs its course and passes on what succeeded; its VUs
// still back off.
func TestMidRunEarlyStopTurnedOff(t *testing.T) {
	t.Parallel()
	url := startDyingSim(t, 10)
	script := writeScript(t, "off.js", `import llm from 'llm';
export const options = { earlyStop: { midRun: false } };
export default function () { llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }); }`)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", url, "-d", "7s", "-u", "4",
		"--summary-export", export, script)
	s := readSummary(t, export)
	if code != exitcode.OK || s.EarlyStop != "" || s.EarlyStopAt != 0 || s.Serving.DurationSeconds < 7 {
		t.Fatalf("exit %d, early stop %q at %v s after %.1f s; want the run's 7 s and exit 0\n%s\n%s", code, s.EarlyStop, s.EarlyStopAt, s.Serving.DurationSeconds, stdout, stderr)
	}
	if s.Serving.Failed < 10 || s.Serving.Failed > 100 || s.LowSuccess == "" {
		t.Errorf("%d refused requests, low success %q: want a paced few, and the warning", s.Serving.Failed, s.LowSuccess)
	}
}

// A run in which half the requests fail passes when no threshold says
// otherwise, but warns of its success rate in the summary, on stderr and
// in the result file, below 90 % or the floor its options set.
func TestLowSuccessRateWarns(t *testing.T) {
	t.Parallel()
	url := startSim(t, llmsim.DefaultConfig())
	script := writeScript(t, "half.js", `import llm from 'llm';
export default function () {
  llm.stream({ prompt: 'hi', max_tokens: 4 }, { headers: __ITER % 2 ? { 'X-Llmsim-Fault': 'http_5xx' } : {} });
}`)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "--base-url", url, "-i", "10", "--summary-export", export, script)
	want := "only 5 of 10 requests succeeded (success rate 50.00 %, below 90 %)"
	if code != exitcode.OK || !strings.Contains(stdout, "WARNING: "+want) || !strings.Contains(stderr, "WARNING: "+want) {
		t.Fatalf("exit %d, want 0 and the warning in the summary and on stderr\n%s\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, export); !strings.Contains(s.LowSuccess, want) {
		t.Errorf("low_success %q", s.LowSuccess)
	}

	// A run that expects failures (faults injected on purpose) sets its
	// own floor, or none.
	for _, opts := range []string{"{ minSuccessRate: 0.4 }", "{ minSuccessRate: 0 }"} {
		script := writeScript(t, "expected.js", `import llm from 'llm';
export const options = { earlyStop: `+opts+` };
export default function () {
  llm.stream({ prompt: 'hi', max_tokens: 4 }, { headers: __ITER % 2 ? { 'X-Llmsim-Fault': 'http_5xx' } : {} });
}`)
		code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "--base-url", url, "-i", "10", script)
		if code != exitcode.OK || strings.Contains(stdout+stderr, "WARNING: only") {
			t.Errorf("earlyStop %s: exit %d, want 0 and no warning\n%s\n%s", opts, code, stdout, stderr)
		}
	}
}
