package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
)

// cli runs the command line in-process and returns its exit code and output.
func cli(t *testing.T, ctx context.Context, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code := run(ctx, args, &stdout, &stderr, getenv)
	return code, stdout.String(), stderr.String()
}

// command runs the llmrun command name with args in-process, without
// environment, and returns its exit code and output.
func command(t *testing.T, name string, args ...string) (int, string, string) {
	t.Helper()
	return cli(t, context.Background(), nil, append([]string{name}, args...)...)
}

func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readSummary(t *testing.T, path string) *summary.Summary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s summary.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary export is not valid JSON: %v", err)
	}
	return &s
}

func latencyRow(t *testing.T, s *summary.Summary, metric string) summary.LatencyRow {
	t.Helper()
	for _, r := range s.Latency {
		if r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no %s row in %+v", metric, s.Latency)
	return summary.LatencyRow{}
}

func startSim(t *testing.T, cfg llmsim.Config) string {
	t.Helper()
	srv, err := llmsim.Listen(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.URL()
}

const chatScript = `
import llm from 'llm';
import { check } from 'llmrun';
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: 'Say something.' }], max_tokens: %d, ignore_eos: true, temperature: 0 });
  check(r, { ok: (r) => r.ok });
}
`

// With no queueing (one VU, an idle simulator) the measured TTFT and ITL
// are the server's: within 5 % of the simulator's own view of each request
// (arrival to first token flushed, gap between flushes), which is the
// configured prefill and decode time on an idle machine and more when
// other work delays the simulator's timers. It runs alone, not in
// parallel.
func TestMeasuredTimingMatchesTheSimulator(t *testing.T) {
	const prefill, decode, maxTokens, iterations = 200 * time.Millisecond, 40 * time.Millisecond, 8, 8
	cfg := llmsim.DefaultConfig()
	cfg.PrefillBase, cfg.PrefillPerToken = prefill, 0
	cfg.DecodeBase, cfg.DecodePerSeq = decode, 0
	sim, err := llmsim.Listen(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	script := writeScript(t, "timing.js", fmt.Sprintf(chatScript, maxTokens))
	export := filepath.Join(t.TempDir(), "summary.json")

	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--base-url", sim.URL(), "-i", fmt.Sprint(iterations), "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	st := sim.Server().Stats()
	// On a loaded machine the simulator's handler may wake after two
	// tokens were generated and flush them together: fewer flushes, the
	// same span. The server's gap per token is that span over the tokens
	// after the first, which is what the client's ITL mean is too (two
	// tokens in one read are one gap of about 0).
	const gaps = iterations * (maxTokens - 1)
	if st.FirstTokens != iterations || st.FlushGaps == 0 || st.FlushGaps > gaps {
		t.Fatalf("the simulator timed %d first tokens and %d gaps, want %d and 1 to %d", st.FirstTokens, st.FlushGaps, iterations, gaps)
	}
	serverTTFT, serverGap := st.TTFTSum/time.Duration(st.FirstTokens), st.FlushGapSum/time.Duration(gaps)
	if serverTTFT < prefill || serverGap < decode*9/10 {
		t.Fatalf("the simulator's own TTFT %v and gap %v, below its configured %v and %v", serverTTFT, serverGap, prefill, decode)
	}
	within := func(name string, got float64, want time.Duration) {
		w := float64(want) / float64(time.Millisecond)
		if math.Abs(got-w) > 0.05*w {
			t.Errorf("%s = %.2f ms, want the server's %.2f ms ± 5 %%", name, got, w)
		}
	}
	within("TTFT mean", latencyRow(t, s, "llm_ttft").Mean, serverTTFT)
	within("ITL mean", latencyRow(t, s, "llm_itl").Mean, serverGap)
	if s.Serving.OK != iterations || s.Serving.Failed != 0 {
		t.Errorf("ok %d failed %d, want %d and 0", s.Serving.OK, s.Serving.Failed, iterations)
	}
	if s.Serving.OutputTokens != iterations*maxTokens {
		t.Errorf("output tokens %d, want %d (ignore_eos and max_tokens honoured)", s.Serving.OutputTokens, iterations*maxTokens)
	}
	if got := latencyRow(t, s, "llm_itl").Count; got != gaps {
		t.Errorf("ITL samples %d, want %d (one per gap)", got, gaps)
	}
	for _, want := range []string{"TTFT", "TPOT", "ITL", "E2E", "request throughput", "✓ ok"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

// A server that fails in every way still gives a summary, classified errors
// and exit code 0: failures are results, not crashes.
func TestFailingServerGivesClassifiedErrors(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 3 {
		case 0:
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
		case 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\n")
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}
	}))
	defer srv.Close()
	script := writeScript(t, "fail.js", fmt.Sprintf(chatScript, 8))
	export := filepath.Join(t.TempDir(), "summary.json")

	// --model spares the GET /v1/models that would take a turn of the
	// server's failure cycle.
	// No preflight either, for the same reason. Every request fails:
	// the run does not pass.
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--base-url", srv.URL, "--model", "m", "-i", "9", "--summary-export", export, script)
	if code != exitcode.NoSuccess || !strings.Contains(stderr, "no request succeeded: all 9 failed") {
		t.Fatalf("exit %d, want %d and why\nstdout:\n%s\nstderr:\n%s", code, exitcode.NoSuccess, stdout, stderr)
	}
	s := readSummary(t, export)
	got := map[string]int64{}
	messages := map[string][]string{}
	for _, e := range s.Errors {
		got[e.Class] = e.Count
		for _, m := range e.Messages {
			messages[e.Class] = append(messages[e.Class], fmt.Sprintf("%d× %s", m.Count, m.Message))
		}
	}
	if got["http_5xx"] != 3 || got["http_429"] != 3 || got["cut"] != 3 {
		t.Errorf("errors by class = %v, want 3 each of http_5xx, http_429, cut", got)
	}
	// Each class shows its messages: one distinct message, seen 3 times.
	wantMessages := map[string][]string{
		"http_5xx": {`3× HTTP 500 Internal Server Error: {"error":{"message":"overloaded"}}`},
		"http_429": {`3× HTTP 429 Too Many Requests (Retry-After 1s): {"error":{"message":"slow down"}}`},
		"cut":      {"3× the stream ended after 1 events, before [DONE] or a finish_reason: sse: read: unexpected EOF"},
	}
	if !reflect.DeepEqual(messages, wantMessages) {
		t.Errorf("messages by class = %q\nwant %q", messages, wantMessages)
	}
	for _, m := range []string{"overloaded", "Retry-After 1s", "before [DONE]"} {
		if !strings.Contains(stdout, m) {
			t.Errorf("the console summary lacks the message %q:\n%s", m, stdout)
		}
	}
	if s.Serving.Failed != 9 || s.Serving.SuccessRate != 0 {
		t.Errorf("failed %d success rate %g", s.Serving.Failed, s.Serving.SuccessRate)
	}
	if !strings.Contains(stdout, "http_429") || !strings.Contains(stdout, "✗ ok") {
		t.Errorf("summary does not show the errors and the failed check:\n%s", stdout)
	}
}

// A server that refuses connections stops the run at the preflight, before
// any load, naming the target and what to fix, and leaves no result file.
// Without the preflight, its requests are connect errors, and the run does
// not pass.
func TestUnreachableServerIsAConnectError(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "down.js", fmt.Sprintf(chatScript, 8))
	export := filepath.Join(t.TempDir(), "summary.json")
	// Port 1 on loopback has no listener: the connection is refused.
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", "http://127.0.0.1:1", "-i", "2", "--summary-export", export, script)
	if code != exitcode.Preflight || !strings.Contains(stderr, "preflight: http://127.0.0.1:1") ||
		!strings.Contains(stderr, "fix: nothing accepts connections at http://127.0.0.1:1") {
		t.Fatalf("exit %d, want %d naming the target and the fix\n%s\n%s", code, exitcode.Preflight, stdout, stderr)
	}
	if _, err := os.Stat(export); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run stopped at the preflight left a result file: %v", err)
	}
	code, stdout, stderr = cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--base-url", "http://127.0.0.1:1", "-i", "2", "--summary-export", export, script)
	if code != exitcode.NoSuccess {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	if len(s.Errors) != 1 || s.Errors[0].Class != "connect" || s.Errors[0].Count != 2 {
		t.Errorf("errors = %+v, want 2 connect errors", s.Errors)
	}
}

func TestBadInputGivesClearMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	syntax := writeScript(t, "syntax.js", "export default function () {\n  const x = ;\n}\n")
	badOpts := writeScript(t, "opts.js", "export const options = { vus: 2, duraton: '10s' };\nexport default function () {}\n")
	noExec := writeScript(t, "noexec.js", "export const options = { scenarios: { a: { executor: 'shared-iterations', exec: 'chat' } } };\nexport default function () {}\n")
	valid := writeScript(t, "valid.js", "export default function () {}\n")
	initThrow := writeScript(t, "init.js", "import llm from 'llm';\n\nthrow new Error('no config');\nexport default function () {}\n")
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"missing script", []string{"run", filepath.Join(dir, "nope.js")}, exitcode.Usage, []string{"nope.js", "no such file"}},
		{"no script", []string{"run"}, exitcode.Usage, []string{"expected one script"}},
		{"unknown flag", []string{"run", "--bogus", syntax}, exitcode.Usage, []string{"unknown flag: --bogus", "llmrun run --help"}},
		{"unknown command", []string{"frobnicate"}, exitcode.Usage, []string{`unknown command "frobnicate"`}},
		{"syntax error", []string{"run", syntax}, exitcode.ScriptError, []string{"syntax.js:2:13", "const x = ;", "^"}},
		{"unknown option", []string{"run", badOpts}, exitcode.InvalidConfig, []string{"options.duraton: unknown field"}},
		{"missing exec", []string{"run", noExec}, exitcode.InvalidConfig, []string{"options.scenarios.a.exec", `no function "chat"`}},
		{"init exception", []string{"run", initThrow}, exitcode.ScriptError, []string{"init.js:3:", "no config"}},
		{"bad -e", []string{"run", "-e", "NOEQUALS", syntax}, exitcode.Usage, []string{"KEY=VALUE"}},
		{"vus alone", []string{"run", "-u", "3", valid}, exitcode.InvalidConfig, []string{"vus needs a duration or a number of iterations"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, context.Background(), nil, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// Without --model, the default model is the first the server lists.
func TestDefaultModelFromTheServer(t *testing.T) {
	t.Parallel()
	cfg := llmsim.DefaultConfig()
	cfg.Model = "served-model-7b"
	url := startSim(t, cfg)
	script := writeScript(t, "model.js", fmt.Sprintf(chatScript, 2))
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--base-url", url, "-i", "1", "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, export); len(s.Meta.Models) != 1 || s.Meta.Models[0] != "served-model-7b" {
		t.Errorf("models %v, want the served one", s.Meta.Models)
	}
	if !strings.Contains(stdout, "model:     served-model-7b") {
		t.Errorf("banner:\n%s", stdout)
	}
}

// The bare form "llmrun script.js", __ENV from -e, and the API key from
// --api-key-env sent as a bearer token but never printed.
func TestShorthandEnvAndAPIKey(t *testing.T) {
	t.Parallel()
	const key = "sk-test-secret-123"
	var auth, metricsAuth atomic.Value
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only the API's requests: the run also reads the server's
		// /metrics, and sends no key there.
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			auth.Store(r.Header.Get("Authorization"))
		} else if r.URL.Path == "/metrics" {
			metricsAuth.Store(r.Header.Get("Authorization"))
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	script := writeScript(t, "env.js", `
import llm from 'llm';
import { check } from 'llmrun';
export default function () {
  const r = llm.stream({ prompt: 'hi', max_tokens: 3 });
  check(r, { ['greeting is ' + __ENV.GREETING]: () => __ENV.GREETING === 'hello', ok: (r) => r.ok });
}`)
	env := map[string]string{"MY_KEY": key}
	code, stdout, stderr := cli(t, context.Background(), env, script, "-q", "--base-url", srv.URL, "--api-key-env", "MY_KEY", "-e", "GREETING=hello", "-i", "1")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := auth.Load(); got != "Bearer "+key {
		t.Errorf("Authorization = %v", got)
	}
	if got := metricsAuth.Load(); got != "" {
		t.Errorf("the server's /metrics was read with Authorization %q (or not read: %v), want it read without the key", got, got == nil)
	}
	if !strings.Contains(stdout, "✓ greeting is hello") || !strings.Contains(stdout, "✓ ok") {
		t.Errorf("checks failed:\n%s", stdout)
	}
	if strings.Contains(stdout+stderr, key) {
		t.Error("the API key appears in the output")
	}
	code, _, stderr = cli(t, context.Background(), nil, script, "--api-key-env", "UNSET_VAR", "-i", "1")
	if code != exitcode.Usage || !strings.Contains(stderr, "UNSET_VAR") {
		t.Errorf("an empty --api-key-env variable: exit %d, %s", code, stderr)
	}
}

// Ctrl-C (a canceled context) stops the run, cuts in-flight requests as
// interrupted, still prints the summary and exits 105. The context is
// canceled once the simulator holds the four VUs' requests, however long
// a busy machine took to start them.
func TestInterruptedRunStillSummarises(t *testing.T) {
	t.Parallel()
	cfg := llmsim.DefaultConfig()
	cfg.DecodeBase = 50 * time.Millisecond
	sim, err := llmsim.Listen(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	script := writeScript(t, "long.js", fmt.Sprintf(chatScript, 1000))
	export := filepath.Join(t.TempDir(), "summary.json")
	ctx := canceledWhenRunning(t, sim, 4)
	code, stdout, stderr := cli(t, ctx, nil, "run", "-q", "--base-url", sim.URL(), "-u", "4", "-d", "1m", "--summary-export", export, script)
	if code != exitcode.Interrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Interrupted, stdout, stderr)
	}
	s := readSummary(t, export)
	if !s.Meta.Interrupted || s.Serving.Interrupted != 4 || s.Serving.Failed != 0 {
		t.Errorf("interrupted=%v requests interrupted %d failed %d; want true, 4, 0", s.Meta.Interrupted, s.Serving.Interrupted, s.Serving.Failed)
	}
	if !strings.Contains(stdout, "interrupted") {
		t.Errorf("summary does not say the run was interrupted:\n%s", stdout)
	}
}

