package checks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/checks"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// newVU returns a VU running an iteration of scenario "test" (its state
// set), with the module's exports as the global "llmrun".
func newVU(t *testing.T) *modulestest.VU {
	t.Helper()
	v := modulestest.NewVU(t)
	v.Expose("llmrun", checks.Module{})
	v.LeaveInit()
	return v
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		want   bool
		passed map[string]bool // check name → passed
	}{
		{"all pass", `llmrun.check(5, { 'is five': (v) => v === 5, 'positive': (v) => v > 0 })`, true,
			map[string]bool{"is five": true, "positive": true}},
		{"one fails", `llmrun.check(5, { 'is five': (v) => v === 5, 'is six': (v) => v === 6 })`, false,
			map[string]bool{"is five": true, "is six": false}},
		{"the predicate gets the value", `llmrun.check({ ok: true, n: 3 }, { ok: (r) => r.ok, 'n > 5': (r) => r.n > 5 })`, false,
			map[string]bool{"ok": true, "n > 5": false}},
		{"plain values count by truthiness", `llmrun.check(null, { one: 1, zero: 0, empty: '', text: 'x', object: {}, undef: undefined })`, false,
			map[string]bool{"one": true, "zero": false, "empty": false, "text": true, "object": true, "undef": false}},
		{"no checks", `llmrun.check(1, {})`, true, map[string]bool{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newVU(t)
			if got := v.Run(tc.src).ToBoolean(); got != tc.want {
				t.Errorf("check returned %v, want %v", got, tc.want)
			}
			series := v.Series("checks")
			if len(series) != len(tc.passed) {
				t.Errorf("%d checks series, want %d: %v", len(series), len(tc.passed), series)
			}
			for name, passed := range tc.passed {
				st := series["check:"+name+",scenario:test"]
				if st == nil {
					t.Errorf("no sample for check %q among %v", name, series)
					continue
				}
				want := int64(0)
				if passed {
					want = 1
				}
				if st.Count != 1 || st.NonZero != want {
					t.Errorf("check %q: %d samples, %d passes; want 1 sample, %d passes", name, st.Count, st.NonZero, want)
				}
			}
			if m := v.Registry().Get("checks"); m == nil || m.Type != metrics.Rate {
				t.Errorf("checks metric = %+v, want a rate", m)
			}
		})
	}
}

