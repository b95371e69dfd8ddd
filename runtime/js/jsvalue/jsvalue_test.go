package jsvalue

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// hostile are script values whose conversion to text runs script code that
// fails, with the text Text must give them.
var hostile = []struct{ name, src, text string }{
	{"null prototype with a message", "Object.assign(Object.create(null), {message: 'lib error'})", "lib error"},
	{"null prototype with a name and message", "Object.assign(Object.create(null), {name: 'LibError', message: 'lib error'})", "LibError: lib error"},
	{"null prototype", "Object.create(null)", "[object without toString]"},
	{"throwing toString", "({toString() { throw new Error('nope') }})", "[object whose toString threw: Error: nope]"},
	{"toString throwing a hostile value", "({toString() { throw Object.create(null) }})", "[object whose toString threw: [an object]]"},
	{"throwing Proxy", "new Proxy({}, {get() { throw new Error('trap') }})", "[object whose toString threw: Error: trap]"},
	{"recursive toString", "({toString() { return this.toString() }})", "[object whose toString failed: RangeError: Maximum call stack size exceeded]"},
	{"Error", "new Error('boom')", "Error: boom"},
	{"symbol", "Symbol('s')", "Symbol(s)"},
	{"BigInt", "10n", "10"},
}

// newRuntime is a runtime with a call-stack limit, as every runtime of a
// run has.
func newRuntime(t testing.TB) *goja.Runtime {
	t.Helper()
	rt := goja.New()
	rt.SetMaxCallStackSize(1000)
	return rt
}

func eval(t testing.TB, rt *goja.Runtime, src string) goja.Value {
	t.Helper()
	v, err := rt.RunString("(" + src + ")")
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return v
}

func TestTextOutsideTheRuntime(t *testing.T) {
	for _, tt := range hostile {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			if got := Text(rt, eval(t, rt, tt.src)); got != tt.text {
				t.Errorf("Text = %q, want %q", got, tt.text)
			}
			// The runtime still works.
			if got := eval(t, rt, "1 + 1").ToInteger(); got != 2 {
				t.Errorf("1 + 1 = %d after the conversion", got)
			}
		})
	}
}

func TestTextInsideAGoFunction(t *testing.T) {
	for _, tt := range hostile {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			if err := rt.Set("text", func(v goja.Value) string { return Text(rt, v) }); err != nil {
				t.Fatal(err)
			}
			if got := eval(t, rt, "text("+tt.src+")").String(); got != tt.text {
				t.Errorf("text() = %q, want %q", got, tt.text)
			}
		})
	}
}

// TestGuardLetsAnInterruptUnwindTheScript checks that a conversion in a Go
// function the script calls does not swallow an interrupt: the script
// stops.
func TestGuardLetsAnInterruptUnwindTheScript(t *testing.T) {
	rt := newRuntime(t)
	if err := rt.Set("text", func(v goja.Value) string { return Text(rt, v) }); err != nil {
		t.Fatal(err)
	}
	if err := rt.Set("stop", func() { rt.Interrupt("stop") }); err != nil {
		t.Fatal(err)
	}
	_, err := rt.RunString("text({toString() { stop(); for (;;) {} }}); for (;;) {}")
	var interrupted *goja.InterruptedError
	if !errors.As(err, &interrupted) {
		t.Fatalf("error = %v, want the interrupt", err)
	}
}

func TestGuardReturnsAnInterruptOutsideTheRuntime(t *testing.T) {
	rt := newRuntime(t)
	v := eval(t, rt, "({toString() { for (;;) {} }})")
	rt.Interrupt("stop")
	err := Guard(rt, func() { _ = v.String() })
	var interrupted *goja.InterruptedError
	if !errors.As(err, &interrupted) {
		t.Fatalf("error = %v, want the interrupt", err)
	}
	rt.ClearInterrupt()
	if got := eval(t, rt, "2 + 2").ToInteger(); got != 4 {
		t.Errorf("2 + 2 = %d after the interrupt", got)
	}
}

