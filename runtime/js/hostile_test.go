package js

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// hostileThrows are values a script may throw that cannot become text the
// ordinary way, with the message the ScriptError must carry.
var hostileThrows = []struct{ name, value, message string }{
	{"null prototype", "Object.assign(Object.create(null), {message: 'lib error'})", "lib error"},
	{"throwing toString", "({toString() { throw new Error('no text') }})", "[object whose toString threw: Error: no text]"},
	{"throwing Proxy", "new Proxy({}, {get() { throw new Error('trap') }, getPrototypeOf() { throw new Error('proto') }})",
		"[object whose toString threw: Error: trap]"},
}

// TestHostileThrowInInit checks that what init code throws becomes a
// ScriptError at the throw, and that errors.As and errors.Is can walk it
// (a thrown Proxy's traps are never run by unwrapping).
func TestHostileThrowInInit(t *testing.T) {
	for _, tt := range hostileThrows {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, "script.js", "export default function () {}\nthrow "+tt.value+";\n")
			_, err := s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t)})
			var se *ScriptError
			if !errors.As(err, &se) || se.Message != tt.message || se.Line != 2 {
				t.Fatalf("error = %v, want a ScriptError at line 2: %s", err, tt.message)
			}
			if errors.Is(err, context.Canceled) {
				t.Error("the error is a cancellation")
			}
		})
	}
}

func TestHostileThrowInAFunction(t *testing.T) {
	for _, tt := range hostileThrows {
		t.Run(tt.name, func(t *testing.T) {
			inst := mustInstantiate(t, mustCompile(t, "script.js", "export default function () {\n  throw "+tt.value+";\n}\nexport async function rejects() { throw "+tt.value+"; }\n"), InstanceConfig{})
			for _, name := range []string{"default", "rejects"} {
				fn, _, _ := inst.Function(name)
				_, err := fn(undefined)
				var se *ScriptError
				if !errors.As(err, &se) || se.Message != tt.message {
					t.Errorf("%s() error = %v, want a ScriptError: %s", name, err, tt.message)
				}
			}
		})
	}
}

// TestGoErrorMessages checks that an error a Go function throws reads as
// its message, without goja's "GoError: " prefix, and still unwraps to the
// Go error.
func TestGoErrorMessages(t *testing.T) {
	goErr := errors.New("the server said no")
	vu := modulestest.NewVU(t)
	vu.SetGlobal("fails", func() { panic(vu.Runtime().NewGoError(goErr)) })
	rec := &recorder{min: slog.LevelInfo}
	inst := mustInstantiate(t, mustCompile(t, "script.js", `export default function () { fails(); }
export function logs() { try { fails(); } catch (e) { console.log(e); } }
`), InstanceConfig{VU: vu, Logger: slog.New(rec)})
	fn, _, _ := inst.Function("default")
	_, err := fn(undefined)
	var se *ScriptError
	if !errors.As(err, &se) || se.Message != "the server said no" || !errors.Is(err, goErr) {
		t.Errorf("error = %v, want the message alone, unwrapping to the Go error", err)
	}
	mustCall(t, inst, "logs")
	if len(rec.records) != 1 || rec.records[0].Message != "the server said no" {
		t.Errorf("console.log(e) = %v, want the message alone", rec.records)
	}
}

func TestConsoleHostileValues(t *testing.T) {
	rec := &recorder{min: slog.LevelInfo}
	inst := mustInstantiate(t, mustCompile(t, "script.js", `export default function () {
  console.log(Object.assign(Object.create(null), {message: 'lib error'}),
    new Proxy({}, {ownKeys() { throw new Error('keys') }, get() { throw new Error('get') }}),
    {toJSON() { throw new Error('json') }, toString() { throw new Error('text') }});
}`), InstanceConfig{Logger: slog.New(rec)})
	mustCall(t, inst, "default")
	want := `{"message":"lib error"} [object whose toString threw: Error: get] [object whose toString threw: Error: text]`
	if len(rec.records) != 1 || rec.records[0].Message != want {
		t.Errorf("console.log = %v, want %q", rec.records, want)
	}
}

// TestHostileExports checks that exports that throw when read (a Proxy,
// getters) and options that cannot become JSON are errors, not panics, and
// that a function export that cannot be read is its error, not a missing
// function.
func TestHostileExports(t *testing.T) {
	tests := []struct{ name, src, optionsErr, functionErr string }{
		{"Proxy exports", "module.exports = new Proxy({}, {get() { throw Object.create(null) }, ownKeys() { throw 1 }});",
			"reading the exported options: [an object]", `script.js: reading the export "default": [an object]`},
		{"throwing options getter", "Object.defineProperty(exports, 'options', {get() { throw new Error('no options') }});",
			"reading the exported options: Error: no options", ""},
		{"options Proxy", "exports.options = new Proxy({}, {ownKeys() { throw new Error('keys') }});",
			"encoding exported options: Error: keys", ""},
		{"recursive toJSON", "exports.options = {toJSON() { return this.toJSON() }};",
			"encoding exported options: RangeError: Maximum call stack size exceeded", ""},
		{"options not an object", "exports.options = Symbol('o');",
			"exported options must be an object, not a symbol", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := mustInstantiate(t, mustCompile(t, "script.js", tt.src), InstanceConfig{})
			if _, err := inst.OptionsJSON(); err == nil || err.Error() != tt.optionsErr {
				t.Errorf("OptionsJSON error = %v, want %q", err, tt.optionsErr)
			}
			_, ok, err := inst.Function("default")
			if ok {
				t.Error("Function(default) found a function")
			}
			var got string
			if err != nil {
				got = err.Error()
			}
			if got != tt.functionErr {
				t.Errorf("Function(default) error = %v, want %q", err, tt.functionErr)
			}
		})
	}
}

