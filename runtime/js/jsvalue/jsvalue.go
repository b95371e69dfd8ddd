// Package jsvalue turns the values a script hands to Go (thrown values,
// console arguments, check names, tags, metric values, exported options,
// handleSummary's result) into Go text and data without ever panicking.
//
// Reading a script value runs script code: a toString or toJSON method, a
// getter, a Proxy trap. That code may throw anything, recurse without end
// or be interrupted, and goja reports all of these by panicking. Outside a
// call into the runtime nothing recovers such a panic and the process dies,
// so every conversion of a script value goes through Guard, or through the
// functions here built on it. It depends on goja alone, so that the
// modules can use it as well as the runtime.
package jsvalue

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"

	"github.com/dop251/goja"
)

// ThrownError is a conversion that threw: Message is the thrown value as
// text (itself converted safely).
type ThrownError struct {
	Message string
}

func (e *ThrownError) Error() string { return e.Message }

// errStackOverflow is what a conversion that recursed without end reports.
var errStackOverflow = errors.New("RangeError: Maximum call stack size exceeded")

// Guard runs f, which reads script values of rt (Get, Keys, String,
// Export, ToObject, MarshalJSON...), and returns what went wrong as an
// error instead of panicking: a *ThrownError for a thrown value, the
// *goja.InterruptedError of an interrupt, an error for an endless
// recursion or any other panic. The runtime is left usable.
//
// Called from a Go function that the script is calling, Guard lets an
// interrupt go on unwinding the script, so that a stopped iteration stops.
func Guard(rt *goja.Runtime, f func()) error {
	return guard(rt, f, true)
}

// errThrew is what a guard that does not describe thrown values returns.
var errThrew = errors.New("threw")

// guard is Guard; describe false leaves a thrown value undescribed
// (errThrew), which bounds the conversions a conversion can cause: the
// description of a thrown value reads no more than two properties, with
// guards that describe nothing.
func guard(rt *goja.Runtime, f func(), describe bool) (err error) {
	inside := len(rt.CaptureCallStack(1, nil)) > 0
	defer func() {
		x := recover()
		if x == nil {
			return
		}
		if _, ok := x.(*goja.InterruptedError); ok && inside {
			panic(x)
		}
		err = panicError(rt, x, describe)
	}()
	// Try unwinds the runtime's stacks to where f started before it
	// returns (or re-panics with) what f threw.
	if ex := rt.Try(f); ex != nil {
		return thrownError(rt, ex.Value(), describe)
	}
	return nil
}

// panicError is a recovered panic as an error.
func panicError(rt *goja.Runtime, x any, describe bool) error {
	switch x := x.(type) {
	case *goja.InterruptedError:
		return x
	case *goja.StackOverflowError:
		return errStackOverflow
	case *goja.Exception:
		return thrownError(rt, x.Value(), describe)
	case goja.Value:
		return thrownError(rt, x, describe)
	case error:
		return x
	default:
		return fmt.Errorf("%v", x)
	}
}

func thrownError(rt *goja.Runtime, v goja.Value, describe bool) error {
	if !describe {
		return errThrew
	}
	return &ThrownError{Message: thrownText(rt, v)}
}

// Text returns v as text, as String(v) does in JavaScript ("Error: boom"
// for an Error), or, when that throws, a description that runs no more
// than reading two properties: "TypeError: lib error" when the value has a
// string message (and name), else "[object without toString]" or
// "[object whose toString threw: ...]".
func Text(rt *goja.Runtime, v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if sym, ok := v.(*goja.Symbol); ok {
		return "Symbol(" + sym.String() + ")"
	}
	if _, ok := v.(*goja.Object); !ok {
		// A primitive's text runs no script code and cannot panic.
		return v.String()
	}
	var s string
	err := Guard(rt, func() { s = v.String() })
	if err == nil {
		return s
	}
	return fallbackText(rt, v, err)
}

// thrownText is Text for a value thrown while converting another one: its
// own conversion may throw again, and then gets no further try.
func thrownText(rt *goja.Runtime, v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if obj, ok := v.(*goja.Object); ok {
		if msg, ok := messageOf(rt, obj); ok {
			return msg
		}
		return "[an object]"
	}
	return v.String()
}

