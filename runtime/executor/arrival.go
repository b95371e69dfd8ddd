package executor

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// arrivalFields are the fields the arrival-rate executors share.
type arrivalFields struct {
	Base
	// TimeUnit is the period rates are given per (default 1s).
	TimeUnit Duration `json:"timeUnit"`
	// PreAllocated is "preAllocatedVUs" (required): VUs initialised before
	// the test.
	PreAllocated *int `json:"preAllocatedVUs"`
	// MaxAllowedVUs is "maxVUs": more VUs are initialised during the test,
	// up to this many, when none is free at a planned start (default
	// preAllocatedVUs, or maxConcurrency when that is larger).
	MaxAllowedVUs *int `json:"maxVUs"`
	// Arrival is the arrival process: "constant" (default), "poisson" or
	// "gamma".
	Arrival string `json:"arrival"`
	// Burstiness is the shape of gamma gaps (required with "gamma"): 1 is
	// Poisson, lower is burstier, higher more regular.
	Burstiness *float64 `json:"burstiness"`
	// MaxConcurrency caps the iterations in flight: when it is reached,
	// the next arrival waits for one to end (and its lag grows) instead of
	// being dropped.
	MaxConcurrency *int `json:"maxConcurrency"`
	// part is the execution segment whose arrivals the scenario starts.
	part segment.Part
}

// DefaultTimeUnit is k6's default timeUnit.
const DefaultTimeUnit = time.Second

func (f *arrivalFields) unit() time.Duration {
	if f.TimeUnit.Set {
		return f.TimeUnit.D
	}
	return DefaultTimeUnit
}

func (f *arrivalFields) process() string {
	if f.Arrival == "" {
		return ArrivalConstant
	}
	return f.Arrival
}

func (f *arrivalFields) burstiness() float64 {
	if f.Burstiness == nil {
		return 1
	}
	return *f.Burstiness
}

// MaxVUs implements Config.
func (f *arrivalFields) MaxVUs() int {
	if f.MaxAllowedVUs != nil {
		return *f.MaxAllowedVUs
	}
	n := f.PreAllocatedVUs()
	if f.MaxConcurrency != nil {
		n = max(n, *f.MaxConcurrency)
	}
	return n
}

// ConcurrencyCapped is a Config that may cap its iterations in flight:
// the arrival-rate executors, with maxConcurrency.
type ConcurrencyCapped interface {
	// ConcurrencyCap is maxConcurrency, 0 when the scenario sets none.
	ConcurrencyCap() int
}

// ConcurrencyCap implements ConcurrencyCapped.
func (f *arrivalFields) ConcurrencyCap() int {
	if f.MaxConcurrency == nil {
		return 0
	}
	return *f.MaxConcurrency
}

// PreAllocatedVUs implements Config.
func (f *arrivalFields) PreAllocatedVUs() int {
	if f.PreAllocated == nil {
		return 0
	}
	return *f.PreAllocated
}

func (f *arrivalFields) validate() error {
	if f.TimeUnit.Set && f.TimeUnit.D <= 0 {
		return fmt.Errorf("timeUnit must be positive, got %s", f.TimeUnit.D)
	}
	if f.PreAllocated == nil {
		return fmt.Errorf("preAllocatedVUs is required: the VUs initialised before the test (about rate × iteration time)")
	}
	if *f.PreAllocated < 0 {
		return fmt.Errorf("preAllocatedVUs must not be negative, got %d", *f.PreAllocated)
	}
	if err := checkVUs("preAllocatedVUs", *f.PreAllocated); err != nil {
		return err
	}
	if f.MaxAllowedVUs != nil {
		if err := checkVUs("maxVUs", *f.MaxAllowedVUs); err != nil {
			return err
		}
	}
	if f.MaxConcurrency != nil {
		if err := checkVUs("maxConcurrency", *f.MaxConcurrency); err != nil {
			return err
		}
	}
	if f.MaxAllowedVUs != nil && *f.MaxAllowedVUs < *f.PreAllocated {
		return fmt.Errorf("maxVUs (%d) must not be less than preAllocatedVUs (%d)", *f.MaxAllowedVUs, *f.PreAllocated)
	}
	if f.MaxConcurrency != nil {
		if *f.MaxConcurrency < 1 {
			return fmt.Errorf("maxConcurrency must be at least 1, got %d", *f.MaxConcurrency)
		}
		if *f.MaxConcurrency > f.MaxVUs() {
			return fmt.Errorf("maxConcurrency (%d) is more than maxVUs (%d): a VU runs one iteration at a time; raise maxVUs or lower maxConcurrency",
				*f.MaxConcurrency, f.MaxVUs())
		}
	}
	if f.MaxVUs() < 1 {
		return fmt.Errorf("maxVUs must be at least 1 (set preAllocatedVUs or maxVUs)")
	}
	switch f.process() {
	case ArrivalConstant, ArrivalPoisson:
		if f.Burstiness != nil {
			return fmt.Errorf("burstiness applies only to arrival '%s', not '%s'", ArrivalGamma, f.process())
		}
	case ArrivalGamma:
		if f.Burstiness == nil {
			return fmt.Errorf("burstiness is required with arrival '%s' (1 = Poisson, lower = burstier)", ArrivalGamma)
		}
		if b := *f.Burstiness; !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("burstiness must be a positive number, got %v", b)
		}
	default:
		return fmt.Errorf("arrival must be '%s', '%s' or '%s', got %q", ArrivalConstant, ArrivalPoisson, ArrivalGamma, f.Arrival)
	}
	return f.Base.validate()
}

