package js

import (
	"fmt"

	"github.com/dop251/goja"
)

// throw throws a JavaScript Error with a formatted message; it must be
// called from a Go function that the runtime is running.
func throw(rt *goja.Runtime, format string, args ...any) {
	msg := rt.ToValue(fmt.Sprintf(format, args...))
	e, err := rt.New(rt.Get("Error"), msg)
	if err != nil {
		panic(err)
	}
	panic(e)
}
