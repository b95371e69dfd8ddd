package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// The options that are durations, where a bare number is milliseconds
// (as in k6): at the top of the options, in a scenario, in a stage and in
// a warmup; and earlyStop's backoff and midRun.for.
var (
	topDurations      = []string{"duration", "setupTimeout", "teardownTimeout"}
	scenarioDurations = []string{"duration", "gracefulStop", "gracefulRampDown", "maxDuration", "startTime", "timeUnit"}
)

// bareDurationWarnings are the warnings about the durations of the
// options data, which ParseOptions accepted, written as a bare number,
// which is milliseconds (`duration: 30` is 30 ms): one for each such
// field, naming it; a zero, the same in any unit, is none.
func bareDurationWarnings(data []byte) []string {
	var top map[string]any
	if json.Unmarshal(data, &top) != nil {
		return nil // ParseOptions says what is wrong
	}
	var out []string
	warnIn := func(obj any, path string, keys []string) {
		m, _ := obj.(map[string]any)
		for _, k := range keys {
			if w := bareDurationWarning(m[k], path+"."+k); w != "" {
				out = append(out, w)
			}
		}
	}
	warnShape := func(obj any, path string, keys []string) {
		warnIn(obj, path, keys)
		m, _ := obj.(map[string]any)
		stages, _ := m["stages"].([]any)
		for i, st := range stages {
			warnIn(st, fmt.Sprintf("%s.stages[%d]", path, i), []string{"duration"})
		}
		warnIn(m["warmup"], path+".warmup", []string{"duration"})
	}
	warnShape(top, "options", topDurations)
	earlyStop, _ := top["earlyStop"].(map[string]any)
	warnIn(earlyStop, "options.earlyStop", []string{"backoff"})
	warnIn(earlyStop["midRun"], "options.earlyStop.midRun", []string{"for"})
	scenarios, _ := top["scenarios"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(scenarios)) {
		warnShape(scenarios[name], "options.scenarios."+name, scenarioDurations)
	}
	return out
}

// bareDurationWarning is the warning about the duration v of the field at
// path when it is a bare non-zero number (or a string of one); "" for
// any other.
func bareDurationWarning(v any, path string) string {
	var ms float64
	switch v := v.(type) {
	case float64:
		ms = v
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return ""
		}
		ms = f
	default:
		return ""
	}
	if ms == 0 {
		return ""
	}
	num := strconv.FormatFloat(ms, 'f', -1, 64)
	keep := time.Duration(ms * float64(time.Millisecond)).String()
	return fmt.Sprintf("%s: %s is %s ms: a duration without a unit is milliseconds, as in k6; write '%ss' for %s seconds, or '%s' to keep it without this warning", path, num, num, num, num, keep)
}