// describe is the part of Describe the arrival-rate executors share.
func (f *arrivalFields) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s arrivals", f.process())
	if f.process() == ArrivalGamma {
		fmt.Fprintf(&b, " (burstiness %s)", num(f.burstiness()))
	}
	if f.MaxConcurrency != nil {
		fmt.Fprintf(&b, ", at most %d in flight", *f.MaxConcurrency)
	}
	fmt.Fprintf(&b, " (preAllocatedVUs %d, maxVUs %d, gracefulStop %s)", f.PreAllocatedVUs(), f.MaxVUs(), f.graceful())
	return b.String()
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ConstantArrivalRate starts Rate iterations per TimeUnit for Duration,
// whatever the iterations' own duration (an open model).
type ConstantArrivalRate struct {
	arrivalFields
	Rate     float64  `json:"rate"`
	Duration Duration `json:"duration"`
	// Iterations, when set, is how many iterations the scenario starts
	// in all (vLLM's --num-prompts): once they have started, or been
	// dropped, no other starts, and the scenario ends when they have
	// ended, before its duration, which then bounds only when they may
	// start.
	Iterations *int `json:"iterations"`
	// Normalize, with Iterations, rescales the drawn gaps as vLLM's bench
	// does: the gaps keep their relative sizes, and the last of the
	// Iterations arrivals falls at exactly Iterations / rate (in
	// timeUnits), the first one gap after the start.
	Normalize bool `json:"normalize"`
}

// Validate implements Config.
func (c *ConstantArrivalRate) Validate() error {
	if !(c.Rate > 0) || math.IsInf(c.Rate, 0) {
		return fmt.Errorf("rate is required and must be positive (iterations per timeUnit), got %v", c.Rate)
	}
	if !c.Duration.Set || c.Duration.D <= 0 {
		return fmt.Errorf("duration is required and must be positive (e.g. \"30s\")")
	}
	if c.Iterations != nil && *c.Iterations < 1 {
		return fmt.Errorf("iterations must be at least 1, got %d", *c.Iterations)
	}
	if c.Normalize && c.Iterations == nil {
		return fmt.Errorf("normalize needs iterations: it rescales the gaps so that the last of them starts at iterations / rate")
	}
	if c.Normalize && float64(*c.Iterations)/c.Rate*float64(c.unit()) > float64(DurationLimit) {
		return fmt.Errorf("normalize: the last of %d iterations at %s %s would start at iterations / rate, after llmrun's limit of %s (365 days) for a duration %s",
			*c.Iterations, num(c.Rate), textfmt.Per(c.unit()), DurationLimit, limitsDoc)
	}
	if err := c.arrivalFields.validate(); err != nil {
		return err
	}
	return checkRate("rate", c.Rate, c.unit())
}

// MaxDuration implements Config.
func (c *ConstantArrivalRate) MaxDuration() time.Duration { return c.Duration.D + c.graceful() }

