package runner_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/summary"
)

// stream is a default function that sends one small request.
const stream = `
import llm from 'llm';
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 });
}
`

// result is what a run printed and came to.
type result struct {
	outcome        runner.Outcome
	stdout, stderr string
}

// run runs script against the built-in simulator, with edit's changes to
// the configuration.
func run(t *testing.T, script string, edit func(*runner.Config)) result {
	t.Helper()
	var stdout, stderr strings.Builder
	cfg := runner.Config{
		Engine:      engine.Config{ScriptPath: "test.js", Source: []byte(script), Seed: 1},
		NoPreflight: true,
		Quiet:       true,
		Stdout:      &stdout,
		Stderr:      &stderr,
		Version:     "test",
	}
	if edit != nil {
		edit(&cfg)
	}
	o := runner.Run(t.Context(), cfg)
	return result{o, stdout.String(), stderr.String()}
}

// A run assembles its summary from every part, prints it on the console
// and writes it to each result file.
func TestRunWritesTheSummary(t *testing.T) {
	dir := t.TempDir()
	export, out := filepath.Join(dir, "export.json"), filepath.Join(dir, "out.json")
	r := run(t, "export const options = { iterations: 3 };\n"+stream, func(c *runner.Config) {
		c.SummaryExport = export
		c.Outputs = []string{"json=" + out, "jsonl=" + filepath.Join(dir, "r.jsonl")}
		c.TestID = "smoke"
	})
	o := r.outcome
	if o.Verdict != runner.Passed || o.ScriptFailed || o.Lost {
		t.Fatalf("outcome %+v\nstderr:\n%s", o, r.stderr)
	}
	s := o.Summary
	if s.Serving.OK != 3 || s.Meta.Target != "built-in simulator" || s.Meta.TestID != "smoke" || s.Meta.Version != "test" {
		t.Errorf("summary: %d ok, target %q, testid %q, version %q", s.Serving.OK, s.Meta.Target, s.Meta.TestID, s.Meta.Version)
	}
	if len(s.Timeline) == 0 || len(s.Outputs) != 1 || s.Outputs[0].Written != 3 {
		t.Errorf("summary: %d timeline points, outputs %+v; want points and the jsonl output's 3 records", len(s.Timeline), s.Outputs)
	}
	if !strings.Contains(r.stdout, "█ serving") {
		t.Errorf("the console printed no summary:\n%s", r.stdout)
	}
	for _, path := range []string{export, out} {
		got, err := summary.ReadJSON(path)
		if err != nil || got.Serving.OK != 3 {
			t.Errorf("result file %s: %v", path, err)
		}
	}
}

// A run's verdict, and what went wrong after it, follow from the script,
// the outputs and the server.
func TestRunOutcomes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		script  string
		edit    func(*runner.Config)
		want    runner.Outcome
		summary bool
		stderr  string
	}{
		{name: "a failed threshold", script: "export const options = { iterations: 1, thresholds: { llm_ttft: ['p(99)<0'] } };\n" + stream,
			want: runner.Outcome{Verdict: runner.ThresholdsFailed}, summary: true},
		{name: "no successful request", script: "export const options = { iterations: 2 };\nexport default function () { throw new Error('boom'); }\n",
			want: runner.Outcome{Verdict: runner.NoSuccess}, summary: true, stderr: "does not pass"},
		{name: "setup throws", script: "export const options = { iterations: 1 };\nexport function setup() { throw new Error('no setup'); }\n" + stream,
			want: runner.Outcome{Verdict: runner.ScriptError}, summary: true, stderr: "no setup"},
		{name: "invalid options", script: "export const options = { iterations: -1 };\n" + stream,
			want: runner.Outcome{Verdict: runner.InvalidConfig}, stderr: "test.js"},
		{name: "an unknown output", script: stream, edit: func(c *runner.Config) { c.Outputs = []string{"carrier-pigeon=x"} },
			want: runner.Outcome{Verdict: runner.InvalidOutputs}, stderr: `--out "carrier-pigeon=x"`},
		{name: "two outputs, one file", script: stream, edit: func(c *runner.Config) {
			c.SummaryExport = filepath.Join(dir, "same.json")
			c.Outputs = []string{"json=" + filepath.Join(dir, "same.json")}
		}, want: runner.Outcome{Verdict: runner.InvalidOutputs}, stderr: "are the same file"},
		{name: "a file that cannot be written", script: stream, edit: func(c *runner.Config) { c.SummaryExport = filepath.Join(dir, "none", "s.json") },
			want: runner.Outcome{Verdict: runner.Errored}, stderr: "cannot write there"},
		{name: "handleSummary throws", script: "export const options = { iterations: 1 };\nexport function handleSummary() { throw new Error('no summary today'); }\n" + stream,
			want: runner.Outcome{Verdict: runner.Passed, ScriptFailed: true}, summary: true, stderr: "no summary today"},
		{name: "an output loses data", script: "export const options = { iterations: 1 };\n" + stream, edit: func(c *runner.Config) { c.Outputs = []string{"jsonl=/dev/full"} },
			want: runner.Outcome{Verdict: runner.Passed, Lost: true}, summary: true, stderr: "output jsonl /dev/full lost data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.script, tc.edit)
			got := r.outcome
			if got.Verdict != tc.want.Verdict || got.ScriptFailed != tc.want.ScriptFailed || got.Lost != tc.want.Lost || (got.Summary != nil) != tc.summary {
				t.Errorf("outcome %v (script failed %t, lost %t, summary %t), want %v (%t, %t, %t)\nstderr:\n%s",
					got.Verdict, got.ScriptFailed, got.Lost, got.Summary != nil, tc.want.Verdict, tc.want.ScriptFailed, tc.want.Lost, tc.summary, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.stderr, r.stderr)
			}
		})
	}
}

