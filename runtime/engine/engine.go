package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/checks"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/llm/llmjs"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/scriptpath"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/js"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// DefaultSetupTimeout bounds setup() and teardown(), as in k6.
const DefaultSetupTimeout = 60 * time.Second

// InterruptGrace is how long teardown() and handleSummary() may still run
// once the run is interrupted (a signal): they run after an interruption,
// so that the script can release what setup took and write its summary,
// but no longer than this, whatever their own timeout.
const InterruptGrace = 10 * time.Second

// errInterruptGrace is the cause of a call cut InterruptGrace after the
// interruption.
var errInterruptGrace = errors.New("the grace period after the interruption is over")

// afterInterrupt returns a context that is not canceled with ctx but
// grace after it: a call that still runs once the run is interrupted, for
// a bounded time.
func afterInterrupt(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, func() { cancel(errInterruptGrace) })
		context.AfterFunc(out, func() { t.Stop() })
	})
	return out, func() {
		stop()
		cancel(context.Canceled)
	}
}

// Config configures one run.
type Config struct {
	// ScriptPath is the scenario script (.js or .ts); it names the script
	// in errors and resolves its relative imports and open() paths.
	ScriptPath string
	// Source, when not nil, is the script's source, used instead of
	// reading ScriptPath (for the stock scenarios built into the binary).
	Source []byte
	// SourceFS, when not nil, holds the files Source's relative imports
	// name (the stock scenarios' library).
	SourceFS fs.FS
	// Env is exposed to the script as __ENV.
	Env map[string]string
	// Overrides are the command line's load-shape flags.
	Overrides Overrides
	// LLM holds the defaults of the llm module's clients (base URL, key,
	// model, timeout).
	LLM llm.Config
	// Requests, when set, receives a record of each measured LLM request
	// (warmup excluded), for the outputs that store every request.
	Requests llm.RequestSink
	// Results, when set, receives the Result of each measured LLM request
	// (warmup excluded), as Go values: for a consumer that needs what the
	// record leaves out (llmrun bench: each request's start, gaps, text).
	Results llmjs.ResultSink
	// Tags are added to every sample (the command line's --tag); they win
	// over options.tags.
	Tags map[string]string
	// Seed seeds each VU's Math.random (VU n gets Seed+n), so scripts that
	// draw from it are reproducible.
	Seed int64
	// Logger receives the script's console output.
	Logger *slog.Logger
	// InitTimeout bounds the init code of each VU (DefaultInitTimeout
	// on the command line), the module calls it makes included: longer
	// init code is interrupted with an *InitTimeoutError. 0: no limit.
	InitTimeout time.Duration
	// FileRead, when set, is told the path of every file the script
	// names that Paths finds (open(), datasets, configuration, CA and
	// tokenizer files). It may be called from several VUs at once.
	FileRead func(path string)
	// Paths resolves the relative paths the script names, by the rule of
	// package scriptpath, for open() and the llm module; the standard
	// modules must be given the same (runner.StandardModules does), so
	// that a file's deprecation warning is told once. nil: Load makes
	// one with NewPaths.
	Paths *scriptpath.Resolver
	// Modules are the Go modules scripts can import besides 'llm', which
	// the engine makes itself with the run's hooks; package standard
	// gives llmrun's (metrics, llmrun, llmrun/config, data). nil: 'llm'
	// only.
	Modules *modules.Registry
	// StopChain, when set, is asked each time a scenario that others
	// start after (startAfter) has ended whether they should still run.
	// It gets the report so far: the metrics until now, and the windows
	// of the scenarios that have ended (Scenarios holds them all). It
	// returns why the chain stops, "" to go on; the scenarios chained
	// after the one that ended, directly or not, are then skipped
	// (Report.ChainStops). The sweeps' stop (options.capacity.stop) is
	// one.
	StopChain func(sofar *Report) string
	// BeforeStart, when set, is called once the VUs are initialised and
	// setup() has run, just before the scenarios start; it returns when
	// they should start (the instances of a distributed run wait for each
	// other in it). Its error ends the run before any scenario, after
	// teardown().
	BeforeStart func(ctx context.Context) error
	// MeasuredStart, when set, is called once, when the run's measured
	// window begins: as the first iteration that is no warmup starts, on
	// its VU's goroutine, before its requests. It must return at once.
	MeasuredStart func()
	// ScenariosEnded, when set, is called once the scenarios have ended
	// (the measured window's last request is over) and the window's end
	// is taken, before teardown(): the time it takes is in no figure.
	ScenariosEnded func()
}