func TestJSON(t *testing.T) {
	tests := []struct{ src, want, err string }{
		{"({a: 1, b: [true, 'x']})", `{"a":1,"b":[true,"x"]}`, ""},
		{"'s'", `"s"`, ""},
		{"undefined", "", "undefined has no JSON form"},
		{"12.5", "12.5", ""},
		{"1n", "", "BigInt"},
		{"({toJSON() { throw Object.create(null) }})", "", "[an object]"},
		{"({toJSON() { return this.toJSON() }})", "", "Maximum call stack size exceeded"},
		{"new Proxy({}, {ownKeys() { throw new Error('keys') }})", "", "Error: keys"},
		{"(() => { const a = {}; a.a = a; return a })()", "", "circular"},
	}
	for _, tt := range tests {
		rt := newRuntime(t)
		b, err := JSON(rt, eval(t, rt, tt.src))
		switch {
		case tt.err == "" && (err != nil || string(b) != tt.want):
			t.Errorf("JSON(%s) = %s, %v, want %s", tt.src, b, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("JSON(%s) error = %v, want one containing %q", tt.src, err, tt.err)
		}
	}
}

func TestKeysGetExport(t *testing.T) {
	rt := newRuntime(t)
	p := eval(t, rt, `new Proxy({}, {ownKeys() { throw new Error('keys') }, get() { throw new Error('get') }})`).(*goja.Object)
	if _, err := Keys(rt, p); err == nil || err.Error() != "Error: keys" {
		t.Errorf("Keys error = %v", err)
	}
	if _, err := Get(rt, p, "x"); err == nil || err.Error() != "Error: get" {
		t.Errorf("Get error = %v", err)
	}
	if _, err := Export(rt, eval(t, rt, "({get x() { throw new Error('getter') }})")); err == nil || err.Error() != "Error: getter" {
		t.Errorf("Export error = %v", err)
	}
	if v, err := Get(rt, eval(t, rt, "({})").(*goja.Object), "x"); err != nil || !goja.IsUndefined(v) {
		t.Errorf("Get of a missing key = %v, %v, want undefined", v, err)
	}
}

func TestDescribe(t *testing.T) {
	tests := map[string]string{
		"undefined": "undefined", "null": "null", "5": "a number (5)", "true": "a boolean (true)",
		"'s'": "a string", "Symbol()": "a symbol", "1n": "a BigInt", "[1]": "an Array",
		"({})": "an object", "() => 1": "a function", "new Date(0)": "a Date", "new Int16Array(2)": "an Int16Array",
		"new Proxy({}, {get() { throw 1 }, getPrototypeOf() { throw 1 }})": "a Proxy",
		"({get constructor() { throw 1 }})":                                "an object", "new (class Foo {})": "a Foo",
	}
	for src, want := range tests {
		rt := newRuntime(t)
		if got := Describe(rt, eval(t, rt, src)); got != want {
			t.Errorf("Describe(%s) = %q, want %q", src, got, want)
		}
	}
}

// FuzzValueText evaluates a JavaScript expression and converts its value
// every way the runtime does; none may panic, and all end, however the
// value behaves (an interrupt ends code that does not).
func FuzzValueText(f *testing.F) {
	for _, tt := range hostile {
		f.Add(tt.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		rt := newRuntime(t)
		stop := time.AfterFunc(time.Second, func() { rt.Interrupt("time") })
		defer stop.Stop()
		v, err := rt.RunString("(" + src + "\n)")
		if err != nil {
			return
		}
		_ = Text(rt, v)
		_ = Describe(rt, v)
		_, _ = JSON(rt, v)
		_, _ = Export(rt, v)
		if obj, ok := v.(*goja.Object); ok {
			_, _ = Keys(rt, obj)
			_, _ = Get(rt, obj, "message")
		}
	})
}

// TestThrowsWhileDescribingAThrow converts a value whose toString throws
// an object whose message getter throws another such object, without end:
// the description stops.
func TestThrowsWhileDescribingAThrow(t *testing.T) {
	rt := newRuntime(t)
	v := eval(t, rt, "(() => { const mk = () => ({ get message() { throw mk() }, toString() { throw mk() } }); return mk() })()")
	if got := Text(rt, v); got != "[object whose toString threw: [an object]]" {
		t.Errorf("Text = %q", got)
	}
}

// TestTextOfAPrimitiveAllocatesNothing checks that Text converts a
// primitive, which runs no script code, without a guard: it runs for every
// console argument, tag value and metric name.
func TestTextOfAPrimitiveAllocatesNothing(t *testing.T) {
	rt := newRuntime(t)
	v := rt.ToValue("llm_ttft")
	if allocs := testing.AllocsPerRun(100, func() { _ = Text(rt, v) }); allocs != 0 {
		t.Errorf("Text of a string allocates %v times, want 0", allocs)
	}
}