// When handleSummary fails, the console's summary is printed after all.
func TestFailedHandleSummaryFallsBackToTheConsole(t *testing.T) {
	r := run(t, "export const options = { iterations: 1 };\nexport function handleSummary() { throw new Error('no'); }\n"+stream, nil)
	if !strings.Contains(r.stdout, "█ serving") {
		t.Errorf("no console summary after handleSummary failed:\n%s", r.stdout)
	}
}

// A handleSummary that returns what to print replaces the console's
// summary.
func TestHandleSummaryReplacesTheConsole(t *testing.T) {
	r := run(t, "export const options = { iterations: 1 };\nexport function handleSummary(data) { return { stdout: 'ok ' + data.llmrun.serving.completed + '\\n' }; }\n"+stream, nil)
	if r.outcome.Verdict != runner.Passed || r.stdout != "ok 1\n" {
		t.Errorf("verdict %v, stdout %q; want passed and handleSummary's line alone", r.outcome.Verdict, r.stdout)
	}
}

// Without Quiet, the console prints the banner before the run: the
// target, the seed and the outputs.
func TestRunPrintsTheBanner(t *testing.T) {
	r := run(t, "export const options = { iterations: 1 };\n"+stream, func(c *runner.Config) {
		c.Quiet = false
		c.SeedDrawn = true
		c.Outputs = []string{"jsonl=" + filepath.Join(t.TempDir(), "r.jsonl")}
	})
	for _, want := range []string{"llmrun test\n", "target:    built-in simulator (http://127.0.0.1:", "seed:      1 (drawn for this run; --seed 1 repeats it)", "output:    jsonl "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the banner does not say %q:\n%s", want, r.stdout)
		}
	}
}

// Goodput counts, per scenario and in all, the requests that met every
// bound: against the simulator, 2-token answers take tens of
// milliseconds and 200-token answers at least 2 s (10 ms per decode
// step), so an e2e bound of 1 s splits them even when a loaded machine
// slows the short ones tenfold. Warmup requests are not counted.
func TestRunGoodput(t *testing.T) {
	const script = `
import llm from 'llm';
export const options = {
  goodput: { e2e: 1000 },
  scenarios: {
    short: { executor: 'per-vu-iterations', vus: 1, iterations: 4, exec: 'short', warmup: 1 },
    long: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'long', startTime: '0s' },
  },
};
const ask = (n) => llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: n, ignore_eos: true });
export function short() { ask(2); }
export function long() { ask(200); }
`
	export := filepath.Join(t.TempDir(), "result.json")
	r := run(t, script, func(c *runner.Config) { c.SummaryExport = export })
	s := r.outcome.Summary
	if r.outcome.Verdict != runner.Passed || s == nil {
		t.Fatalf("outcome %+v\nstderr:\n%s", r.outcome, r.stderr)
	}
	g := s.Serving.Goodput
	if g == nil || g.Good != 3 || g.Requests != 5 || g.Bounds != (summary.GoodputBounds{E2E: 1000}) {
		t.Fatalf("run's goodput %+v, want 3 of 5 requests good under e2e ≤ 1000 ms", g)
	}
	if want := 3 / s.Serving.DurationSeconds; g.RequestGoodput != want || s.Serving.Headline["request_goodput"] != want {
		t.Errorf("request_goodput %v (headline %v), want good requests over the duration, %v", g.RequestGoodput, s.Serving.Headline["request_goodput"], want)
	}
	for _, sc := range s.Scenarios {
		want := map[string][2]int64{"short": {3, 3}, "long": {0, 2}}[sc.Name]
		if g := sc.Serving.Goodput; g == nil || g.Good != want[0] || g.Requests != want[1] {
			t.Errorf("scenario %s: goodput %+v, want %d of %d good", sc.Name, g, want[0], want[1])
		}
	}
	if want := "goodput ............ "; !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "(3 of 5 requests met e2e ≤ 1000 ms)") {
		t.Errorf("the console's serving block has no goodput line:\n%s", r.stdout)
	}
	read, err := summary.ReadJSON(export)
	if err != nil || read.Serving.Goodput == nil || *read.Serving.Goodput != *g {
		t.Errorf("result file's goodput %+v, %v; want %+v", read.Serving.Goodput, err, g)
	}

	// --goodput replaces options.goodput; without either, no goodput.
	r = run(t, script, func(c *runner.Config) { c.Goodput = summary.GoodputBounds{E2E: 60000} })
	if g := r.outcome.Summary.Serving.Goodput; g == nil || g.Good != 5 {
		t.Errorf("with --goodput e2e:60000, goodput %+v; want all 5 good", g)
	}
	r = run(t, strings.Replace(script, "goodput: { e2e: 1000 },", "", 1), nil)
	if g := r.outcome.Summary.Serving.Goodput; g != nil || strings.Contains(r.stdout, "goodput") {
		t.Errorf("without bounds, goodput %+v and the console says:\n%s", g, r.stdout)
	}
}
