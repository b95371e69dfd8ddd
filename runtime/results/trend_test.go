package results

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/regression"
)

func TestParseSince(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"365d": 365 * 24 * time.Hour, "12w": 84 * 24 * time.Hour, "48h": 48 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseSince(in); err != nil || got != want {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"a year": "want days (90d)", "0d": "want a positive period", "36501d": "up to 36500 days", "-1h": "want a positive period"} {
		if _, err := ParseSince(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSince(%q): %v, want an error saying %q", in, err, want)
		}
	}
}

// A query is refused before anything is read when it judges a server
// figure of a scenario, or selects by a tag it selects by otherwise.
func TestQueryCheck(t *testing.T) {
	t.Parallel()
	figures := func(names string) []regression.Figure {
		f, err := regression.ParseFigures(names)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		q    Query
		want string
	}{
		{"whole runs", Query{Filter: influxdb.Filter{Tags: map[string]string{"env": "prod"}}, Gate: Gate{Figures: figures("ttft_p99,server_preemptions")}}, ""},
		{"a scenario's client figures", Query{Filter: influxdb.Filter{Scenario: "rag"}, Gate: Gate{Figures: figures("ttft_p99")}}, ""},
		{"a scenario's server figure", Query{Filter: influxdb.Filter{Scenario: "rag"}, Gate: Gate{Figures: figures("ttft_p99,server_preemptions")}},
			"--metric server_preemptions: a server figure is the whole run's, not a scenario's: drop --scenario"},
		{"a model tag", Query{Filter: influxdb.Filter{Tags: map[string]string{"model": "llama"}}}, "--tag model=llama: model is not a tag --tag selects by: select it with --model"},
		{"an instance tag", Query{Filter: influxdb.Filter{Tags: map[string]string{"env": "prod", "instance": "0"}}}, "trend reads the instances of a run together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.q.Check()
			if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v, want %q", err, tc.want)
			}
		})
	}
}
