package results

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
)

func TestParseSince(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"365d": 365 * 24 * time.Hour, "12w": 84 * 24 * time.Hour, "48h": 48 * time.Hour, "90m": 90 * time.Minute, "5214w": 36498 * 24 * time.Hour} {
		if got, err := ParseSince(in); err != nil || got != want {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"a year": "want days (90d)", "0d": "want a positive period", "36501d": "up to 36500 days", "5215w": "up to 36500 days", "16000w": "up to 36500 days", "36500w": "up to 36500 days", "-1h": "want a positive period"} {
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

// Trend reads the runs of a test stored in InfluxDB, newest first, and
// judges the newest against the others; a test with no run stored is a
// NoRunsError whose hints name the nearest test id.
func TestTrendOfStoredRuns(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	cfg, err := influxdb.ParseConfig(srv.URL+"?bucket="+srv.Bucket, func(k string) string { return map[string]string{influxdb.TokenEnv: srv.Token}[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	newest := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 3 {
		s := summarytest.Build(t, 10*time.Second, summarytest.Streamed(50, 10), summarytest.Streamed(60, 10))
		s.Meta.RunID, s.Meta.Start = fmt.Sprintf("run-%d", i), newest.Add(-time.Duration(i)*24*time.Hour)
		o := influxdb.New(cfg)
		if err := o.Start(ctx, output.Run{ID: s.Meta.RunID, TestID: "nightly", Start: s.Meta.Start}); err != nil {
			t.Fatal(err)
		}
		if rep := o.Finish(ctx, s); rep.Err != "" || rep.Dropped != 0 {
			t.Fatalf("storing run %d: %+v", i, rep)
		}
	}
	gate := Gate{Options: regression.Options{Tolerance: 0.1}, Figures: regression.Headline(), DefaultFigures: true}
	q := Query{Filter: influxdb.Filter{TestID: "nightly", Runs: 10, Since: 30 * 24 * time.Hour}, Gate: gate}

	tr, err := Trend(ctx, cfg, q)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range tr.Runs {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "run-0,run-1,run-2" || len(tr.Comparisons) != len(tr.Figures) || len(tr.Notes) != 0 || len(tr.LeftOut) != 0 || tr.Failed() {
		t.Errorf("trend of three like runs: runs %v, %d comparisons of %d figures, notes %v, left out %v, failed %v; want run-0, run-1, run-2 judged, none failed",
			ids, len(tr.Comparisons), len(tr.Figures), tr.Notes, tr.LeftOut, tr.Failed())
	}

	q.TestID = "nightyl"
	_, err = Trend(ctx, cfg, q)
	var none *NoRunsError
	if !errors.As(err, &none) || none.Unreadable || !strings.Contains(strings.Join(none.Hints, "\n"), "did you mean --testid nightly?") {
		t.Errorf("trend of a misspelt test id: %v (%+v), want a NoRunsError naming the nearest test id", err, none)
	}
}

// A trend of result files with --scenario that one of them cannot
// answer (another tool's run, or a run that records no scenario) says to
// drop the flag, in words that fit trend as well as compare.
func TestTrendFilesScenarioTheFileHasNot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noScenario := filepath.Join(dir, "none.json")
	if err := output.WriteFile(noScenario, (&summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), End: time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC)}, Serving: summary.Serving{Requests: 1, OK: 1}}).WriteJSON); err != nil {
		t.Fatal(err)
	}
	vllm := filepath.Join(foreignDir, "vllm-summary.json")
	gate := Gate{Options: regression.Options{Tolerance: 0.1}, Figures: regression.Headline(), DefaultFigures: true}
	for _, file := range []string{vllm, noScenario} {
		_, err := TrendFiles([]string{file, file}, "rag", gate)
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "drop --scenario") || strings.Contains(err.Error(), "compare") {
			t.Errorf("trend of %s with --scenario rag: %v; want an error naming the file that says to drop --scenario (not to compare)", file, err)
		}
	}
}
