package modules

import (
	"slices"

	"github.com/dop251/goja"
)

// LazyExports returns a module's exports object whose properties are made
// on their first read, by build(name), and kept: every VU makes its own
// exports, a function object costs an idle VU some 700 bytes, and most
// scripts read few of a module's exports (bench/stream.js reads one of
// the llm module's four). names are the exports, in the order
// Object.keys lists them. A script may still set and delete properties,
// as on a plain object.
func LazyExports(rt *goja.Runtime, names []string, build func(name string) any) *goja.Object {
	return rt.NewDynamicObject(&lazyExports{rt: rt, names: slices.Clone(names), build: build, made: map[string]goja.Value{}})
}

// lazyExports is the goja.DynamicObject behind LazyExports.
type lazyExports struct {
	rt    *goja.Runtime
	names []string
	build func(name string) any
	made  map[string]goja.Value
}

func (l *lazyExports) Get(key string) goja.Value {
	if v, ok := l.made[key]; ok {
		return v
	}
	if !slices.Contains(l.names, key) {
		return nil
	}
	v := l.rt.ToValue(l.build(key))
	l.made[key] = v
	return v
}

func (l *lazyExports) Set(key string, val goja.Value) bool {
	if !slices.Contains(l.names, key) {
		l.names = append(l.names, key)
	}
	l.made[key] = val
	return true
}

func (l *lazyExports) Has(key string) bool { return slices.Contains(l.names, key) }

func (l *lazyExports) Delete(key string) bool {
	l.names = slices.DeleteFunc(l.names, func(n string) bool { return n == key })
	delete(l.made, key)
	return true
}

func (l *lazyExports) Keys() []string { return slices.Clone(l.names) }