// Plan implements Config.
func (c *ConstantArrivalRate) Plan() Plan {
	p := Plan{Duration: c.Duration.D}
	if c.Iterations != nil {
		p.Iterations = c.part.Scale(int64(*c.Iterations))
	}
	return p
}

// Describe implements Config.
func (c *ConstantArrivalRate) Describe() string {
	if c.Iterations != nil {
		within := fmt.Sprintf("started within %s", c.Duration.D)
		if c.Normalize {
			within = fmt.Sprintf("the last at %s", c.lastStart())
		}
		return fmt.Sprintf("%s at %s %s, %s, %s", textfmt.Count(c.part.Scale(int64(*c.Iterations)), "iteration"), num(c.Rate), textfmt.Per(c.unit()), within, c.describe())
	}
	return fmt.Sprintf("%s %s for %s, %s", textfmt.Count(c.Rate, "iteration"), textfmt.Per(c.unit()), c.Duration.D, c.describe())
}

// Schedule returns the planned starts, for the given scenario seed.
func (c *ConstantArrivalRate) Schedule(seed uint64) *Schedule {
	s, _ := c.schedule(context.Background(), seed) // fails only with ctx
	return s
}

// schedule is Schedule, stopped with ctx's error once ctx is done while
// a normalized schedule draws its gaps up front.
func (c *ConstantArrivalRate) schedule(ctx context.Context, seed uint64) (*Schedule, error) {
	cv := newCurve(c.Rate, []Stage{NewStage(c.Duration.D, c.Rate)}, c.unit())
	var s *Schedule
	if c.Normalize {
		var err error
		if s, err = newNormalizedSchedule(ctx, c.process(), c.burstiness(), seed, cv, *c.Iterations); err != nil {
			return nil, err
		}
	} else {
		s = newSchedule(c.process(), c.burstiness(), seed, cv, true, false)
	}
	s.part = c.part
	return s, nil
}

// lastStart is when the last iteration starts with Normalize:
// Iterations / rate timeUnits after the start.
func (c *ConstantArrivalRate) lastStart() time.Duration {
	return time.Duration(math.Round(float64(*c.Iterations) / c.Rate * float64(c.unit())))
}

// NewExecutor implements Config.
func (c *ConstantArrivalRate) NewExecutor(seed uint64) Executor {
	limit := int64(-1)
	if c.Iterations != nil {
		limit = c.part.Scale(int64(*c.Iterations))
	}
	return arrivalRate{f: &c.arrivalFields, end: c.Duration.D, limit: limit, schedule: func(ctx context.Context) (arrivals, error) { return c.schedule(ctx, seed) }}
}

// RampingArrivalRate starts iterations at a rate that moves linearly from
// StartRate to each stage's target (iterations per TimeUnit) over the
// stage's duration.
type RampingArrivalRate struct {
	arrivalFields
	StartRate float64 `json:"startRate"`
	Stages    []Stage `json:"stages"`
}

// Validate implements Config.
func (c *RampingArrivalRate) Validate() error {
	if c.StartRate < 0 || math.IsNaN(c.StartRate) || math.IsInf(c.StartRate, 0) {
		return fmt.Errorf("startRate must be a non-negative number, got %v", c.StartRate)
	}
	if err := validateStages(c.Stages, false); err != nil {
		return err
	}
	if newCurve(c.StartRate, c.Stages, c.unit()).total <= 0 {
		return fmt.Errorf("startRate or a stage's target must be positive: the stages never start an iteration")
	}
	if err := c.arrivalFields.validate(); err != nil {
		return err
	}
	if err := checkRate("startRate", c.StartRate, c.unit()); err != nil {
		return err
	}
	for i, st := range c.Stages {
		if err := checkRate(fmt.Sprintf("stages[%d].target", i), st.target(), c.unit()); err != nil {
			return err
		}
	}
	return nil
}

// MaxDuration implements Config.
func (c *RampingArrivalRate) MaxDuration() time.Duration {
	return stagesDuration(c.Stages) + c.graceful()
}

// Plan implements Config.
func (c *RampingArrivalRate) Plan() Plan { return Plan{Duration: stagesDuration(c.Stages)} }