func TestCheckExtraTags(t *testing.T) {
	v := newVU(t)
	v.Run(`llmrun.check(1, { a: true }, { kind: 'x', n: 3, check: 'not this' })`)
	series := v.Series("checks")
	// The check's own name wins over an extra tag named check.
	if st := series["check:a,kind:x,n:3,scenario:test"]; st == nil || st.Count != 1 || st.NonZero != 1 {
		t.Errorf("checks series = %v, want one pass tagged check:a,kind:x,n:3,scenario:test", series)
	}
	// The VU's tags are unchanged.
	if got := v.State().Tags.Key(); got != "scenario:test" {
		t.Errorf("VU tags became %q", got)
	}
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"no checks object", `llmrun.check(1)`, "TypeError: check(value, { 'name': (v) => ... }): the second argument must be an object of named checks"},
		{"null checks", `llmrun.check(1, null)`, "the second argument must be an object"},
		{"predicate throws", `llmrun.check(1, { bad: () => { throw new Error('inside the predicate') } })`, "Error: inside the predicate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newVU(t)
			_, err := v.Runtime().RunString(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestInitContext(t *testing.T) {
	tests := []struct{ src, want string }{
		{`llmrun.check(1, { a: true })`, "TypeError: check() cannot be called in the init context"},
		{`llmrun.group('g', () => 1)`, "TypeError: group() cannot be called in the init context"},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			v := newVU(t)
			v.EnterInit()
			_, err := v.Runtime().RunString(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			// A thrown TypeError is catchable by the script.
			v.Run(`try { ` + tc.src + ` } catch (e) { if (!(e instanceof TypeError)) throw e; }`)
			if n := len(v.Aggregator.Snapshot().Series()); n != 0 {
				t.Errorf("%d series recorded in the init context", n)
			}
		})
	}
}

func TestGroupNesting(t *testing.T) {
	v := newVU(t)
	res := v.Run(`
const res = llmrun.group('a', () => {
  llmrun.check(1, { 'in a': true });
  return llmrun.group('b', () => {
    llmrun.sleep(0.02);
    llmrun.check(1, { 'in b': true });
    return 42;
  });
});
llmrun.check(1, { outside: true });
res;
`)
	if got := res.ToInteger(); got != 42 {
		t.Errorf("group returned %v, want the function's 42", res)
	}
	checks := v.Series("checks")
	for _, key := range []string{"check:in a,group:::a,scenario:test", "check:in b,group:::a::b,scenario:test", "check:outside,scenario:test"} {
		if st := checks[key]; st == nil || st.Count != 1 || st.NonZero != 1 {
			t.Errorf("no passed check {%s} among %v", key, checks)
		}
	}
	if len(checks) != 3 {
		t.Errorf("%d checks series, want 3", len(checks))
	}
	durations := v.Series("group_duration")
	outer, inner := durations["group:::a,scenario:test"], durations["group:::a::b,scenario:test"]
	if outer == nil || inner == nil || len(durations) != 2 {
		t.Fatalf("group_duration series = %v, want ::a and ::a::b", durations)
	}
	if outer.Count != 1 || inner.Count != 1 {
		t.Errorf("group_duration counts: ::a %d, ::a::b %d; want 1 each", outer.Count, inner.Count)
	}
	if inner.Max < 20 {
		t.Errorf("::a::b lasted %v ms, but it slept 20 ms", inner.Max)
	}
	if outer.Max < inner.Max {
		t.Errorf("::a lasted %v ms, less than ::a::b within it (%v ms)", outer.Max, inner.Max)
	}
	if m := v.Registry().Get("group_duration"); m == nil || m.Type != metrics.Trend || m.Contains != metrics.Time {
		t.Errorf("group_duration metric = %+v, want a time trend", m)
	}
	if v.State().Group != "" || v.State().Tags.Key() != "scenario:test" {
		t.Errorf("after the groups, state is group %q, tags %q", v.State().Group, v.State().Tags.Key())
	}
}

func TestGroupThatThrowsRestoresTheState(t *testing.T) {
	v := newVU(t)
	msg := v.Run(`
let msg = '';
try {
  llmrun.group('outer', () => llmrun.group('inner', () => { throw new Error('in the group'); }));
} catch (e) {
  msg = String(e);
}
llmrun.check(1, { after: true });
msg;
`)
	if !strings.Contains(msg.String(), "in the group") {
		t.Errorf("caught %q, want the group's exception", msg)
	}
	if v.State().Group != "" || v.State().Tags.Key() != "scenario:test" {
		t.Errorf("after the throw, state is group %q, tags %q", v.State().Group, v.State().Tags.Key())
	}
	if st := v.Series("checks")["check:after,scenario:test"]; st == nil {
		t.Errorf("the check after the group is not outside it: %v", v.Series("checks"))
	}
}

func TestGroupNeedsAFunction(t *testing.T) {
	v := newVU(t)
	_, err := v.Runtime().RunString(`llmrun.group('g')`)
	if err == nil || !strings.Contains(err.Error(), `TypeError: group("g", fn): fn must be a function`) {
		t.Fatalf("error = %v", err)
	}
}

func TestSleep(t *testing.T) {
	t.Run("sleeps", func(t *testing.T) {
		v := newVU(t)
		start := time.Now()
		v.Run(`llmrun.sleep(0.05)`)
		if el := time.Since(start); el < 50*time.Millisecond {
			t.Errorf("sleep(0.05) returned after %v", el)
		}
	})
	for _, arg := range []string{"0", "-1"} {
		t.Run("sleep("+arg+")", func(t *testing.T) {
			v := newVU(t)
			start := time.Now()
			v.Run(`llmrun.sleep(` + arg + `)`)
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("sleep(%s) took %v", arg, el)
			}
		})
	}
	t.Run("returns early when the VU's context ends", func(t *testing.T) {
		v := newVU(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		v.Ctx = ctx
		// start before the timer, so that el is no shorter than the
		// context's life however late this goroutine runs.
		start := time.Now()
		time.AfterFunc(50*time.Millisecond, cancel)
		v.Run(`llmrun.sleep(30)`)
		el := time.Since(start)
		if el < 50*time.Millisecond {
			t.Errorf("sleep returned after %v, before the context ended", el)
		}
		if el > 10*time.Second {
			t.Errorf("sleep(30) returned after %v: the end of the context did not stop it", el)
		}
	})
	t.Run("huge and infinite sleeps last until the context ends", func(t *testing.T) {
		for _, arg := range []string{"1e12", "Infinity"} {
			v := newVU(t)
			// start before the deadline's clock, so that el is no shorter
			// than the context's life.
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			v.Ctx = ctx
			v.Run(`llmrun.sleep(` + arg + `)`)
			cancel()
			if el := time.Since(start); el < 50*time.Millisecond {
				t.Errorf("sleep(%s) returned after %v, before its context ended", arg, el)
			}
		}
	})
	t.Run("NaN is an error", func(t *testing.T) {
		v := newVU(t)
		if _, err := v.Runtime().RunString(`llmrun.sleep(NaN)`); err == nil || !strings.Contains(err.Error(), "must be a number") {
			t.Errorf("sleep(NaN): %v", err)
		}
	})
	t.Run("context already ended", func(t *testing.T) {
		v := newVU(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		v.Ctx = ctx
		start := time.Now()
		v.Run(`llmrun.sleep(30)`)
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("sleep(30) took %v with its context ended", el)
		}
	})
}

func TestTextSummaryCallsTheRenderer(t *testing.T) {
	var got string
	var gotColor bool
	v := modulestest.NewVU(t)
	v.Expose("llmrun", checks.Module{TextSummary: func(b []byte, color bool) (string, error) {
		got, gotColor = string(b), color
		return "rendered", nil
	}})
	if out := v.Run(`llmrun.textSummary({ llmrun: { serving: { completed: 3 } } }, { color: true })`).String(); out != "rendered" {
		t.Errorf("textSummary returned %q", out)
	}
	if got != `{"serving":{"completed":3}}` || !gotColor {
		t.Errorf("renderer got %s color=%v", got, gotColor)
	}
	for _, src := range []string{`llmrun.textSummary({})`, `llmrun.textSummary()`} {
		if _, err := v.Runtime().RunString(src); err == nil || !strings.Contains(err.Error(), "handleSummary(data)") {
			t.Errorf("%s: %v", src, err)
		}
	}
	bare := modulestest.NewVU(t)
	bare.Expose("llmrun", checks.Module{})
	if _, err := bare.Runtime().RunString(`llmrun.textSummary({ llmrun: {} })`); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("without a renderer: %v", err)
	}
}
