package influxdb

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/spelling"
)

// TagValue is a value a tag has on llm_run points, and the time of the
// newest point that has it.
type TagValue struct {
	Value string
	Last  time.Time
}

// TagValuesQuery returns the InfluxQL statement TagValues runs at now:
// the newest "requests" (a field of every llm_run point) of each value of
// the tag key, among the llm_run points that have the tags of where,
// stored since now-since.
func TagValuesQuery(key string, where map[string]string, since time.Duration, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT last(%s) FROM %s WHERE ", influxQLIdent("requests"), influxQLIdent(mRun))
	for _, k := range slices.Sorted(maps.Keys(where)) {
		fmt.Fprintf(&b, "%s = %s AND ", influxQLTag(k), influxQLString(where[k]))
	}
	fmt.Fprintf(&b, "time >= %s GROUP BY %s", influxQLString(now.Add(-since).UTC().Format(time.RFC3339)), influxQLIdent(key))
	return b.String()
}

// TagValues returns the values the tag key has on the llm_run points
// stored since now-since that have the tags of where, newest first (by
// their newest point; equally new ones by value); points without the tag
// are left out. Each value is one series of the answer: a tag of a run
// (testid, scenario, model, a --tag) has few values per test.
func TagValues(ctx context.Context, cfg Config, key string, where map[string]string, since time.Duration) ([]TagValue, error) {
	found, err := influxQL(ctx, cfg, TagValuesQuery(key, where, since, time.Now()))
	if err != nil {
		return nil, err
	}
	var values []TagValue
	for _, s := range found {
		v := s.Tags[key]
		if v == "" || len(s.Values) == 0 || len(s.Values[0]) == 0 {
			continue
		}
		last, err := pointTime(s.Values[0][0])
		if err != nil {
			return nil, fmt.Errorf("influxdb %s: the values of tag %q of the llm_run points: %w", cfg.URL, key, err)
		}
		values = append(values, TagValue{Value: v, Last: last})
	}
	slices.SortFunc(values, func(a, b TagValue) int {
		return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Value, b.Value))
	})
	return values, nil
}

// maxListed bounds the values a message lists; it says how many more
// there are.
const maxListed = 20

// MissReport says what exists when History found no run for f: when f's
// testid has no run since f.Since, the test ids that have (newest first,
// at most maxListed, and how many more) and the nearest to f's; else, for
// its scenario, model and tags that its runs lack, the values they have
// and the nearest, a line per flag ("--flag value: …"); when its runs have
// each value but none has them all, a line that says so.
func MissReport(ctx context.Context, cfg Config, f Filter) ([]string, error) {
	testids, err := TagValues(ctx, cfg, "testid", nil, f.Since)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(testids, func(v TagValue) bool { return v.Value == f.TestID }) {
		return []string{missLine("--testid", f.TestID, "the test ids with runs then, newest first", testids, "")}, nil
	}
	where := map[string]string{"testid": f.TestID}
	var lines []string
	check := func(flag, key, value, what string) error {
		values, err := TagValues(ctx, cfg, key, where, f.Since)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(values, func(v TagValue) bool { return v.Value == value }) {
			prefix := ""
			if flag == "--tag" {
				prefix = key + "="
			}
			lines = append(lines, missLine(flag, prefix+value, what, values, prefix))
		}
		return nil
	}
	if f.Scenario != "" {
		if err := check("--scenario", "scenario", f.Scenario, "the scenarios of its runs of several scenarios (a run of one stores only its whole run's figures)"); err != nil {
			return nil, err
		}
	}
	if f.Model != "" {
		if err := check("--model", "model", f.Model, "the models of its runs"); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.Tags)) {
		if f.Tags[k] == "" {
			continue
		}
		if err := check("--tag", k, f.Tags[k], fmt.Sprintf("the values of tag %s on its runs", k)); err != nil {
			return nil, err
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "each of the testid's runs lacks one of the flags' values: none has them all together")
	}
	return lines, nil
}

// missLine is the line of a flag whose value no run has: what the values
// that exist are (at most maxListed, newest first), and the nearest, each
// written with prefix.
func missLine(flag, value, what string, values []TagValue, prefix string) string {
	if len(values) == 0 {
		return fmt.Sprintf("%s %s: no run has one (%s: none)", flag, value, what)
	}
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = prefix + v.Value
	}
	listed := strings.Join(names[:min(len(names), maxListed)], ", ")
	if len(names) > maxListed {
		listed += fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	line := fmt.Sprintf("%s %s: no run has it; %s: %s", flag, value, what, listed)
	if best := spelling.Nearest(value, names); best != "" {
		line += fmt.Sprintf(" (did you mean %s %s?)", flag, best)
	}
	return line
}
