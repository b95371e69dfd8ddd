package js

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/scriptpath"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// InstanceConfig is what a VU's instance of a script gets from the engine.
type InstanceConfig struct {
	// VU is the virtual user the instance runs in; the script runs in its
	// Runtime, which the instance configures (field name mapping, globals).
	VU modules.VU
	// VUID is the VU's number, __VU.
	VUID int64
	// Modules are the Go modules the script can import, by name.
	Modules *modules.Registry
	// Env is the script's __ENV; nil means no variables.
	Env *Env
	// Logger receives console output, with the VU's number as "vu";
	// nil means slog.Default().
	Logger *slog.Logger
	// Paths finds the files open() reads (and tells its FileRead of
	// them); nil: a resolver of the script's own, which warns and tells
	// no one.
	Paths *scriptpath.Resolver
}

// fieldNames maps Go struct fields and methods to script properties by
// their js tags, methods uncapitalised; it keeps no state, so every
// runtime shares it.
var fieldNames = goja.TagFieldNameMapper("js", true)

// MaxCallStackSize is how deeply the script's functions may nest calls in
// every runtime Instantiate configures; one call deeper throws a
// RangeError, which no catch of the script can swallow, instead of growing
// memory until the process dies.
const MaxCallStackSize = 4000

// Instance is a script instantiated in one VU's runtime. Like the runtime,
// it belongs to the VU's goroutine.
type Instance struct {
	script  *Script
	rt      *goja.Runtime
	vu      modules.VU
	exports *goja.Object
	vuID    int64
	iter    int64
}

// Instantiate runs the script's init code in cfg.VU's runtime, which must be
// fresh and in its init context, and returns the script's exports there.
// The runtime gets a call-stack limit (MaxCallStackSize). Errors thrown by
// the script are *ScriptError. When cfg.VU's context ends, the init code is
// interrupted and the error (no *ScriptError) wraps the context's cause.
func (s *Script) Instantiate(cfg InstanceConfig) (*Instance, error) {
	rt := cfg.VU.Runtime()
	rt.SetFieldNameMapper(fieldNames)
	rt.SetMaxCallStackSize(MaxCallStackSize)
	inst := &Instance{script: s, rt: rt, vu: cfg.VU, vuID: cfg.VUID}
	if ctx := cfg.VU.Context(); ctx.Err() != nil {
		return nil, &StoppedError{cause: context.Cause(ctx)}
	}
	if err := inst.setGlobals(rt, cfg); err != nil {
		return nil, fmt.Errorf("instantiating %s: %w", s.filename, err)
	}
	var exports goja.Value
	err := inst.interruptible(func() error {
		var err error
		exports, err = s.runInit(rt, cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	inst.exports = exports.ToObject(rt)
	return inst, nil
}

// runInit runs the program's wrapper function, the init code, and returns
// module.exports.
func (s *Script) runInit(rt *goja.Runtime, cfg InstanceConfig) (goja.Value, error) {
	wrapper, err := rt.RunProgram(s.program)
	if err != nil {
		return nil, s.scriptError(rt, err)
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
	req := &requirer{thrower: newThrower(rt), vu: cfg.VU, modules: cfg.Modules, imports: s.imports}
	if _, err := run(exports, module, exports, rt.ToValue(req.require)); err != nil {
		return nil, s.scriptError(rt, err)
	}
	v, err := jsvalue.Get(rt, module, "exports")
	if err != nil {
		return nil, fmt.Errorf("instantiating %s: reading module.exports: %w", s.filename, err)
	}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, fmt.Errorf("instantiating %s: module.exports is %s", s.filename, jsvalue.Describe(rt, v))
	}
	return v, nil
}

// interruptible runs f, which runs script code from Go (outside any call
// of the engine's), interrupting the runtime when the VU's context ends.
// An error f returns once that interrupt fired becomes one that names
// where the script was and wraps the context's cause, so that callers
// tell a stop from a script error. A context that has already ended
// interrupts nothing: a stopped run still reads the script's exports, for
// its teardown and handleSummary.
func (inst *Instance) interruptible(f func() error) error {
	ctx := inst.vu.Context()
	if ctx.Err() != nil {
		return f()
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		inst.rt.Interrupt(errStopped)
		close(done)
	})
	err := f()
	interrupted := !stop()
	if interrupted {
		<-done
		inst.rt.ClearInterrupt()
	}
	if err != nil && interrupted {
		return stoppedError(err, context.Cause(ctx))
	}
	return err
}

// errStopped is the value the runtime is interrupted with when the VU's
// context ends.
var errStopped = errors.New("stopped")

// StoppedError is script code cut short because the run was stopped (its
// context ended) while it ran from Go: init code, or reading the
// exports. It unwraps to the context's cause (context.Canceled).
type StoppedError struct {
	// At is where the script was, "file:line:column", "" when unknown.
	At    string
	cause error
}

func (e *StoppedError) Error() string {
	if e.At == "" {
		return "the script was interrupted: " + e.cause.Error()
	}
	return e.At + ": the script was interrupted here: " + e.cause.Error()
}

func (e *StoppedError) Unwrap() error { return e.cause }

// stoppedError makes a StoppedError of the interrupt err, positioned where
// the script was.
func stoppedError(err error, cause error) error {
	stopped := &StoppedError{cause: cause}
	var se *ScriptError
	if errors.As(err, &se) && se.Line > 0 {
		stopped.At = se.File + ":" + strconv.Itoa(se.Line) + ":" + strconv.Itoa(se.Column)
	}
	return stopped
}

// Exports returns the script's exports: named exports by name, the default
// export as "default". Read them with Export, which is safe whatever the
// script made of them.
func (inst *Instance) Exports() *goja.Object {
	return inst.exports
}

// SetIteration sets __ITER, the VU's iteration number in its scenario.
func (inst *Instance) SetIteration(n int64) {
	inst.iter = n
}
