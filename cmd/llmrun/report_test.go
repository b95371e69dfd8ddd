package main

import (
	"context"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/results"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
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
	if code != exitcode.OK {
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
	if code != exitcode.OK || !strings.Contains(stdout, want) {
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
	if code != exitcode.OK {
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
		{[]string{result, result, "-o", out}, result + " given twice"},
		{[]string{result, "-o", out, "--slo", "e2e_p99=5"}, "--slo: \"e2e_p99\": unknown objective"},
		{[]string{result, "-o", out, "--slo", ""}, "--slo: empty"},
		{[]string{result, "-o", out, "--no-such-flag"}, "unknown flag"},
	} {
		code, _, stderr := command(t, "report", tc.args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "llmrun report --help") {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitcode.Usage, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote the report (%v)", err)
	}
	code, stdout, _ := command(t, "report", "--help")
	if code != exitcode.OK || !strings.Contains(stdout, "Usage: llmrun report RESULT.json [-o report.html]") || !strings.Contains(stdout, "--slo") {
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
		if code != exitcode.Error || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitcode.Error, tc.want)
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
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = command(t, "report", export, "-o", out, "--slo", "ttft_p99=60000")
	if code != exitcode.OK {
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
	checkSweepPage(t, string(page), readSummary(t, export))

	// An SLO among the levels' TTFT: its line crosses the TTFT chart's
	// data, and its label keeps off it; the verdict stays above the fold.
	s := readSummary(t, export)
	slo := s.Capacity.Levels[len(s.Capacity.Levels)/2].TTFTP99
	among := reportOf(t, export, "--slo", fmt.Sprintf("ttft_p99=%g", slo))
	aboveTheFold(t, among, "#verdict", "#levels table")
	labelsClearOfData(t, among, "sweep-ttft", "latency-throughput", "latency-ttft")
}

// checkSweepPage checks that a sweep's report leads with its answer and
// draws what was measured: in the page's source, and laid out by Chromium.
func checkSweepPage(t *testing.T, page string, s *summary.Summary) {
	t.Helper()
	// The answer first, the pooled figures after it, saying what they are.
	first := []string{`id="verdict"`, `id="levels"`, `data-chart="latency-throughput"`}
	pooled := []string{`id="serving"`, `id="latency"`}
	for _, a := range first {
		for _, b := range pooled {
			if i, j := strings.Index(page, a), strings.Index(page, b); i < 0 || j < 0 || i > j {
				t.Errorf("%s (at %d) does not come before %s (at %d)", a, i, b, j)
			}
		}
	}
	if !strings.Contains(page, "All levels pooled: not the latency of any level") {
		t.Errorf("the whole-run figures do not say that they pool the levels")
	}
	// The simulator fails no request: one line, not a flat chart.
	var requests int64
	for _, sc := range s.Scenarios {
		requests += sc.Serving.Requests
	}
	if want := fmt.Sprintf(`<p class="chart-text" data-chart-text="sweep-success">success rate 100 %% throughout: %d requests, 0 failed</p>`, requests); !strings.Contains(page, want) {
		t.Errorf("the report has no line %s", want)
	}
	if strings.Contains(page, `data-chart="sweep-success"`) {
		t.Errorf("the report draws a success chart flat at 100 %%")
	}
	// Latency over time: one marker per series and interval in which a
	// request completed, and a line for each stretch of two or more such
	// intervals in a row, joining nothing across an interval without one.
	latency := page[strings.Index(page, `data-chart="time-latency"`):]
	latency = latency[:strings.Index(latency, "</svg>")]
	markers := 0
	for i, value := range []func(summary.TimelinePoint) float64{
		func(p summary.TimelinePoint) float64 { return p.TTFTP50 }, func(p summary.TimelinePoint) float64 { return p.TTFTP99 },
		func(p summary.TimelinePoint) float64 { return p.E2EP50 }, func(p summary.TimelinePoint) float64 { return p.E2EP99 },
	} {
		var stretches, segments, run int
		for k, p := range s.Timeline {
			if value(p) > 0 {
				markers++
				run++
			}
			if value(p) <= 0 || k == len(s.Timeline)-1 {
				if run > 1 {
					stretches, segments = stretches+1, segments+run-1
				}
				run = 0
			}
		}
		d := ""
		if _, rest, ok := strings.Cut(latency, fmt.Sprintf(`<path class="data line c%d" d="`, i)); ok {
			d, _, _ = strings.Cut(rest, `"`)
		}
		if m, l := strings.Count(d, "M"), strings.Count(d, "L"); m != stretches || l != segments {
			t.Errorf("latency over time, series %d: %d stretches of %d segments, want %d of %d (timeline %+v)", i, m, l, stretches, segments, s.Timeline)
		}
	}
	if n := strings.Count(latency, `<circle class="data dot`); n != markers || n == 0 {
		t.Errorf("latency over time has %d markers, want %d, one per series and interval with a completed request", n, markers)
	}

	t.Run("laid out", func(t *testing.T) {
		requestsLine := `svg[data-chart="time-requests"] path.data`
		selectors := []string{requestsLine}
		for _, attr := range slices.Concat(first, pooled) {
			selectors = append(selectors, "["+attr+"]")
		}
		boxes := browsertest.Boxes(t, browsertest.Chromium(t), page, 1280, selectors...)
		box := func(sel string) browsertest.Box {
			if len(boxes[sel]) == 0 {
				t.Fatalf("no %s on the laid-out page", sel)
			}
			return boxes[sel][0]
		}
		for _, a := range first {
			for _, b := range pooled {
				if upper, lower := box("["+a+"]"), box("["+b+"]"); upper.Top+upper.Height > lower.Top {
					t.Errorf("%s (y %.0f to %.0f) is not above %s (y %.0f)", a, upper.Top, upper.Top+upper.Height, b, lower.Top)
				}
			}
		}
		if line := box(requestsLine); line.Height < 10 || line.Width < 100 {
			t.Errorf("the requests/s line is %.0f×%.0f px: not visible on its own axis", line.Width, line.Height)
		}
	})
}

// --slo on a run that is no sweep draws the objectives on the latency
// charts.
func TestReportSLOWithoutSweep(t *testing.T) {
	t.Parallel()
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{Tool: "llmrun", Script: "chat.js", SLO: summary.SLO{TTFTP99: 2000}, Start: resultStart, End: resultStart.Add(time.Minute)},
		Latency: []summary.LatencyRow{{Metric: "llm_ttft", Label: "TTFT", Count: 10, Min: 80, Max: 900, P: map[string]float64{"p50": 100, "p90": 300, "p95": 500, "p99": 800}},
			{Metric: "llm_tpot", Label: "TPOT", Count: 10, Min: 10, Max: 60, P: map[string]float64{"p50": 20, "p90": 30, "p95": 35, "p99": 50}}}}
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
	if code != exitcode.OK || stderr != "" {
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

// Two real runs against simulators with a faster and a slower decode
// step, reported together per 8 GPUs: one page with both Pareto charts,
// the faster run on the front, and the slower judged against it.
func TestReportOfSeveralRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var files []string
	// The slow simulator's every prefill and decode step take at least
	// 500 ms and 50 ms, the fast one's 1 ms: no load on the machine makes
	// the fast run's TTFT p99 or TPOT p50 as long, so the fast run beats
	// the slow one on both axes whatever the timing.
	for _, step := range []struct{ prefill, decode time.Duration }{{time.Millisecond, time.Millisecond}, {500 * time.Millisecond, 50 * time.Millisecond}} {
		cfg := llmsimtest.Fast()
		cfg.PrefillBase, cfg.DecodeBase = step.prefill, step.decode
		sim := llmsimtest.Start(t, cfg)
		file := filepath.Join(dir, fmt.Sprintf("decode-%s.json", step.decode))
		code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--summary-export", file, "--base-url", sim.URL(),
			"-e", "NUM_PROMPTS=8", "-e", "MAX_CONCURRENCY=4", "-e", "OUTPUT_LEN=8", "-e", "INPUT_LEN=32", "stock:serving-point")
		if code != exitcode.OK {
			t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		files = append(files, file)
	}
	out := filepath.Join(dir, "x.html")
	code, stdout, stderr := command(t, "report", files[0], files[1], "--gpus", "8", "-o", out, "--label", "fast", "--label", "slow", "--slo", "ttft_p99=400")
	if code != exitcode.OK || !strings.Contains(stdout, "wrote "+out) {
		t.Fatalf("report: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(b))
	fast := readSummary(t, files[0]).Serving.OutputTokenThroughput
	for _, want := range []string{`data-chart="pareto-user"`, `data-chart="pareto-ttft"`, "divided by 8 GPUs (--gpus)",
		"fast: " + textfmt.Num(fast/8) + " output tok/s per GPU", `<th class="num baseline">fast<br>`, `<th class="num">slow<br>`,
		"SLO TTFT p99 400.0 ms", "Within TTFT p99 ≤ 400 ms, success rate ≥ 99 %: the most output tok/s per GPU is fast (" + textfmt.Num(fast/8) + " tok/s per GPU at ",
		"the front within the SLO (what no other configuration beats on both axes): fast."} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// --gpus once per file: each run divided by its own count (a TP2
	// deployment against a TP4 one).
	code, stdout, stderr = command(t, "report", files[0], files[1], "--gpus", "2", "--gpus", "4", "-o", out, "--label", "fast", "--label", "slow")
	if code != exitcode.OK {
		t.Fatalf("report --gpus 2 --gpus 4: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if b, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	page = html.UnescapeString(string(b))
	slow := readSummary(t, files[1]).Serving.OutputTokenThroughput
	for _, want := range []string{"divided by its GPUs (--gpus): fast by 2, slow by 4.",
		"fast: " + textfmt.Num(fast/2) + " output tok/s per GPU", "slow: " + textfmt.Num(slow/4) + " output tok/s per GPU"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestReportOfSeveralRunsUsageErrors(t *testing.T) {
	t.Parallel()
	a, b := sweepResult(t), sweepResult(t)
	out := filepath.Join(t.TempDir(), "x.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{a, b}, "-o: with several result files, name the page to write"},
		{[]string{a, b, "-o", out, "--gpus", "0"}, "--gpus 0: want 1 GPU or more"},
		{[]string{a, b, "-o", out, "--gpus", "2", "--gpus", "0"}, "--gpus 0: want 1 GPU or more"},
		{[]string{a, b, "-o", out, "--gpus", "2", "--gpus", "4", "--gpus", "8"}, "--gpus given 3 times for 2 result files: give one count for every run, or one per file"},
		{[]string{a, b, "-o", out, "--label", "x", "--label", "y", "--label", "z"}, "--label given 3 times for 2 result files"},
		{[]string{a, b, "-o", out, "--baseline", "c.json"}, "--baseline c.json: not one of the result files given"},
		{[]string{a, "-o", out, "--gpus", "8"}, "--label, --baseline and --gpus are for a report of two result files or more"},
		{[]string{a, b, "-o", out, "--slo", "e2e_p99=5"}, "--slo: \"e2e_p99\": unknown objective"},
		{[]string{a, b, "-o", out, "--label", "x", "--label", "x"}, "--label x given twice"},
		{[]string{a, filepath.Dir(a) + "/./" + filepath.Base(a), "-o", out}, a + " and " + filepath.Dir(a) + "/./" + filepath.Base(a) + " are one result file: give it once"},
		// Too many files is the user's to mend, as the other counts are.
		{append(manyFiles(t, results.MaxCrossRuns+1), "-o", out), "a cross-run report takes two result files or more, up to 50, not 51"},
	} {
		code, _, stderr := command(t, "report", tc.args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitcode.Usage, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote the report (%v)", err)
	}
	// A label that is another run's own name: exit 1, naming both files.
	code, _, stderr := command(t, "report", a, b, "-o", out, "--label", b)
	if code != exitcode.Error || !strings.Contains(stderr, a+" and "+b+" are both labelled") {
		t.Errorf("a label that is another run's name: exit %d, stderr %q", code, stderr)
	}
}

// manyFiles are n distinct paths of empty files: a count refused before
// any is read.
func manyFiles(t *testing.T, n int) []string {
	dir := t.TempDir()
	var out []string
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}
