package js

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// opener implements open(path[, mode]): it reads a file, in the init
// context only, as a string, or as an ArrayBuffer with mode "b". The file
// must be a regular file (or a named pipe) of at most MaxOpenSize bytes. A relative
// path is relative to the directory of the file whose code calls open(),
// which for code bundled from an imported file is that file's directory.
type opener struct {
	thrower
	script   *Script
	vu       modules.VU
	fileRead func(path string) // nil: nobody asked
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
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(o.callerDir(rt), path)
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
	if o.fileRead != nil {
		o.fileRead(path)
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
