package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/js"
	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// errInterrupted is the value a VU's runtime is interrupted with when its
// iteration must stop.
var errInterrupted = errors.New("iteration interrupted")

// vu is one virtual user: a goja runtime with the script instantiated in it.
// It implements modules.VU for the modules, and executor.VU once bound to a
// scenario. A vu is used by one goroutine at a time.
type vu struct {
	id       int64
	rt       *goja.Runtime
	inst     *js.Instance
	registry *metrics.Registry
	sink     metrics.Sink
	run      *runState

	ctx   context.Context
	state *modules.State

	// bound by bind for the scenario the VU serves
	fn goja.Callable
	// args are fn's arguments: setup()'s data, made once for every call.
	args []goja.Value
	// live is the scenario's: its warmup gate and live counters.
	live *scenarioLive
	// samples is the buffer of each iteration's own samples.
	samples []metrics.Sample
	// lag is how late the next iteration starts, set (lagged) by its
	// arrival-rate executor just before it (scenarioPool.IterationLag).
	lag    time.Duration
	lagged bool
	// backoff paces the VU while its requests do not reach the target.
	backoff vuBackoff

	interruptDone chan struct{}
	// jsonParse is the runtime's own JSON.parse, taken before the script
	// runs: the script may replace or delete the global JSON. Only VUs
	// that parse JSON (instanceConfig.parsesJSON) take it.
	jsonParse goja.Callable
	// mod is what modules see while the VU runs a call (interruptible).
	mod moduleContext
}

// moduleContext is the context modules see while a VU runs calls under
// parent, with its cancel, and the interruption that ends both once
// parent ends. One serves call after call while parent stays the same
// and nothing canceled it, rather than costing each call (an iteration)
// its contexts and closure again.
type moduleContext struct {
	parent    context.Context
	ctx       context.Context
	cancel    context.CancelCauseFunc
	interrupt func()
}

// runState is what every VU of a run shares with the engine.
type runState struct {
	builtin *builtinMetrics
	errors  *errorLog
	// requestErrors keeps examples of the failed LLM requests' messages.
	requestErrors *requestErrorLog
	// earlyStop sees every LLM request's outcome while the scenarios
	// run, warmup included.
	earlyStop earlyStopSlot
	// arrivals counts the output tokens of the measured requests as they
	// arrive.
	arrivals *tokenArrivals
}

func newVU(ctx context.Context, id int64, script *js.Script, cfg instanceConfig, run *runState, sink metrics.Sink) (*vu, error) {
	v := &vu{
		id:            id,
		rt:            goja.New(),
		registry:      cfg.registry,
		sink:          sink,
		run:           run,
		ctx:           ctx,
		interruptDone: make(chan struct{}, 1),
	}
	if cfg.parsesJSON {
		parse, ok := goja.AssertFunction(v.rt.Get("JSON").ToObject(v.rt).Get("parse"))
		if !ok {
			return nil, errors.New("the JavaScript runtime has no JSON.parse")
		}
		v.jsonParse = parse
	}
	seed := cfg.seed + id
	v.rt.SetRandSource(rand.New(rand.NewPCG(uint64(seed), uint64(seed>>32)^0x9e3779b97f4a7c15)).Float64)
	// The init code, and the module calls it makes, see a context that
	// also ends at the VU's init time limit.
	initCtx, stop := initContext(ctx, cfg.initTimeout)
	v.ctx = initCtx
	inst, err := script.Instantiate(js.InstanceConfig{
		VU:      v,
		VUID:    id,
		Modules: cfg.modules,
		Env:     cfg.env,
		Logger:  cfg.logger,
		Paths:   cfg.paths,
	})
	stop()
	v.ctx = ctx
	if err != nil {
		return nil, err
	}
	v.inst = inst
	return v, nil
}

// Runtime implements modules.VU.
func (v *vu) Runtime() *goja.Runtime { return v.rt }

// Context implements modules.VU.
func (v *vu) Context() context.Context { return v.ctx }

// State implements modules.VU.
func (v *vu) State() *modules.State { return v.state }

// Registry implements modules.VU.
func (v *vu) Registry() *metrics.Registry { return v.registry }

// InitContext implements modules.VU.
func (v *vu) InitContext() bool { return v.state == nil }

// ID implements modules.VU.
func (v *vu) ID() int64 { return v.id }

// bind prepares the VU to run iterations of a scenario, passing data (the
// JSON of setup()'s result, or nil) to each. tags are the scenario's
// (scenarioTags), one set that all its VUs share.
func (v *vu) bind(sc *Scenario, tags *metrics.TagSet, setupJSON []byte, live *scenarioLive) error {
	fn, ok, err := v.inst.Function(sc.Exec)
	if err != nil {
		return err
	}
	if !ok {
		return &ConfigError{Field: "options.scenarios." + sc.Name + ".exec", Err: fmt.Errorf("the script exports no function %q", sc.Exec)}
	}
	v.fn, v.live = fn, live
	data := goja.Undefined()
	if setupJSON != nil {
		if data, err = v.parseJSON(setupJSON); err != nil {
			return fmt.Errorf("passing setup() data to VU %d: %w", v.id, err)
		}
	}
	v.args = []goja.Value{data}
	v.state = &modules.State{VUID: v.id, Scenario: sc.Name, Tags: tags, Samples: v.sink}
	return nil
}

