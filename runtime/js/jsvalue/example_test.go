package jsvalue_test

import (
	"fmt"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// ExampleText turns values a script might throw into text without ever
// panicking, whatever their toString does.
func ExampleText() {
	rt := goja.New()
	for _, src := range []string{
		`new TypeError('bad input')`,
		`Object.assign(Object.create(null), { message: 'lib error' })`,
		`({ toString() { throw new Error('no') } })`,
		`42`,
	} {
		v, err := rt.RunString("(" + src + ")")
		if err != nil {
			panic(err)
		}
		fmt.Println(jsvalue.Text(rt, v))
	}
	// Output:
	// TypeError: bad input
	// lib error
	// [object whose toString threw: Error: no]
	// 42
}
