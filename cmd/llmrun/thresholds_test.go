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

	"github.com/llmrun/llmrun/runtime/exitcode"
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
	if code != exitcode.Thresholds {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Thresholds, stdout, stderr)
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
	if code != exitcode.OK {
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
	if code != exitcode.ThresholdAbort {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.ThresholdAbort, stdout, stderr)
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
		// As near to llm_ttfb as to llm_ttft: both are offered.
		{`{ llm_ttf: ['p(95)<500'] }`, `unknown metric "llm_ttf" (did you mean "llm_ttfb" or "llm_ttft"?)`},
		{`{ llm_failed: ['avg<1'] }`, `does not apply to rate metric`},
		// Thresholds on the server's figures load with the script's.
		{`{ server_kv_cache_usag: ['max<0.95'] }`, `options.thresholds["server_kv_cache_usag"]: unknown metric "server_kv_cache_usag" (did you mean "server_kv_cache_usage"?)`},
		{`{ gpu_enrgy_per_token: ['avg<0.5'] }`, `did you mean "gpu_energy_per_token"`},
		{`{ server_queue_time: ['p(95)<0.5'] }`, `options.thresholds["server_queue_time"][0]: aggregation "p(95)" does not apply to server histogram "server_queue_time": want avg, med, p(50), p(90) or p(99)`},
		{`{ 'server_preemptions{scenario:default}': ['count==0'] }`, `a server figure takes no tag filter`},
		{`{ server_preemptions: [{ threshold: 'count==0', abortOnFail: true }] }`, `abortOnFail does not apply to a server figure`},
	}
	for _, tc := range tests {
		script := writeScript(t, "bad.js", "export const options = { thresholds: "+tc.thresholds+" };\nexport default function () {}\n")
		code, _, stderr := cli(t, context.Background(), nil, "run", "-q", script)
		if code != exitcode.InvalidConfig || !strings.Contains(stderr, tc.want) {
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
	if code != exitcode.Thresholds {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Thresholds, stdout, stderr)
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

// A selector naming a scenario the options do not have (the typo
// of chat), or an error class llmrun does not have, is refused when the
// script loads, naming the nearest real one; so is one naming a scenario
// the command line's load flags replaced.
func TestThresholdOnAValueThatCannotOccurIsRefused(t *testing.T) {
	t.Parallel()
	const script = `
import llm from 'llm';
export const options = {
  scenarios: {
    chat: { executor: 'shared-iterations', vus: 1, iterations: 1, exec: 'chat' },
    rag: { executor: 'shared-iterations', vus: 1, iterations: 1, exec: 'rag' },
  },
  thresholds: { THRESHOLDS },
};
export function chat() { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
export function rag() { llm.stream({ prompt: 'context', max_tokens: 2 }); }
`
	tests := []struct {
		name, thresholds string
		flags            []string
		want             string
	}{
		{"the issue's typo", `'llm_ttft{scenario:chta}': ['p(99)<500']`, nil,
			`options.thresholds["llm_ttft{scenario:chta}"]: no scenario is named "chta" (did you mean "chat"?): the scenarios are chat, rag`},
		{"an error class", `'llm_errors{error_class:http_500}': ['count<1']`, nil,
			`options.thresholds["llm_errors{error_class:http_500}"]: error_class has no value "http_500" on llm_errors (did you mean "http_5xx"?)`},
		{"scenarios replaced by flags", `'llm_ttft{scenario:chat}': ['p(99)<500']`, []string{"-d", "1s"},
			`no scenario is named "chat": the scenarios are default; the command line's load flags (--vus, --duration, --iterations, --stage) replaced the script's scenarios (chat, rag) with one named "default"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScript(t, "typo.js", strings.Replace(script, "THRESHOLDS", tc.thresholds, 1))
			args := append(append([]string{"run", "-q"}, tc.flags...), path)
			code, stdout, stderr := cli(t, context.Background(), nil, args...)
			if code != exitcode.InvalidConfig || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q\nstdout %s\nstderr %s", code, exitcode.InvalidConfig, tc.want, stdout, stderr)
			}
		})
	}
}

// At the end of a run, a latency threshold that saw no sample fails and
// says so (exit 99), unless it accepts none (noSamples: 'pass'); a counter
// without samples counts 0, and passes count<1.
func TestThresholdsWithoutSamples(t *testing.T) {
	t.Parallel()
	const script = `
import llm from 'llm';
export const options = {
  iterations: 2,
  thresholds: {
    'llm_ttft{model:no-such-model}': [TTFT],
    'llm_errors': ['count<1'],
  },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`
	tests := []struct {
		name, ttft string
		code       int
		want       []string
	}{
		{"fails", `'p(99)<500'`, exitcode.Thresholds, []string{
			"✗ llm_ttft{model:no-such-model}", "no samples: no p(99) to judge (noSamples: 'pass' accepts that)",
			"✓ llm_errors", "no samples, counted as 0"}},
		{"accepted", `{ threshold: 'p(99)<500', noSamples: 'pass' }`, exitcode.OK, []string{
			"✓ llm_ttft{model:no-such-model}", "no samples (accepted: noSamples is 'pass')", "✓ llm_errors"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScript(t, "empty.js", strings.Replace(script, "TTFT", tc.ttft, 1))
			export := filepath.Join(t.TempDir(), "summary.json")
			code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--summary-export", export, path)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("summary lacks %q:\n%s", w, stdout)
				}
			}
			s := readSummary(t, export)
			if len(s.Thresholds) != 2 || s.Thresholds[1].Value != 0 || !s.Thresholds[1].Passed || s.Thresholds[0].Passed != (tc.code == exitcode.OK) {
				t.Errorf("result file's thresholds %+v", s.Thresholds)
			}
		})
	}
}

// A sweep stopped early skips its later levels: their thresholds are
// reported skipped, not failed, and the run passes. (An SLO no request
// meets stops it after its first level.)
func TestThresholdsOfASkippedSweepLevel(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "sweep.js", `
import llm from 'llm';
export const options = {
  scenarios: {
    c1: { executor: 'shared-iterations', vus: 1, iterations: 2, tags: { concurrency: '1' } },
    c2: { executor: 'shared-iterations', vus: 2, iterations: 4, startAfter: 'c1', tags: { concurrency: '2' } },
  },
  slo: { ttft_p99: 0.001 },
  capacity: { stop: 'slo' },
  thresholds: {
    'llm_ttft{scenario:c1}': ['p(99)<60000'],
    'llm_ttft{scenario:c2}': ['p(99)<60000'],
  },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.OK, stdout, stderr)
	}
	s := readSummary(t, export)
	if len(s.ChainStops) != 1 || strings.Join(s.ChainStops[0].Skipped, ",") != "c2" {
		t.Fatalf("chain stops %+v, want c2 skipped", s.ChainStops)
	}
	if len(s.Thresholds) != 2 || s.Thresholds[0].Skipped || !s.Thresholds[1].Skipped || !s.Thresholds[1].Passed {
		t.Errorf("thresholds %+v, want c1's judged and c2's skipped", s.Thresholds)
	}
	if want := "- llm_ttft{scenario:c2}"; !strings.Contains(stdout, want) || !strings.Contains(stdout, "skipped: scenario c2 did not run (its chain stopped after c1)") {
		t.Errorf("summary lacks the skipped threshold:\n%s", stdout)
	}
}

// A 1-VU plan split three ways runs in one part: the two parts without a
// VU of it skip its thresholds, the whole metric's too (no scenario ran
// there), and pass; the part that ran it judges them.
func TestThresholdsOfAnExecutionSegmentWithoutVUs(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "segments.js", `
import llm from 'llm';
export const options = {
  scenarios: { one: { executor: 'constant-vus', vus: 1, duration: '300ms' } },
  thresholds: { 'llm_ttft{scenario:one}': ['p(99)<60000'], 'llm_ttft': ['p(99)<60000'] },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`)
	judged := 0
	for _, seg := range []string{"0:1/3", "1/3:2/3", "2/3:1"} {
		export := filepath.Join(t.TempDir(), "summary.json")
		code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--seed", "1",
			"--execution-segment", seg, "--execution-segment-sequence", "0,1/3,2/3,1", "--summary-export", export, script)
		if code != exitcode.OK {
			t.Fatalf("segment %s: exit %d\n%s\n%s", seg, code, stdout, stderr)
		}
		ths := readSummary(t, export).Thresholds
		if len(ths) != 2 || ths[0].Skipped != ths[1].Skipped || !ths[0].Passed || !ths[1].Passed {
			t.Fatalf("segment %s: thresholds %+v, want both judged or both skipped, passed", seg, ths)
		}
		if !ths[0].Skipped {
			judged++
			continue
		}
		const why = "this execution segment has no VU of it"
		if ths[0].Note != "skipped: scenario one did not run ("+why+")" || ths[1].Note != "skipped: no scenario ran (one: "+why+")" {
			t.Errorf("segment %s: notes %q, %q", seg, ths[0].Note, ths[1].Note)
		}
	}
	if judged != 1 {
		t.Errorf("%d parts judged the thresholds, want the 1 that ran the VU", judged)
	}
}

// setup() and teardown() tag their samples with their own names, which a
// threshold may select when the script exports them, and not otherwise.
func TestThresholdOnSetupsSamples(t *testing.T) {
	t.Parallel()
	const script = `
import llm from 'llm';
export const options = { iterations: 1, thresholds: { 'llm_ttft{scenario:setup}': ['p(99)<60000'] } };
SETUP
export default function () {}
`
	tests := []struct {
		name, setup string
		code        int
		want        string
	}{
		{"exported", "export function setup() { llm.stream({ prompt: 'hi', max_tokens: 2 }); }", exitcode.OK, "✓ llm_ttft{scenario:setup}"},
		{"not exported", "", exitcode.InvalidConfig, `no scenario is named "setup": the scenarios are default`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScript(t, "setup.js", strings.Replace(script, "SETUP", tc.setup, 1))
			code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", path)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
}
