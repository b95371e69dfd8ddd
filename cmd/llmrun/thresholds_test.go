package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const thresholdScript = `
import llm from 'llm';
export const options = {
  iterations: 4,
  thresholds: {
    'llm_failed': ['rate<0.01'],
    'llm_ttft{scenario:default}': ['p(99)<60000', 'avg<0.001'],
    'llm_output_tokens': ['count>=16'],
  },
};
export default function () {
  llm.stream({ prompt: 'hi', max_tokens: 4, ignore_eos: true });
}
export function handleSummary(data) {
  return { [__ENV.OUT]: JSON.stringify(data.metrics['llm_ttft{scenario:default}']) };
}
`

// A failed threshold exits 99; each threshold is shown with what was
// observed, and handleSummary sees the outcome on the sub-metric.
func TestFailedThresholdExits99(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "thresholds.js", thresholdScript)
	dir := t.TempDir()
	export, hsOut := filepath.Join(dir, "summary.json"), filepath.Join(dir, "hs.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-e", "OUT="+hsOut, "--summary-export", export, script)
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitThresholds, stdout, stderr)
	}
	s := readSummary(t, export)
	want := map[string]bool{"rate<0.01": true, "p(99)<60000": true, "avg<0.001": false, "count>=16": true}
	if len(s.Thresholds) != len(want) {
		t.Fatalf("thresholds %+v", s.Thresholds)
	}
	for _, th := range s.Thresholds {
		if passed, ok := want[th.Threshold]; !ok || passed != th.Passed {
			t.Errorf("%s %s: passed=%v (observed %g), want %v", th.Metric, th.Threshold, th.Passed, th.Value, passed)
		}
		if th.Threshold == "count>=16" && th.Value != 16 {
			t.Errorf("count>=16 observed %g, want 16 output tokens", th.Value)
		}
	}
	sub, ok := s.Metrics["llm_ttft{scenario:default}"]
	if !ok || sub.Values["count"] != 4 {
		t.Errorf("sub-metric llm_ttft{scenario:default} = %+v", sub)
	}
	b, err := os.ReadFile(hsOut)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"avg<0.001":{"ok":false}`) || !strings.Contains(string(b), `"p(99)<60000":{"ok":true}`) {
		t.Errorf("handleSummary data lacks the threshold outcomes: %s", b)
	}
}

func TestPassingThresholdsExit0AndAreShown(t *testing.T) {
	t.Parallel()
	// The same thresholds with the failing one turned around, and no
	// handleSummary, so that the console summary is printed.
	src := strings.Replace(thresholdScript, "'avg<0.001'", "'avg>0'", 1)
	script := writeScript(t, "ok.js", strings.Split(src, "export function handleSummary")[0])
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", script)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"thresholds", "✓ llm_ttft{scenario:default}", "p(99)<60000", "✓ llm_failed"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("summary lacks %q:\n%s", w, stdout)
		}
	}
}

// An abortOnFail threshold stops a long run early and exits 108.
func TestAbortOnFailStopsTheRun(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "abort.js", `
import llm from 'llm';
export const options = {
  vus: 2, duration: '1m',
  thresholds: { llm_failed: [{ threshold: 'rate<0.5', abortOnFail: true, delayAbortEval: '1s' }] },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`)
	// A server that fails every request with a 500, which the early stop
	// leaves to the thresholds (load may explain a 5xx).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusInternalServerError)
	}))
	defer srv.Close()
	start := time.Now()
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--base-url", srv.URL, "--model", "m", script)
	if code != exitThresholdAbort {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitThresholdAbort, stdout, stderr)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("the run took %v: the threshold did not stop it", el)
	}
	if !strings.Contains(stdout, "aborted early by a threshold") || !strings.Contains(stdout, "✗ llm_failed") {
		t.Errorf("summary:\n%s", stdout)
	}
}

func TestBadThresholdsAreConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ thresholds, want string }{
		{`{ llm_ttft: ['p95<500'] }`, `options.thresholds["llm_ttft"][0]`},
		{`{ llm_tfft: ['p(95)<500'] }`, `did you mean "llm_ttft"`},
		{`{ llm_failed: ['avg<1'] }`, `does not apply to rate metric`},
	}
	for _, tc := range tests {
		script := writeScript(t, "bad.js", "export const options = { thresholds: "+tc.thresholds+" };\nexport default function () {}\n")
		code, _, stderr := cli(t, context.Background(), nil, "run", "-q", script)
		if code != exitInvalidConfig || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %s; want 104 and %q", tc.thresholds, code, stderr, tc.want)
		}
	}
}

// Concurrent scenarios keep their own tags, and thresholds on their
// sub-metrics judge each one alone.
func TestMixedScenariosKeepTheirOwnThresholds(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "mixed.js", `
import llm from 'llm';
export const options = {
  scenarios: {
    chat: { executor: 'shared-iterations', vus: 2, iterations: 6, exec: 'chat', tags: { workload: 'chat' } },
    rag: { executor: 'constant-arrival-rate', rate: 20, duration: '500ms', preAllocatedVUs: 4, arrival: 'poisson',
           exec: 'rag', tags: { workload: 'rag' } },
  },
  thresholds: {
    'llm_requests{workload:chat}': ['count==6'],
    'llm_output_tokens{workload:chat}': ['count==12'],
    'llm_output_tokens{workload:rag}': ['count<1'],
  },
};
export function chat() { llm.stream({ prompt: 'hi', max_tokens: 2, ignore_eos: true }); }
export function rag() { llm.stream({ prompt: 'long context', max_tokens: 3, ignore_eos: true }); }
`)
	export := filepath.Join(t.TempDir(), "summary.json")
	// A fixed seed, for the Poisson arrivals of rag.
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--seed", "1", "--summary-export", export, script)
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitThresholds, stdout, stderr)
	}
	s := readSummary(t, export)
	got := map[string]bool{}
	for _, th := range s.Thresholds {
		got[th.Metric] = th.Passed
	}
	want := map[string]bool{"llm_requests{workload:chat}": true, "llm_output_tokens{workload:chat}": true, "llm_output_tokens{workload:rag}": false}
	for k, v := range want {
		if p, ok := got[k]; !ok || p != v {
			t.Errorf("%s passed=%v (present %v), want %v", k, p, ok, v)
		}
	}
	if rag := s.Metrics["llm_output_tokens{workload:rag}"].Values["count"]; rag == 0 || int(rag)%3 != 0 {
		t.Errorf("rag output tokens %g: want a positive multiple of 3 (its requests only)", rag)
	}
	if !strings.Contains(stdout, "✗ llm_output_tokens{workload:rag}") || !strings.Contains(stdout, "by scenario") {
		t.Errorf("summary:\n%s", stdout)
	}
}
