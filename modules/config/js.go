package config

import (
	"fmt"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
)

// Module is the 'llmrun/config' JavaScript module:
//
//	import { load, parse } from 'llmrun/config';
//	const cfg = __ENV.CONFIG ? load(__ENV.CONFIG) : {};   // init code only
//	const inline = parse('levels = [1, 2, 4]', 'toml');
//
// load reads a file relative to the working directory (configuration
// belongs to the run, not to the script), in the format its extension
// names.
type Module struct{}

// NewInstance implements modules.Module.
func (Module) NewInstance(vu modules.VU) (modules.Instance, error) {
	rt := vu.Runtime()
	exports := rt.NewObject()
	load := func(path string) any {
		if !vu.InitContext() {
			panic(rt.NewTypeError("load(%q): configuration files are read in init code (the top level of the script), not in iterations", path))
		}
		cfg, err := Load(path)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		return cfg
	}
	parse := func(text, format string) any {
		f, err := ParseFormat(format)
		if err != nil {
			panic(rt.NewTypeError("parse(text, format): %v", err))
		}
		cfg, err := Parse([]byte(text), f)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		return cfg
	}
	for name, fn := range map[string]any{"load": load, "parse": parse} {
		if err := exports.Set(name, fn); err != nil {
			return nil, fmt.Errorf("llmrun/config module: %w", err)
		}
	}
	return instance{exports}, nil
}

type instance struct{ exports *goja.Object }

func (i instance) Exports() *goja.Object { return i.exports }