// Engine runs one script. Load it, look at its scenarios, then Run it once.
type Engine struct {
	cfg       Config
	script    *js.Script
	sha256    string
	options   *Options
	scenarios []Scenario

	registry   *metrics.Registry
	agg        *metrics.Aggregator
	thresholds *threshold.Set
	run        *runState
	modules    *modules.Registry
	llmModule  *llmjs.Module
	llm        *llm.Metrics
	vu0        *vu
	// hasSetup says that the script exports a setup function, whose
	// data every VU parses.
	hasSetup bool
	maxVUs   int
	preVUs   int

	// replaysTrace says that a scenario replays a trace, whose records
	// the VUs parse.
	replaysTrace bool

	// live holds what a live view reads of each scenario, in the order
	// of scenarios.
	live []*scenarioLive
	// env is the run's __ENV (VU 0's); envs each scenario's, with its
	// own variables, in the order of scenarios. Every VU of a scenario
	// reads the one Env.
	env  *js.Env
	envs []*js.Env
	// interruptGrace is InterruptGrace (shorter in tests).
	interruptGrace time.Duration

	// nextVUID is the ID of the last VU created: those initialised before
	// the run take 1..preVUs, those an arrival-rate executor asks for
	// during the run the following ones.
	nextVUID   atomic.Int64
	startNanos atomic.Int64

	// search, when set (SetSearch), runs the scenarios as a capacity
	// search; rounds are the scenarios of its rounds that ran, in the
	// order they first ran (written by the search's goroutine only).
	search *Search
	// round is the search's round that runs, for Progress.
	round  atomic.Pointer[runningRound]
	rounds []Scenario
}

// withTags returns the options' tags with the command line's over them,
// tags itself when there are none to add (it is never changed in place).
func withTags(tags, overrides map[string]string) map[string]string {
	if len(overrides) == 0 {
		return tags
	}
	merged := make(map[string]string, len(tags)+len(overrides))
	maps.Copy(merged, tags)
	maps.Copy(merged, overrides)
	return merged
}

// Load compiles the script, runs its init code once to read its options and
// resolves the scenarios. Errors are *js.ScriptError for script problems
// and *ConfigError for options and flags.
func Load(ctx context.Context, cfg Config) (*Engine, error) {
	src := cfg.Source
	if src == nil {
		var err error
		if src, err = js.ReadScript(cfg.ScriptPath); err != nil {
			return nil, err
		}
	}
	script, err := js.CompileFS(cfg.ScriptPath, src, cfg.SourceFS)
	if err != nil {
		return nil, err
	}
	if cfg.Paths == nil {
		cfg.Paths = NewPaths(cfg)
	}
	sum := sha256.Sum256(src)
	e := &Engine{
		cfg:            cfg,
		script:         script,
		sha256:         hex.EncodeToString(sum[:]),
		interruptGrace: InterruptGrace,
		registry:       metrics.NewRegistry(),
		agg:            metrics.NewAggregator(runtime.GOMAXPROCS(0)),
		run: &runState{errors: newErrorLog(), requestErrors: newRequestErrorLog(),
			arrivals: newTokenArrivals(runtime.GOMAXPROCS(0))},
	}
	e.llm = llm.RegisterMetrics(e.registry)
	e.run.builtin = registerBuiltin(e.registry, e.llm.Requests)
	checks.RegisterMetrics(e.registry)
	llmModule, err := llmjs.NewModule(cfg.LLM, llmjs.Hooks{
		Requests: cfg.Requests, Observer: &e.run.earlyStop, Errors: e.run.requestErrors, Arrivals: e.run.arrivals,
		Results: cfg.Results,
	})
	if err != nil {
		return nil, &ConfigError{Field: "llm", Err: err}
	}
	llmModule.Paths = cfg.Paths
	llmModule.Seed = cfg.Seed
	e.llmModule = llmModule
	if e.modules, err = jsModules(cfg, llmModule); err != nil {
		return nil, err
	}

	e.env = js.NewEnv(cfg.Env, nil)
	e.vu0, err = e.newVU(ctx, 0, e.env)
	if err != nil {
		return nil, err
	}
	optsJSON, err := e.vu0.inst.OptionsJSON()
	if err != nil {
		return nil, &ConfigError{Field: "options", Err: err}
	}
	if e.options, err = ParseOptions(optsJSON); err != nil {
		return nil, err
	}
	for _, w := range bareDurationWarnings(optsJSON) {
		e.log().Warn(w)
	}
	e.options.Tags = withTags(e.options.Tags, cfg.Tags)
	if e.scenarios, err = ResolveScenarios(e.options, cfg.Overrides); err != nil {
		return nil, err
	}
	if e.replaysTrace, err = openTraces(ctx, e.scenarios, cfg.Paths); err != nil {
		return nil, err
	}
	e.live = make([]*scenarioLive, len(e.scenarios))
	e.envs = make([]*js.Env, len(e.scenarios))
	var measured func()
	if cfg.MeasuredStart != nil {
		measured = sync.OnceFunc(cfg.MeasuredStart)
	}
	for i, sc := range e.scenarios {
		e.live[i] = &scenarioLive{warmup: newWarmupGate(sc.Warmup)}
		e.live[i].warmup.onMeasured = measured
		e.envs[i] = e.env
		if len(sc.Env) > 0 {
			e.envs[i] = js.NewEnv(cfg.Env, sc.Env)
		}
	}
	if e.thresholds, err = e.loadThresholds(); err != nil {
		return nil, err
	}
	for i := range e.scenarios {
		_, ok, err := e.vu0.inst.Function(e.scenarios[i].Exec)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, e.noExec(&e.scenarios[i])
		}
		e.maxVUs += e.scenarios[i].Config.MaxVUs()
		e.preVUs += e.scenarios[i].Config.PreAllocatedVUs()
	}
	// An export that cannot be read fails setup when the run starts;
	// until then the VUs are made ready to parse its data.
	_, hasSetup, err := e.vu0.inst.Function("setup")
	e.hasSetup = hasSetup || err != nil
	return e, nil
}

