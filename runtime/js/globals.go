package js

import (
	"fmt"

	"github.com/dop251/goja"
)

// setGlobals defines the globals every script sees: __ENV, __VU, __ITER,
// console and open.
func (inst *Instance) setGlobals(rt *goja.Runtime, cfg InstanceConfig) error {
	vars := cfg.Env
	if vars == nil {
		vars = &Env{}
	}
	env := rt.NewDynamicObject(&envObject{env: vars, rt: rt})
	global := rt.GlobalObject()
	// __VU and __ITER read the instance's fields, so that setting them
	// costs the engine nothing in JavaScript.
	for _, counter := range []struct {
		name  string
		value *int64
	}{{"__VU", &inst.vuID}, {"__ITER", &inst.iter}} {
		get := rt.ToValue(func(goja.FunctionCall) goja.Value { return rt.ToValue(*counter.value) })
		if err := global.DefineAccessorProperty(counter.name, get, nil, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("setting %s: %w", counter.name, err)
		}
	}
	for _, g := range []struct {
		name  string
		value any
	}{{"__ENV", env}, {"open", (&opener{thrower: newThrower(rt), script: inst.script, vu: cfg.VU, paths: inst.script.paths(cfg.Paths)}).open}} {
		if err := global.DefineDataProperty(g.name, rt.ToValue(g.value), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("setting %s: %w", g.name, err)
		}
	}
	// Most scripts log nothing: console, five functions, is built when
	// the script first uses it.
	if err := defineLazily(rt, "console", func() goja.Value { return newConsole(rt, cfg, &inst.vuID) }); err != nil {
		return fmt.Errorf("setting console: %w", err)
	}
	return nil
}

// defineLazily defines the global name as a writable, configurable,
// non-enumerable value that build makes when the script first reads it.
// Until then the global is an accessor, whose one function both reads
// and assigns: read, it makes the value and redefines the global as that
// value; assigned, it redefines the global as the value assigned. So only
// what inspects the global's property itself before the first read or
// assignment tells the two apart: its descriptor, and
// Object.defineProperty with a descriptor that leaves out writable (which
// then defaults to false, as for any accessor).
func defineLazily(rt *goja.Runtime, name string, build func() goja.Value) error {
	global := rt.GlobalObject()
	var built goja.Value
	accessor := rt.ToValue(func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) > 0 {
			if global.DefineDataProperty(name, call.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE) != nil {
				// The script froze the global object first.
				panic(rt.NewTypeError("Cannot assign to read only property '%s'", name))
			}
			return goja.Undefined()
		}
		if built == nil {
			built = build()
			// A frozen global object keeps the accessor.
			_ = global.DefineDataProperty(name, built, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
		return built
	})
	return global.DefineAccessorProperty(name, accessor, accessor, goja.FLAG_TRUE, goja.FLAG_FALSE)
}
