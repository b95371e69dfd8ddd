package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
)

// A thousand VUs open the same dataset in their init code and read it in
// their iterations; each sees every record (the module's memory test shows
// they share one copy).
func TestDatasetThousandVUs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "{\"id\": \"r%d\", \"prompt\": \"question %d\", \"output_tokens\": %d}\n", i, i, 1+i%7)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "replay.js")
	src := `
import { check } from 'llmrun';
import { dataset } from 'data';
const ds = dataset('prompts.jsonl');   // next to the script
export const options = { vus: 1000, iterations: 1000 };
export default function () {
  const r = ds.next();
  check(r, { 'a record': (r) => r.prompt === 'question ' + r.index && r.outputTokens === 1 + r.index % 7 && ds.length === 500 });
}`
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	if len(s.Checks) != 1 || s.Checks[0].Passes != 1000 || s.Checks[0].Fails != 0 {
		t.Errorf("checks %+v", s.Checks)
	}
}

// A malformed dataset stops the run before it starts, naming the file, the
// record and the line.
func TestDatasetMalformed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{\"prompt\": \"ok\"}\n\n{\"promt\": \"typo\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "bad.js")
	if err := os.WriteFile(script, []byte("import { dataset } from 'data';\nconst ds = dataset('bad.jsonl');\nexport default function () {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", script)
	if code != exitcode.ScriptError || !strings.Contains(stderr, `bad.jsonl: record 2 (line 3): no "prompt" or "messages" field`) {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// When the server counts prompts with another tokenizer than the one they
// were synthesized with, the summary says so loudly: here the simulator
// counts four bytes as a token, so its counts are half again as long.
func TestPromptCheckWarnsOnAnotherTokenizer(t *testing.T) {
	t.Parallel()
	cfg := llmsim.DefaultConfig()
	cfg.Tokenizer = "bytes"
	url := startSim(t, cfg)
	script := writeScript(t, "prompts.js", `
import llm from 'llm';
import { prompts } from 'data';
export const options = { iterations: 4 };
export default function () {
  llm.stream({ prompt: prompts.synthetic(400), max_tokens: 2 }, { promptTokens: 400 });
}`)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "--base-url", url, "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	pc := readSummary(t, export).PromptCheck
	if pc == nil || pc.Requests != 4 || pc.RequestedTokens != 1600 || pc.DiffPercent < 20 || pc.Warning == "" {
		t.Fatalf("prompt check %+v", pc)
	}
	if !strings.Contains(stdout, "WARNING: prompts were asked to have 400 tokens on average, the server counts") {
		t.Errorf("no warning in the console:\n%s", stdout)
	}
}

// Prompts declared unique that the server serves from its prefix cache are
// the last run's, replayed by its seed: the summary warns. A drawn seed
// sends new ones. One VU sends the same prompts in the same order
// whatever the timing.
func TestReplayedUniquePromptsWarn(t *testing.T) {
	t.Parallel()
	url := startSim(t, llmsim.DefaultConfig())
	script := writeScript(t, "unique.js", `
import llm from 'llm';
import { prompts } from 'data';
export const options = { vus: 1, iterations: 6 };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: prompts.synthetic(256) }], max_tokens: 4 }, { promptTokens: 256, uniquePrompt: true });
}`)
	run := func(args ...string) (*summary.Summary, string) {
		t.Helper()
		export := filepath.Join(t.TempDir(), "summary.json")
		code, stdout, stderr := cli(t, context.Background(), nil, append([]string{"run", "-q", "--no-color", "--base-url", url,
			"--summary-export", export}, append(args, script)...)...)
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		return readSummary(t, export), stdout
	}
	first, _ := run("--seed", "7")
	if u := first.UniqueCache; u == nil || u.Requests != 6 || u.Warning != "" {
		t.Errorf("first run: %+v, want 6 requests and no warning", u)
	}
	again, stdout := run("--seed", "7")
	if u := again.UniqueCache; u == nil || u.Warning == "" || !strings.Contains(stdout, "WARNING: ") || !strings.Contains(stdout, "declared unique (uniquePrompt) were served from the server's prefix cache") {
		t.Errorf("the same seed again: %+v\n%s", u, stdout)
	}
	fresh, _ := run()
	if u := fresh.UniqueCache; u == nil || u.Warning != "" || u.CachedRequests != 0 || !fresh.Meta.SeedDrawn || fresh.Meta.Seed == 7 {
		t.Errorf("a drawn seed: %+v, seed %d drawn %t; want new prompts, none cached", u, fresh.Meta.Seed, fresh.Meta.SeedDrawn)
	}
}