// NewPaths is the resolver of the paths cfg's script names: against the
// script's directory (none for a script built into llmrun), with cfg.Env
// the command line's environment, its deprecation warnings told to
// cfg.Logger and the files it finds to cfg.FileRead.
func NewPaths(cfg Config) *scriptpath.Resolver {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return scriptpath.New(scriptpath.Config{
		Script:   cfg.ScriptPath,
		BuiltIn:  cfg.Source != nil,
		Env:      cfg.Env,
		Warn:     func(msg string) { logger.Warn(msg) },
		FileRead: cfg.FileRead,
	})
}

// jsModules are the modules scripts can import, by name: the llm module,
// made apart with the run's hooks since the engine also uses it
// (preflight), and the configuration's.
func jsModules(cfg Config, llmModule *llmjs.Module) (*modules.Registry, error) {
	r := modules.NewRegistry()
	if err := r.Register("llm", llmModule); err != nil {
		return nil, err
	}
	for _, name := range cfg.Modules.Names() {
		m, _ := cfg.Modules.Lookup(name)
		if err := r.Register(name, m); err != nil {
			return nil, fmt.Errorf("Config.Modules: %w (the engine makes 'llm' itself)", err)
		}
	}
	return r, nil
}

// Scenarios returns the resolved scenarios.
func (e *Engine) Scenarios() []Scenario { return e.scenarios }

// MaxVUs is the most VUs the run may use: the sum of its scenarios'
// MaxVUs. Arrival-rate scenarios initialise their preAllocatedVUs before the
// run and the others, up to maxVUs, only when they need them.
func (e *Engine) MaxVUs() int { return e.maxVUs }

// Options are the script's options as it exported them (the command
// line's flags are applied to the scenarios, not here).
func (e *Engine) Options() Options { return *e.options }

// ScriptFiles are the absolute paths of the script and the files it
// imports, on disk; none for a script built into llmrun.
func (e *Engine) ScriptFiles() []string { return e.script.Files() }

// ScriptSHA256 is the hex SHA-256 of the script's source.
func (e *Engine) ScriptSHA256() string { return e.sha256 }