// fallbackText describes a value whose conversion to text failed with err.
func fallbackText(rt *goja.Runtime, v goja.Value, err error) string {
	if obj, ok := v.(*goja.Object); ok {
		if msg, ok := messageOf(rt, obj); ok {
			return msg
		}
	}
	var thrown *ThrownError
	switch {
	case errors.As(err, &thrown) && strings.Contains(thrown.Message, "to primitive"):
		return "[object without toString]"
	case errors.As(err, &thrown):
		return "[object whose toString threw: " + thrown.Message + "]"
	default:
		return "[object whose toString failed: " + err.Error() + "]"
	}
}

// messageOf is an error-like object's "name: message", when its message
// is a plain string (its name is used when it is one too).
func messageOf(rt *goja.Runtime, obj *goja.Object) (string, bool) {
	var name, msg string
	var ok bool
	_ = guard(rt, func() {
		if msg, ok = obj.Get("message").Export().(string); ok {
			name, _ = obj.Get("name").Export().(string)
		}
	}, false)
	if !ok {
		return "", false
	}
	if name != "" {
		return name + ": " + msg, true
	}
	return msg, true
}

// JSON is JSON.stringify(v) as bytes; an error when v cannot be encoded
// (a cycle, a BigInt, a toJSON that throws) or is undefined (or a function
// or symbol, which JSON leaves out).
func JSON(rt *goja.Runtime, v goja.Value) ([]byte, error) {
	obj, ok := v.(*goja.Object)
	if !ok {
		return primitiveJSON(rt, v)
	}
	var b []byte
	var encErr error
	if err := Guard(rt, func() { b, encErr = obj.MarshalJSON() }); err != nil {
		return nil, err
	}
	if encErr != nil {
		// A type assertion, not errors.As: unwrapping an Exception runs
		// script code.
		if ex, ok := encErr.(*goja.Exception); ok {
			return nil, &ThrownError{Message: thrownText(rt, ex.Value())}
		}
		return nil, encErr
	}
	return b, nil
}

// primitiveJSON encodes a value that is not an object, as the one element
// of an array: it needs no global of the runtime, which the script may
// have replaced.
func primitiveJSON(rt *goja.Runtime, v goja.Value) ([]byte, error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, errors.New("undefined has no JSON form")
	}
	if _, ok := v.(*goja.Symbol); ok {
		return nil, errors.New("a symbol has no JSON form")
	}
	b, err := JSON(rt, rt.NewArray(v))
	if err != nil {
		return nil, err
	}
	return b[1 : len(b)-1], nil
}

// Keys returns obj's own enumerable string keys.
func Keys(rt *goja.Runtime, obj *goja.Object) ([]string, error) {
	var keys []string
	err := Guard(rt, func() { keys = obj.Keys() })
	return keys, err
}

// Get returns obj's property key (undefined when it has none).
func Get(rt *goja.Runtime, obj *goja.Object, key string) (goja.Value, error) {
	var v goja.Value
	err := Guard(rt, func() { v = obj.Get(key) })
	if v == nil && err == nil {
		v = goja.Undefined()
	}
	return v, err
}

// Export returns v.Export(): the Go value of a script value.
func Export(rt *goja.Runtime, v goja.Value) (any, error) {
	if v == nil {
		return nil, nil
	}
	var x any
	err := Guard(rt, func() { x = v.Export() })
	return x, err
}

// Describe names a value's kind for an error message: "undefined",
// "null", "a number (5)", "a string", "an Array", "a Proxy", "a Map", "an
// object". For an object it reads at most its constructor's name, safely.
func Describe(rt *goja.Runtime, v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return describePrimitive(v)
	}
	if obj.ExportType() == proxyType {
		return "a Proxy"
	}
	if _, ok := goja.AssertFunction(obj); ok {
		return "a function"
	}
	var name string
	_ = guard(rt, func() {
		if c, ok := obj.Get("constructor").(*goja.Object); ok {
			name, _ = c.Get("name").Export().(string)
		}
	}, false)
	if name == "" || name == "Object" {
		return "an object"
	}
	return article(name) + " " + name
}

var proxyType = reflect.TypeFor[goja.Proxy]()

func describePrimitive(v goja.Value) string {
	if _, ok := v.(*goja.Symbol); ok {
		return "a symbol"
	}
	// A primitive's Export runs no script code and cannot panic.
	switch v.Export().(type) {
	case bool:
		return "a boolean (" + v.String() + ")"
	case int64, float64:
		return "a number (" + v.String() + ")"
	case string:
		return "a string"
	case *big.Int:
		return "a BigInt"
	default:
		return "a value"
	}
}

func article(word string) string {
	if strings.ContainsRune("AEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}
