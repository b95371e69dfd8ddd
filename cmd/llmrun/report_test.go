package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// sweepResult writes the result file of a concurrency sweep of levels 4
// to 64, judged against TTFT p99 ≤ 1000 ms, and returns its path.
func sweepResult(t *testing.T) string {
	t.Helper()
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{Tool: "llmrun", Script: "stock:concurrency-sweep", Start: resultStart, End: resultStart.Add(time.Minute)}}
	for _, l := range []struct{ c, tput, t50, t99 float64 }{{4, 800, 90, 200}, {8, 1500, 100, 300}, {16, 2600, 140, 700}, {32, 3100, 400, 2400}, {64, 3150, 1800, 9000}} {
		name := fmt.Sprintf("c%.0f", l.c)
		s.Meta.LoadShape = append(s.Meta.LoadShape, summary.ScenarioShape{Name: name, Executor: "constant-vus", MaxVUs: int(l.c),
			Tags: map[string]string{"concurrency": fmt.Sprint(l.c)}})
		row := func(metric string, p50, p99 float64) summary.LatencyRow {
			return summary.LatencyRow{Metric: metric, Count: 100, Min: p50 / 2, Max: p99 * 2, P: map[string]float64{"p50": p50, "p90": p99 * 0.7, "p95": p99 * 0.8, "p99": p99}}
		}
		s.Scenarios = append(s.Scenarios, summary.ScenarioSummary{Name: name,
			Serving: summary.Serving{Requests: 100, OK: 100, SuccessRate: 1, RequestThroughput: l.tput / 200, OutputTokenThroughput: l.tput},
			Latency: []summary.LatencyRow{row("llm_ttft", l.t50, l.t99), row("llm_tpot", 20, 30)}})
	}
	s.Capacity = capacity.Assess(s, capacity.Criteria{SLO: summary.SLO{TTFTP99: 1000}})
	if s.Capacity == nil || s.Capacity.MaxWithinSLO == nil || s.Capacity.MaxWithinSLO.Level != 16 {
		t.Fatalf("the planted sweep is not judged as planted: %+v", s.Capacity)
	}
	path := filepath.Join(t.TempDir(), "sweep.json")
	if err := writeResult(output.FileFlag{Flag: "--summary-export", Path: path}, s); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReportWritesThePage(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.html")
	code, stdout, stderr := command(t, "report", sweepResult(t), "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, out) {
		t.Errorf("stdout %q does not name the report", stdout)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `data-chart="latency-throughput"`, `data-mark="slo"`, "SLO TTFT p99 1000 ms",
		"max within SLO: concurrency 16", "saturation: concurrency"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// Without -o the page goes next to the result file, as docs/capacity.md's
// "llmrun report --slo ttft_p99=2000 result.json" expects.
func TestReportDefaultOutput(t *testing.T) {
	t.Parallel()
	result := sweepResult(t)
	code, stdout, stderr := command(t, "report", "--slo", "ttft_p99=2000", result)
	want := strings.TrimSuffix(result, ".json") + ".html"
	if code != exitOK || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and %s", code, stdout, stderr, want)
	}
	if page, err := os.ReadFile(want); err != nil || !strings.Contains(string(page), "SLO TTFT p99 2000 ms") {
		t.Errorf("no report with the SLO at %s (%v)", want, err)
	}
}

// --slo judges the levels again: a tighter TTFT p99 moves the SLO line
// and the max-within-SLO marker down to a lower level.
func TestReportSLOOverridesTheResults(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.html")
	code, _, stderr := command(t, "report", "--slo", "ttft_p99=500,tpot_p99=50", sweepResult(t), "--output", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SLO TTFT p99 500.0 ms", "max within SLO: concurrency 8, 1500 tok/s", "TTFT p99 ≤ 500.0 ms, TPOT p99 ≤ 50.0 ms"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(page), "SLO TTFT p99 1000 ms") {
		t.Errorf("the report still draws the result's SLO")
	}
}

func TestReportUsageErrors(t *testing.T) {
	t.Parallel()
	result := sweepResult(t)
	out := filepath.Join(t.TempDir(), "report.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "a result file is required"},
		{[]string{"-o", out}, "a result file is required"},
		{[]string{result, "-o", ""}, "-o: want a file name"},
		{[]string{result, result, "-o", out}, "unexpected argument"},
		{[]string{result, "-o", out, "--slo", "e2e_p99=5"}, "--slo: \"e2e_p99\": unknown objective"},
		{[]string{result, "-o", out, "--slo", ""}, "--slo: empty"},
		{[]string{result, "-o", out, "--no-such-flag"}, "unknown flag"},
	} {
		code, _, stderr := command(t, "report", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "llmrun report --help") {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote the report (%v)", err)
	}
	code, stdout, _ := command(t, "report", "--help")
	if code != exitOK || !strings.Contains(stdout, "Usage: llmrun report RESULT.json [-o report.html]") || !strings.Contains(stdout, "--slo") {
		t.Errorf("--help: exit %d, stdout %q", code, stdout)
	}
}

func TestReportFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("not a result"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "missing.json"), "-o", out}, "missing.json"},
		{[]string{notJSON, "-o", out}, "notes.txt:1:2: not valid JSON"},
		{[]string{sweepResult(t), "-o", filepath.Join(dir, "no", "such", "dir", "report.html")}, "cannot write there: directory " + filepath.Join(dir, "no", "such", "dir") + " does not exist"},
		{[]string{sweepResult(t), "-o", dir}, "-o " + dir + ": cannot write there: it is a directory"},
	} {
		code, _, stderr := command(t, "report", tc.args...)
		if code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitError, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed report left a file (%v)", err)
	}
}

// A real sweep against the built-in simulator, exported, then reported
// with an SLO: the pipeline from run to page. Its SLO is far above any
// level's TTFT, so it runs in parallel with the others; it runs in -short
// too, where it is the only run of the concurrency sweep.
func TestReportOfARealSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	export, out := filepath.Join(dir, "sweep.json"), filepath.Join(dir, "sweep.html")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--summary-export", export,
		"-e", "LEVELS=1,2,4", "-e", "STEP=1s", "-e", "PAUSE=1s", "-e", "OUTPUT_TOKENS=16", "-e", "INPUT_TOKENS=32", "stock:concurrency-sweep")
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = command(t, "report", export, "-o", out, "--slo", "ttft_p99=60000")
	if code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-chart="latency-ttft"`, `data-chart="sweep-throughput"`, `data-chart="latency-throughput"`, "SLO TTFT p99 60000 ms", `data-mark="max-within-slo"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(string(page), bad) {
			t.Errorf("the report has %q", bad)
		}
	}
}

// --slo on a run that is no sweep draws the objectives on the latency
// charts.
func TestReportSLOWithoutSweep(t *testing.T) {
	t.Parallel()
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{Tool: "llmrun", Script: "chat.js", SLO: summary.SLO{TTFTP99: 2000}, Start: resultStart, End: resultStart.Add(time.Minute)},
		Latency: []summary.LatencyRow{{Metric: "llm_ttft", Label: "TTFT", Count: 10, Min: 80, Max: 900, P: map[string]float64{"p50": 100, "p90": 300, "p95": 500, "p99": 800}}}}
	path := filepath.Join(t.TempDir(), "run.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, stderr := command(t, "report", path, "-o", out, "--slo", "ttft_p99=500,tpot_p99=40")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SLO TTFT p99 500.0 ms", "SLO TPOT p99 40.0 ms", "TTFT p99 ≤ 500.0 ms, TPOT p99 ≤ 40.0 ms"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(page), "2000") {
		t.Errorf("the report still shows the run's SLO")
	}
}