// newVU creates VU id whose script reads env as __ENV.
func (e *Engine) newVU(ctx context.Context, id int64, env *js.Env) (*vu, error) {
	return newVU(ctx, id, e.script, instanceConfig{
		registry:    e.registry,
		modules:     e.modules,
		env:         env,
		logger:      e.cfg.Logger,
		paths:       e.cfg.Paths,
		seed:        e.cfg.Seed,
		initTimeout: e.cfg.InitTimeout,
		// VU 0 parses the summary for handleSummary, and every VU
		// setup's data and the trace records it replays.
		parsesJSON: id == 0 || e.hasSetup || e.replaysTrace,
	}, e.run, e.agg.Shard(int(id)))
}

// instanceConfig is what every VU's script instance is built from.
type instanceConfig struct {
	registry *metrics.Registry
	modules  *modules.Registry
	env      *js.Env
	logger   *slog.Logger
	paths    *scriptpath.Resolver
	seed     int64
	// initTimeout bounds the VU's init code, 0: no limit.
	initTimeout time.Duration
	// parsesJSON says that the VU needs the runtime's own JSON.parse,
	// which every runtime would otherwise build and keep.
	parsesJSON bool
}

// Report is what a run measured, for the summary and the exports.
type Report struct {
	Snapshot  *metrics.Snapshot
	Registry  *metrics.Registry
	Scenarios []Scenario
	// Start and End bound the measured window: from the first scenario's
	// start to the last one's end (setup and teardown excluded).
	Start, End time.Time
	// Windows holds when each scenario actually ran, by name; a scenario
	// that never started (an interrupted run) has none.
	Windows map[string]Window
	// ScriptErrors are the distinct exceptions thrown by iterations;
	// OtherScriptErrors counts those whose message was not kept.
	ScriptErrors      []ErrorCount
	OtherScriptErrors int64
	// RequestErrors are the first few distinct messages of failed LLM
	// requests (warmup excluded), by error class, each class's in the
	// order they were first seen, with how often each recurred.
	RequestErrors map[string][]ErrorCount
	// Interrupted is true when the run was stopped before its end.
	Interrupted bool
	// Final is each scenario's progress at the end of the run, in the
	// order of Scenarios: where an interrupted one stopped, how many VUs
	// each used at most.
	Final []ScenarioProgress
	// Client is how the load generator itself fared during the window.
	Client health.Report
	// Thresholds are the thresholds evaluated at the end, in option order.
	Thresholds []threshold.Result
	// AbortedBy is the abortOnFail threshold that stopped the run early,
	// as it was when it did; nil otherwise.
	AbortedBy *threshold.Result
	// EarlyStopped says why the early stop (options.earlyStop) stopped
	// the run; nil when it did not.
	EarlyStopped *EarlyStopped
	// MinSuccessRate is the success rate below which the run's end warns
	// (options.earlyStop.minSuccessRate; 0 with earlyStop: false).
	MinSuccessRate float64
	// ChainStops are the chains of scenarios (startAfter) that
	// Config.StopChain stopped, in the order it did; a skipped scenario
	// never started, so it has no window and no figures.
	ChainStops []ChainStop
	// Rounds are, in a capacity search (Engine.SetSearch), the scenarios
	// of the rounds that ran, in the order they first ran: each holds one
	// scenario at one level, its samples tagged scenario=its name. nil
	// otherwise.
	Rounds []Scenario
}

// ChainStop is a chain of scenarios stopped after one of them ended.
type ChainStop struct {
	// After is the scenario whose end stopped the chain, Reason why.
	After  string `json:"after"`
	Reason string `json:"reason"`
	// Skipped are the scenarios that started after it, directly or not,
	// and so never started, in the order they would have.
	Skipped []string `json:"skipped"`
}

// Duration is the length of the measured window.
func (r *Report) Duration() time.Duration { return r.End.Sub(r.Start) }

// Window is when a scenario ran: from its start to the end of its last
// iteration (graceful stop included).
type Window struct{ Start, End time.Time }

