package metrics

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// The binding below must not import package modules (which imports this
// package), so it states the little it needs of a VU as an interface that
// modules.VU satisfies.

// JSVU is what the JavaScript binding needs of a VU.
type JSVU interface {
	Runtime() *goja.Runtime
	Registry() *Registry
	InitContext() bool
	// SampleTarget returns the VU's current tags and sink; ok is false in
	// the init context.
	SampleTarget() (tags *TagSet, sink Sink, ok bool)
}

// NewJSExports returns the exports of the 'metrics' JavaScript module for
// one VU: the Counter, Gauge, Rate and Trend constructors. As in k6, custom
// metrics are created in the init context and fed with add(value, tags).
func NewJSExports(vu JSVU) *goja.Object {
	rt := vu.Runtime()
	exports := rt.NewObject()
	for name, typ := range map[string]Type{"Counter": Counter, "Gauge": Gauge, "Rate": Rate, "Trend": Trend} {
		must(exports.Set(name, constructor(vu, typ)))
	}
	return exports
}

func constructor(vu JSVU, typ Type) func(goja.ConstructorCall) *goja.Object {
	rt := vu.Runtime()
	return func(call goja.ConstructorCall) *goja.Object {
		if !vu.InitContext() {
			panic(rt.NewTypeError("metrics: new %s() is only allowed in the init context (top level of the script)", capitalized(typ)))
		}
		name := jsvalue.Text(rt, call.Argument(0))
		contains := Default
		if typ == Trend && call.Argument(1).ToBoolean() {
			contains = Time
		}
		m, err := vu.Registry().Register(Metric{Name: name, Type: typ, Contains: contains})
		if err != nil {
			panic(rt.NewGoError(fmt.Errorf("metrics: %w", err)))
		}
		obj := call.This
		must(obj.Set("name", m.Name))
		must(obj.Set("add", func(value goja.Value, tags goja.Value) bool {
			return addSample(vu, m, value, tags)
		}))
		return nil
	}
}

func addSample(vu JSVU, m *Metric, value, tags goja.Value) bool {
	rt := vu.Runtime()
	base, sink, ok := vu.SampleTarget()
	if !ok {
		panic(rt.NewTypeError("metrics: %s.add() cannot be called in the init context", m.Name))
	}
	v, err := sampleValue(value)
	if err != nil {
		panic(rt.NewTypeError("metrics: %s.add(): %v", m.Name, err))
	}
	sink.AddSamples([]Sample{{Metric: m, Tags: base.Merge(JSTags(rt, tags)), Time: time.Now(), Value: v}})
	return true
}

// JSTags converts a JavaScript object of tags ({ name: 'value' }) to a tag
// set; undefined and null give the empty set. Values become text safely
// (jsvalue.Text); keys or values that cannot be read (a Proxy, a getter
// that throws) throw a TypeError in the script.
func JSTags(rt *goja.Runtime, v goja.Value) *TagSet {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		panic(rt.NewTypeError("tags must be an object of names and values, not %s", jsvalue.Describe(rt, v)))
	}
	keys, err := jsvalue.Keys(rt, obj)
	if err != nil {
		panic(rt.NewTypeError("reading the tags: %v", err))
	}
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		val, err := jsvalue.Get(rt, obj, k)
		if err != nil {
			panic(rt.NewTypeError("reading the tag %q: %v", k, err))
		}
		m[k] = jsvalue.Text(rt, val)
	}
	return NewTagSet(m)
}

var errNotNumber = errors.New("value must be a finite number or a boolean")

func sampleValue(v goja.Value) (float64, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0, errNotNumber
	}
	// An object is never a value: exporting it would run its getters.
	if _, ok := v.(*goja.Object); ok {
		return 0, errNotNumber
	}
	switch x := v.Export().(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case int64:
		return float64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, errNotNumber
		}
		return x, nil
	default:
		return 0, errNotNumber
	}
}

func capitalized(t Type) string {
	s := t.String()
	return string(s[0]-'a'+'A') + s[1:]
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
