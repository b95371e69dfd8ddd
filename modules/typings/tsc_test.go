package typings_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/filetest"
	"github.com/llmrun/llmrun/modules/typings"
)

// tscPath is the TypeScript compiler the tests run: $LLMRUN_TSC (which
// .ci/run sets to the pinned one it installs), else tsc on PATH. Without
// one the test is skipped, or fails when LLMRUN_REQUIRE_TSC is set (in CI).
func tscPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("LLMRUN_TSC")
	var err error
	if path != "" {
		_, err = os.Stat(path)
	} else if path, err = exec.LookPath("tsc"); err != nil {
		err = errors.New("no tsc on PATH: run the tests with .ci/run, which installs the pinned typescript, or set LLMRUN_TSC")
	}
	if err != nil {
		if os.Getenv("LLMRUN_REQUIRE_TSC") != "" {
			t.Fatalf("the TypeScript compiler is required: %v", err)
		}
		t.Skip(err)
	}
	return path
}

// typeCheck runs tsc --noEmit over files (absolute paths) with the
// declarations and the compiler options of the jsconfig.json that
// "llmrun types DIR" writes, and returns its diagnostics (one a line,
// paths as tsc prints them relative to its project) and whether it
// passed.
func typeCheck(t *testing.T, files []string) (diagnostics string, passed bool) {
	t.Helper()
	tscPath(t) // skips before the work without one
	dir := t.TempDir()
	if _, _, err := typings.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	var config map[string]any
	if err := json.Unmarshal(configFile(t), &config); err != nil {
		t.Fatalf("%s: %v", typings.ConfigFile, err)
	}
	config["files"] = append([]string{typings.DeclarationsFile}, files...)
	project, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), project, 0o644); err != nil {
		t.Fatal(err)
	}
	return runTSC(t, filepath.Join(dir, "tsconfig.json"))
}

// runTSC runs tsc over the project file project and returns its
// diagnostics and whether it passed.
func runTSC(t *testing.T, project string) (diagnostics string, passed bool) {
	t.Helper()
	tsc := tscPath(t)
	// tsc 7 checks the examples in about a second; 5 minutes bounds a
	// compiler that hangs on a loaded machine.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tsc, "--project", project, "--pretty", "false")
	cmd.Dir = filepath.Dir(project)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), true
	case errors.As(err, &exit) && ctx.Err() == nil && strings.Contains(string(out), "error TS"):
		// Diagnostics; anything else is a compiler that did not run (a
		// tsc 7 without its native binary throws from node).
		return string(out), false
	}
	t.Fatalf("%s: %v\n%s", tsc, err, out)
	return "", false
}

// configFile is the jsconfig.json the package ships.
func configFile(t *testing.T) []byte {
	t.Helper()
	for _, f := range typings.Files() {
		if f.Name == typings.ConfigFile {
			return f.Data
		}
	}
	t.Fatalf("no %s among the files", typings.ConfigFile)
	return nil
}

