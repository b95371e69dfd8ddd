package modules

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// Registry is the set of Go modules a run's scripts can import, by the
// name they import them by (`import llm from 'llm'`). It is filled before
// the run, then only read: Lookup and Names are safe for concurrent use
// once registration is done. A nil Registry holds no module.
type Registry struct {
	byName map[string]Module
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]Module{}}
}

// validName is a module's name: a bare import path of lower-case
// segments ("llm", "llmrun/config"), which the script compiler leaves to
// the registry, unlike a relative or absolute file path.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(/[a-z0-9][a-z0-9_-]*)*$`)

// Register adds m under name. A name already taken, a name that is not a
// bare lower-case import path, and a nil module are errors.
func (r *Registry) Register(name string, m Module) error {
	switch {
	case !validName.MatchString(name):
		return fmt.Errorf("module name %q: want a bare lower-case import path such as \"llm\" or \"llmrun/config\"", name)
	case m == nil:
		return fmt.Errorf("module %q: nil module", name)
	case r.byName[name] != nil:
		return fmt.Errorf("module %q is registered twice", name)
	}
	r.byName[name] = m
	return nil
}

// Lookup returns the module registered under name.
func (r *Registry) Lookup(name string) (Module, bool) {
	if r == nil {
		return nil, false
	}
	m, ok := r.byName[name]
	return m, ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(r.byName))
}
