package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/inspect"
)

const twoScenarios = `
import llm from 'llm';
const client = llm.client({ model: 'm' }); // clients may be made in init code
export const options = {
  scenarios: {
    chat: { executor: 'constant-vus', vus: 8, duration: '1m', exec: 'chat', tags: { workload: 'chat' } },
    rag:  { executor: 'per-vu-iterations', vus: 2, iterations: 10, startTime: '10s', exec: 'rag',
            maxDuration: '2m', gracefulStop: '5s' },
  },
};
export function chat() { client.stream({ prompt: 'x' }); }
export function rag() {}
export default function () {}
`

// countingServer counts the requests it gets: inspect must send none.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "inspect must not send requests", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func TestInspectText(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	script := writeScript(t, "two.js", twoScenarios)
	code, stdout, stderr := cli(t, context.Background(), nil, "inspect", "--base-url", url, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"2 scenarios, up to 10 VUs, at most 2m15s",
		"│ scenario │ executor",
		"│ chat     │ constant-vus      │ chat() │    0s │   8 │        1m30s │ 8 looping VUs for 1m0s",
		"│ rag      │ per-vu-iterations │ rag()  │   10s │   2 │         2m5s │ 10 iterations for each of 2 VUs",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "handleSummary") {
		t.Errorf("output mentions a handleSummary the script lacks:\n%s", stdout)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("inspect sent %d requests", n)
	}
}

func TestInspectJSON(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "two.js", twoScenarios+"export function handleSummary() { return {}; }\n")
	// Without --base-url inspect starts no simulator and still loads clients.
	code, stdout, stderr := cli(t, context.Background(), nil, "inspect", "--json", script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var in inspect.Inspection
	if err := json.Unmarshal([]byte(stdout), &in); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if in.Script != script || len(in.ScriptSHA256) != 64 || in.MaxVUs != 10 || in.MaxDuration != "2m15s" || in.MaxDurationS != 135 || !in.HandleSummary {
		t.Errorf("inspection = %+v", in)
	}
	if len(in.Scenarios) != 2 {
		t.Fatalf("scenarios = %+v", in.Scenarios)
	}
	chat, rag := in.Scenarios[0], in.Scenarios[1]
	if chat.Name != "chat" || chat.Executor != "constant-vus" || chat.Exec != "chat" || chat.MaxVUs != 8 ||
		chat.StartTime != "0s" || chat.MaxDuration != "1m30s" || chat.MaxDurationS != 90 || chat.Tags["workload"] != "chat" {
		t.Errorf("chat = %+v", chat)
	}
	if rag.Name != "rag" || rag.Executor != "per-vu-iterations" || rag.StartTime != "10s" || rag.StartTimeS != 10 ||
		rag.MaxVUs != 2 || rag.MaxDurationS != 125 || !strings.Contains(rag.Description, "10 iterations for each of 2 VUs") {
		t.Errorf("rag = %+v", rag)
	}
}

// -u, -d and -i replace the scenarios, as in run.
func TestInspectOverrides(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "two.js", twoScenarios)
	for _, tc := range []struct {
		args               []string
		executor, duration string
		vus                int
	}{
		{[]string{"-u", "3", "-d", "20s"}, "constant-vus", "50s", 3},
		{[]string{"--vus=5", "--iterations", "50"}, "shared-iterations", "10m30s", 5},
		{[]string{"-i", "4", "-d", "1m"}, "shared-iterations", "1m30s", 1},
	} {
		args := append(append([]string{"inspect", "--json"}, tc.args...), script)
		code, stdout, stderr := cli(t, context.Background(), nil, args...)
		if code != exitcode.OK {
			t.Errorf("%v: exit %d\n%s", tc.args, code, stderr)
			continue
		}
		var in inspect.Inspection
		if err := json.Unmarshal([]byte(stdout), &in); err != nil {
			t.Fatal(err)
		}
		if len(in.Scenarios) != 1 || in.Scenarios[0].Name != "default" || in.Scenarios[0].Executor != tc.executor ||
			in.MaxVUs != tc.vus || in.MaxDuration != tc.duration {
			t.Errorf("%v: %+v", tc.args, in)
		}
	}
	code, stdout, _ := cli(t, context.Background(), nil, "inspect", "-u", "3", "-d", "20s", script)
	if code != exitcode.OK || !strings.Contains(stdout, "1 scenario, up to 3 VUs, at most 50s") {
		t.Errorf("text with overrides: exit %d\n%s", code, stdout)
	}
}