// Duration is the window's length.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// Run initialises the VUs, runs setup, the scenarios and teardown, and
// returns what was measured. Between setup and the measured window it
// collects the process's garbage (runtime.GC): a load generator's run is
// its process's main work; a caller running several engines at once
// should know that each start collects for all of them. A canceled ctx stops the run early and still
// returns a report (Interrupted set) together with ctx's error; a failing
// setup or teardown returns a report with a *js.ScriptError.
func (e *Engine) Run(ctx context.Context) (*Report, error) {
	vus, err := e.initVUs(ctx)
	if err != nil {
		return nil, err
	}
	setupJSON, err := e.setup(ctx)
	if err != nil {
		rep := e.report(time.Now(), time.Now(), ctx)
		rep.Client = health.NotMeasured("setup() did not complete, so no scenario ran")
		return rep, err
	}

	// What initialisation and setup left (compiling, instantiating every
	// VU) is collected now, not in the measured window, where a
	// collection over the VUs' heap would delay arrivals and reads; the
	// collector's next goal is then set from the heap the run starts with
	// (see runtime/gctune).
	runtime.GC()
	if e.cfg.BeforeStart != nil {
		if err := e.cfg.BeforeStart(ctx); err != nil {
			teardownCtx, stopTeardown := afterInterrupt(ctx, e.interruptGrace)
			teardownErr := e.teardown(teardownCtx, setupJSON)
			stopTeardown()
			rep := e.report(time.Now(), time.Now(), ctx)
			rep.Client = health.NotMeasured("the run did not start, so no scenario ran")
			return rep, errors.Join(err, teardownErr)
		}
	}
	start := time.Now()
	e.startNanos.Store(start.UnixNano())
	probe := health.Start()
	runCtx, stopRun := context.WithCancel(ctx)
	aborted := e.watchThresholds(runCtx, start, stopRun)
	stopper := newEarlyStopper(e.earlyStop(), start, stopRun)
	e.run.earlyStop.watch(stopper)
	windows, chainStops, runErr := e.runScenarios(runCtx, vus, setupJSON)
	e.run.earlyStop.watch(nil)
	stopRun()
	start = measuredStart(start, windows)
	client := probe.Stop()
	end := time.Now()
	if e.cfg.ScenariosEnded != nil {
		e.cfg.ScenariosEnded()
	}

	// teardown runs even after an interruption, on its own deadline and
	// for InterruptGrace at most once interrupted, so that the script can
	// release what setup took.
	teardownCtx, stopTeardown := afterInterrupt(ctx, e.interruptGrace)
	teardownErr := e.teardown(teardownCtx, setupJSON)
	stopTeardown()
	rep := e.report(start, end, ctx)
	rep.Windows, rep.Client, rep.ChainStops = windows, client, chainStops
	rep.Rounds = slices.Clone(e.rounds)
	rep.Thresholds = e.thresholds.EvaluateEnd(rep.Snapshot, rep.Duration(), e.thresholdEnd(chainStops))
	if abort, ok := <-aborted; ok {
		rep.AbortedBy, rep.Interrupted = &abort, true
	}
	if stopped := stopper.result(); stopped != nil {
		rep.EarlyStopped, rep.Interrupted = stopped, true
	}
	return rep, errors.Join(runErr, ctx.Err(), teardownErr)
}

// earlyStop is the run's early stop: options.earlyStop, else the default.
func (e *Engine) earlyStop() EarlyStop {
	if e.options.EarlyStop != nil {
		return *e.options.EarlyStop
	}
	return DefaultEarlyStop()
}

// measuredStart is the start of the run's measured window: the earliest
// measured start of its scenarios (after their warmups), or start when no
// scenario ran.
func measuredStart(start time.Time, windows map[string]Window) time.Time {
	var first time.Time
	for _, w := range windows {
		if first.IsZero() || w.Start.Before(first) {
			first = w.Start
		}
	}
	if first.IsZero() {
		return start
	}
	return first
}

func (e *Engine) report(start, end time.Time, ctx context.Context) *Report {
	errs, other := e.run.errors.list()
	return &Report{
		Snapshot:          e.agg.Snapshot(),
		Registry:          e.registry,
		Scenarios:         e.scenarios,
		Start:             start,
		End:               end,
		ScriptErrors:      errs,
		OtherScriptErrors: other,
		RequestErrors:     e.run.requestErrors.list(),
		Interrupted:       ctx.Err() != nil,
		Final:             e.Progress().Scenarios,
		MinSuccessRate:    e.earlyStop().SuccessFloor(),
	}
}

