// Package modules defines what a Go-native module sees of the engine: the VU
// it runs in, and the Registry of modules scripts import by name. Each
// module (llm, metrics, checks, ...) is a plain Go package with a thin
// JavaScript binding that depends on this package only, never on the
// engine, so dependencies point one way: runtime → modules/* → modules.
// What a module reports beyond its samples it is given when it is made
// (the llm module's Hooks), not through the VU. Package standard lists
// the modules every script can import besides 'llm'.
package modules

import (
	"context"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Module is a Go-native module that scripts import by name
// (`import llm from 'llm'`). The engine calls NewInstance once per VU, in the
// VU's init context.
type Module interface {
	NewInstance(vu VU) (Instance, error)
}

// Instance is one VU's instance of a module.
type Instance interface {
	// Exports returns the module's exports: an object whose properties are
	// the named exports, and which is also the default export.
	Exports() *goja.Object
}

// VU is the virtual user a module instance belongs to.
type VU interface {
	// Runtime is the VU's goja runtime. It is not safe for concurrent use:
	// modules call into it only from the VU's own goroutine.
	Runtime() *goja.Runtime
	// Context is canceled when the current iteration must stop (the end of
	// a graceful stop, or an aborted run). In the init context it is the
	// run's context.
	Context() context.Context
	// State is the VU's state while it runs iterations (and setup and
	// teardown); nil in the init context.
	State() *State
	// Registry holds the run's metric definitions; modules register their
	// built-in and custom metrics here, in the init context or later.
	Registry() *metrics.Registry
	// InitContext reports whether the VU is running the script's init code,
	// where only registration and file loading are allowed.
	InitContext() bool
	// ID is the VU's number, from 1; the VU that reads the options and
	// runs setup and teardown is 0. Modules seed per-VU random streams
	// with it, so that a run is reproducible under its seed.
	ID() int64
}

// State is what a VU knows while it runs iterations.
type State struct {
	// VUID is the VU's number, from 1; setup and teardown run as VU 0.
	VUID int64
	// Iteration counts this VU's iterations in its current scenario, from 0.
	Iteration int64
	// Scenario is the name of the scenario the VU is running.
	Scenario string
	// Tags are the tags every sample of this VU carries now (scenario,
	// group and the user's tags); modules add their own on top.
	Tags *metrics.TagSet
	// Samples receives the VU's samples; it never blocks for long.
	Samples metrics.Sink
	// Group is the current group path ("::outer::inner"), "" outside groups.
	Group string
	// Warmup says that the current iteration is a warmup one: it counts
	// in no result of the run, so modules record nothing of it beyond its
	// samples, which the engine keeps apart, and what the early stop
	// observes (llmjs.Hooks.Observer).
	Warmup bool
}

// Function makes fn a script function whose length (the number of
// parameters scripts see) is length. goja calls a function of fn's type
// directly; it calls a Go function of any other signature by reflection,
// converting each argument, at some microseconds a call: bind this way
// what scripts call per request or per sample.
func Function(rt *goja.Runtime, length int, fn func(call goja.FunctionCall) goja.Value) *goja.Object {
	f := rt.ToValue(fn).(*goja.Object)
	if err := f.DefineDataProperty("length", rt.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err) // length is configurable on every new function
	}
	return f
}
