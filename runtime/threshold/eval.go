package threshold

import (
	"fmt"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Result is the outcome of one threshold at one evaluation.
type Result struct {
	Threshold *Threshold
	// Key and Source are the threshold's key and expression as written.
	Key    string
	Source string
	// Value is the observed value of the aggregation (0 when not
	// Evaluated).
	Value float64
	// Passed is the verdict. Without samples it follows the threshold's
	// noSamples, else its metric type's rule (see EvaluateEnd); one whose
	// aggregation does not apply to its metric fails.
	Passed bool
	// Unit is the unit of Value (ValueUnit); "" when not known.
	Unit string
	// Evaluated is false when there was nothing to compare: no samples on
	// a gauge or a trend (during the run, on a rate too), a threshold
	// skipped or given its verdict by noSamples, no elapsed time for a
	// counter's rate, or an aggregation that does not apply (only without
	// Validate). Note says which.
	Evaluated bool
	// NoSamples is true when the metric or sub-metric had no samples. A
	// counter is still evaluated (its count is 0), and at the end a rate
	// (0); other types are not.
	NoSamples bool
	// Skipped is true when the threshold was not judged because the
	// scenarios it selects never started (End.NotRun); it passes.
	Skipped bool
	// Note explains a result without samples or not evaluated: "no
	// samples", "skipped: ...".
	Note string
	// AbortOnFail is the threshold's setting; Abort is true when the run
	// should stop now: during the run (Evaluate), AbortOnFail, evaluated
	// and failed, and the elapsed time at least DelayAbortEval.
	AbortOnFail bool
	Abort       bool
}

// String is one line for logs and abort messages:
// `llm_ttft{scenario:chat} p(95)<500: failed, observed 612.3`.
func (r Result) String() string {
	verdict := "passed"
	if !r.Passed {
		verdict = "failed"
	}
	if !r.Evaluated {
		return fmt.Sprintf("%s %s: %s (%s)", r.Key, r.Source, verdict, r.Note)
	}
	return fmt.Sprintf("%s %s: %s, observed %s", r.Key, r.Source, verdict, formatNumber(r.Value))
}

// Evaluate checks every threshold against a snapshot of the run's metrics
// while the run goes on, elapsed being the run time the snapshot covers
// (the divisor of a counter's rate and the clock of delayAbortEval).
// Results come in the order of Thresholds. The engine calls it every few
// seconds during the run and stops when ShouldAbort says so. A metric
// without samples yet fails nothing: a counter is judged at 0, as at the
// end, and any other type is not judged (noted "no samples yet"), so that
// no threshold aborts a run for want of samples that may still come. A
// nil snapshot has no samples.
//
// Values: counter count is the sum of the values added and rate that sum per
// second of elapsed; gauge value is the last value; rate rate is the
// fraction of non-zero values; trend avg, min, max, med and p(N) come from
// the metric's Stats (percentiles from its HDR histogram, within 0.1 %).
// A sub-metric merges every series whose tags include the filter.
func (s *Set) Evaluate(snap *metrics.Snapshot, elapsed time.Duration) []Result {
	return s.evaluate(snap, elapsed, nil)
}

// End is what the final evaluation knows of how the run ended.
type End struct {
	// Scenarios are the run's scenarios, and NotRun those that never
	// started, each with why ("its chain stopped after c32"): a threshold
	// without samples is skipped when the scenario its selector names
	// did not run, or, when it names none, when no scenario ran (an
	// execution segment with no VU of any).
	Scenarios []string
	NotRun    map[string]string
}

// EvaluateEnd checks every threshold against the final snapshot of the
// run, as Evaluate does, and gives the verdict of those without samples:
//
//   - a threshold whose selector names a scenario of end.NotRun, or that
//     names none when every scenario is in end.NotRun, is skipped: it
//     passes, noted "skipped: scenario X did not run (why)";
//   - noSamples: 'pass' passes it, noSamples: 'fail' fails it;
//   - otherwise a counter is judged with count 0 and rate 0, a rate with
//     rate 0, each noted "no samples, counted as 0", and a gauge or a
//     trend fails, noted "no samples: no p(99) to judge": it has no
//     value to compare.
//
// AnyFailed of the results is the run's threshold verdict.
func (s *Set) EvaluateEnd(snap *metrics.Snapshot, elapsed time.Duration, end End) []Result {
	return s.evaluate(snap, elapsed, &end)
}

// evaluate is Evaluate during the run (end nil) and EvaluateEnd.
func (s *Set) evaluate(snap *metrics.Snapshot, elapsed time.Duration, end *End) []Result {
	list := s.Thresholds()
	out := make([]Result, len(list))
	stats := make(map[string]*metrics.Stats) // one merge per key
	for i, t := range list {
		st, ok := stats[t.Key]
		if !ok {
			if snap != nil {
				st = snap.Stats(t.Metric, t.Tags)
			}
			stats[t.Key] = st
		}
		out[i] = t.evaluate(st, elapsed, end)
	}
	return out
}

func (t *Threshold) evaluate(st *metrics.Stats, elapsed time.Duration, end *End) Result {
	r := Result{Threshold: t, Key: t.Key, Source: t.Source, AbortOnFail: t.AbortOnFail}
	if t.server != nil {
		return t.evaluateServer(r, end)
	}
	r.NoSamples = st == nil || st.Count == 0
	var typ metrics.Type
	switch {
	case t.def != nil:
		typ = t.def.Type
	case st != nil:
		typ = st.Type
	default:
		// Not validated and no samples: the type is unknown, so there
		// is nothing to judge.
		r.Passed, r.Note = true, "no samples"
		return r
	}
	if t.def != nil {
		r.Unit = ValueUnit(typ.String(), t.def.Unit, t.Expr.Method)
	}
	if !Applies(typ, t.Expr.Method) {
		r.Note = fmt.Sprintf("aggregation %s does not apply to a %s metric", t.Expr.Aggregation(), typ)
		return r
	}
	if r.NoSamples {
		if done := t.withoutSamples(&r, typ, end); done {
			return r
		}
		st = &metrics.Stats{Type: typ} // nothing counted: count 0, rate 0
	}
	v, ok := observe(st, typ, t.Expr, elapsed)
	if !ok {
		r.Passed, r.Note = true, "no elapsed time to compute a rate per second"
		return r
	}
	r.Value, r.Evaluated = v, true
	r.Passed = t.Expr.Op.Compare(v, t.Expr.Bound)
	r.Abort = end == nil && t.AbortOnFail && !r.Passed && elapsed >= t.DelayAbortEval
	return r
}

// withoutSamples gives the verdict of a threshold whose metric had no
// samples, at the end (end set) or during the run; false when it is to be
// judged on zero stats instead (a counter, and a rate at the end).
func (t *Threshold) withoutSamples(r *Result, typ metrics.Type, end *End) bool {
	if end == nil {
		if typ == metrics.Counter {
			return false
		}
		r.Passed, r.Note = true, "no samples yet"
		return true
	}
	if why, ok := end.notRun(t); ok {
		r.Passed, r.Skipped, r.Note = true, true, "skipped: "+why
		return true
	}
	switch t.NoSamples {
	case NoSamplesPass:
		r.Passed, r.Note = true, "no samples (accepted: noSamples is 'pass')"
		return true
	case NoSamplesFail:
		r.Note = "no samples (noSamples is 'fail')"
		return true
	}
	if typ == metrics.Counter || typ == metrics.Rate {
		r.Note = "no samples, counted as 0"
		return false
	}
	r.Note = fmt.Sprintf("no samples: no %s to judge (noSamples: 'pass' accepts that)", t.Expr.Aggregation())
	return true
}

// notRun says why the scenarios t selects did not run, if none did: the
// one its selector names, or else every scenario of the run.
func (e *End) notRun(t *Threshold) (string, bool) {
	if name, ok := t.Tags.Get("scenario"); ok {
		why, ok := e.NotRun[name]
		return fmt.Sprintf("scenario %s did not run (%s)", name, why), ok
	}
	if len(e.Scenarios) == 0 {
		return "", false
	}
	for _, name := range e.Scenarios {
		if _, ok := e.NotRun[name]; !ok {
			return "", false
		}
	}
	return fmt.Sprintf("no scenario ran (%s: %s)", e.Scenarios[0], e.NotRun[e.Scenarios[0]]), true
}

// observe computes an aggregation of non-empty (or counter) stats; false when
// a counter's rate has no elapsed time to divide by.
func observe(st *metrics.Stats, typ metrics.Type, e Expression, elapsed time.Duration) (float64, bool) {
	switch e.Method {
	case MethodCount:
		return st.Sum, true
	case MethodRate:
		if typ == metrics.Counter {
			if elapsed <= 0 {
				return 0, false
			}
			return st.Sum / elapsed.Seconds(), true
		}
		return st.Rate(), true
	case MethodValue:
		return st.Last, true
	case MethodAvg:
		return st.Mean(), true
	case MethodMin:
		return st.Min, true
	case MethodMax:
		return st.Max, true
	case MethodMed, MethodPercentile:
		return st.Percentile(e.P), true
	}
	return 0, false
}

// AnyFailed reports whether any threshold failed: the run's verdict (exit
// code 99) when given the final evaluation.
func AnyFailed(results []Result) bool {
	for _, r := range results {
		if !r.Passed {
			return true
		}
	}
	return false
}

// ShouldAbort returns the first result that asks to stop the run (an
// abortOnFail threshold that failed after its delayAbortEval) and true, or
// false when none does.
func ShouldAbort(results []Result) (Result, bool) {
	for _, r := range results {
		if r.Abort {
			return r, true
		}
	}
	return Result{}, false
}

// ValueUnit is the unit of a threshold's observed value on a metric of
// type metricType ("counter", "rate", as metrics.Type names them) and
// unit metricUnit, by aggregation m: the metric's unit, per second for a
// counter's rate, none for a rate metric's ratio.
func ValueUnit(metricType, metricUnit string, m Method) string {
	switch {
	case metricType == metrics.Rate.String():
		return ""
	case m == MethodRate:
		return metricUnit + "/s"
	}
	return metricUnit
}
