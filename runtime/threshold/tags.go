package threshold

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/llmrun/llmrun/runtime/spelling"
)

// ClosedTag is a tag whose every value is known when the script loads: a
// selector naming another value could select no sample, whatever the run
// does, and its threshold would pass or fail on nothing.
type ClosedTag struct {
	// Name is the tag: "scenario".
	Name string
	// Metrics are the metrics whose samples carry only Values of the tag;
	// none means every metric.
	Metrics []string
	// Values are every value the tag can take on those metrics.
	Values []string
	// Noun names one value in an error ("scenario" gives `no scenario is
	// named "x"`); "" gives `no value "x" of tag error_class`.
	Noun string
	// Note, when set, ends the error: why the values are those.
	Note string
}

// appliesTo reports whether the tag's values are closed on metric.
func (c ClosedTag) appliesTo(metric string) bool {
	return len(c.Metrics) == 0 || slices.Contains(c.Metrics, metric)
}

// check returns why value cannot be the tag's on metric, or nil.
func (c ClosedTag) check(metric, value string) error {
	if slices.Contains(c.Values, value) {
		return nil
	}
	values := slices.Sorted(slices.Values(c.Values))
	var nearest string
	if n := spelling.Nearest(value, values); n != "" {
		nearest = fmt.Sprintf(" (did you mean %q?)", n)
	}
	var msg string
	if c.Noun != "" {
		msg = fmt.Sprintf("no %s is named %q%s: the %ss are %s", c.Noun, value, nearest, c.Noun, strings.Join(values, ", "))
	} else {
		msg = fmt.Sprintf("%s has no value %q on %s%s: its values are %s", c.Name, value, metric, nearest, strings.Join(values, ", "))
	}
	if c.Note != "" {
		msg += "; " + c.Note
	}
	return errors.New(msg)
}

// CheckTags refuses every selector that names a value of a closed tag the
// tag cannot take on the selector's metric: its sub-metric could never
// have a sample, so its thresholds would judge nothing. It reports each
// such key once, in the order of the options, as an *Error (errors.Join);
// errors.As finds the first. Tags not in closed are left alone: their
// values (a model, a group, the script's own tags) are known only once
// the run sends its requests.
func (s *Set) CheckTags(closed []ClosedTag) error {
	var errs []error
	done := make(map[string]bool)
	for _, t := range s.Thresholds() {
		if t.Tags == nil || done[t.Key] {
			continue
		}
		done[t.Key] = true
		if err := checkSelector(t, closed); err != nil {
			errs = append(errs, keyError(t.Key, "%v", err))
		}
	}
	return errors.Join(errs...)
}

// checkSelector returns the first tag of t's selector whose value its
// closed tag cannot take, in the order of the selector's tags.
func checkSelector(t *Threshold, closed []ClosedTag) error {
	for _, tag := range t.Tags.Tags() {
		for _, c := range closed {
			if c.Name != tag.Key || !c.appliesTo(t.Metric) {
				continue
			}
			if err := c.check(t.Metric, tag.Value); err != nil {
				return err
			}
		}
	}
	return nil
}