func TestInspectErrors(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	for _, tc := range []struct {
		name, src string
		args      []string
		code      int
		want      string
	}{
		{"syntax error", "export default function ( {", nil, exitcode.ScriptError, "bad.js:1:"},
		{"init exception", "throw new Error('init failed');\nexport default function () {}", nil, exitcode.ScriptError, "Error: init failed"},
		{"stream in init", "import llm from 'llm';\nllm.stream({ prompt: 'x' });\nexport default function () {}", nil, exitcode.ScriptError,
			"llm.stream() cannot be called in the init context"},
		{"unknown option", "export const options = { vu: 2 };\nexport default function () {}", nil, exitcode.InvalidConfig, "options.vu: unknown field"},
		{"unknown executor", "export const options = { scenarios: { a: { executor: 'nope' } } };\nexport default function () {}", nil, exitcode.InvalidConfig,
			`options.scenarios.a.executor: unknown executor "nope"`},
		{"missing exec", "export const options = { scenarios: { a: { executor: 'constant-vus', duration: '1s', exec: 'gone' } } };\nexport default function () {}",
			nil, exitcode.InvalidConfig, `exports no function "gone"`},
		{"vus alone", "export default function () {}", []string{"-u", "3"}, exitcode.InvalidConfig, "vus needs a duration"},
		{"bad -e", "export default function () {}", []string{"-e", "NOEQUALS"}, exitcode.Usage, "expected KEY=VALUE"},
		{"unknown flag", "export default function () {}", []string{"--nope"}, exitcode.Usage, "unknown flag: --nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := writeScript(t, "bad.js", tc.src)
			args := append(append([]string{"inspect", "--base-url", url}, tc.args...), script)
			code, stdout, stderr := cli(t, context.Background(), nil, args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || !strings.HasPrefix(stderr, "llmrun inspect: ") {
				t.Errorf("exit %d, want %d; stderr:\n%s\nwant it to contain %q", code, tc.code, stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("inspect sent %d requests", n)
	}
	for _, args := range [][]string{{"inspect"}, {"inspect", "a.js", "b.js"}, {"inspect", "/does/not/exist.js"}} {
		if code, _, stderr := cli(t, context.Background(), nil, args...); code != exitcode.Usage || !strings.HasPrefix(stderr, "llmrun inspect: ") {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitcode.Usage, stderr)
		}
	}
}

func TestInspectHelp(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := cli(t, context.Background(), nil, "help", "inspect")
	if code != exitcode.OK || !strings.Contains(stdout, "Usage: llmrun inspect") || !strings.Contains(stdout, "--json") || !strings.Contains(stdout, "--vus") {
		t.Errorf("help inspect: exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "--summary-export") {
		t.Errorf("inspect --help lists run-only flags:\n%s", stdout)
	}
	// A run's command line inspects as it is.
	script := writeScript(t, "s.js", "export default function () {}")
	if code, _, stderr := cli(t, context.Background(), nil, "inspect", "-q", "--no-color", "--summary-export", "x.json", "--timeout", "5s", "-i", "2", script); code != exitcode.OK {
		t.Errorf("run-only flags: exit %d\n%s", code, stderr)
	}
}

// TestInspectAPIKeyEnvUnset checks that inspect, which sends nothing,
// accepts an --api-key-env naming an unset variable, as run's command line
// checked by changing run to inspect would carry one; run refuses it.
func TestInspectAPIKeyEnvUnset(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "two.js", twoScenarios)
	code, stdout, stderr := cli(t, context.Background(), nil, "inspect", "--api-key-env", "LLMRUN_TEST_UNSET_KEY", script)
	if code != exitcode.OK || !strings.Contains(stdout, "2 scenarios, up to 10 VUs") {
		t.Errorf("inspect --api-key-env UNSET: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = cli(t, context.Background(), nil, "run", "--api-key-env", "LLMRUN_TEST_UNSET_KEY", script)
	if code != exitcode.Usage || !strings.Contains(stderr, "the environment variable LLMRUN_TEST_UNSET_KEY is empty or unset") {
		t.Errorf("run --api-key-env UNSET: exit %d, want %d\n%s", code, exitcode.Usage, stderr)
	}
}

// inspect --instances N --instance I prints instance I's share, as
// docs/distributed.md says: the shares of all N add up to the plan.
func TestInspectInstanceShare(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "share.js", `export const options = { scenarios: { chat: { executor: 'shared-iterations', vus: 4, iterations: 10 } } };
export default function () {}
`)
	vus, iterations := 0, 0
	for i := range 3 {
		// No --rendezvous: inspect meets no one.
		code, stdout, stderr := cli(t, t.Context(), nil, "inspect", "--json", "--seed", "1", "--instances", "3", "--instance", strconv.Itoa(i), script)
		if code != exitcode.OK {
			t.Fatalf("instance %d: exit %d\n%s", i, code, stderr)
		}
		var in inspect.Inspection
		if err := json.Unmarshal([]byte(stdout), &in); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		if in.Instance == nil || *in.Instance != i || in.Instances != 3 || in.ExecutionSegment == "" {
			t.Errorf("instance %d: instance %v of %d, segment %q", i, in.Instance, in.Instances, in.ExecutionSegment)
		}
		vus += in.MaxVUs
		var n int
		if _, err := fmt.Sscanf(in.Scenarios[0].Description, "%d iterations", &n); err != nil {
			t.Fatalf("instance %d: description %q", i, in.Scenarios[0].Description)
		}
		iterations += n
	}
	if vus != 4 || iterations != 10 {
		t.Errorf("the instances' shares add up to %d VUs and %d iterations, want 4 and 10", vus, iterations)
	}
	code, stdout, stderr := cli(t, t.Context(), nil, "inspect", "--seed", "1", "--instances", "3", "--instance", "2", script)
	if code != exitcode.OK || !strings.Contains(stdout, "instance 2 of 3, execution segment 2/3:1 of 0,1/3,2/3,1: the VUs, iterations and arrivals below are this instance's share") {
		t.Errorf("text: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = cli(t, t.Context(), nil, "inspect", "--instances", "3", script)
	if code != exitcode.Usage || !strings.Contains(stderr, "--instances 3 needs --instance") {
		t.Errorf("--instances without --instance: exit %d\n%s", code, stderr)
	}
}

// inspect shows a trace replay's plan from its first read of the trace:
// the records and the duration at the speed, for the whole plan and for
// an instance's share; a bad trace is invalid options.
func TestInspectTraceReplay(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := cli(t, t.Context(), nil, "inspect", "-e", "SPEED=4", "-e", "MAX_VUS=200", "../../examples/trace-replay.js")
	if want := "24 records of the trace data/mooncake-trace.jsonl (from 0s to the end) over 3.11825s at 4× speed"; code != exitcode.OK || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, output lacks %q:\n%s\n%s", code, want, stdout, stderr)
	}
	if want := "maxVUs 200,"; !strings.Contains(stdout, want) {
		t.Errorf("the example's MAX_VUS: output lacks %q:\n%s", want, stdout)
	}
	code, stdout, stderr = cli(t, t.Context(), nil, "inspect", "--seed", "1", "--instances", "3", "--instance", "1", "../../examples/trace-replay.js")
	if want := "8 records of the trace"; code != exitcode.OK || !strings.Contains(stdout, want) {
		t.Errorf("instance 1 of 3: exit %d, output lacks %q:\n%s\n%s", code, want, stdout, stderr)
	}
	code, _, stderr = cli(t, t.Context(), nil, "inspect", "-e", "TRACE=../../modules/data/trace/testdata/README.md", "../../examples/trace-replay.js")
	if code != exitcode.InvalidConfig || !strings.Contains(stderr, "README.md:1: cannot tell the trace's format") {
		t.Errorf("a file that is no trace: exit %d\n%s", code, stderr)
	}
}
