package results

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
)

// writeResult writes the result of a run of id runID and script hash
// hash, of two requests whose TTFT is ttft ms, as a result file, and
// returns its path.
func writeResult(t *testing.T, dir, runID, hash string, ttft float64) string {
	t.Helper()
	s := summarytest.Build(t, 10*time.Second, summarytest.Streamed(ttft, 10, 10), summarytest.Streamed(ttft, 12))
	s.Meta.RunID, s.Meta.ScriptSHA256 = runID, hash
	path := filepath.Join(dir, runID+".json")
	if err := output.WriteFile(path, s.WriteJSON); err != nil {
		t.Fatal(err)
	}
	return path
}

// CompareFiles judges the current result against the baseline's (the
// current run first), titles the pair with a line about each file, and
// notes when the runs ran different scripts; a file that cannot be read
// is an error naming it.
func TestCompareFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, same, other := writeResult(t, dir, "base", "abc", 100), writeResult(t, dir, "same", "abc", 100), writeResult(t, dir, "other", "def", 100)
	gate := Gate{Options: regression.Options{Tolerance: 0.1}, Figures: regression.Headline(), DefaultFigures: true}
	started := summarytest.Start.UTC().Format("2006-01-02 15:04:05")

	c, err := CompareFiles(base, same, "", gate)
	if err != nil {
		t.Fatal(err)
	}
	wantTitle := "baseline: " + base + " (run base, started " + started + " UTC, llmrun test, 2 requests)\ncurrent:  " + same + " (run same, started " + started + " UTC, llmrun test, 2 requests)"
	if c.Title != wantTitle || c.Note != "" || len(c.Runs) != 2 || c.Runs[0].ID != "same" || c.Runs[1].ID != "base" || len(c.Comparisons) != len(c.Figures) {
		t.Errorf("compare of runs of one script: title %q, note %q, runs %d, %d comparisons of %d figures; want title %q, no note, the current run first",
			c.Title, c.Note, len(c.Runs), len(c.Comparisons), len(c.Figures), wantTitle)
	}
	if c.Failed() {
		t.Errorf("runs of the same requests: a regression: %+v", c.Comparisons)
	}

	c, err = CompareFiles(base, other, "", gate)
	if want := "the runs ran different scripts (" + base + ": sha256 abc, " + other + ": sha256 def)"; err != nil || c.Note != want {
		t.Errorf("compare of runs of two scripts: note %q, %v; want %q", c.Note, err, want)
	}

	missing := filepath.Join(dir, "missing.json")
	if _, err := CompareFiles(base, missing, "", gate); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("compare with a missing file: %v, want an error naming it", err)
	}
}

// A merged result says how many it was merged from.
func TestDescribe(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	s := &summary.Summary{Meta: summary.Meta{Merged: []string{"a", "b"}, Start: start}, Serving: summary.Serving{Requests: 1}}
	if got, want := Describe("all.json", s), "all.json (merged from 2, started 2026-01-02 02:04:05 UTC, 1 request)"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

// With --scenario, the lines about each file count that scenario's
// requests, not the whole run's.
func TestCompareScenarioDescribesTheScenario(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := sweep(summary.SLO{TTFTP99: 1000})
	s.Serving = summary.Serving{Requests: 300, OK: 300, SuccessRate: 1}
	s.Scenarios[0].Serving.Requests, s.Scenarios[0].Serving.OK = 40, 40
	file := filepath.Join(dir, "sweep.json")
	if err := output.WriteFile(file, s.WriteJSON); err != nil {
		t.Fatal(err)
	}
	gate := Gate{Options: regression.Options{Tolerance: 0.1}, Figures: regression.Headline(), DefaultFigures: true}
	c, err := CompareFiles(file, file, "c4", gate)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(c.Title, "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[1], ", 40 requests)") || !strings.HasSuffix(lines[2], ", 40 requests)") {
		t.Errorf("compare --scenario c4: title %q; want the baseline's and the current lines to count c4's 40 requests, not the run's 300", c.Title)
	}
}
