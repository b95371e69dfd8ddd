package js

import (
	"fmt"

	"github.com/dop251/goja"
)

// thrower throws JavaScript Errors from the Go functions of the script's
// globals (open, require). They are made from the runtime's own builtins,
// whatever the script did to the global Error; and only when thrown, so
// that a runtime whose script never meets one does not build the Error
// constructor and its prototype (about 3 KB a VU).
type thrower struct {
	rt *goja.Runtime
}

func newThrower(rt *goja.Runtime) thrower {
	return thrower{rt: rt}
}

// throw throws an Error with a formatted message; it must be called from a
// Go function that the runtime is running. The Error is the one
// new Error(message) makes: goja makes a TypeError with its own
// constructor, whose prototype's prototype is Error.prototype, which then
// becomes the Error's prototype.
func (t thrower) throw(format string, args ...any) {
	e := t.rt.NewTypeError("%s", fmt.Sprintf(format, args...))
	if err := e.SetPrototype(e.Prototype().Prototype()); err != nil {
		panic(err)
	}
	panic(e)
}
