package js

import (
	"log/slog"
	"strings"

	"github.com/dop251/goja"
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
				logger.Log(ctx, level, formatArgs(call.Arguments), slog.Int64("vu", *vu))
			}
			return goja.Undefined()
		}
		// Setting a property of a fresh object cannot fail.
		_ = console.Set(name, method)
	}
	return console
}

// formatArgs joins console arguments with spaces, like k6: strings as they
// are, Errors and functions as strings, other objects as JSON.
func formatArgs(args []goja.Value) string {
	var b strings.Builder
	for i, v := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(formatValue(v))
	}
	return b.String()
}

func formatValue(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Error" {
		return valueString(v)
	}
	if _, isFunc := goja.AssertFunction(obj); isFunc {
		return obj.String()
	}
	b, err := obj.MarshalJSON()
	if err != nil { // a cycle, or a BigInt
		return obj.String()
	}
	return string(b)
}