// Describe implements Config.
func (c *RampingArrivalRate) Describe() string {
	top := c.StartRate
	for _, st := range c.Stages {
		top = max(top, st.target())
	}
	return fmt.Sprintf("from %s up to %s %s over %s for %s, %s",
		num(c.StartRate), textfmt.Count(top, "iteration"), textfmt.Per(c.unit()), textfmt.Count(len(c.Stages), "stage"), stagesDuration(c.Stages), c.describe())
}

// Schedule returns the planned starts, for the given scenario seed.
func (c *RampingArrivalRate) Schedule(seed uint64) *Schedule {
	s := newSchedule(c.process(), c.burstiness(), seed, newCurve(c.StartRate, c.Stages, c.unit()), false, true)
	s.part = c.part
	return s
}

// NewExecutor implements Config.
func (c *RampingArrivalRate) NewExecutor(seed uint64) Executor {
	return arrivalRate{f: &c.arrivalFields, end: stagesDuration(c.Stages), limit: -1, schedule: func(context.Context) (arrivals, error) { return c.Schedule(seed), nil }}
}

// lateStart is how late after the scenario's end an iteration planned
// before it may still start: the precision of the scheduling loop's
// sleep. Later than that, it is dropped.
const lateStart = coarseMargin

// arrivalRate runs either arrival-rate executor: one loop sleeps until
// each planned start (an absolute time: scenario start + offset) and hands
// the iteration to a free VU. No iteration starts after the scenario's
// end: those the loop could not start by then are dropped, counted
// without drawing them one by one.
type arrivalRate struct {
	f   *arrivalFields
	end time.Duration
	// limit is how many iterations start or are dropped in all, -1 for
	// no limit (ConstantArrivalRate.Iterations).
	limit int64
	// schedule makes the planned starts; it fails once ctx is done, or
	// when a trace cannot be read.
	schedule func(ctx context.Context) (arrivals, error)
}

// arrivals are the planned starts an arrival-rate executor walks: a
// Schedule's, or a trace's (traceArrivals).
type arrivals interface {
	// Next returns the next planned start, as an offset from the
	// scenario's start, or false when there is none left.
	Next() (time.Duration, bool)
	// Drain ends the arrivals and returns how many Next had still to
	// return.
	Drain() int
	// SkipTo skips the planned starts at or before offset and returns how
	// many it skipped.
	SkipTo(offset time.Duration) int
	// iteration is the context the iteration of the start Next returned
	// last runs under, given the scenario's iter: a trace's carries the
	// record (TraceRecord).
	iteration(iter context.Context) context.Context
	// close releases what the arrivals hold, and returns the error that
	// ended them early, if any.
	close() error
}

// plannedStart is an iteration handed to a worker: when it was planned,
// and the context it runs under.
type plannedStart struct {
	at  time.Time
	ctx context.Context
}

// arrivalRun is the state of one run of an arrival-rate executor.
type arrivalRun struct {
	pool     Pool
	iterCtx  context.Context
	deadline time.Time      // the scenario's end: no iteration starts after it
	alarm    *alarm         // wakes the scheduling loop at each planned start
	idle     chan *worker   // free VUs, least recently used first
	slots    chan struct{}  // one per iteration in flight; nil without maxConcurrency
	wg       sync.WaitGroup // iterations started and not ended
	done     chan struct{}  // closed once no iteration is left: workers end
	workers  sync.WaitGroup

	// owned by the scheduling loop
	left   int64 // iterations still to start or drop; -1 without a limit
	vus    int   // VUs initialised or being initialised
	maxVUs int
	warned bool

	errOnce sync.Once
	err     error
	failed  chan struct{} // closed at the first error of the pool
}

func (e arrivalRate) Run(ctx context.Context, pool Pool) error {
	startCtx, iterCtx, cancel := stopContexts(ctx, e.end, e.f.graceful())
	defer cancel()
	pre := pool.VUs()
	start := time.Now()
	r := &arrivalRun{
		pool:     pool,
		iterCtx:  iterCtx,
		deadline: start.Add(e.end),
		alarm:    newAlarm(),
		idle:     make(chan *worker, e.f.MaxVUs()),
		left:     e.limit,
		vus:      len(pre),
		maxVUs:   e.f.MaxVUs(),
		failed:   make(chan struct{}),
		done:     make(chan struct{}),
	}
	for _, vu := range pre {
		r.idle <- &worker{vu: vu}
	}
	if e.f.MaxConcurrency != nil {
		r.slots = make(chan struct{}, *e.f.MaxConcurrency)
	}
	defer r.alarm.Close()
	// A signal while the schedule is made ends the scenario at once,
	// as one during it does.
	s, err := e.schedule(ctx)
	if err == nil {
		walk(ctx, startCtx, start, r, s)
		if err := s.close(); err != nil {
			r.fail(err)
		}
	} else if ctx.Err() == nil {
		r.fail(err)
	}
	r.wg.Wait()
	close(r.done)
	r.workers.Wait()
	return r.err
}

