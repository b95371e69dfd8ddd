package js

import (
	"fmt"
	"reflect"

	"github.com/dop251/goja"
)

// OptionsJSON returns the script's exported options as JSON, for the engine
// to decode into its own types, or nil when the script exports none.
func (inst *Instance) OptionsJSON() ([]byte, error) {
	v := inst.exports.Get("options")
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil, fmt.Errorf("%s: exported options must be an object, not %s", inst.script.filename, v)
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s: encoding exported options: %w", inst.script.filename, err)
	}
	return b, nil
}

// Function returns the exported function of that name ("default" for the
// default export) and whether there is one. Errors it throws are
// *ScriptError. When it returns a promise, the call returns the promise's
// value once settled, or its rejection as a *ScriptError; goja runs the
// promise jobs queued by a call when the call returns, so this settles any
// async function that awaits only other promises of the script. A promise
// still pending (waiting on something outside the runtime) is returned as
// it is.
func (inst *Instance) Function(name string) (goja.Callable, bool) {
	fn, ok := goja.AssertFunction(inst.exports.Get(name))
	if !ok {
		return nil, false
	}
	return func(this goja.Value, args ...goja.Value) (goja.Value, error) {
		v, err := fn(this, args...)
		if err != nil {
			return nil, inst.script.scriptError(err)
		}
		return inst.settled(v)
	}, true
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
		return nil, inst.script.rejectionError(p.Result())
	default:
		return v, nil
	}
}