// scenarioTags are the tags of a scenario's samples: the options' tags,
// then the scenario's own, then scenario=NAME.
func scenarioTags(sc *Scenario, globalTags map[string]string) map[string]string {
	tags := make(map[string]string, len(globalTags)+len(sc.Tags)+1)
	for k, val := range globalTags {
		tags[k] = val
	}
	for k, val := range sc.Tags {
		tags[k] = val
	}
	tags["scenario"] = sc.Name
	return tags
}

// parseJSON is JSON.parse of trusted JSON (setup's data, the summary) in
// the VU's runtime, with the runtime's own JSON.parse.
func (v *vu) parseJSON(b []byte) (goja.Value, error) {
	if v.jsonParse == nil {
		return nil, fmt.Errorf("VU %d was made without JSON.parse", v.id)
	}
	return v.jsonParse(goja.Undefined(), v.rt.ToValue(string(b)))
}

// RunIteration implements executor.VU: it calls the scenario's function once,
// interrupting it when ctx ends, and records the iteration's metrics and any
// exception it threw.
func (v *vu) RunIteration(ctx context.Context) {
	v.inst.SetIteration(v.state.Iteration)
	v.live.begin()
	defer func() {
		v.live.active.Add(-1)
		v.live.iterations.Add(1)
	}()

	b := v.run.builtin
	start := time.Now()
	warm := v.live.warmup.claim(start)
	lagged := v.lagged && !warm
	v.lagged = false
	if lagged {
		v.live.lagged(v.lag)
	}
	if warm {
		// Warmup requests count in no figure of the summary: their
		// samples are kept apart, and the modules keep nothing else of
		// them (error messages, records, arriving tokens).
		v.state.Samples = warmupSink{real: v.sink, requests: b.llmRequests, warmup: b.warmupRequests}
		v.state.Warmup = true
		defer func() { v.state.Samples, v.state.Warmup = v.sink, false }()
	}
	args, err := v.iterationArgs(ctx)
	if err == nil {
		_, err = v.interruptible(ctx, v.fn, args...)
	}
	v.endIteration(ctx, start, warm, lagged, err)
}

// Backoff implements executor.BackingOff: how long the VU pauses before
// its next iteration while its requests fail before they reach the target
// (vuBackoff, options.earlyStop.backoff).
func (v *vu) Backoff() time.Duration { return v.backoff.pause(v.run.earlyStop.backoffCap()) }

// endIteration records the metrics of the iteration that started at
// start and ended with err (warm: a warmup iteration; lagged: it has a
// lag to record). It is a function of its own so that the frame of
// RunIteration, on the VU's stack while the iteration runs, stays small.
//
//go:noinline
func (v *vu) endIteration(ctx context.Context, start time.Time, warm, lagged bool, err error) {
	elapsed := time.Since(start)
	b := v.run.builtin

	v.state.Iteration++
	v.backoff.endIteration()
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		v.run.errors.record(err.Error())
	}
	// One batch, in a buffer the VU reuses, for the iteration's samples.
	now, tags := time.Now(), v.state.Tags
	add := func(m *metrics.Metric, value float64) {
		v.samples = append(v.samples, metrics.Sample{Metric: m, Tags: tags, Time: now, Value: value})
	}
	v.samples = v.samples[:0]
	if lagged {
		v.samples = append(v.samples, metrics.Sample{Metric: b.iterationLag, Tags: tags, Time: start, Value: ms(v.lag)})
	}
	switch {
	case warm && !interrupted:
		add(b.warmupIterations, 1)
	case warm:
	case interrupted:
		add(b.interrupted, 1)
	default:
		add(b.iterations, 1)
		add(b.iterationDuration, ms(elapsed))
		if err != nil {
			add(b.scriptErrors, 1)
		}
	}
	v.sink.AddSamples(v.samples)
}

// interruptible calls fn with args, interrupting the runtime when ctx ends.
// Modules see a context that ends only once the runtime is interrupted, so
// that a module call cut short by the end of ctx (llm.stream, sleep) never
// returns to JavaScript that could still run and record samples (a failed
// check of the cut request) before the interrupt lands.
func (v *vu) interruptible(ctx context.Context, fn goja.Callable, args ...goja.Value) (goja.Value, error) {
	mod := v.moduleContext(ctx)
	prev := v.ctx
	v.ctx = mod.ctx
	defer func() { v.ctx = prev }()
	stop := context.AfterFunc(ctx, mod.interrupt)
	res, err := fn(goja.Undefined(), args...)
	if !stop() {
		<-v.interruptDone
	}
	v.rt.ClearInterrupt()
	return res, err
}

// moduleContext returns the module context of calls under ctx: the last
// one while it is still of ctx and not canceled, else a new one (the last
// one canceled).
func (v *vu) moduleContext(ctx context.Context) *moduleContext {
	m := &v.mod
	if m.parent == ctx && m.ctx.Err() == nil {
		return m
	}
	if m.cancel != nil {
		m.cancel(nil)
	}
	modCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	*m = moduleContext{parent: ctx, ctx: modCtx, cancel: cancel, interrupt: func() {
		v.rt.Interrupt(errInterrupted)
		cancel(context.Cause(ctx))
		v.interruptDone <- struct{}{}
	}}
	return m
}

// stringify is JSON.stringify in the VU's runtime; it never panics,
// whatever val's toJSON methods, getters or traps do (jsvalue.JSON).
func (v *vu) stringify(val goja.Value) (string, error) {
	b, err := jsvalue.JSON(v.rt, val)
	return string(b), err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
