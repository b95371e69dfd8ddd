package js

import (
	"log/slog"
	"strings"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// newConsole returns the console object: log, info, debug, warn and error
// write one record each to cfg.Logger, at the matching level, with the VU's
// current number.
func newConsole(rt *goja.Runtime, cfg InstanceConfig, vu *int64) *goja.Object {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	levels := map[string]slog.Level{
		"log":   slog.LevelInfo,
		"info":  slog.LevelInfo,
		"debug": slog.LevelDebug,
		"warn":  slog.LevelWarn,
		"error": slog.LevelError,
	}
	console := rt.NewObject()
	for name, level := range levels {
		method := func(call goja.FunctionCall) goja.Value {
			ctx := cfg.VU.Context()
			if logger.Enabled(ctx, level) {
				logger.Log(ctx, level, formatArgs(rt, call.Arguments), slog.Int64("vu", *vu))
			}
			return goja.Undefined()
		}
		// Setting a property of a fresh object cannot fail.
		_ = console.Set(name, method)
	}
	return console
}

// formatArgs joins console arguments with spaces, like k6: strings as they
// are, Errors and functions as strings, other objects as JSON. Whatever an
// argument is, it is printed: a value that cannot become text (a throwing
// toString, a Proxy) is described instead (jsvalue.Text).
func formatArgs(rt *goja.Runtime, args []goja.Value) string {
	var b strings.Builder
	for i, v := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(formatValue(rt, v))
	}
	return b.String()
}

func formatValue(rt *goja.Runtime, v goja.Value) string {
	obj, ok := v.(*goja.Object)
	switch {
	case !ok:
		return jsvalue.Text(rt, v)
	case obj.ClassName() == "Error":
		return messageText(rt, v)
	}
	if _, isFunc := goja.AssertFunction(obj); isFunc {
		return jsvalue.Text(rt, v)
	}
	b, err := jsvalue.JSON(rt, obj)
	if err != nil { // a cycle, a BigInt, a toJSON that throws
		return jsvalue.Text(rt, v)
	}
	return string(b)
}
