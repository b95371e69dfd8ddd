package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
)

const handleSummaryScript = `
import llm from 'llm';
import { check, group } from 'llmrun';
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4, ignore_eos: true });
  check(r, { ok: (r) => r.ok });
  group('g', () => check(r, { 'four tokens': (r) => r.outputTokens === 4 }));
}
export function handleSummary(data) {
  return {
    stdout: 'custom p95 ttft ' + data.metrics.llm_ttft.values['p(95)'].toFixed(3) + '\n',
    stderr: 'served ' + data.llmrun.serving.completed + '\n',
    [__ENV.OUT]: JSON.stringify(data),
    'reports/nested/raw.bin': new Uint8Array([104, 105]).buffer,
  };
}
`

// handleSummary receives k6's data plus llmrun's summary, its outputs are
// written, and the default summary is not printed. It changes the working
// directory, so it runs alone, not in parallel.
func TestHandleSummaryWritesItsOutputs(t *testing.T) {
	url := startSim(t, llmsim.DefaultConfig())
	script := writeScript(t, "hs.js", handleSummaryScript)
	out := filepath.Join(t.TempDir(), "deep", "data.json")
	export := filepath.Join(t.TempDir(), "summary.json")
	wd := t.TempDir()
	t.Chdir(wd) // relative paths are the working directory's

	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", url, "-i", "3",
		"-e", "OUT="+out, "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	exported := readSummary(t, export) // --summary-export still works
	want := fmt.Sprintf("custom p95 ttft %.3f\n", exported.Metrics["llm_ttft"].Values["p(95)"])
	if stdout != want {
		t.Errorf("stdout = %q, want only handleSummary's %q (no default summary)", stdout, want)
	}
	if !strings.HasSuffix(stderr, "served 3\n") {
		t.Errorf("stderr = %q, want it to end with handleSummary's 'served 3'", stderr)
	}
	if b, err := os.ReadFile(filepath.Join(wd, "reports", "nested", "raw.bin")); err != nil || string(b) != "hi" {
		t.Errorf("relative ArrayBuffer output: %q, %v; want \"hi\"", b, err)
	}

	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Metrics map[string]struct {
			Type, Contains string
			Values         map[string]float64
		}
		RootGroup struct {
			Name, Path string
			Groups     []struct {
				Name, Path string
				Checks     []struct {
					Name, Path    string
					Passes, Fails int64
				}
			}
			Checks []struct {
				Name, Path    string
				Passes, Fails int64
			}
		} `json:"root_group"`
		Options struct {
			SummaryTrendStats []string
			NoColor           bool
		}
		State struct {
			IsStdOutTTY       bool
			TestRunDurationMs float64
		}
		LLMRun *summary.Summary `json:"llmrun"`
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatalf("data is not the expected JSON: %v\n%s", err, b)
	}
	ttft := data.Metrics["llm_ttft"]
	if ttft.Type != "trend" || ttft.Contains != "time" || ttft.Values["p(95)"] <= 0 || ttft.Values["med"] <= 0 || ttft.Values["p(99)"] < ttft.Values["p(95)"] {
		t.Errorf("metrics.llm_ttft = %+v", ttft)
	}
	if it := data.Metrics["iterations"]; it.Type != "counter" || it.Values["count"] != 3 || it.Values["rate"] <= 0 {
		t.Errorf("metrics.iterations = %+v", it)
	}
	if c := data.Metrics["checks"]; c.Type != "rate" || c.Values["rate"] != 1 || c.Values["passes"] != 6 || c.Values["fails"] != 0 {
		t.Errorf("metrics.checks = %+v", c)
	}
	rg := data.RootGroup
	if rg.Name != "" || rg.Path != "" || len(rg.Checks) != 1 || rg.Checks[0].Name != "ok" || rg.Checks[0].Path != "::ok" || rg.Checks[0].Passes != 3 {
		t.Errorf("root_group checks = %+v", rg.Checks)
	}
	if len(rg.Groups) != 1 || rg.Groups[0].Name != "g" || rg.Groups[0].Path != "::g" ||
		len(rg.Groups[0].Checks) != 1 || rg.Groups[0].Checks[0].Path != "::g::four tokens" || rg.Groups[0].Checks[0].Passes != 3 {
		t.Errorf("root_group groups = %+v", rg.Groups)
	}
	if !data.Options.NoColor || !strings.Contains(strings.Join(data.Options.SummaryTrendStats, ","), "p(95)") {
		t.Errorf("options = %+v", data.Options)
	}
	if data.State.IsStdOutTTY || data.State.TestRunDurationMs <= 0 {
		t.Errorf("state = %+v", data.State)
	}
	if data.LLMRun == nil || data.LLMRun.Serving.OK != 3 || data.LLMRun.Serving.OutputTokens != 12 || data.LLMRun.Meta.Tool != "llmrun" {
		t.Errorf("data.llmrun = %+v", data.LLMRun)
	}
}

