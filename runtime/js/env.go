package js

import (
	"maps"
	"slices"

	"github.com/dop251/goja"
)

// Env is the variables a script reads as __ENV, built once and shared,
// read-only, by every VU that runs with them. Each VU's __ENV is a view of
// it, so a VU costs the same whatever the number of variables: a frozen
// object of its own cost each VU about 265 bytes per variable (9.3 KB for
// the 35 of a small shell, far more in a Kubernetes pod, whose environment
// names every service of its namespace).
type Env struct {
	vars map[string]string
	keys []string
}

// NewEnv returns the variables of vars with those of overrides, which
// win. Neither map is kept.
func NewEnv(vars, overrides map[string]string) *Env {
	merged := make(map[string]string, len(vars)+len(overrides))
	maps.Copy(merged, vars)
	maps.Copy(merged, overrides)
	return &Env{vars: merged, keys: slices.Sorted(maps.Keys(merged))}
}

// envObject is one runtime's __ENV: a goja dynamic object over an Env.
// Scripts read it as they read a frozen object (its keys in sorted order,
// Object.keys, spread, JSON.stringify, in); assigning or deleting a
// variable throws a TypeError. Unlike a frozen object, Object.isFrozen
// says false and its properties' descriptors say writable, and
// Object.freeze on it throws.
type envObject struct {
	env *Env
	rt  *goja.Runtime
	// read are the values of the variables this VU read, made at the
	// first read: a script that reads __ENV in every iteration allocates
	// nothing after its first.
	read map[string]goja.Value
}

func (o *envObject) Get(name string) goja.Value {
	if v, ok := o.read[name]; ok {
		return v
	}
	s, ok := o.env.vars[name]
	if !ok {
		return nil
	}
	if o.read == nil {
		o.read = make(map[string]goja.Value, 1)
	}
	v := o.rt.ToValue(s)
	o.read[name] = v
	return v
}

func (o *envObject) Has(name string) bool {
	_, ok := o.env.vars[name]
	return ok
}

// Keys returns the shared sorted names; goja only reads them.
func (o *envObject) Keys() []string { return o.env.keys }

func (o *envObject) Set(name string, _ goja.Value) bool {
	panic(o.rt.NewTypeError("Cannot assign to read only property '%s' of __ENV (copy it first: const env = { ...__ENV })", name))
}

func (o *envObject) Delete(name string) bool {
	if !o.Has(name) {
		return true
	}
	panic(o.rt.NewTypeError("Cannot delete property '%s' of __ENV (copy it first: const env = { ...__ENV })", name))
}
