// Package executor schedules iterations on VUs with k6's executor semantics.
// A Config is one scenario's executor settings, parsed from options; its
// Executor runs iterations on the VUs of a Pool the engine hands it.
// Executors only decide when iterations start and when they must stop:
// running the script, metrics and errors are the VU's and the pool's
// business.
package executor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmrun/llmrun/runtime/executor/segment"
)

// VU runs iterations for an executor.
type VU interface {
	// RunIteration runs one iteration of the scenario's function. When ctx
	// is canceled the iteration must stop at once; it is then counted as
	// interrupted by the VU.
	RunIteration(ctx context.Context)
}

// BackingOff is a VU that may ask to pause before its next iteration:
// Backoff is how long (0: no pause), the engine's while the VU's requests
// fail before they reach the target. The closed-loop executors (the VU
// starts its next iteration when the last one ended) honour it; the
// arrival-rate executors do not: their iterations start on the schedule
// the options plan, however the last ones ended.
type BackingOff interface {
	Backoff() time.Duration
}

// Pool is the engine's side of one running scenario: the VUs the executor
// may use, each already bound to the scenario (exec function, tags, env,
// setup data), and the recorder of what only the executor sees. Its
// methods are safe for concurrent use.
type Pool interface {
	// VUs returns the VUs initialised before the run for this scenario:
	// exactly Config.PreAllocatedVUs() of them.
	VUs() []VU
	// NewVU initialises one more VU, bound to the scenario. It takes as
	// long as the script's init code (milliseconds), so executors call it
	// off their scheduling loop, and at most MaxVUs − PreAllocatedVUs
	// times. An error (the init code threw, ctx ended) ends the scenario.
	NewVU(ctx context.Context) (VU, error)
	// IterationLag records how late the arrival-rate iteration vu is
	// about to run started: its actual start minus its planned start (the
	// iteration_lag metric). It is called on the goroutine that then
	// calls vu.RunIteration, so that a warmup iteration's lag can be left
	// out with its other samples.
	IterationLag(vu VU, lag time.Duration)
	// DroppedIterations records n planned iterations that were not
	// started (the dropped_iterations metric), and why.
	DroppedIterations(n int, cause DropCause)
	// Warn tells the user about a load-shape problem (on stderr);
	// executors warn once per cause.
	Warn(msg string)
}

// DropCause is why planned iterations were not started: arrival-rate
// ones, or an iteration-based scenario's that its maxDuration cut.
type DropCause int

const (
	// DropBusy: every one of maxVUs was busy at their planned start.
	DropBusy DropCause = iota
	// DropEnded: the scenario ended before the schedule, behind, reached
	// their planned start; VUs may have been free.
	DropEnded
	// DropLateVU: the VU initialised for one during the run was ready
	// only after the scenario ended.
	DropLateVU
	// DropCapped: they still waited for a maxConcurrency slot when the
	// scenario ended.
	DropCapped
	// DropUnscheduled: a scenario's iterations planned beyond its
	// duration (iterations more than rate × duration allows, or a
	// normalized schedule's last start after its end): they never had a
	// start before its end.
	DropUnscheduled
	// DropMaxDuration: a shared-iterations or per-vu-iterations
	// scenario's iterations not started when its maxDuration ended it.
	DropMaxDuration
	// DropCauses is the number of causes.
	DropCauses
)

// Config is an executor's configuration.
type Config interface {
	// Validate checks the fields and names the first wrong one.
	Validate() error
	// MaxVUs is the number of VUs the executor may use at once.
	MaxVUs() int
	// PreAllocatedVUs is how many of them the engine initialises before the
	// run; the executor asks the pool for the others as it needs them.
	// It equals MaxVUs except for the arrival-rate executors.
	PreAllocatedVUs() int
	// MaxDuration is the longest the executor can run, graceful stop
	// included.
	MaxDuration() time.Duration
	// Describe is a one-line human description for banners and inspect.
	Describe() string
	// Plan is what the executor is set to do, for a live view's progress.
	Plan() Plan
	// Segment returns the configuration of one execution segment's part
	// of this one (see segment.Part): running the parts of every segment
	// of a sequence, one per process, runs this whole configuration. It
	// is called on a valid configuration, and its result is not
	// validated again.
	Segment(p segment.Part) Config
	// NewExecutor returns the executor that runs this configuration. seed
	// drives the random arrival processes (see SeedFor); the others
	// ignore it.
	NewExecutor(seed uint64) Executor
}

