package js

import (
	"fmt"
	"log/slog"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
)

// InstanceConfig is what a VU's instance of a script gets from the engine.
type InstanceConfig struct {
	// VU is the virtual user the instance runs in; the script runs in its
	// Runtime, which the instance configures (field name mapping, globals).
	VU modules.VU
	// VUID is the VU's number, __VU.
	VUID int64
	// Modules are the Go modules the script can import, by name.
	Modules map[string]modules.Module
	// Env is the script's __ENV.
	Env map[string]string
	// Logger receives console output, with the VU's number as "vu";
	// nil means slog.Default().
	Logger *slog.Logger
}

// Instance is a script instantiated in one VU's runtime. Like the runtime,
// it belongs to the VU's goroutine.
type Instance struct {
	script  *Script
	exports *goja.Object
	vu      int64
	iter    int64
}

// Instantiate runs the script's init code in cfg.VU's runtime, which must be
// fresh and in its init context, and returns the script's exports there.
// Errors thrown by the script are *ScriptError.
func (s *Script) Instantiate(cfg InstanceConfig) (*Instance, error) {
	rt := cfg.VU.Runtime()
	rt.SetFieldNameMapper(goja.TagFieldNameMapper("js", true))
	inst := &Instance{script: s, vu: cfg.VUID}
	if err := inst.setGlobals(rt, cfg); err != nil {
		return nil, fmt.Errorf("instantiating %s: %w", s.filename, err)
	}
	wrapper, err := rt.RunProgram(s.program)
	if err != nil {
		return nil, s.scriptError(err)
	}
	run, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, fmt.Errorf("instantiating %s: the compiled program did not evaluate to a function", s.filename)
	}
	exports := rt.NewObject()
	module := rt.NewObject()
	if err := module.Set("exports", exports); err != nil {
		return nil, fmt.Errorf("instantiating %s: %w", s.filename, err)
	}
	req := &requirer{vu: cfg.VU, modules: cfg.Modules, loaded: make(map[string]goja.Value)}
	if _, err := run(exports, module, exports, rt.ToValue(req.require)); err != nil {
		return nil, s.scriptError(err)
	}
	v := module.Get("exports")
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, fmt.Errorf("instantiating %s: module.exports is %v", s.filename, v)
	}
	inst.exports = v.ToObject(rt)
	return inst, nil
}

// Exports returns the script's exports: named exports by name, the default
// export as "default".
func (inst *Instance) Exports() *goja.Object {
	return inst.exports
}

// SetIteration sets __ITER, the VU's iteration number in its scenario.
func (inst *Instance) SetIteration(n int64) {
	inst.iter = n
}
