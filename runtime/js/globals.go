package js

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/dop251/goja"
)

// setGlobals defines the globals every script sees: __ENV, __VU, __ITER,
// console and open.
func (inst *Instance) setGlobals(rt *goja.Runtime, cfg InstanceConfig) error {
	env, err := frozenEnv(rt, cfg.Env)
	if err != nil {
		return fmt.Errorf("setting __ENV: %w", err)
	}
	global := rt.GlobalObject()
	// __VU and __ITER read the instance's fields, so that setting them
	// costs the engine nothing in JavaScript.
	counters := map[string]*int64{"__VU": &inst.vuID, "__ITER": &inst.iter}
	for name, p := range counters {
		get := rt.ToValue(func(goja.FunctionCall) goja.Value { return rt.ToValue(*p) })
		if err := global.DefineAccessorProperty(name, get, nil, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
	}
	values := map[string]any{
		"__ENV":   env,
		"console": newConsole(rt, cfg, &inst.vuID),
		"open":    (&opener{thrower: newThrower(rt), script: inst.script, vu: cfg.VU}).open,
	}
	for name, v := range values {
		if err := global.DefineDataProperty(name, rt.ToValue(v), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
	}
	return nil
}

// frozenEnv returns env as a frozen object, keys in sorted order.
func frozenEnv(rt *goja.Runtime, env map[string]string) (*goja.Object, error) {
	obj := rt.NewObject()
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if err := obj.Set(k, env[k]); err != nil {
			return nil, err
		}
	}
	freeze, ok := goja.AssertFunction(rt.Get("Object").ToObject(rt).Get("freeze"))
	if !ok {
		return nil, errors.New("the runtime has no Object.freeze function")
	}
	if _, err := freeze(nil, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