// repoFiles are the absolute paths of the repository's files that match
// the patterns, relative to the repository's root.
func repoFiles(t *testing.T, patterns ...string) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range patterns {
		matches, err := filepath.Glob(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	return files
}

// Every example, stock script and template type-checks against the
// declarations: the declarations accept what the scripts that run
// green do.
func TestScriptsTypeCheck(t *testing.T) {
	scripts := repoFiles(t, "examples/*.js", "examples/*.ts", "scripts/*.js", "scripts/lib/*.js", "scripts/templates/*.js", "scripts/templates/*.ts")
	for _, want := range []string{"examples/quickstart.js", "examples/typescript.ts", "scripts/serving-point.js", "scripts/lib/sweep.js"} {
		if !slices.ContainsFunc(scripts, func(s string) bool { return strings.HasSuffix(s, filepath.FromSlash(want)) }) {
			t.Fatalf("%s is not among the scripts checked: %v", want, scripts)
		}
	}
	if out, ok := typeCheck(t, scripts); !ok {
		t.Errorf("tsc finds errors in the scripts (fix the declarations, unless a script is wrong):\n%s", out)
	}
}

// What "llmrun types DIR" writes is a project of its own, as an editor
// reads it: the jsconfig.json takes in the declarations and every .js
// and .ts script in DIR and below, and checks them.
func TestWrittenDirectoryIsAProject(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := typings.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{
		"chat.js":         "import llm from 'llm';\nexport default function () { llm.stream({ prompt: 'hi', max_tokens: 8 }); }\n",
		"typed.ts":        "import type { Options } from 'llmrun';\nexport const options: Options = { vus: 2, duration: '10s' };\n",
		"lib/wrong.js":    "import llm from 'llm';\nexport const r = llm.stream({ prompt: 'hi', max_token: 8 });\n",
		"lib/wrong-ts.ts": "import { sleep } from 'llmrun';\nsleep('1s');\n",
	}
	filetest.Write(t, dir, scripts)
	out, _ := runTSC(t, filepath.Join(dir, typings.ConfigFile))
	for name, want := range map[string]string{"chat.js": "", "typed.ts": "", "wrong.js": "'max_token' does not exist", "wrong-ts.ts": "Argument of type 'string' is not assignable to parameter of type 'number'"} {
		diagnostics := strings.Join(diagnosticsOf(out, name), "\n")
		if want == "" && diagnostics != "" || !strings.Contains(diagnostics, want) {
			t.Errorf("%s: tsc reports %q, want %q; all it said:\n%s", name, diagnostics, want, out)
		}
	}
}

// A script that misuses the API fails the check, each mistake told where
// it is: the check is live, and the declarations are closed where the
// runtime is (a misspelt field is an error, not an unknown extra).
func TestTypeCheckCatchesMistakes(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, script string
		want         string // in tsc's diagnostic of the script, with its TS code
	}{
		{"misspelt body field", `import llm from 'llm';
export default function () { llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_token: 5 }); }`,
			"TS2353: Object literal may only specify known properties, and 'max_token' does not exist"},
		{"body of no protocol", `import llm from 'llm';
export default function () { llm.stream({ max_tokens: 5 }); }`,
			"TS2345: Argument of type '{ max_tokens: number; }' is not assignable to parameter of type 'RequestBody'"},
		{"result field that does not exist", `import llm from 'llm';
export default function () { const r = llm.stream({ prompt: 'hi' }); return r.ttft_ms; }`,
			"TS2339: Property 'ttft_ms' does not exist on type 'Result'"},
		{"misspelt stream option", `import llm from 'llm';
export default function () { llm.stream({ prompt: 'hi' }, { txt: true }); }`,
			"'txt' does not exist in type 'StreamOptions'"},
		{"field of another executor", `/** @type {import('llmrun').Options} */
export const options = { scenarios: { chat: { executor: 'constant-vus', duration: '1m', preAllocatedVUs: 4 } } };`,
			"'preAllocatedVUs' does not exist in type 'ConstantVUsScenario'"},
		{"missing required field", `/** @type {import('llmrun').Options} */
export const options = { scenarios: { chat: { executor: 'constant-arrival-rate', rate: 2, duration: '1m' } } };`,
			"Property 'preAllocatedVUs' is missing"},
		{"number where a prompt length is", `import { prompts } from 'data';
export const text = prompts.synthetic('64');`,
			"TS2345: Argument of type 'string' is not assignable to parameter of type 'number'"},
		{"unknown export", `import { fetch } from 'llm';`,
			`Module '"llm"' has no exported member 'fetch'`},
		{"__ENV may be unset", `export const levels = __ENV.LEVELS.split(',');`,
			"TS18048: '__ENV.LEVELS' is possibly 'undefined'"},
		// goja has no WeakRef: the jsconfig's lib leaves out what the
		// runtime lacks (WeakRef, SharedArrayBuffer, async iteration).
		{"a built-in the runtime lacks", `export const ref = new WeakRef({});`,
			"Cannot find name 'WeakRef'"},
		{"scenarios made by an annotated function, right", `/** @returns {import('llmrun').Scenario} */
function workload(rate, exec) {
  return { executor: 'constant-arrival-rate', arrival: 'poisson', rate, duration: '1m', preAllocatedVUs: 8, exec };
}
/** @type {import('llmrun').Options} */
export const options = { scenarios: { chat: workload(4, 'chat'), rag: workload(1, 'rag') }, thresholds: { llm_failed: 'rate<0.01' } };`, ""},
		{"the same script, right", `import llm from 'llm';
import { check } from 'llmrun';
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }, { text: true });
  check(r, { ok: (res) => res.ok && res.ttft > 0 && res.text !== '' });
}`, ""},
	}
	var files []string
	for i, tc := range cases {
		path := filepath.Join(dir, fmt.Sprintf("case%d.js", i))
		if err := os.WriteFile(path, []byte(tc.script+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	out, passed := typeCheck(t, files)
	if passed {
		t.Fatalf("tsc passed scripts with mistakes:\n%s", out)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diagnostics := diagnosticsOf(out, fmt.Sprintf("case%d.js", i))
			switch {
			case tc.want == "" && len(diagnostics) > 0:
				t.Errorf("tsc finds errors in a right script:\n%s\n%s", tc.script, strings.Join(diagnostics, "\n"))
			case tc.want != "" && !slices.ContainsFunc(diagnostics, func(d string) bool { return strings.Contains(d, tc.want) }):
				t.Errorf("tsc does not report %q in\n%s\nit reports:\n%s", tc.want, tc.script, strings.Join(diagnostics, "\n"))
			}
		})
	}
}

// diagnosticsOf are tsc's diagnostics of the file named name, each with
// the lines that continue it.
func diagnosticsOf(out, name string) []string {
	start := regexp.MustCompile(`(^|[/\\])` + regexp.QuoteMeta(name) + `\(\d+,\d+\): `)
	var found []string
	in := false
	for line := range strings.Lines(out) {
		switch {
		case start.MatchString(line):
			found = append(found, strings.TrimRight(line, "\n"))
			in = true
		case in && strings.HasPrefix(line, " "):
			found[len(found)-1] += "\n" + strings.TrimRight(line, "\n")
		default:
			in = false
		}
	}
	return found
}
