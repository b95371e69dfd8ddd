package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"
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
	v := e.vu0.inst.Exports().Get(handleSummaryFn)
	return v != nil && !goja.IsUndefined(v)
}

// HandleSummary calls the script's handleSummary(data) on VU 0, after the
// run (and after teardown), with data the JSON document dataJSON parsed in
// the script's runtime. It returns what the function asks to write, in the
// order of the returned object's keys; an undefined or null result asks for
// nothing. Like teardown it runs even when ctx is already canceled (an
// interrupted run still gets its summary files), bounded by
// HandleSummaryTimeout alone.
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
	fn, ok := e.vu0.inst.Function(handleSummaryFn)
	if !ok {
		return nil, fmt.Errorf("%s: the exported handleSummary must be a function", e.cfg.ScriptPath)
	}
	data, err := e.vu0.parseJSON(dataJSON)
	if err != nil {
		return nil, fmt.Errorf("passing the summary to handleSummary(): %w", err)
	}
	// lifecycleCall applies the same deadline; owning it here tells a
	// timeout apart without its hint about a (non-existent) option.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	res, err := e.lifecycleCall(callCtx, handleSummaryFn, fn, timeout, data)
	if err != nil {
		if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("handleSummary() did not finish within %s", timeout)
		}
		return nil, err
	}
	return summaryOutputs(res)
}

// summaryOutputs reads handleSummary's result: an object mapping "stdout",
// "stderr" or a path to a string or binary content (k6's contract).
func summaryOutputs(res goja.Value) ([]SummaryOutput, error) {
	if res == nil || goja.IsUndefined(res) || goja.IsNull(res) {
		return nil, nil
	}
	obj, ok := res.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || obj.ClassName() == "Function" {
		return nil, fmt.Errorf("handleSummary() must return an object mapping 'stdout', 'stderr' or file paths to contents, not %s", describe(res))
	}
	keys := obj.Keys()
	out := make([]SummaryOutput, 0, len(keys))
	for _, k := range keys {
		v := obj.Get(k)
		var content []byte
		switch x := v.Export().(type) {
		case string:
			content = []byte(x)
		case goja.ArrayBuffer:
			content = bytes.Clone(x.Bytes())
		case []byte: // a Uint8Array
			content = bytes.Clone(x)
		default:
			return nil, fmt.Errorf("handleSummary() returned %s for %q; expected a string or an ArrayBuffer", describe(v), k)
		}
		out = append(out, SummaryOutput{Dest: k, Content: content})
	}
	return out, nil
}

// describe names a JavaScript value's kind for an error message.
func describe(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if obj, ok := v.(*goja.Object); ok {
		if c, ok := obj.Get("constructor").(*goja.Object); ok {
			if name := c.Get("name"); name != nil && name.String() != "" && name.String() != "Object" {
				if strings.ContainsRune("AEIOU", rune(name.String()[0])) {
					return "an " + name.String()
				}
				return "a " + name.String()
			}
		}
		return "an object"
	}
	switch v.Export().(type) {
	case bool:
		return "a boolean (" + v.String() + ")"
	case int64, float64:
		return "a number (" + v.String() + ")"
	default:
		return v.String()
	}
}
