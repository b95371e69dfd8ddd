package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// hostileValues are values a script can throw that do not become text the
// ordinary way, with the message llmrun must report for them.
var hostileValues = []struct{ name, value, message string }{
	{"null prototype", "Object.assign(Object.create(null), {message: 'lib error'})", "lib error"},
	{"throwing toString", "({toString() { throw new Error('no text') }})", "[object whose toString threw: Error: no text]"},
	{"throwing Proxy", "new Proxy({}, {get() { throw new Error('trap') }, getPrototypeOf() { throw new Error('proto') }})",
		"[object whose toString threw: Error: trap]"},
}

// hostileScript throws BAD (built from __ENV.KIND) in the function
// __ENV.WHERE names, or in init code.
const hostileScript = `
const where = __ENV.WHERE;
const bad = () => %s;
if (where === 'init') throw bad();
export const options = { vus: 1, iterations: 2 };
export function setup() { if (where === 'setup') throw bad(); }
export default function () { if (where === 'default') throw bad(); }
export function teardown() { if (where === 'teardown') throw bad(); }
export function handleSummary() {
  if (where === 'handleSummary') throw bad();
  return { stdout: 'custom summary\n' };
}
`

// TestHostileThrows throws each hostile value in each place a script runs:
// llmrun reports it with the script error's exit code (or, thrown by
// iterations, counts it), never panics, and writes the summary export
// whenever the run reached its end.
func TestHostileThrows(t *testing.T) {
	t.Parallel()
	for _, hv := range hostileValues {
		script := writeScript(t, "hostile.js", fmt.Sprintf(hostileScript, hv.value))
		for _, where := range []string{"init", "setup", "default", "teardown", "handleSummary"} {
			t.Run(hv.name+"/"+where, func(t *testing.T) {
				export := filepath.Join(t.TempDir(), "summary.json")
				code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--summary-export", export, "-e", "WHERE="+where, script)
				if strings.Contains(stderr, "panic") || strings.Contains(stderr, "GoError") {
					t.Fatalf("stderr:\n%s", stderr)
				}
				want := exitcode.ScriptError
				if where == "default" {
					want = exitcode.NoSuccess // every iteration threw; none sent a request
				}
				if code != want {
					t.Fatalf("exit %d, want %d\n%s\n%s", code, want, stdout, stderr)
				}
				if where == "init" {
					if !strings.Contains(stderr, "hostile.js:4:") || !strings.Contains(stderr, hv.message) {
						t.Errorf("stderr does not report %q at hostile.js:4:\n%s", hv.message, stderr)
					}
					return
				}
				s := readSummary(t, export)
				if where == "default" {
					if len(s.ScriptErrors) != 1 || !strings.Contains(s.ScriptErrors[0].Message, hv.message) || s.ScriptErrors[0].Count != 2 {
						t.Errorf("script errors %+v, want 2 of %q", s.ScriptErrors, hv.message)
					}
				} else if !strings.Contains(stderr, where+"(): ") || !strings.Contains(stderr, hv.message) {
					t.Errorf("stderr does not report %q in %s():\n%s", hv.message, where, stderr)
				}
				if where == "handleSummary" && !strings.Contains(stdout, "█ serving") {
					t.Errorf("the default summary is missing:\n%s", stdout)
				}
			})
		}
	}
}

func TestInspectHostileThrow(t *testing.T) {
	t.Parallel()
	for _, hv := range hostileValues {
		script := writeScript(t, "hostile.js", fmt.Sprintf(hostileScript, hv.value))
		code, _, stderr := command(t, "inspect", "-e", "WHERE=init", script)
		if code != exitcode.ScriptError || !strings.Contains(stderr, hv.message) || strings.Contains(stderr, "panic") {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", hv.name, code, exitcode.ScriptError, hv.message, stderr)
		}
	}
}

