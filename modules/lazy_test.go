package modules

import (
	"testing"

	"github.com/dop251/goja"
)

// LazyExports makes each export once, on its first read, and otherwise
// behaves as the plain object a module's exports were.
func TestLazyExports(t *testing.T) {
	rt := goja.New()
	built := map[string]int{}
	exports := LazyExports(rt, []string{"one", "two"}, func(name string) any {
		built[name]++
		return func() string { return name }
	})
	if err := rt.Set("m", exports); err != nil {
		t.Fatal(err)
	}
	if len(built) != 0 {
		t.Fatalf("built %v before any read", built)
	}
	for _, tc := range []struct{ script, want string }{
		{"Object.keys(m).join()", "one,two"},
		{"m.one() + m.one()", "oneone"},
		{"typeof m.three", "undefined"},
		{"'two' in m", "true"},
		{"m.three = 3; Object.keys(m).join() + ':' + m.three", "one,two,three:3"},
		{"delete m.two; Object.keys(m).join() + ':' + typeof m.two", "one,three:undefined"},
		{"JSON.stringify(Object.getOwnPropertyDescriptor(m, 'one').writable)", "true"},
	} {
		v, err := rt.RunString(tc.script)
		if err != nil {
			t.Fatalf("%s: %v", tc.script, err)
		}
		if got := v.String(); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.script, got, tc.want)
		}
	}
	if built["one"] != 1 || built["two"] != 0 {
		t.Errorf("built %v, want one once and two never", built)
	}
}
