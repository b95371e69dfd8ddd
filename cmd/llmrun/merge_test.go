package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// exportRun runs a script against the built-in simulator and returns its
// result file.
func exportRun(t *testing.T, script string, iterations int) string {
	t.Helper()
	export := filepath.Join(t.TempDir(), "result.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-u", "2", "-i", fmt.Sprint(iterations), "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return export
}

// mergedTrend merges a trend metric's histograms out of result files.
func mergedTrend(t *testing.T, metric string, results ...*summary.Summary) *metrics.Stats {
	t.Helper()
	all := &metrics.Stats{Type: metrics.Trend}
	for _, r := range results {
		st, err := r.Metrics[metric].Histogram.Stats()
		if err != nil {
			t.Fatalf("%s: %v", metric, err)
		}
		all.Merge(st)
	}
	return all
}

// Two runs of one script merge into one result: the counts add, and the
// percentiles are those of the runs' histograms merged.
func TestMergeTwoRuns(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "merge.js", fmt.Sprintf(chatScript, 4))
	files := []string{exportRun(t, script, 6), exportRun(t, script, 4)}
	out := filepath.Join(t.TempDir(), "all.json")
	code, stdout, stderr := command(t, "merge", files[0], files[1], "-o", out)
	if code != exitcode.OK {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if stdout != "" || !strings.Contains(stderr, "2 results") || !strings.Contains(stderr, "10 completed") || !strings.Contains(stderr, out) {
		t.Errorf("stdout %q, stderr %q: want the file written and a line saying so", stdout, stderr)
	}
	a, b := readSummary(t, files[0]), readSummary(t, files[1])
	all, err := summary.ReadJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	if all.Serving.OK != a.Serving.OK+b.Serving.OK || all.Serving.OK != 10 || all.Serving.Requests != 10 ||
		all.Serving.OutputTokens != a.Serving.OutputTokens+b.Serving.OutputTokens {
		t.Errorf("merged serving %+v from %+v and %+v", all.Serving, a.Serving, b.Serving)
	}
	if len(all.Meta.Merged) != 2 || all.Meta.Merged[0] != a.Meta.RunID || all.Meta.Merged[1] != b.Meta.RunID {
		t.Errorf("merged from %v, want the runs %s and %s", all.Meta.Merged, a.Meta.RunID, b.Meta.RunID)
	}
	for _, metric := range []string{"llm_ttft", "llm_itl", "llm_e2e"} {
		want := mergedTrend(t, metric, a, b)
		row := latencyRow(t, all, metric)
		if row.Count != want.Count || row.Min != want.Min || row.Max != want.Max {
			t.Errorf("%s: count/min/max %d/%g/%g, want %d/%g/%g", metric, row.Count, row.Min, row.Max, want.Count, want.Min, want.Max)
		}
		for _, p := range summary.Percentiles {
			if got, w := row.P[fmt.Sprintf("p%g", p)], want.Percentile(p); got != w {
				t.Errorf("%s p%g = %g, want %g from the merged histograms", metric, p, got, w)
			}
		}
	}
	h := all.Serving.Headline
	if ttft := mergedTrend(t, "llm_ttft", a, b); h["p99_ttft_ms"] != ttft.Percentile(99) || h["completed"] != 10 {
		t.Errorf("headline %v: want p99_ttft_ms %g and 10 completed", h, ttft.Percentile(99))
	}

	// Without -o the merged result goes to standard output.
	code, stdout, stderr = command(t, "merge", files...)
	if code != exitcode.OK || !strings.HasPrefix(stdout, "{") || !strings.Contains(stdout, `"merged_from"`) {
		t.Errorf("merge to stdout: exit %d\nstdout %.200s\nstderr %s", code, stdout, stderr)
	}
}

func TestMergeCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, s *summary.Summary) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := writeResult(output.FileFlag{Flag: "--summary-export", Path: path}, s); err != nil {
			t.Fatal(err)
		}
		return path
	}
	result := func(runID, hash string) *summary.Summary {
		return &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{RunID: runID, ScriptSHA256: hash, Start: resultStart, End: resultStart.Add(time.Minute)}}
	}
	a, b := write("a.json", result("a", "abc")), write("b.json", result("b", "abc"))
	other := write("other.json", result("c", "def"))
	dup := write("dup.json", result("a", "abc"))
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no file", nil, exitcode.Usage, []string{"no result file"}},
		{"unknown flag", []string{"--bogus", a}, exitcode.Usage, []string{"unknown flag: --bogus"}},
		{"missing file", []string{a, missing}, exitcode.Error, []string{missing}},
		{"not a result", []string{a, notJSON}, exitcode.Error, []string{notJSON + ":1:1: not valid JSON: invalid character 'h'"}},
		{"another script", []string{a, other}, exitcode.Error, []string{other, "sha256 def", a, "sha256 abc"}},
		{"a run twice", []string{a, b, dup}, exitcode.Error, []string{dup, "the same run as result 1"}},
		{"unwritable output", []string{a, b, "-o", filepath.Join(dir, "no", "such", "dir.json")}, exitcode.Error, []string{"-o " + filepath.Join(dir, "no", "such", "dir.json") + ": cannot write there"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := command(t, "merge", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// A run's result printed with --out json=- comes after the summary, and
// merge reads it back from the log it landed in as the result file
// itself.
func TestMergeReadsPrintedResult(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "printed.js", fmt.Sprintf(chatScript, 4))
	export := filepath.Join(t.TempDir(), "result.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-i", "3", "--summary-export", export, "--out", "json=-", script)
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	begin := strings.Index(stdout, "llmrun-result ")
	if begin < 0 || !strings.Contains(stdout[:begin], "TTFT") || !strings.HasSuffix(stdout, " end\n") {
		t.Fatalf("stdout: want the summary, then the result block:\n%s", stdout)
	}
	log := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(log, []byte("some other line\n"+stdout+stderr), 0o644); err != nil {
		t.Fatal(err)
	}
	merged, err := readMerged(t, log)
	if err != nil {
		t.Fatal(err)
	}
	want, got := readSummary(t, export), readSummary(t, merged)
	if got.Serving.Requests != 3 || got.Serving.OutputTokens != want.Serving.OutputTokens || got.Meta.Merged[0] != want.Meta.RunID {
		t.Errorf("merged from the log: %d requests, %d tokens, run %v; want 3, %d, %s", got.Serving.Requests, got.Serving.OutputTokens, got.Meta.Merged, want.Serving.OutputTokens, want.Meta.RunID)
	}
}
