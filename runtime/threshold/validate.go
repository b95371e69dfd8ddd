package threshold

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/spelling"
)

// methods are the aggregations each metric type allows: k6's table.
var methods = map[metrics.Type][]Method{
	metrics.Counter: {MethodCount, MethodRate},
	metrics.Gauge:   {MethodValue},
	metrics.Rate:    {MethodRate},
	metrics.Trend:   {MethodAvg, MethodMin, MethodMax, MethodMed, MethodPercentile},
}

// MethodsFor returns the aggregation methods a metric type allows, as k6
// does: counter count and rate; gauge value; rate rate; trend avg, min,
// max, med and p(N).
func MethodsFor(t metrics.Type) []Method { return slices.Clone(methods[t]) }

// Applies reports whether aggregation m is defined for metric type t.
func Applies(t metrics.Type, m Method) bool { return slices.Contains(methods[t], m) }

// wantFor lists a type's aggregations in words: "count or rate".
func wantFor(t metrics.Type) string {
	var names []string
	for _, m := range methods[t] {
		if m == MethodPercentile {
			names = append(names, "p(N)")
		} else {
			names = append(names, string(m))
		}
	}
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Validate checks the thresholds against the metrics of the run, to be
// called once the init context has registered the custom metrics and before
// the first Evaluate: every key must name a registered metric or a server
// figure (server.go), and every aggregation must apply to its metric's
// type or its figure's kind. It reports every problem,
// in the order of the options, joined (errors.Join), each an *Error naming
// its key (an unknown metric, once per key) or entry (a type mismatch);
// errors.As finds the first. It also binds each threshold to its metric's
// definition, so that Evaluate knows the type of a metric without samples.
// It must not run concurrently with Evaluate.
func (s *Set) Validate(reg *metrics.Registry) error {
	if reg == nil {
		reg = metrics.NewRegistry()
	}
	var errs []error
	unknown := make(map[string]bool)
	for _, t := range s.Thresholds() {
		def := reg.Get(t.Metric)
		if def == nil && IsServerName(t.Metric) {
			if err := t.validateServer(); err != nil {
				errs = append(errs, entryError(t.Key, t.Index, err))
			}
			continue
		}
		if def == nil {
			if !unknown[t.Key] {
				unknown[t.Key] = true
				errs = append(errs, keyError(t.Key, "unknown metric %q%s", t.Metric, suggest(reg, t.Metric)))
			}
			continue
		}
		if !Applies(def.Type, t.Expr.Method) {
			errs = append(errs, entryError(t.Key, t.Index, fmt.Errorf("aggregation %q does not apply to %s metric %q: want %s",
				t.Expr.Aggregation(), def.Type, def.Name, wantFor(def.Type))))
			continue
		}
		t.def = def
	}
	return errors.Join(errs...)
}

// suggest returns ` (did you mean "x"?)` for the registered metrics
// closest to name (` (did you mean "x" or "y"?)` when two are as close),
// or "" when none is close.
func suggest(reg *metrics.Registry, name string) string {
	var known []string
	for _, m := range reg.All() {
		known = append(known, m.Name)
	}
	known = append(known, ServerNames()...)
	var quoted []string
	for _, n := range spelling.AllNearest(name, known) {
		quoted = append(quoted, strconv.Quote(n))
	}
	if len(quoted) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", strings.Join(quoted, " or "))
}