// canceledWhenRunning returns a context canceled once sim holds n
// requests: a Ctrl-C in the middle of a run, however long a busy machine
// took to start it.
func canceledWhenRunning(t *testing.T, sim *llmsim.Running, n int) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		defer cancel()
		for ctx.Err() == nil && sim.Server().Stats().Running < n {
			wait.Sleep(ctx, 10*time.Millisecond)
		}
	}()
	return ctx
}

func TestBuiltinSimulatorIsTheDefaultTarget(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "sim.js", fmt.Sprintf(chatScript, 4))
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-i", "2", script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "target:    built-in simulator") || !strings.Contains(stdout, "set --base-url to benchmark a real server") {
		t.Errorf("banner does not say the simulator is the target:\n%s", stdout)
	}
	if !strings.Contains(stdout, "2 ok, 0 failed") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// Help asked for, in any of its spellings, prints on stdout and exits 0,
// as "llmrun help" does; a bad flag is a usage error on stderr.
func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, stdout, stderr := cli(t, context.Background(), nil, args...)
		if code != exitcode.OK || !strings.Contains(stdout, "Usage:\n  llmrun run") || stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if code, stdout, _ := cli(t, context.Background(), nil, "version"); code != exitcode.OK || !strings.HasPrefix(stdout, "llmrun ") {
		t.Errorf("version: exit %d, stdout %q", code, stdout)
	}
	commands := map[string]string{
		"run": "--vus", "inspect": "--json", "sim": "--max-num-seqs", "trend": "--influxdb",
		"compare": "--threshold", "merge": "--output", "report": "--slo", "bench": "--num-prompts", "kube": "--image",
	}
	for name, flag := range commands {
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
			code, stdout, stderr := cli(t, context.Background(), nil, args...)
			if code != exitcode.OK || !strings.HasPrefix(stdout, "Usage: llmrun "+name) || !strings.Contains(stdout, flag) || stderr != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and the usage with %s on stdout only", args, code, stdout, stderr, flag)
			}
		}
		code, stdout, stderr := cli(t, context.Background(), nil, name, "--bogus")
		if code != exitcode.Usage || stdout != "" || !strings.Contains(stderr, "unknown flag: --bogus") || !strings.Contains(stderr, "llmrun "+name+" --help") {
			t.Errorf("%s --bogus: exit %d, stdout %q, stderr %q; want exit %d and the error on stderr only", name, code, stdout, stderr, exitcode.Usage)
		}
	}
	if code, stdout, stderr := cli(t, context.Background(), nil, "help", "bogus"); code != exitcode.Usage || stdout != "" || !strings.Contains(stderr, `unknown command "bogus"`) {
		t.Errorf("help bogus: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	_, stdout, _ := cli(t, context.Background(), nil, "run", "--help")
	for _, flag := range []string{"--vus", "--duration", "--iterations", "--env", "--base-url", "--api-key-env", "--summary-export", "--quiet", "--no-color"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("run --help lacks %s", flag)
		}
	}
}