// initVUs creates the VUs the scenarios need before the run (their
// PreAllocatedVUs), in parallel, and returns them by scenario; IDs run from
// 1 in scenario order.
func (e *Engine) initVUs(ctx context.Context) ([][]*vu, error) {
	vus := make([]*vu, e.preVUs)
	envs := make([]*js.Env, 0, e.preVUs)
	for i, sc := range e.scenarios {
		for range sc.Config.PreAllocatedVUs() {
			envs = append(envs, e.envs[i])
		}
	}
	ids := make(chan int)
	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		initErr error
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				v, err := e.newVU(ctx, int64(i+1), envs[i])
				if err != nil {
					errOnce.Do(func() { initErr = fmt.Errorf("initialising VU %d: %w", i+1, err) })
					continue
				}
				vus[i] = v
			}
		}()
	}
	for i := range vus {
		if ctx.Err() != nil {
			break
		}
		ids <- i
	}
	close(ids)
	wg.Wait()
	if initErr != nil {
		return nil, initErr
	}
	e.nextVUID.Store(int64(e.preVUs))
	byScenario := make([][]*vu, len(e.scenarios))
	next := 0
	for i, sc := range e.scenarios {
		n := sc.Config.PreAllocatedVUs()
		byScenario[i] = vus[next : next+n : next+n]
		next += n
	}
	return byScenario, ctx.Err()
}