// TestHandleSummaryProxy returns results whose keys or values cannot be
// read: a script error (107), and the default summary and export anyway.
func TestHandleSummaryProxy(t *testing.T) {
	t.Parallel()
	for name, ret := range map[string]string{
		"Proxy":           "new Proxy({}, {ownKeys() { throw new Error('ownKeys') }})",
		"Proxy as stdout": "({ stdout: new Proxy({}, {ownKeys() { throw new Error('ownKeys') }, get() { throw new Error('get') }}) })",
		"throwing getter": "({ get stdout() { throw Object.create(null) } })",
	} {
		t.Run(name, func(t *testing.T) {
			script := writeScript(t, "proxy.js", "export const options = { iterations: 1 };\nexport default function () {}\nexport function handleSummary() { return "+ret+"; }\n")
			export := filepath.Join(t.TempDir(), "summary.json")
			code, stdout, stderr := command(t, "run", "-q", "--no-preflight", "--summary-export", export, script)
			if code != exitcode.ScriptError || strings.Contains(stderr, "panic") || !strings.Contains(stderr, "handleSummary(): ") {
				t.Fatalf("exit %d, want %d with a handleSummary error:\n%s", code, exitcode.ScriptError, stderr)
			}
			if !strings.Contains(stdout, "█ serving") {
				t.Errorf("the default summary is missing:\n%s", stdout)
			}
			readSummary(t, export)
		})
	}
}

func TestRecursionInInit(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "recursion.js", "function f(n) { return f(n + 1) + 1; }\nf(0);\nexport default function () {}\n")
	code, _, stderr := command(t, "run", "-q", script)
	if code != exitcode.ScriptError || !strings.Contains(stderr, "recursion.js:1:") || !strings.Contains(stderr, "RangeError: Maximum call stack size exceeded") {
		t.Errorf("exit %d, want %d with a RangeError:\n%s", code, exitcode.ScriptError, stderr)
	}
}

// cancelOnLine is an io.Writer that cancels a context once a line it is
// given contains marker: the script says when it has started looping.
type cancelOnLine struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelOnLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelOnLine) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestEndlessInitLoopIsInterrupted cancels run's and inspect's context
// while the script's init code loops: they end promptly with exit 105.
func TestEndlessInitLoopIsInterrupted(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "loop.js", "console.log('looping now');\nfor (;;) {}\nexport default function () {}\n")
	for _, cmd := range []string{"run", "inspect"} {
		t.Run(cmd, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stderr := &cancelOnLine{marker: "looping now", cancel: cancel}
			var stdout bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, []string{cmd, "--no-preflight", script}, &stdout, stderr, func(string) string { return "" })
			}()
			select {
			case code := <-done:
				if code != exitcode.Interrupted || !strings.Contains(stderr.String(), "interrupted") {
					t.Errorf("exit %d, want %d:\n%s", code, exitcode.Interrupted, stderr)
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("%s did not end after the cancel:\n%s", cmd, stderr)
			}
		})
	}
}

func TestScriptFilesThatNeverEnd(t *testing.T) {
	t.Parallel()
	code, _, stderr := command(t, "run", "-q", "/dev/zero")
	if code == exitcode.OK || !strings.Contains(stderr, "/dev/zero is a device, not a regular file") {
		t.Errorf("run /dev/zero: exit %d:\n%s", code, stderr)
	}
	script := writeScript(t, "zero.js", "const z = open('/dev/zero');\nexport default function () {}\n")
	code, _, stderr = command(t, "run", "-q", script)
	if code != exitcode.ScriptError || !strings.Contains(stderr, `open("/dev/zero"): /dev/zero is a device, not a regular file`) {
		t.Errorf("open('/dev/zero'): exit %d:\n%s", code, stderr)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, make([]byte, 16<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, "imports.js")
	if err := os.WriteFile(script, []byte("import big from './big.txt';\nexport default function () {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = command(t, "run", "-q", script)
	if code != exitcode.ScriptError || !strings.Contains(stderr, "big.txt is larger than 16 MiB") {
		t.Errorf("importing a big file: exit %d:\n%s", code, stderr)
	}
}

// TestReplacedJSONGlobal deletes the JSON global that llmrun hands setup's
// data and handleSummary's summary through: both still arrive.
func TestReplacedJSONGlobal(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "json.js", `globalThis.JSON = undefined;
export const options = { iterations: 1 };
export function setup() { return { a: 7 }; }
export default function (data) { if (data.a !== 7) throw new Error('no setup data'); }
export function handleSummary(data) { return { stdout: 'iterations=' + data.metrics.iterations.values.count + '\n' }; }
`)
	code, stdout, stderr := command(t, "run", "-q", "--no-preflight", script)
	if code != exitcode.OK || !strings.Contains(stdout, "iterations=1") || strings.Contains(stderr, "panic") {
		t.Errorf("exit %d, want %d with handleSummary's output:\n%s\n%s", code, exitcode.OK, stdout, stderr)
	}
}
