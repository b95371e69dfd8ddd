package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// ThresholdInterval is how often thresholds are evaluated during a run, to
// stop it early when an abortOnFail threshold fails.
const ThresholdInterval = 2 * time.Second

// loadThresholds parses options.thresholds and checks them against the
// metrics registered by then (the built-in ones and the script's own, from
// its init code) and against the tags whose values are known: the
// scenarios' names (closedTags).
func (e *Engine) loadThresholds() (*threshold.Set, error) {
	set, err := threshold.Parse(e.options.Thresholds)
	if err == nil {
		err = set.Validate(e.registry)
	}
	if err == nil {
		err = set.CheckTags(e.closedTags())
	}
	var te *threshold.Error
	if errors.As(err, &te) {
		return nil, &ConfigError{Field: "options." + te.Field(), Err: te.Err}
	}
	return set, err
}

// closedTags are the tags whose every value is known once the scenarios
// are resolved: scenario, on every metric (the engine tags each sample
// with its scenario's name, or setup or teardown in those functions), and
// error_class on llm_errors and llm_retries (the llm module's classes,
// which it sets over any tag of the script's). Other tags (model, group,
// turn, check, the script's own) take values only the run knows.
func (e *Engine) closedTags() []threshold.ClosedTag {
	names := make([]string, 0, len(e.scenarios)+2)
	for _, sc := range e.scenarios {
		names = append(names, sc.Name)
	}
	for _, fn := range []string{"setup", "teardown"} {
		// An export that cannot be read is taken as there: running
		// it says what is wrong.
		if _, ok, err := e.vu0.inst.Function(fn); ok || err != nil {
			names = append(names, fn)
		}
	}
	scenario := threshold.ClosedTag{Name: "scenario", Values: names, Noun: "scenario"}
	if e.cfg.Overrides.any() && len(e.options.Scenarios) > 0 {
		scenario.Note = fmt.Sprintf("the command line's load flags (--vus, --duration, --iterations, --stage) replaced the script's scenarios (%s) with one named %q: leave them out to run the script's scenarios",
			strings.Join(slices.Sorted(maps.Keys(e.options.Scenarios)), ", "), scenarioName)
	}
	classes := make([]string, len(llm.ErrorClasses))
	for i, c := range llm.ErrorClasses {
		classes[i] = string(c)
	}
	errorClass := threshold.ClosedTag{Name: "error_class", Metrics: []string{e.llm.Errors.Name, e.llm.Retries.Name}, Values: classes}
	return []threshold.ClosedTag{scenario, errorClass}
}

// thresholdEnd is what the final evaluation of the thresholds knows of
// the run's end: its scenarios, those that never started, and why (a
// stopped chain skipped them, or this execution segment has no VU of
// them).
func (e *Engine) thresholdEnd(stops []ChainStop) threshold.End {
	names := make([]string, len(e.scenarios))
	notRun := make(map[string]string)
	for i, sc := range e.scenarios {
		names[i] = sc.Name
		if !e.cfg.Overrides.Segment.Whole() && sc.Config.MaxVUs() == 0 {
			notRun[sc.Name] = "this execution segment has no VU of it"
		}
	}
	for _, c := range stops {
		for _, name := range c.Skipped {
			notRun[name] = "its chain stopped after " + c.After
		}
	}
	return threshold.End{Scenarios: names, NotRun: notRun}
}

// watchThresholds evaluates the thresholds every ThresholdInterval while
// ctx lasts. When an abortOnFail threshold fails it calls stop and sends
// that result on the returned channel, which is closed when the watch ends
// (read it once the run is over).
func (e *Engine) watchThresholds(ctx context.Context, start time.Time, stop func()) <-chan threshold.Result {
	aborted := make(chan threshold.Result, 1)
	if !e.thresholds.HasAbortOnFail() {
		close(aborted)
		return aborted
	}
	go func() {
		defer close(aborted)
		t := time.NewTicker(ThresholdInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				results := e.thresholds.Evaluate(e.thresholdSnapshot(), time.Since(start))
				if r, ok := threshold.ShouldAbort(results); ok {
					aborted <- r
					stop()
					return
				}
			}
		}
	}()
	return aborted
}

// ThresholdsSoFar is each threshold's reading now, while the run goes:
// its observed value and verdict so far, by the evaluation that watches
// abortOnFail thresholds (threshold.Set.Evaluate) over the run's metrics
// until now. Nil before the scenarios start and for a script without
// thresholds. Safe to call while Run runs; each call takes a snapshot of
// the metrics, so a caller calls it at most once a period.
func (e *Engine) ThresholdsSoFar() []threshold.Result {
	start := e.startNanos.Load()
	if start == 0 || e.thresholds.Len() == 0 {
		return nil
	}
	return e.thresholds.Evaluate(e.thresholdSnapshot(), time.Since(time.Unix(0, start)))
}

// thresholdSnapshot is a snapshot of the metrics the thresholds read, for
// their evaluation while the run goes: the run's other series (every
// trend's histogram) are not cloned each time.
func (e *Engine) thresholdSnapshot() *metrics.Snapshot {
	read := map[string]bool{}
	for _, t := range e.thresholds.Thresholds() {
		read[t.Metric] = true
	}
	return e.agg.SnapshotOf(func(m *metrics.Metric) bool { return read[m.Name] })
}