// Plan is what an executor is set to do: it starts iterations for
// Duration (its maxDuration for the iteration-based executors, which may
// end sooner), then lets those still running finish within its graceful
// stop. Iterations is how many iterations an iteration-based executor
// runs in all; 0 for the others, whose Duration is the whole plan.
type Plan struct {
	Duration   time.Duration
	Iterations int64
}

// Executor runs a scenario's iterations.
type Executor interface {
	// Run starts iterations on the pool's VUs until the executor's work is
	// done or ctx is canceled, and returns when every iteration has ended.
	// It returns an error only when the pool failed to initialise a VU.
	Run(ctx context.Context, pool Pool) error
}

// Base holds the fields every executor shares.
type Base struct {
	// GracefulStop is how long iterations still running at the end may go
	// on before they are interrupted (default 30 s).
	GracefulStop Duration `json:"gracefulStop"`
}

// DefaultGracefulStop is k6's default.
const DefaultGracefulStop = 30 * time.Second

// graceful returns the graceful stop with its default applied.
func (b Base) graceful() time.Duration {
	if b.GracefulStop.Set {
		return b.GracefulStop.D
	}
	return DefaultGracefulStop
}

func (b Base) validate() error {
	if b.GracefulStop.D < 0 {
		return fmt.Errorf("gracefulStop must not be negative, got %s", b.GracefulStop.D)
	}
	return nil
}

// registry maps executor names to their default configurations; set up once
// at init and read-only afterwards.
var registry = map[string]func() Config{
	"constant-vus":          func() Config { return &ConstantVUs{VUs: 1} },
	"shared-iterations":     func() Config { return &SharedIterations{iterationLimits{VUs: 1, Iterations: 1}} },
	"per-vu-iterations":     func() Config { return &PerVUIterations{iterationLimits{VUs: 1, Iterations: 1}} },
	"ramping-vus":           func() Config { return &RampingVUs{StartVUs: 1} },
	"constant-arrival-rate": func() Config { return &ConstantArrivalRate{} },
	"ramping-arrival-rate":  func() Config { return &RampingArrivalRate{} },
	"trace-replay":          func() Config { return &TraceReplay{} },
}

// New returns the default configuration of the named executor, to decode
// the user's fields into.
func New(name string) (Config, error) {
	mk, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown executor %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return mk(), nil
}

// Names lists the known executors, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// stopContexts returns the two deadlines of a run that lasts d: starting
// stops at d, and iterations still running are interrupted after the
// graceful stop g. Starting stops too once iterations are interrupted,
// however late the timer of d fires on a loaded machine.
func stopContexts(ctx context.Context, d, g time.Duration) (start, iter context.Context, cancel func()) {
	iter, cancelIter := context.WithTimeout(ctx, d+g)
	start, cancelStart := context.WithTimeout(iter, d)
	return start, iter, func() { cancelStart(); cancelIter() }
}

// starting says whether iterations may still start: before the end d of
// stopContexts, and not once the running ones are interrupted (the
// cancellation of iter reaches start a moment after iter).
func starting(start, iter context.Context) bool { return start.Err() == nil && iter.Err() == nil }

// backOff pauses vu, when it is a BackingOff, for its Backoff, or until
// ctx ends (no iteration may start any more).
func backOff(ctx context.Context, vu VU) {
	b, ok := vu.(BackingOff)
	if !ok {
		return
	}
	d := b.Backoff()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// loop runs body once per VU, each in its own goroutine, and waits for all.
func loop(vus []VU, body func(VU)) {
	var wg sync.WaitGroup
	for _, vu := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(vu)
		}()
	}
	wg.Wait()
}
