package js

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
)

// opener implements open(path[, mode]): it reads a file, in the init
// context only, as a string, or as an ArrayBuffer with mode "b". A relative
// path is relative to the directory of the file whose code calls open(),
// which for code bundled from an imported file is that file's directory.
type opener struct {
	script *Script
	vu     modules.VU
}

func (o *opener) open(call goja.FunctionCall) goja.Value {
	rt := o.vu.Runtime()
	name := call.Argument(0).String()
	if !o.vu.InitContext() {
		throw(rt, "open(%q): files can only be opened in the init context, at the top of the script", name)
	}
	var binary bool
	switch mode := call.Argument(1); {
	case goja.IsUndefined(mode):
	case mode.String() == "b":
		binary = true
	default:
		throw(rt, "open(%q): unknown mode %q; use 'b' to read bytes", name, mode.String())
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(o.callerDir(rt), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		throw(rt, "open(%q): %s: %v", name, path, err)
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