// walk walks the arrivals s: it waits for each planned start and starts
// the iteration, or drops it and those planned while every VU stays busy.
// It returns when the arrivals or the scenario end, ctx is canceled or
// the pool failed.
func walk(ctx, startCtx context.Context, start time.Time, r *arrivalRun, s arrivals) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for r.left != 0 {
		off, ok := s.Next()
		if !ok {
			// No arrival is left before the end: the iterations still
			// to start had no planned start within the duration, and
			// are counted, not forgotten; the scenario then ends with
			// those started, as it does once all have started. Without
			// iterations, it still lasts its duration, over which its
			// throughput is measured.
			if r.left > 0 {
				r.drop(int(min(r.left, math.MaxInt)), DropUnscheduled)
				return
			}
			select {
			case <-startCtx.Done():
			case <-r.failed:
			}
			return
		}
		planned := start.Add(off)
		if !r.waitFor(ctx, timer, planned) {
			return
		}
		ok, waited := r.acquireSlot(startCtx)
		if !ok {
			if ctx.Err() == nil && !r.failedYet() {
				r.drop(1+s.Drain(), DropCapped)
			}
			return
		}
		if r.tooLate(planned) {
			// Behind: the scenario ended before this start was reached,
			// while it waited for the cap or the loop ran late.
			cause := DropEnded
			if waited {
				cause = DropCapped
			}
			r.release()
			r.drop(1+s.Drain(), cause)
			return
		}
		if r.start(plannedStart{at: planned, ctx: s.iteration(r.iterCtx)}) {
			r.count(1)
			continue
		}
		r.drop(1, DropBusy)
		if r.left == 0 {
			return
		}
		if !r.awaitVU(ctx, timer) {
			if ctx.Err() == nil && !r.failedYet() {
				r.drop(s.Drain(), DropBusy)
			}
			return
		}
		r.drop(s.SkipTo(time.Since(start)), DropBusy)
	}
}

// drop counts n planned iterations as dropped for cause, no more than
// the limit leaves.
func (r *arrivalRun) drop(n int, cause DropCause) {
	if r.left >= 0 {
		n = int(min(int64(n), r.left))
	}
	r.pool.DroppedIterations(n, cause)
	r.count(n)
}

// count takes n iterations started or dropped off the limit.
func (r *arrivalRun) count(n int) {
	if r.left > 0 {
		r.left = max(0, r.left-int64(n))
	}
}

// tooLate says that the iteration planned at planned may no longer
// start: the scenario has ended, and it is not on time (within lateStart,
// as a start planned at the very end is).
func (r *arrivalRun) tooLate(planned time.Time) bool {
	now := time.Now()
	return !now.Before(r.deadline) && now.Sub(planned) > lateStart
}

// waitFor sleeps until planned; false when ctx ended or the pool failed
// first.
func (r *arrivalRun) waitFor(ctx context.Context, timer *time.Timer, planned time.Time) bool {
	if d := time.Until(planned); d > coarseMargin {
		timer.Reset(d - coarseMargin)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false
		case <-r.failed:
			return false
		}
	}
	r.alarm.sleepUntil(planned)
	return ctx.Err() == nil && !r.failedYet()
}

// acquireSlot takes a concurrency slot, when maxConcurrency is set: at
// maxConcurrency the arrival waits, late, for an iteration to end, until
// the scenario's end. ok is false when it did not get one; waited says
// that it found the cap reached.
func (r *arrivalRun) acquireSlot(startCtx context.Context) (ok, waited bool) {
	if r.slots == nil {
		return true, false
	}
	select {
	case r.slots <- struct{}{}:
		return true, false
	default:
	}
	select {
	case r.slots <- struct{}{}:
		return true, true
	case <-startCtx.Done():
	case <-r.failed:
	}
	return false, true
}

