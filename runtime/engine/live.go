package engine

import (
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/runtime/executor"
)

// Phase is where a scenario stands in a run, for a live view.
type Phase string

// The phases of a scenario, in the order it goes through them. A scenario
// without warmup skips PhaseWarmup; one stopped early goes from any phase
// to PhaseDone.
const (
	// PhaseWaiting: it has not started yet (its startTime is ahead).
	PhaseWaiting Phase = "waiting"
	// PhaseWarmup: it runs its warmup, which no figure counts.
	PhaseWarmup Phase = "warmup"
	// PhaseRunning: it starts measured iterations.
	PhaseRunning Phase = "running"
	// PhaseGracefulStop: its planned duration is over and it waits for
	// the iterations still running, up to its gracefulStop.
	PhaseGracefulStop Phase = "graceful stop"
	// PhaseDone: its executor returned.
	PhaseDone Phase = "done"
	// PhaseNotRun: it never started: the chain it waited in was stopped
	// (options.capacity.stop), or the run ended first.
	PhaseNotRun Phase = "not run"
)

// ScenarioProgress is one scenario's part of Progress.
type ScenarioProgress struct {
	Name  string
	Phase Phase
	// Elapsed is how long the scenario has run: 0 while it waits, its
	// whole run once done.
	Elapsed time.Duration
	// StartTime and StartAfter are its startTime and startAfter
	// options.
	StartTime  time.Duration
	StartAfter string
	// Duration and Iterations are its executor's plan (executor.Plan):
	// how long it starts iterations, and for the iteration-based
	// executors how many they run in all (0 for the others).
	Duration   time.Duration
	Iterations int64
	// Measured is how long its measured part has run: Elapsed without
	// its warmup (0 during the warmup), what its figures are over.
	Measured time.Duration
	// IterationsEnded counts its iterations that ended, warmup and
	// interrupted ones included.
	IterationsEnded int64
	// ActiveVUs are the VUs running one of its iterations; PeakVUs the
	// most that ran one at once so far (the VUs it used); MaxVUs the most
	// it may use.
	ActiveVUs int64
	PeakVUs   int64
	MaxVUs    int
	// Dropped counts its iterations planned but not started (warmup left
	// out), by cause (executor.DropCause): arrival-rate ones, and an
	// iteration-based scenario's that its maxDuration cut.
	Dropped [executor.DropCauses]int64
	// Lagged counts its measured iterations an arrival-rate executor
	// started (those that record iteration_lag), and LagTotal sums how
	// late they started against their plan: the mean lag between two
	// readings is the growth of LagTotal over that of Lagged.
	Lagged   int64
	LagTotal time.Duration
	// Interrupted says that the run was stopped (a signal, the early
	// stop, an abort) before the scenario ended on its own: once done,
	// Fraction is then where it stopped.
	Interrupted bool
}

// Fraction is how much of the scenario's plan is done, from 0 to 1 (0 if
// it did not run): the
// iterations ended out of those planned for an iteration-based executor
// (or the time out of its maxDuration, when that is further), the time
// out of its duration for the others. Once done it is 1, less the share
// of planned iterations it did not start (NotStarted); unless the run
// was interrupted first: then it is where the scenario stopped.
func (s ScenarioProgress) Fraction() float64 {
	if s.Phase == PhaseDone && !s.Interrupted {
		if s.Iterations > 0 {
			return 1 - min(float64(s.NotStarted())/float64(s.Iterations), 1)
		}
		return 1
	}
	f := 0.0
	if s.Duration > 0 {
		f = float64(s.Elapsed) / float64(s.Duration)
	}
	if s.Iterations > 0 {
		f = max(f, float64(s.IterationsEnded)/float64(s.Iterations))
	}
	return min(f, 1)
}

// NotStarted counts the scenario's planned iterations it did not start,
// whatever the cause (Dropped).
func (s ScenarioProgress) NotStarted() int64 {
	var n int64
	for _, d := range s.Dropped {
		n += d
	}
	return n
}

// StoppedEarly says that the run's stop ended the scenario before its
// plan was done: Fraction is where it stopped.
func (s ScenarioProgress) StoppedEarly() bool {
	return s.Phase == PhaseDone && s.Interrupted && s.Fraction() < 1
}

