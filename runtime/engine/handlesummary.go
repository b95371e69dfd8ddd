package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// HandleSummaryTimeout bounds handleSummary(); k6 fixes it at two minutes
// too (there is no option for it).
const HandleSummaryTimeout = 2 * time.Minute

// handleSummaryFn is the name of the export HandleSummary calls.
const handleSummaryFn = "handleSummary"

// SummaryOutput is one entry of the object handleSummary() returned: where
// to write, and what.
type SummaryOutput struct {
	// Dest is "stdout", "stderr" or a file path, as the script wrote it.
	Dest string
	// Content is the string's UTF-8 bytes, or the ArrayBuffer's (or
	// Uint8Array's) bytes.
	Content []byte
}

// HasHandleSummary reports whether the script exports handleSummary (as a
// function or not: HandleSummary reports the latter as an error).
func (e *Engine) HasHandleSummary() bool {
	v, err := e.vu0.inst.Export(handleSummaryFn)
	return err != nil || !goja.IsUndefined(v)
}

// HandleSummary calls the script's handleSummary(data) on VU 0, after the
// run (and after teardown), with data the JSON document dataJSON parsed in
// the script's runtime. It returns what the function asks to write, in the
// order of the returned object's keys; an undefined or null result asks for
// nothing. Like teardown it runs even when ctx is already canceled (an
// interrupted run still gets its summary files), bounded by
// HandleSummaryTimeout, and by InterruptGrace once ctx is canceled.
//
// Errors: an exception is a *js.ScriptError (wrapped); a result that is not
// an object of strings and ArrayBuffers, or a call that ran out of time, is
// a plain error. Call it only when Run has returned, and only once.
func (e *Engine) HandleSummary(ctx context.Context, dataJSON []byte) ([]SummaryOutput, error) {
	return e.handleSummary(ctx, dataJSON, HandleSummaryTimeout)
}

func (e *Engine) handleSummary(ctx context.Context, dataJSON []byte, timeout time.Duration) ([]SummaryOutput, error) {
	if !e.HasHandleSummary() {
		return nil, nil
	}
	fn, ok, err := e.vu0.inst.Function(handleSummaryFn)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: the exported handleSummary must be a function", e.cfg.ScriptPath)
	}
	// The result is read within the call, under its deadline: reading it
	// runs the script's getters and Proxy traps.
	var outputs []SummaryOutput
	call := func(this goja.Value, args ...goja.Value) (goja.Value, error) {
		res, err := fn(this, args...)
		if err != nil {
			return nil, err
		}
		outputs, err = summaryOutputs(e.vu0.rt, res)
		return nil, err
	}
	data, err := e.vu0.parseJSON(dataJSON)
	if err != nil {
		return nil, fmt.Errorf("passing the summary to handleSummary(): %w", err)
	}
	// lifecycleCall applies the same deadline; owning it here tells a
	// timeout apart without its hint about a (non-existent) option.
	graceCtx, stopGrace := afterInterrupt(ctx, e.interruptGrace)
	defer stopGrace()
	callCtx, cancel := context.WithTimeout(graceCtx, timeout)
	defer cancel()
	if _, err := e.lifecycleCall(callCtx, handleSummaryFn, call, timeout, data); err != nil {
		if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("handleSummary() did not finish within %s", timeout)
		}
		return nil, err
	}
	return outputs, nil
}

// summaryOutputs reads handleSummary's result: an object mapping "stdout",
// "stderr" or a path to a string or binary content (k6's contract). It
// never panics, whatever the result is (a Proxy, getters that throw).
func summaryOutputs(rt *goja.Runtime, res goja.Value) ([]SummaryOutput, error) {
	if res == nil || goja.IsUndefined(res) || goja.IsNull(res) {
		return nil, nil
	}
	if kind := notAMapping(rt, res); kind != "" {
		return nil, fmt.Errorf("it must return an object mapping 'stdout', 'stderr' or file paths to contents, not %s", kind)
	}
	obj := res.(*goja.Object)
	keys, err := jsvalue.Keys(rt, obj)
	if err != nil {
		return nil, fmt.Errorf("it returned %s whose keys cannot be read: %w", jsvalue.Describe(rt, res), err)
	}
	out := make([]SummaryOutput, 0, len(keys))
	for _, k := range keys {
		content, err := summaryContent(rt, obj, k)
		if err != nil {
			return nil, err
		}
		out = append(out, SummaryOutput{Dest: k, Content: content})
	}
	return out, nil
}

// notAMapping describes handleSummary's result when it cannot be one
// (not an object, an array, a function), else returns "". It decides by
// what the value is, not by its constructor or prototype, which the script
// controls, and runs no script code.
func notAMapping(rt *goja.Runtime, res goja.Value) string {
	obj, ok := res.(*goja.Object)
	if !ok {
		return jsvalue.Describe(rt, res)
	}
	if _, ok := goja.AssertFunction(obj); ok {
		return "a function"
	}
	// An array, or a Proxy of one, as Array.isArray sees it (a revoked
	// Proxy is none).
	for obj != nil && obj.ExportType() == proxyType {
		obj = obj.Export().(goja.Proxy).Target()
	}
	if obj != nil && obj.ClassName() == "Array" {
		return "an array"
	}
	return ""
}

var proxyType = reflect.TypeFor[goja.Proxy]()

// summaryContent reads the content of key k of handleSummary's result.
func summaryContent(rt *goja.Runtime, obj *goja.Object, k string) ([]byte, error) {
	v, err := jsvalue.Get(rt, obj, k)
	if err != nil {
		return nil, fmt.Errorf("reading %q of its result: %w", k, err)
	}
	x, err := jsvalue.Export(rt, v)
	if err != nil {
		return nil, fmt.Errorf("reading %q of its result: %w", k, err)
	}
	switch x := x.(type) {
	case string:
		return []byte(x), nil
	case goja.ArrayBuffer:
		return bytes.Clone(x.Bytes()), nil
	case []byte: // a Uint8Array
		return bytes.Clone(x), nil
	default:
		return nil, fmt.Errorf("it returned %s for %q; expected a string or an ArrayBuffer", jsvalue.Describe(rt, v), k)
	}
}