// awaitVU waits, after a drop, until a VU is free again; false when the
// scenario ended, ctx was canceled or the pool failed first.
func (r *arrivalRun) awaitVU(ctx context.Context, timer *time.Timer) bool {
	timer.Reset(time.Until(r.deadline))
	select {
	case w := <-r.idle:
		r.idle <- w
		return true
	case <-timer.C:
	case <-ctx.Done():
	case <-r.failed:
	}
	return false
}

// start runs an iteration planned at planned on a free VU, or on a new one
// initialised in the background while fewer than maxVUs exist. When every
// VU is busy it gives the concurrency slot back, warns once and returns
// false: the iteration is dropped.
func (r *arrivalRun) start(planned plannedStart) bool {
	select {
	case w := <-r.idle:
		r.wg.Add(1)
		r.dispatch(w, planned)
		return true
	default:
	}
	if r.vus < r.maxVUs {
		r.vus++
		r.wg.Add(1)
		go r.initAndIterate(planned)
		return true
	}
	r.release()
	if !r.warned {
		r.warned = true
		r.pool.Warn(fmt.Sprintf("all %s (maxVUs) busy at a planned start: iterations are being dropped and counted in dropped_iterations; raise preAllocatedVUs or maxVUs (or the server is too slow for this rate)", textfmt.Count(r.maxVUs, "VU")))
	}
	return false
}

// initAndIterate initialises a VU, then runs the iteration planned at
// planned on it, unless the scenario ended meanwhile: then the iteration
// is dropped and the VU kept for none.
func (r *arrivalRun) initAndIterate(planned plannedStart) {
	vu, err := r.pool.NewVU(r.iterCtx)
	if err != nil {
		if r.iterCtx.Err() == nil {
			r.fail(err)
		}
		r.release()
		r.wg.Done()
		return
	}
	w := &worker{vu: vu}
	if r.tooLate(planned.at) {
		r.pool.DroppedIterations(1, DropLateVU)
		r.idle <- w
		r.release()
		r.wg.Done()
		return
	}
	r.adopt(w)
	r.work(w, planned)
}

// worker runs the iterations handed to one VU, on one goroutine for as
// long as the scenario runs: a goroutine per iteration starts on a small
// stack and grows it, copying it, as deep as goja and net/http go, on every
// iteration (9 % of the CPU at 2,000 arrivals/s). Its goroutine starts with
// its first iteration.
type worker struct {
	vu    VU
	start chan plannedStart // planned starts, one at a time; nil before the first
}

// dispatch hands the iteration planned at planned to w's goroutine,
// starting it the first time. Either way the goroutine is made runnable
// next, as a new goroutine would be.
func (r *arrivalRun) dispatch(w *worker, planned plannedStart) {
	if w.start == nil {
		r.adopt(w)
		go r.work(w, planned)
		return
	}
	w.start <- planned
}

// adopt makes w a worker of the run, whose goroutine is about to start.
func (r *arrivalRun) adopt(w *worker) {
	w.start = make(chan plannedStart, 1)
	r.workers.Add(1)
}

// work runs the iteration planned at first on w's VU, then each one
// dispatched to it, until no iteration is left in the run.
func (r *arrivalRun) work(w *worker, first plannedStart) {
	defer r.workers.Done()
	r.iterate(w, first)
	for {
		select {
		case planned := <-w.start:
			r.iterate(w, planned)
		case <-r.done:
			return
		}
	}
}

// iterate runs one iteration on w's VU and gives the VU, then the
// concurrency slot, back.
func (r *arrivalRun) iterate(w *worker, planned plannedStart) {
	defer r.wg.Done()
	r.pool.IterationLag(w.vu, time.Since(planned.at))
	w.vu.RunIteration(planned.ctx)
	r.idle <- w
	r.release()
}

func (r *arrivalRun) release() {
	if r.slots != nil {
		<-r.slots
	}
}

func (r *arrivalRun) fail(err error) {
	r.errOnce.Do(func() {
		r.err = err
		close(r.failed)
	})
}

func (r *arrivalRun) failedYet() bool {
	select {
	case <-r.failed:
		return true
	default:
		return false
	}
}