// An API key and a credential header echoed by the server in a 401 never
// reach the console summary, the summary export, the script's logs or its
// thrown errors: they are redacted where the error is made.
func TestSecretsNeverReachTheOutput(t *testing.T) {
	t.Parallel()
	const key, header = "sk-llmrun-test-0123456789abcdef", "hdr-secret-9876543210"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"invalid credentials: Authorization=%s x-api-key=%s key=%s"}}`,
			r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer srv.Close()
	script := writeScript(t, "secrets.js", `
import llm from 'llm';
const c = llm.client({ headers: { 'X-Api-Key': '`+header+`' } });
export default function () {
  const r = c.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  console.log('request failed: ' + r.error);
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }, { throw: true });
}
`)
	export := filepath.Join(t.TempDir(), "summary.json")
	// The preflight's 401 stops the run, without the key.
	code, stdout, stderr := cli(t, context.Background(), map[string]string{"OPENAI_API_KEY": key},
		"run", "--base-url", srv.URL, "--model", "m", "-i", "2", script)
	if code != exitcode.Preflight || !strings.Contains(stderr, "HTTP 401") || strings.Contains(stdout+stderr, key) {
		t.Fatalf("exit %d, want %d with the 401 and without the key\nstdout:\n%s\nstderr:\n%s", code, exitcode.Preflight, stdout, stderr)
	}
	code, stdout, stderr = cli(t, context.Background(), map[string]string{"OPENAI_API_KEY": key},
		"run", "--no-preflight", "--base-url", srv.URL, "--model", "m", "-i", "2", "--summary-export", export, script)
	if code != exitcode.NoSuccess {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	exported, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr, "summary export": string(exported)} {
		for _, secret := range []string{key, header} {
			if strings.Contains(out, secret) {
				t.Errorf("%s contains the secret %q:\n%s", name, secret, out)
			}
		}
	}
	// The errors are there, redacted, not dropped.
	s := readSummary(t, export)
	if len(s.Errors) != 1 || s.Errors[0].Class != "http_4xx" || s.Errors[0].Count != 4 || len(s.Errors[0].Messages) != 2 {
		t.Fatalf("errors %+v, want 4 http_4xx with 2 distinct messages (with and without x-api-key)", s.Errors)
	}
	for _, m := range s.Errors[0].Messages {
		if !strings.Contains(m.Message, "HTTP 401 Unauthorized") || !strings.Contains(m.Message, "Authorization=Bearer [REDACTED] x-api-key=") {
			t.Errorf("message %q, want the 401 with the key redacted", m.Message)
		}
	}
	if len(s.ScriptErrors) != 1 || !strings.Contains(s.ScriptErrors[0].Message, "llm request failed (http_4xx)") ||
		!strings.Contains(s.ScriptErrors[0].Message, "[REDACTED]") {
		t.Errorf("script errors %+v, want the thrown failure, redacted", s.ScriptErrors)
	}
	for _, want := range []string{"request failed: HTTP 401", "x-api-key=[REDACTED] key=[REDACTED]"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the script's log lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "HTTP 401 Unauthorized") {
		t.Errorf("the console summary lacks the 401's message:\n%s", stdout)
	}
}

// --idle-timeout ends a stalled stream as idle_timeout; 0 turns it off,
// leaving the total --timeout.
func TestIdleTimeoutFlag(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	script := writeScript(t, "stall.js", fmt.Sprintf(chatScript, 8))
	for _, tc := range []struct {
		flags []string
		class string
	}{
		{[]string{"--idle-timeout", "100ms"}, "idle_timeout"},
		{[]string{"--idle-timeout", "0", "--timeout", "300ms"}, "timeout"},
	} {
		export := filepath.Join(t.TempDir(), "summary.json")
		args := append([]string{"run", "-q", "--base-url", srv.URL, "--model", "m", "-i", "1", "--summary-export", export}, tc.flags...)
		code, stdout, stderr := cli(t, context.Background(), nil, append(args, script)...)
		if code != exitcode.NoSuccess {
			t.Fatalf("%v: exit %d\n%s\n%s", tc.flags, code, stdout, stderr)
		}
		if s := readSummary(t, export); len(s.Errors) != 1 || s.Errors[0].Class != tc.class {
			t.Errorf("%v: errors %+v, want one %s", tc.flags, s.Errors, tc.class)
		}
	}
	code, _, stderr := cli(t, context.Background(), nil, "run", "--idle-timeout", "-1s", script)
	if code != exitcode.Usage || !strings.Contains(stderr, "--idle-timeout must not be negative") {
		t.Errorf("a negative --idle-timeout: exit %d, %s", code, stderr)
	}
}

// A base URL with a wrong path stops at the preflight; without the
// preflight, the early stop ends the run after its first requests instead
// of sending 404s for its whole duration, and the result file says why.
// A healthy target's preflight is in the result file.
func TestPreflightAndEarlyStop(t *testing.T) {
	t.Parallel()
	url := startSim(t, llmsim.DefaultConfig())
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 4))
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", url+"/foo", "-u", "4", "-d", "30s", script)
	if code != exitcode.Preflight || !strings.Contains(stderr, "failed with http_4xx: HTTP 404") || !strings.Contains(stderr, "check the path of --base-url") {
		t.Fatalf("exit %d, want %d with the 404 and the fix\n%s\n%s", code, exitcode.Preflight, stdout, stderr)
	}

	export := filepath.Join(t.TempDir(), "stopped.json")
	start := time.Now()
	code, stdout, stderr = cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--base-url", url+"/foo",
		"--model", "llmsim-1", "-u", "4", "-d", "30s", "--summary-export", export, script)
	if code != exitcode.NoSuccess || !strings.Contains(stderr, "stopped early: the first 10 requests all failed with http_4xx") {
		t.Fatalf("exit %d, want %d and the early stop\n%s\n%s", code, exitcode.NoSuccess, stdout, stderr)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("the run took %v: the early stop did not stop it", el)
	}
	s := readSummary(t, export)
	if !strings.Contains(s.EarlyStop, "http_4xx") || s.Serving.OK != 0 || s.Serving.Failed < 10 || len(s.Preflight) != 0 {
		t.Errorf("early stop %q, ok %d, failed %d, preflight %+v", s.EarlyStop, s.Serving.OK, s.Serving.Failed, s.Preflight)
	}
	if !strings.Contains(stdout, "stopped early") {
		t.Errorf("the summary does not say the run stopped early:\n%s", stdout)
	}

	export = filepath.Join(t.TempDir(), "ok.json")
	code, stdout, stderr = cli(t, context.Background(), nil, "run", "-q", "--base-url", url, "-i", "2", "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s = readSummary(t, export)
	if len(s.Preflight) != 1 || !s.Preflight[0].OK || !s.Preflight[0].UsageReported || s.Preflight[0].Model != "llmsim-1" || s.Serving.OK != 2 {
		t.Errorf("preflight %+v, %d completed: want one ok probe with usage, and the run's 2 requests apart from it", s.Preflight, s.Serving.OK)
	}
}

// A server that streams nothing but data: [DONE] stops the run at the
// preflight, a failure no load explains; without the preflight, each of
// its requests fails as decode rather than counting as ok with 0 tokens.
func TestServerThatAnswersNothing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 8))
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", srv.URL, "--model", "m", "-i", "2", script)
	if code != exitcode.Preflight || !strings.Contains(stderr, "with no token, which no load explains") {
		t.Fatalf("exit %d, want %d saying the server answered no token\n%s\n%s", code, exitcode.Preflight, stdout, stderr)
	}

	export := filepath.Join(t.TempDir(), "nothing.json")
	code, stdout, stderr = cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--base-url", srv.URL, "--model", "m", "-i", "2", "--summary-export", export, script)
	if code != exitcode.NoSuccess {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.NoSuccess, stdout, stderr)
	}
	s := readSummary(t, export)
	if s.Serving.OK != 0 || s.Serving.Failed != 2 || len(s.Errors) != 1 || s.Errors[0].Class != "decode" {
		t.Errorf("ok %d, failed %d, errors %+v: want the 2 requests failed as decode", s.Serving.OK, s.Serving.Failed, s.Errors)
	}
}
