// Package metricsjs is the 'metrics' JavaScript module: the Counter,
// Gauge, Rate and Trend constructors through which a script defines and
// feeds its own metrics, as in k6. Package metrics, which it binds, is
// plain Go.
package metricsjs

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// Module is the 'metrics' module:
//
//	import { Counter, Trend } from 'metrics';
//	const answers = new Counter('answers');      // init code only
//	const think = new Trend('think_time', true); // true: values are ms
//	answers.add(1, { kind: 'short' });           // in iterations
//
// Metrics are created in the init context and fed with add(value, tags);
// every sample carries the VU's tags, overridden by the tags given.
type Module struct{}

// NewInstance implements modules.Module.
func (Module) NewInstance(vu modules.VU) (modules.Instance, error) {
	exports := vu.Runtime().NewObject()
	for _, c := range []struct {
		name string
		typ  metrics.Type
	}{{"Counter", metrics.Counter}, {"Gauge", metrics.Gauge}, {"Rate", metrics.Rate}, {"Trend", metrics.Trend}} {
		if err := exports.Set(c.name, constructor(vu, c.typ)); err != nil {
			return nil, fmt.Errorf("metrics module: %w", err)
		}
	}
	return instance{exports}, nil
}

type instance struct{ exports *goja.Object }

func (i instance) Exports() *goja.Object { return i.exports }

func constructor(vu modules.VU, typ metrics.Type) func(goja.ConstructorCall) *goja.Object {
	rt := vu.Runtime()
	return func(call goja.ConstructorCall) *goja.Object {
		if !vu.InitContext() {
			panic(rt.NewTypeError("metrics: new %s() is only allowed in the init context (top level of the script)", capitalized(typ)))
		}
		name := jsvalue.Text(rt, call.Argument(0))
		contains := metrics.Default
		if typ == metrics.Trend && call.Argument(1).ToBoolean() {
			contains = metrics.Time
		}
		m, err := vu.Registry().Register(metrics.Metric{Name: name, Type: typ, Contains: contains, Custom: true})
		if err != nil {
			panic(rt.NewGoError(fmt.Errorf("metrics: %w", err)))
		}
		obj := call.This
		must(obj.Set("name", m.Name))
		// add(value, tags), called per sample, is bound without reflection.
		var batch [1]metrics.Sample
		must(obj.Set("add", modules.Function(rt, 2, func(call goja.FunctionCall) goja.Value {
			addSample(vu, m, &batch, call.Argument(0), call.Argument(1))
			return rt.ToValue(true)
		})))
		return nil
	}
}

// addSample records value, tagged tags, into m, through batch: the
// metric object's own one-sample slice, reused since sinks do not keep
// it. It is filled once the tags are read, whose getters may add too.
func addSample(vu modules.VU, m *metrics.Metric, batch *[1]metrics.Sample, value, tags goja.Value) {
	rt := vu.Runtime()
	st := vu.State()
	if st == nil {
		panic(rt.NewTypeError("metrics: %s.add() cannot be called in the init context", m.Name))
	}
	v, err := sampleValue(value)
	if err != nil {
		panic(rt.NewTypeError("metrics: %s.add(): %v", m.Name, err))
	}
	tagged := st.Tags.Merge(Tags(rt, tags))
	batch[0] = metrics.Sample{Metric: m, Tags: tagged, Time: time.Now(), Value: v}
	st.Samples.AddSamples(batch[:])
}

// Tags converts a JavaScript object of tags ({ name: 'value' }) to a tag
// set; undefined and null give the empty set. Values become text safely
// (jsvalue.Text); keys or values that cannot be read (a Proxy, a getter
// that throws) throw a TypeError in the script.
func Tags(rt *goja.Runtime, v goja.Value) *metrics.TagSet {
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
	return metrics.NewTagSet(m)
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

func capitalized(t metrics.Type) string {
	s := t.String()
	return string(s[0]-'a'+'A') + s[1:]
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
