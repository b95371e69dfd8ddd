package modules_test

import (
	"testing"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
)

func TestFunction(t *testing.T) {
	rt := goja.New()
	var got []goja.Value
	f := modules.Function(rt, 2, func(call goja.FunctionCall) goja.Value {
		got = call.Arguments
		return rt.ToValue("done")
	})
	if err := rt.Set("f", f); err != nil {
		t.Fatal(err)
	}
	v, err := rt.RunString(`[f.length, Object.getOwnPropertyDescriptor(f, 'length').writable, f(1, 'a')].join(',')`)
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != "2,false,done" || len(got) != 2 || got[0].ToInteger() != 1 || got[1].String() != "a" {
		t.Errorf("f: %s, called with %v; want 2,false,done and (1, a)", v, got)
	}
}
