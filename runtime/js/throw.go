package js

import (
	"fmt"

	"github.com/dop251/goja"
)

// thrower throws JavaScript Errors from the Go functions of the script's
// globals (open, require), with the runtime's own Error constructor, taken
// before the script runs: the script may replace the global Error.
type thrower struct {
	rt        *goja.Runtime
	errorCtor goja.Value
}

func newThrower(rt *goja.Runtime) thrower {
	return thrower{rt: rt, errorCtor: rt.Get("Error")}
}

// throw throws an Error with a formatted message; it must be called from a
// Go function that the runtime is running.
func (t thrower) throw(format string, args ...any) {
	msg := t.rt.ToValue(fmt.Sprintf(format, args...))
	e, err := t.rt.New(t.errorCtor, msg)
	if err != nil {
		panic(err)
	}
	panic(e)
}
