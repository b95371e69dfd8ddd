// Package modulestest runs Go-native modules in a goja runtime outside the
// engine, as net/http/httptest does for handlers: a test makes a VU, exposes
// a module's exports to it as a global, runs JavaScript in it and reads back
// the samples the module recorded.
package modulestest

import (
	"context"
	"testing"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/metrics"
)

// VU is a modules.VU for tests. It starts in its init context; LeaveInit
// makes it run an iteration of scenario "test", whose samples go to
// Aggregator. It belongs to the test it was made for, and like its runtime
// to one goroutine.
type VU struct {
	// Ctx is what Context returns: the test's context at first. Replace it
	// with one the test cancels or times out to end a module's waits.
	Ctx context.Context
	// Aggregator receives the VU's samples once it has left the init
	// context; it has one shard.
	Aggregator *metrics.Aggregator
	// Number is the VU's number, what ID returns: 1 unless a test that
	// makes several VUs numbers them.
	Number int64

	t     testing.TB
	rt    *goja.Runtime
	reg   *metrics.Registry
	state *modules.State
}

var _ modules.VU = (*VU)(nil)

// NewVU returns a VU in its init context with a fresh runtime, which maps
// Go field names by their js tags as the engine's runtimes do, a fresh
// registry and aggregator, and t's context.
func NewVU(t testing.TB) *VU {
	rt := goja.New()
	rt.SetFieldNameMapper(goja.TagFieldNameMapper("js", true))
	return &VU{
		Ctx:        t.Context(),
		Aggregator: metrics.NewAggregator(1),
		Number:     1,
		t:          t,
		rt:         rt,
		reg:        metrics.NewRegistry(),
	}
}

// Runtime implements modules.VU.
func (v *VU) Runtime() *goja.Runtime { return v.rt }

// Context implements modules.VU; it returns Ctx.
func (v *VU) Context() context.Context { return v.Ctx }

// State implements modules.VU: nil in the init context.
func (v *VU) State() *modules.State { return v.state }

// Registry implements modules.VU.
func (v *VU) Registry() *metrics.Registry { return v.reg }

// InitContext implements modules.VU.
func (v *VU) InitContext() bool { return v.state == nil }

// ID implements modules.VU: Number.
func (v *VU) ID() int64 { return v.Number }

// UseRegistry makes the VU keep its metric definitions in reg, as the VUs
// of a run share one registry. Call it before exposing modules.
func (v *VU) UseRegistry(reg *metrics.Registry) { v.reg = reg }

// SetGlobal sets a global of the runtime, failing the test on error.
func (v *VU) SetGlobal(name string, value any) {
	v.t.Helper()
	if err := v.rt.Set(name, value); err != nil {
		v.t.Fatalf("setting the global %q: %v", name, err)
	}
}

// Expose makes an instance of m for the VU, as the engine does once per VU
// in its init context, and sets its exports as the global name.
func (v *VU) Expose(name string, m modules.Module) {
	v.t.Helper()
	inst, err := m.NewInstance(v)
	if err != nil {
		v.t.Fatalf("instantiating the module %q: %v", name, err)
	}
	v.SetGlobal(name, inst.Exports())
}

// LeaveInit ends the init context: the VU runs a measured iteration of
// scenario "test" as VU Number, its samples tagged scenario:test and sent
// to Aggregator. Set State().Warmup to make it a warmup iteration.
func (v *VU) LeaveInit() {
	v.state = &modules.State{
		VUID:     v.Number,
		Scenario: "test",
		Tags:     metrics.NewTagSet(map[string]string{"scenario": "test"}),
		Samples:  v.Aggregator.Shard(0),
	}
}

// EnterInit puts the VU back in its init context (a nil State), for tests
// of what modules allow only there or refuse there.
func (v *VU) EnterInit() { v.state = nil }

// Run runs src in the runtime and returns its value, failing the test when
// it throws.
func (v *VU) Run(src string) goja.Value {
	v.t.Helper()
	res, err := v.rt.RunString(src)
	if err != nil {
		v.t.Fatalf("%s: %v", src, err)
	}
	return res
}

// Series returns the series of the named metric recorded so far, by their
// tag keys ("k:v,scenario:test").
func (v *VU) Series(name string) map[string]*metrics.Stats {
	out := map[string]*metrics.Stats{}
	for _, se := range v.Aggregator.Snapshot().Series() {
		if se.Metric.Name == name {
			out[se.Tags.Key()] = se.Stats
		}
	}
	return out
}

// Stats merges the series of the named metric whose tags contain the given
// ones, as key, value pairs (none: all of them); nil when there are none.
func (v *VU) Stats(name string, kv ...string) *metrics.Stats {
	v.t.Helper()
	if len(kv)%2 != 0 {
		v.t.Fatalf("Stats(%q, %q): tags must come as key, value pairs", name, kv)
	}
	m := make(map[string]string, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return v.Aggregator.Snapshot().Stats(name, metrics.NewTagSet(m))
}
