package js

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/scriptpath"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// opener implements open(path[, mode]): it reads a file, in the init
// context only, as a string, or as an ArrayBuffer with mode "b". The file
// must be a regular file (or a named pipe) of at most MaxOpenSize bytes. A
// relative path is relative to the directory of the file whose code calls
// open(), which for code bundled from an imported file is that file's
// directory, by the rule of package scriptpath.
type opener struct {
	thrower
	script *Script
	vu     modules.VU
	paths  *scriptpath.Resolver
}

func (o *opener) open(call goja.FunctionCall) goja.Value {
	rt := o.vu.Runtime()
	name := jsvalue.Text(rt, call.Argument(0))
	if !o.vu.InitContext() {
		o.throw("open(%q): files can only be opened in the init context, at the top of the script", name)
	}
	var binary bool
	switch mode := call.Argument(1); {
	case goja.IsUndefined(mode):
	case jsvalue.Text(rt, mode) == "b":
		binary = true
	default:
		o.throw("open(%q): unknown mode %q; use 'b' to read bytes", name, jsvalue.Text(rt, mode))
	}
	path, err := o.paths.ResolveFrom(o.callerDir(rt), fmt.Sprintf("open(%q)", name), name)
	if err != nil {
		o.throw("%v", err)
	}
	data, err := capped.ReadFile(path, MaxOpenSize)
	if err != nil {
		var (
			tooLarge *capped.TooLargeError
			pathErr  *fs.PathError
		)
		switch {
		case errors.As(err, &tooLarge):
			o.throw("open(%q): %s is larger than %s, the most open() reads", name, path, capped.Size(MaxOpenSize))
		case errors.As(err, &pathErr):
			o.throw("open(%q): %s: %v", name, path, pathErr.Err)
		}
		o.throw("open(%q): %v", name, err)
	}
	if binary {
		return rt.ToValue(rt.NewArrayBuffer(data))
	}
	return rt.ToValue(string(data))
}

// callerDir is the directory of the script file whose code is calling.
func (o *opener) callerDir(rt *goja.Runtime) string {
	for _, f := range gojaFrames(rt.CaptureCallStack(0, nil)) {
		if src, ok := o.script.sources[f.file]; ok {
			return src.dir
		}
	}
	return o.script.dir
}

// paths is given, or when nil the resolver of the script alone: no
// environment from the command line, no warnings, nobody told.
func (s *Script) paths(given *scriptpath.Resolver) *scriptpath.Resolver {
	if given != nil {
		return given
	}
	return scriptpath.New(scriptpath.Config{Script: s.filename, BuiltIn: s.builtIn})
}
