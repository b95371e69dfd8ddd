package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/js"
)

func loadForSummary(t *testing.T, src string) *Engine {
	t.Helper()
	e, err := Load(context.Background(), testConfig(t, src, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestHandleSummaryOutputs(t *testing.T) {
	e := loadForSummary(t, `
export default function () {}
export function handleSummary(data) {
  return {
    stdout: 'p95 ' + data.metrics.llm_ttft.values['p(95)'] + '\n',
    'out/bin.dat': new Uint8Array([0, 1, 255]).buffer,
    'out/u8.dat': new Uint8Array([7, 8]),
    stderr: 'scenario ' + __ENV.X,
  };
}`)
	if !e.HasHandleSummary() {
		t.Fatal("HasHandleSummary() = false")
	}
	outs, err := e.HandleSummary(context.Background(), []byte(`{"metrics":{"llm_ttft":{"values":{"p(95)":12.5}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []SummaryOutput{
		{"stdout", []byte("p95 12.5\n")},
		{"out/bin.dat", []byte{0, 1, 255}},
		{"out/u8.dat", []byte{7, 8}},
		{"stderr", []byte("scenario undefined")},
	}
	if len(outs) != len(want) {
		t.Fatalf("outputs %q, want %q", outs, want)
	}
	for i := range want {
		if outs[i].Dest != want[i].Dest || string(outs[i].Content) != string(want[i].Content) {
			t.Errorf("output %d = %s %q, want %s %q (in the object's key order)", i, outs[i].Dest, outs[i].Content, want[i].Dest, want[i].Content)
		}
	}
}

func TestHandleSummaryAbsentOrEmpty(t *testing.T) {
	e := loadForSummary(t, `export default function () {}`)
	if e.HasHandleSummary() {
		t.Error("HasHandleSummary() = true for a script without one")
	}
	if outs, err := e.HandleSummary(context.Background(), []byte(`{}`)); outs != nil || err != nil {
		t.Errorf("HandleSummary without the export = %v, %v; want nothing", outs, err)
	}
	for _, ret := range []string{"undefined", "null"} {
		e := loadForSummary(t, `export default function () {}
export function handleSummary() { return `+ret+`; }`)
		if outs, err := e.HandleSummary(context.Background(), []byte(`{}`)); outs != nil || err != nil {
			t.Errorf("handleSummary returning %s = %v, %v; want nothing", ret, outs, err)
		}
	}
}

// handleSummary runs even when the run was interrupted (a canceled ctx),
// and async functions are settled.
func TestHandleSummaryAfterInterruptAndAsync(t *testing.T) {
	e := loadForSummary(t, `export default function () {}
export async function handleSummary(data) { return { stdout: await Promise.resolve(String(data.n)) }; }`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	outs, err := e.HandleSummary(ctx, []byte(`{"n": 3}`))
	if err != nil || len(outs) != 1 || string(outs[0].Content) != "3" {
		t.Fatalf("HandleSummary after cancel = %q, %v; want stdout 3", outs, err)
	}
}

func TestHandleSummaryErrors(t *testing.T) {
	for _, tc := range []struct{ name, fn, want string }{
		{"throws", `function handleSummary() { throw new Error('boom'); }`, "Error: boom"},
		{"array", `function handleSummary() { return ['x']; }`, "must return an object mapping"},
		{"string", `function handleSummary() { return 'x'; }`, "must return an object mapping"},
		{"number value", `function handleSummary() { return { stdout: 42 }; }`, `returned a number (42) for "stdout"`},
		{"object value", `function handleSummary() { return { 'a.json': { a: 1 } }; }`, `returned an object for "a.json"`},
		{"undefined value", `function handleSummary() { return { 'a.txt': undefined }; }`, `returned undefined for "a.txt"`},
		{"int16 value", `function handleSummary() { return { 'a.bin': new Int16Array(2) }; }`, `returned an Int16Array for "a.bin"`},
		{"not a function", `const handleSummary = 5;`, "handleSummary must be a function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := loadForSummary(t, "export default function () {}\nexport "+tc.fn)
			if !e.HasHandleSummary() {
				t.Fatal("HasHandleSummary() = false")
			}
			_, err := e.HandleSummary(context.Background(), []byte(`{}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if tc.name == "throws" {
				var se *js.ScriptError
				if !errors.As(err, &se) || se.Line != 2 {
					t.Errorf("error %#v is not a *js.ScriptError at line 2", err)
				}
			}
		})
	}
}

func TestHandleSummaryTimeout(t *testing.T) {
	e := loadForSummary(t, `export default function () {}
export function handleSummary() { for (;;) {} }`)
	start := time.Now()
	_, err := e.handleSummary(context.Background(), []byte(`{}`), 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "handleSummary() did not finish within 50ms") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the timeout took %s", el)
	}
}

// TestHandleSummaryArrayByKind checks that an array is refused whatever
// its constructor or prototype says, and that an object of the script's
// own class named Array is accepted.
func TestHandleSummaryArrayByKind(t *testing.T) {
	for _, ret := range []string{
		`(() => { const a = ['x']; a.constructor = Object; return a })()`,
		`Object.setPrototypeOf(['x'], null)`,
		`new Proxy(['x'], {})`,
	} {
		e := loadForSummary(t, "export default function () {}\nexport function handleSummary() { return "+ret+"; }")
		_, err := e.HandleSummary(context.Background(), []byte(`{}`))
		if err == nil || !strings.Contains(err.Error(), "must return an object mapping 'stdout', 'stderr' or file paths to contents, not an array") {
			t.Errorf("returning %s: error %v, want a refused array", ret, err)
		}
	}
	e := loadForSummary(t, `export default function () {}
class Array { constructor() { this.stdout = 'mine'; } }
export function handleSummary() { return new Array(); }`)
	outs, err := e.HandleSummary(context.Background(), []byte(`{}`))
	if err != nil || len(outs) != 1 || outs[0].Dest != "stdout" || string(outs[0].Content) != "mine" {
		t.Errorf("a class named Array: %q, %v; want stdout \"mine\"", outs, err)
	}
}
