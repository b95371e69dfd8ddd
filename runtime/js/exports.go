package js

import (
	"fmt"
	"reflect"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// OptionsJSON returns the script's exported options as JSON, for the engine
// to decode into its own types, or nil when the script exports none. It
// runs the script's getters and toJSON methods safely, interrupted when
// the VU's context ends; what they throw is an error about the options
// (the caller names the script).
func (inst *Instance) OptionsJSON() ([]byte, error) {
	var b []byte
	err := inst.interruptible(func() error {
		v, err := jsvalue.Get(inst.rt, inst.exports, "options")
		if err != nil {
			return fmt.Errorf("reading the exported options: %w", err)
		}
		if goja.IsUndefined(v) {
			return nil
		}
		if _, ok := v.(*goja.Object); !ok {
			return fmt.Errorf("exported options must be an object, not %s", jsvalue.Describe(inst.rt, v))
		}
		if b, err = jsvalue.JSON(inst.rt, v); err != nil {
			return fmt.Errorf("encoding exported options: %w", err)
		}
		return nil
	})
	return b, err
}

// Export returns the script's export of that name ("default" for the
// default export), undefined when there is none. It runs a getter of the
// exports safely, interrupted when the VU's context ends.
func (inst *Instance) Export(name string) (goja.Value, error) {
	var v goja.Value
	err := inst.interruptible(func() error {
		var err error
		if v, err = jsvalue.Get(inst.rt, inst.exports, name); err != nil {
			return fmt.Errorf("%s: reading the export %q: %w", inst.script.filename, name, err)
		}
		return nil
	})
	return v, err
}

// Function returns the exported function of that name ("default" for the
// default export) and whether there is one, or the error of an export that
// cannot be read (a getter that throws), naming the export. Errors the
// function throws are *ScriptError. When it returns a promise, the call
// returns the promise's value once settled, or its rejection as a
// *ScriptError; goja runs the promise jobs queued by a call when the call
// returns, so this settles any async function that awaits only other
// promises of the script. A promise still pending (waiting on something
// outside the runtime) is returned as it is.
func (inst *Instance) Function(name string) (goja.Callable, bool, error) {
	v, err := inst.Export(name)
	if err != nil {
		return nil, false, err
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, false, nil
	}
	return func(this goja.Value, args ...goja.Value) (goja.Value, error) {
		v, err := fn(this, args...)
		if err != nil {
			return nil, inst.script.scriptError(inst.rt, err)
		}
		return inst.settled(v)
	}, true, nil
}

// FunctionNames returns the names of the script's exported functions, in
// the order of its exports ("default" for the default export); an export
// that cannot be read is left out.
func (inst *Instance) FunctionNames() ([]string, error) {
	var names []string
	err := inst.interruptible(func() error {
		keys, err := jsvalue.Keys(inst.rt, inst.exports)
		if err != nil {
			return fmt.Errorf("%s: listing the exports: %w", inst.script.filename, err)
		}
		for _, k := range keys {
			if v, err := jsvalue.Get(inst.rt, inst.exports, k); err == nil {
				if _, ok := goja.AssertFunction(v); ok {
					names = append(names, k)
				}
			}
		}
		return nil
	})
	return names, err
}

var promiseType = reflect.TypeFor[*goja.Promise]()

// settled returns the value of v, or of v's promise once settled.
func (inst *Instance) settled(v goja.Value) (goja.Value, error) {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ExportType() != promiseType {
		return v, nil
	}
	p := obj.Export().(*goja.Promise)
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		return nil, inst.script.rejectionError(inst.rt, p.Result())
	default:
		return v, nil
	}
}
