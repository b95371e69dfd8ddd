// Package checks is the 'llmrun' JavaScript module: check, sleep and group,
// with k6's semantics. Checks feed the built-in "checks" Rate metric, tagged
// with the check's name and the current group; groups feed "group_duration".
package checks

import (
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/metrics/metricsjs"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// Module is the 'llmrun' module.
type Module struct {
	// TextSummary renders the end-of-run summary as the console prints
	// it, from the JSON of the "llmrun" part of handleSummary's data; it
	// backs textSummary(data). The command line provides it (the module
	// cannot depend on the engine's renderer); nil makes textSummary
	// throw.
	TextSummary func(summaryJSON []byte, color bool) (string, error)
}

// Metrics are the built-in metrics of this module.
type Metrics struct {
	Checks        *metrics.Metric
	GroupDuration *metrics.Metric
}

// RegisterMetrics registers the module's built-in metrics.
func RegisterMetrics(reg *metrics.Registry) *Metrics {
	return &Metrics{
		Checks: reg.MustRegister(metrics.Metric{Name: "checks", Type: metrics.Rate, Unit: "checks",
			Desc: "share of successful checks; tagged with check and group"}),
		GroupDuration: reg.MustRegister(metrics.Metric{Name: "group_duration", Type: metrics.Trend, Contains: metrics.Time, Unit: "ms",
			Desc: "time to run a group() function; tagged with group"}),
	}
}

// NewInstance implements modules.Module.
func (m Module) NewInstance(vu modules.VU) (modules.Instance, error) {
	inst := &instance{vu: vu, metrics: RegisterMetrics(vu.Registry()), textSummary: m.TextSummary}
	rt := vu.Runtime()
	inst.exports = rt.NewObject()
	for _, export := range []struct {
		name string
		fn   any
	}{{"check", inst.check}, {"sleep", inst.sleep}, {"group", inst.group}, {"textSummary", inst.renderSummary}} {
		if err := inst.exports.Set(export.name, export.fn); err != nil {
			return nil, fmt.Errorf("llmrun module: %w", err)
		}
	}
	return inst, nil
}

type instance struct {
	vu          modules.VU
	metrics     *Metrics
	exports     *goja.Object
	textSummary func([]byte, bool) (string, error)
}

func (i *instance) Exports() *goja.Object { return i.exports }

func (i *instance) state(fn string) *modules.State {
	st := i.vu.State()
	if st == nil {
		panic(i.vu.Runtime().NewTypeError("%s() cannot be called in the init context", fn))
	}
	return st
}

// check runs every named predicate on value, records one "checks" sample per
// predicate and returns whether all passed. A predicate may be a function or
// a plain value (its truthiness). Extra tags apply to the samples.
func (i *instance) check(value goja.Value, checks *goja.Object, extraTags goja.Value) bool {
	rt := i.vu.Runtime()
	st := i.state("check")
	if checks == nil {
		panic(rt.NewTypeError("check(value, { 'name': (v) => ... }): the second argument must be an object of named checks"))
	}
	base := st.Tags.Merge(metricsjs.Tags(rt, extraTags))
	now := time.Now()
	names, err := jsvalue.Keys(rt, checks)
	if err != nil {
		panic(rt.NewTypeError("check(value, checks): reading the names of the checks: %v", err))
	}
	samples := make([]metrics.Sample, 0, len(names))
	all := true
	for _, name := range names {
		pred, err := jsvalue.Get(rt, checks, name)
		if err != nil {
			panic(rt.NewTypeError("check(value, checks): reading the check %q: %v", name, err))
		}
		passed := pred.ToBoolean()
		if fn, ok := goja.AssertFunction(pred); ok {
			res, err := fn(goja.Undefined(), value)
			if err != nil {
				panic(err)
			}
			passed = res.ToBoolean()
		}
		v := 0.0
		if passed {
			v = 1
		} else {
			all = false
		}
		samples = append(samples, metrics.Sample{Metric: i.metrics.Checks, Tags: base.With("check", name), Time: now, Value: v})
	}
	st.Samples.AddSamples(samples)
	return all
}

// sleep pauses the VU for the given seconds; it returns early when the
// iteration is stopped.
func (i *instance) sleep(seconds float64) {
	if math.IsNaN(seconds) {
		panic(i.vu.Runtime().NewTypeError("sleep(seconds): seconds must be a number"))
	}
	if seconds <= 0 {
		return
	}
	// Beyond what a Duration holds, sleep until the iteration stops.
	d := time.Duration(math.MaxInt64)
	if seconds < d.Seconds() {
		d = time.Duration(seconds * float64(time.Second))
	}
	wait.Sleep(i.vu.Context(), d)
}

// group runs fn with the group's name added to the group path and tags, and
// returns fn's result.
func (i *instance) group(name string, fn goja.Callable) goja.Value {
	rt := i.vu.Runtime()
	st := i.state("group")
	if fn == nil {
		panic(rt.NewTypeError("group(%q, fn): fn must be a function", name))
	}
	parentGroup, parentTags := st.Group, st.Tags
	st.Group = parentGroup + "::" + name
	st.Tags = parentTags.With("group", st.Group)
	defer func() { st.Group, st.Tags = parentGroup, parentTags }()

	start := time.Now()
	res, err := fn(goja.Undefined())
	if err != nil {
		panic(err)
	}
	elapsed := time.Since(start)
	st.Samples.AddSamples([]metrics.Sample{{Metric: i.metrics.GroupDuration, Tags: st.Tags, Time: time.Now(),
		Value: float64(elapsed) / float64(time.Millisecond)}})
	return res
}

// summaryOptions are textSummary's options.
type summaryOptions struct {
	Color bool `js:"color"`
}

// renderSummary is textSummary(data, { color }): the console summary of
// handleSummary's data, so that a script can print it next to its own.
func (i *instance) renderSummary(data *goja.Object, opts goja.Value) string {
	rt := i.vu.Runtime()
	if i.textSummary == nil {
		panic(rt.NewTypeError("textSummary() is not available here"))
	}
	if data == nil {
		panic(rt.NewTypeError("textSummary(data): pass the data handleSummary(data) received"))
	}
	part := data.Get("llmrun")
	if part == nil || goja.IsUndefined(part) || goja.IsNull(part) {
		panic(rt.NewTypeError("textSummary(data): data has no llmrun part; pass the data handleSummary(data) received"))
	}
	var o summaryOptions
	if opts != nil && !goja.IsUndefined(opts) && !goja.IsNull(opts) {
		if err := rt.ExportTo(opts, &o); err != nil {
			panic(rt.NewTypeError("textSummary(data, options): %v", err))
		}
	}
	b, err := jsvalue.JSON(rt, part)
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("textSummary: %w", err)))
	}
	text, err := i.textSummary(b, o.Color)
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("textSummary: %w", err)))
	}
	return text
}