// Remaining estimates how long the scenario has left before its planned
// end (its graceful stop not included): the rest of its duration, or for
// an iteration-based executor the time its remaining iterations take at
// the pace so far when that ends sooner. ok is false while it waits, once
// done or past its planned end, and for an iteration-based executor with
// no iteration ended yet.
func (s ScenarioProgress) Remaining() (left time.Duration, ok bool) {
	if s.Phase == PhaseWaiting || s.Phase == PhaseDone || s.Phase == PhaseNotRun || s.Elapsed >= s.Duration {
		return 0, false
	}
	left = s.Duration - s.Elapsed
	if s.Iterations > 0 {
		if s.IterationsEnded == 0 {
			return 0, false
		}
		rest := s.Iterations - s.IterationsEnded
		left = min(left, time.Duration(float64(s.Elapsed)*float64(rest)/float64(s.IterationsEnded)))
	}
	return left, true
}

// scenarioLive counts what a live view reads of one running scenario. The
// VUs bound to the scenario update it at the start and end of every
// iteration (two atomic additions); Progress reads it.
type scenarioLive struct {
	// warmup is the scenario's warmup gate, which its VUs claim
	// iterations of.
	warmup *warmupGate
	// start and end are the UnixNano of the executor's start and of its
	// return; 0 before.
	start, end atomic.Int64
	active     atomic.Int64
	peak       atomic.Int64
	iterations atomic.Int64
	// dropped counts its planned iterations not started, warmup left
	// out, by cause.
	dropped [executor.DropCauses]atomic.Int64
	// lags counts the measured iterations with a lag, lagNanos sums their
	// lags.
	lags, lagNanos atomic.Int64
	// notRun says that the scenario ended without starting; interrupted
	// that the run was stopped before its executor returned on its own.
	notRun      atomic.Bool
	interrupted atomic.Bool
}

// begin counts an iteration that starts, and the most running at once.
func (l *scenarioLive) begin() {
	n := l.active.Add(1)
	for peak := l.peak.Load(); n > peak && !l.peak.CompareAndSwap(peak, n); peak = l.peak.Load() {
	}
}

// lagged counts a measured iteration that started lag late.
func (l *scenarioLive) lagged(lag time.Duration) {
	l.lagNanos.Add(int64(lag))
	l.lags.Add(1)
}

// progress reads l as the progress of scenario sc at now.
func (l *scenarioLive) progress(sc *Scenario, now time.Time) ScenarioProgress {
	plan := sc.Config.Plan()
	p := ScenarioProgress{
		Name: sc.Name, Duration: plan.Duration, StartTime: sc.StartTime, StartAfter: sc.StartAfter, Iterations: plan.Iterations,
		IterationsEnded: l.iterations.Load(), ActiveVUs: l.active.Load(), PeakVUs: l.peak.Load(), MaxVUs: sc.Config.MaxVUs(),
		Interrupted: l.interrupted.Load(), LagTotal: time.Duration(l.lagNanos.Load()), Lagged: l.lags.Load(),
	}
	for i := range l.dropped {
		p.Dropped[i] = l.dropped[i].Load()
	}
	start, end := l.start.Load(), l.end.Load()
	switch {
	case start == 0 && l.notRun.Load():
		p.Phase = PhaseNotRun
		return p
	case start == 0:
		p.Phase = PhaseWaiting
		return p
	case end != 0:
		endTime := time.Unix(0, end)
		p.Phase, p.Elapsed = PhaseDone, time.Duration(end-start)
		p.Measured = endTime.Sub(l.warmup.measuredStart(endTime))
		return p
	}
	p.Elapsed = now.Sub(time.Unix(0, start))
	warming := l.warmup.warming(now)
	if !warming {
		p.Measured = now.Sub(l.warmup.measuredStart(now))
	}
	switch {
	case warming:
		p.Phase = PhaseWarmup
	case p.Elapsed >= p.Duration:
		p.Phase = PhaseGracefulStop
	default:
		p.Phase = PhaseRunning
	}
	return p
}
