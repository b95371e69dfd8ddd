package js

import (
	"slices"
	"strings"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// requirer resolves a VU's require() calls, which esbuild makes of bare
// imports, to the registered Go modules: each module is instantiated once
// per VU, on its first require.
type requirer struct {
	thrower
	vu      modules.VU
	modules *modules.Registry
	// imports are the names the script imports by name from each module
	// (Script.imports).
	imports map[string][]string
	// loaded are the modules required so far: a script imports a few,
	// which a list holds in less memory than a map, in every VU.
	loaded []loadedModule
}

type loadedModule struct {
	name    string
	exports goja.Value
}

func (r *requirer) require(call goja.FunctionCall) goja.Value {
	rt := r.vu.Runtime()
	name := jsvalue.Text(rt, call.Argument(0))
	for _, m := range r.loaded {
		if m.name == name {
			return m.exports
		}
	}
	m, ok := r.modules.Lookup(name)
	if !ok {
		r.throw("unknown module %q; the modules are: %s", name, r.names())
	}
	if !r.vu.InitContext() {
		r.throw("module %q can only be imported in the init context, at the top of the script", name)
	}
	inst, err := m.NewInstance(r.vu)
	if err != nil {
		r.throw("module %q: %v", name, err)
	}
	exports := inst.Exports()
	if exports == nil {
		r.throw("module %q has no exports", name)
	}
	r.checkNamedImports(name, exports)
	r.loaded = append(r.loaded, loadedModule{name, exports})
	return exports
}

// checkNamedImports throws, at the import, when the script imports by
// name something module does not export: without it, the import would
// be undefined, and its first use fail far from it ("Value is not an
// object: undefined").
func (r *requirer) checkNamedImports(module string, exports *goja.Object) {
	for _, name := range r.imports[module] {
		if exports.Get(name) == nil {
			exported := exports.Keys()
			slices.Sort(exported)
			r.throw("module '%s' has no export '%s'; it exports: %s", module, name, strings.Join(exported, ", "))
		}
	}
}

// names lists the registered modules, for errors.
func (r *requirer) names() string {
	names := r.modules.Names()
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