// runScenarios binds each scenario's VUs to it, then runs the scenarios
// concurrently, each from its start time, or its start time after the end
// of the scenario it starts after. When a scenario fails (a VU initialised
// during the run threw in its init code), the others are stopped and the
// error returned. It returns the windows of the scenarios that ran and
// the chains Config.StopChain stopped.
func (e *Engine) runScenarios(ctx context.Context, vus [][]*vu, setupJSON []byte) (map[string]Window, []ChainStop, error) {
	pools := make([]*scenarioPool, len(e.scenarios))
	for i := range e.scenarios {
		p, err := e.newPool(i, vus[i], setupJSON)
		if err != nil {
			return nil, nil, err
		}
		pools[i] = p
	}
	if e.search != nil {
		windows, err := e.runSearch(ctx, vus, setupJSON)
		return windows, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chain := newChain(e.scenarios)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		windows = make(map[string]Window, len(e.scenarios))
		stops   []ChainStop
		runErr  error
	)
	// startTime counts from one origin for every scenario, not from when
	// each goroutine got to run; after startAfter, from that end.
	origin := time.Now()
	for i := range e.scenarios {
		sc := &e.scenarios[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(chain.ended[i])
			defer func() {
				if pools[i].live.start.Load() == 0 {
					pools[i].live.notRun.Store(true)
				}
			}()
			if !chain.awaitStart(ctx, i) {
				return
			}
			from := origin
			if sc.StartAfter != "" {
				from = time.Now()
			}
			if !wait.Sleep(ctx, time.Until(from.Add(sc.StartTime))) {
				return
			}
			start := time.Now()
			pools[i].live.warmup.begin(start)
			pools[i].live.start.Store(start.UnixNano())
			err := sc.Config.NewExecutor(executor.SeedFor(e.cfg.Seed, sc.Name)).Run(ctx, pools[i])
			end := time.Now()
			pools[i].live.interrupted.Store(ctx.Err() != nil)
			pools[i].live.end.Store(end.UnixNano())
			w := Window{Start: pools[i].live.warmup.measuredStart(end), End: end}
			mu.Lock()
			windows[sc.Name] = w
			if err != nil && runErr == nil {
				runErr = err
				cancel()
			}
			var sofar *Report
			if err == nil && ctx.Err() == nil && e.cfg.StopChain != nil && chain.hasNext(i) {
				sofar = e.reportSoFar(maps.Clone(windows))
			}
			mu.Unlock()
			if sofar == nil {
				return
			}
			if reason := e.cfg.StopChain(sofar); reason != "" {
				chain.stop(i)
				mu.Lock()
				stops = append(stops, ChainStop{After: sc.Name, Reason: reason, Skipped: chain.after(i)})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return windows, stops, runErr
}

// reportSoFar is the report of a run still going, for Config.StopChain:
// the metrics until now and the windows of the scenarios that ended.
func (e *Engine) reportSoFar(windows map[string]Window) *Report {
	rep := &Report{Snapshot: e.agg.Snapshot(), Registry: e.registry, Scenarios: e.scenarios, End: time.Now(), Windows: windows,
		Rounds: slices.Clone(e.rounds)}
	rep.Start = measuredStart(rep.End, windows)
	return rep
}

// setup runs the script's setup() if it exports one and returns its result
// as JSON (nil when there is no setup or it returned undefined).
func (e *Engine) setup(ctx context.Context) ([]byte, error) {
	fn, ok, err := e.vu0.inst.Function("setup")
	if !ok || err != nil {
		return nil, err
	}
	res, err := e.lifecycleCall(ctx, "setup", fn, e.timeout(e.options.SetupTimeout), goja.Undefined())
	if err != nil || res == nil || goja.IsUndefined(res) {
		return nil, err
	}
	s, err := e.vu0.stringify(res)
	if err != nil {
		return nil, fmt.Errorf("setup() returned a value that cannot be passed to VUs as JSON: %w", err)
	}
	return []byte(s), nil
}

func (e *Engine) teardown(ctx context.Context, setupJSON []byte) error {
	fn, ok, err := e.vu0.inst.Function("teardown")
	if !ok || err != nil {
		return err
	}
	data := goja.Undefined()
	if setupJSON != nil {
		v, err := e.vu0.parseJSON(setupJSON)
		if err != nil {
			return fmt.Errorf("passing setup() data to teardown(): %w", err)
		}
		data = v
	}
	_, err = e.lifecycleCall(ctx, "teardown", fn, e.timeout(e.options.TeardownTimeout), data)
	return err
}

func (e *Engine) timeout(d *executor.Duration) time.Duration {
	if d != nil && d.D > 0 {
		return d.D
	}
	return DefaultSetupTimeout
}

// lifecycleCall runs setup or teardown on VU 0 with its own deadline.
func (e *Engine) lifecycleCall(ctx context.Context, name string, fn goja.Callable, timeout time.Duration, arg goja.Value) (goja.Value, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v := e.vu0
	v.state = &modules.State{VUID: 0, Scenario: name, Tags: metrics.NewTagSet(map[string]string{"scenario": name}), Samples: v.sink}
	res, err := v.interruptible(ctx, fn, arg)
	if err != nil {
		switch {
		case errors.Is(context.Cause(ctx), errInterruptGrace):
			return nil, fmt.Errorf("%s() stopped %s after the interruption", name, e.interruptGrace)
		case ctx.Err() == context.DeadlineExceeded:
			return nil, fmt.Errorf("%s() did not finish within %s (raise %sTimeout in options)", name, timeout, name)
		}
		return nil, fmt.Errorf("%s(): %w", name, err)
	}
	return res, nil
}

// Progress is a live view of a running test, for the console's live view, the
// timeline and the live outputs.
type Progress struct {
	Elapsed   time.Duration
	ActiveVUs int64
	MaxVUs    int
	// Requests and Failed are the LLM requests that ended, warmup
	// excluded.
	Requests int64
	Failed   int64
	// OutputTokens are the output tokens that have arrived since the run
	// started, warmup excluded, counted as they arrive: one per
	// token-bearing chunk of a stream as it is read, then, when a request
	// completes, what its count (the server's usage) has beyond its
	// chunks. Tokens of requests still in flight are in it, and those of
	// requests that then failed stay in it: it only grows. Arrived breaks
	// it down by scenario and model, sorted.
	OutputTokens int64
	Arrived      []TokenCount
	// Scenarios are the scenarios' own progress, in the order of
	// Engine.Scenarios.
	Scenarios []ScenarioProgress
	// Round is the round of a capacity search that runs; nil outside a
	// search and between its rounds.
	Round *RoundProgress
}

// Progress reads the live counters; safe to call while Run runs.
func (e *Engine) Progress() Progress {
	p := Progress{MaxVUs: e.maxVUs}
	for _, l := range e.live {
		p.ActiveVUs += l.active.Load()
	}
	if start := e.startNanos.Load(); start != 0 {
		p.Elapsed = time.Since(time.Unix(0, start))
	}
	_, p.Requests = e.agg.Sum(e.llm.Requests)
	failed, _ := e.agg.Sum(e.llm.Failed)
	p.Failed = int64(failed)
	p.Arrived, p.OutputTokens = e.run.arrivals.counts()
	now := time.Now()
	p.Scenarios = make([]ScenarioProgress, len(e.live))
	for i, l := range e.live {
		p.Scenarios[i] = l.progress(&e.scenarios[i], now)
	}
	if r := e.round.Load(); r != nil {
		p.Round = &RoundProgress{Variable: e.search.Variable, Number: r.number, Level: r.Level, Duration: r.Duration, Elapsed: now.Sub(r.start)}
	}
	return p
}