func TestRecursionRaisesARangeError(t *testing.T) {
	for _, src := range []string{
		"function f(n) { return f(n + 1) + 1; }\nf(0);\n",
		"const f = () => [1].map(f);\nf();\n",
		"throw {toString() { return String(this) }};\n",
	} {
		s := mustCompile(t, "script.js", src)
		_, err := s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t)})
		var se *ScriptError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "RangeError: Maximum call stack size exceeded") || se.Line == 0 {
			t.Errorf("%s: error = %v, want a positioned RangeError", src, err)
		}
	}
	inst := mustInstantiate(t, mustCompile(t, "script.js", `
function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); }
export default () => depth(3000);
`), InstanceConfig{})
	if got := mustCall(t, inst, "default").ToInteger(); got != 3000 {
		t.Errorf("depth(3000) = %d", got)
	}
}

// stopper is a module whose stop() cancels the VU's context, so that a
// test cancels it exactly when the script has started its endless loop.
type stopper struct{ cancel context.CancelFunc }

func (s stopper) NewInstance(vu modules.VU) (modules.Instance, error) {
	exports := vu.Runtime().NewObject()
	return fakeInstance{exports}, exports.Set("stop", func() { s.cancel() })
}

func TestEndlessInitLoopStops(t *testing.T) {
	for name, src := range map[string]string{
		"loop":             "import s from 'stopper';\ns.stop();\nfor (;;) {}\n",
		"loop in toString": "import s from 'stopper';\ns.stop();\nthrow {toString() { for (;;) {} }};\n",
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			vu := modulestest.NewVU(t)
			vu.Ctx = ctx
			s := mustCompile(t, "script.js", src)
			done := make(chan error, 1)
			go func() {
				_, err := s.Instantiate(InstanceConfig{VU: vu, Modules: registry(t, map[string]modules.Module{"stopper": stopper{cancel}})})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the init code was not interrupted")
			}
			var stopped *StoppedError
			var se *ScriptError
			if !errors.As(err, &stopped) || !errors.Is(err, context.Canceled) || errors.As(err, &se) {
				t.Fatalf("error = %v, want a StoppedError wrapping context.Canceled", err)
			}
			if !strings.HasPrefix(err.Error(), "script.js:") || !strings.Contains(err.Error(), "interrupted") {
				t.Errorf("error %q does not say where the script was interrupted", err)
			}
			// The runtime is not left interrupted.
			if _, err := vu.Runtime().RunString("1"); err != nil {
				t.Errorf("the runtime after the stop: %v", err)
			}
		})
	}
}

func TestInstantiateWithAStoppedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	vu := modulestest.NewVU(t)
	vu.Ctx = ctx
	_, err := mustCompile(t, "script.js", "for (;;) {}").Instantiate(InstanceConfig{VU: vu})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want a cancellation", err)
	}
}

func TestScriptSizeCaps(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.js")
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", MaxScriptSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadScript(big); err == nil || !strings.Contains(err.Error(), big+" is larger than 16 MiB") {
		t.Errorf("ReadScript of a big file: %v", err)
	}
	for _, path := range []string{"/dev/zero", dir} {
		if _, err := ReadScript(path); err == nil || !strings.Contains(err.Error(), path+" is a") {
			t.Errorf("ReadScript(%s): %v", path, err)
		}
	}
	for _, imp := range []string{"./big.js", "/dev/zero"} {
		_, err := Compile(filepath.Join(dir, "script.js"), []byte("import x from '"+imp+"';\n"))
		var se *ScriptError
		if !errors.As(err, &se) || se.Line != 1 || !strings.Contains(se.Message, "larger than 16 MiB") && !strings.Contains(se.Message, "not a regular file") {
			t.Errorf("importing %s: %v", imp, err)
		}
	}
}

func TestOpenCaps(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		"/dev/zero": `Error: open("/dev/zero"): /dev/zero is a device, not a regular file`,
		".":         `Error: open("."): ` + dir + ` is a directory, not a file`,
	} {
		_, err := mustCompile(t, filepath.Join(dir, "script.js"), "open("+jsString(path)+");\n").Instantiate(InstanceConfig{VU: modulestest.NewVU(t)})
		var se *ScriptError
		if !errors.As(err, &se) || se.Message != want {
			t.Errorf("open(%s) error = %v, want %s", path, err, want)
		}
	}
}

// TestReplacedGlobals replaces globals llmrun itself uses: its errors are
// still Errors with their message.
func TestReplacedGlobals(t *testing.T) {
	dir := t.TempDir()
	s := mustCompile(t, filepath.Join(dir, "script.js"), "globalThis.Error = undefined;\nopen('nope.txt');\n")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Instantiate(InstanceConfig{VU: modulestest.NewVU(t)})
	var se *ScriptError
	script := filepath.Join(dir, "script.js")
	want := `Error: open("nope.txt") in ` + script + ": no such file: looked for " + filepath.Join(dir, "nope.txt") +
		" (relative to the script's directory) and nope.txt (relative to the working directory, " + wd + ")"
	if !errors.As(err, &se) || se.Message != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestLongMessagesAreCut(t *testing.T) {
	inst := mustInstantiate(t, mustCompile(t, "script.js", "export default function () { throw 'é'.repeat(1 << 20); }\n"), InstanceConfig{})
	fn, _, _ := inst.Function("default")
	_, err := fn(undefined)
	var se *ScriptError
	if !errors.As(err, &se) || len(se.Message) > maxMessage+64 || !strings.HasSuffix(se.Message, "... (2088960 more bytes)") {
		t.Errorf("message of %d bytes ending %q", len(se.Message), se.Message[max(0, len(se.Message)-40):])
	}
}
