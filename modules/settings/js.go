package settings

import (
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/scriptpath"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// Module is the 'llmrun/config' JavaScript module:
//
//	import { load, parse, settings } from 'llmrun/config';
//	const cfg = __ENV.CONFIG ? load(__ENV.CONFIG) : {};   // init code only
//	const inline = parse('levels = [1, 2, 4]', 'toml');
//	const p = settings({ levels: [1, 2, 4], step: '20s' }); // -e LEVELS=…, then CONFIG's levels, then 1,2,4
//	seconds(p.step)                                          // 20; a number is taken as seconds
//
// load reads a file, in the format its extension names, found by the
// rule of package scriptpath: relative to the script, and a path given on
// the command line (-e CONFIG=cfg.yaml) relative to the working
// directory. settings reads __ENV.CONFIG when set (see Settings).
type Module struct {
	// Paths finds the files the script names; nil: relative paths are
	// the working directory's.
	Paths *scriptpath.Resolver
}

// NewInstance implements modules.Module.
func (m Module) NewInstance(vu modules.VU) (modules.Instance, error) {
	rt := vu.Runtime()
	exports := rt.NewObject()
	load := func(path string) any {
		if !vu.InitContext() {
			panic(rt.NewTypeError("load(%q): configuration files are read in init code (the top level of the script), not in iterations", path))
		}
		cfg, err := m.load(fmt.Sprintf("load(%q)", path), path)
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
	settings := func(defaults map[string]any) any {
		if !vu.InitContext() {
			panic(rt.NewTypeError("settings(defaults): call it in init code"))
		}
		env := map[string]string{}
		if err := rt.ExportTo(rt.Get("__ENV"), &env); err != nil {
			panic(rt.NewTypeError("settings(defaults): reading __ENV: %v", err))
		}
		var file map[string]any
		if path := env["CONFIG"]; path != "" {
			var err error
			if file, err = m.load(fmt.Sprintf("settings(): CONFIG %q", path), path); err != nil {
				panic(rt.NewGoError(err))
			}
		}
		out, err := Settings(defaults, file, env)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		return out
	}
	seconds := func(v goja.Value) float64 {
		if _, isObject := v.(*goja.Object); !isObject {
			switch n := v.Export().(type) {
			case float64:
				return n
			case int64:
				return float64(n)
			}
		}
		text := jsvalue.Text(rt, v)
		d, err := time.ParseDuration(strings.TrimSpace(text))
		if err != nil {
			panic(rt.NewTypeError("seconds(%q): durations look like 30s, 500ms, 2m or 1h30m", text))
		}
		return d.Seconds()
	}
	for name, fn := range map[string]any{"load": load, "parse": parse, "settings": settings, "seconds": seconds} {
		if err := exports.Set(name, fn); err != nil {
			return nil, fmt.Errorf("llmrun/config module: %w", err)
		}
	}
	return instance{exports}, nil
}

type instance struct{ exports *goja.Object }

func (i instance) Exports() *goja.Object { return i.exports }

// load is Load of the file Paths finds for who (relative to the working
// directory alone before: FormerlyWorkDir).
func (m Module) load(who, path string) (map[string]any, error) {
	found, err := m.Paths.FormerlyWorkDir().Resolve(who, path)
	if err != nil {
		return nil, err
	}
	return Load(found)
}