// A throwing handleSummary: the default summary is printed anyway, with
// the error, and the exit code is the script error's.
func TestHandleSummaryThrowing(t *testing.T) {
	t.Parallel()
	url := startSim(t, llmsim.DefaultConfig())
	script := writeScript(t, "throws.js", fmt.Sprintf(chatScript, 4)+`
export function handleSummary(data) { throw new Error('no summary today'); }
`)
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", url, "-i", "2", script)
	if code != exitcode.ScriptError {
		t.Errorf("exit %d, want %d", code, exitcode.ScriptError)
	}
	if !strings.Contains(stdout, "█ serving") || !strings.Contains(stdout, "TTFT") || !strings.Contains(stdout, "2 ok, 0 failed") {
		t.Errorf("the default summary is missing:\n%s", stdout)
	}
	if !strings.Contains(stderr, "handleSummary(): ") || !strings.Contains(stderr, "Error: no summary today") || !strings.Contains(stderr, "throws.js:") {
		t.Errorf("stderr does not report the exception with its position:\n%s", stderr)
	}
}

// Outputs that cannot be written are an output error (exit 1); the others
// are still written.
func TestHandleSummaryUnwritableOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.txt")
	script := writeScript(t, "unwritable.js", `
export default function () {}
export function handleSummary() { return { [__ENV.BAD]: 'x', [__ENV.GOOD]: 'y' }; }
`)
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-e", "BAD="+filepath.Join(file, "under"), "-e", "GOOD="+good, script)
	if code != exitcode.Error {
		t.Errorf("exit %d, want %d\n%s\n%s", code, exitcode.Error, stdout, stderr)
	}
	if !strings.Contains(stderr, "handleSummary: writing") || !strings.Contains(stderr, "under") {
		t.Errorf("stderr does not name the output:\n%s", stderr)
	}
	if b, err := os.ReadFile(good); err != nil || string(b) != "y" {
		t.Errorf("the writable output: %q, %v", b, err)
	}
}

// An interrupted run still calls handleSummary and writes its files. The
// run is interrupted once the simulator holds both VUs' requests, not
// after a fixed time that a busy machine may spend loading the script.
func TestHandleSummaryAfterInterrupt(t *testing.T) {
	t.Parallel()
	cfg := llmsim.DefaultConfig()
	cfg.DecodeBase = 50 * time.Millisecond
	sim, err := llmsim.Listen(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	out := filepath.Join(t.TempDir(), "interrupted.txt")
	script := writeScript(t, "long.js", fmt.Sprintf(chatScript, 1000)+`
export function handleSummary(data) { return { [__ENV.OUT]: 'interrupted=' + data.llmrun.meta.interrupted }; }
`)
	ctx := canceledWhenRunning(t, sim, 2)
	code, stdout, stderr := cli(t, ctx, nil, "run", "-q", "--no-preflight", "--base-url", sim.URL(), "-u", "2", "-d", "1m", "-e", "OUT="+out, script)
	if code != exitcode.Interrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Interrupted, stdout, stderr)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "interrupted=true" {
		t.Errorf("handleSummary's file after an interrupt: %q, %v", b, err)
	}
}
