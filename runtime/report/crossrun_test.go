package report

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// realRun reads a result file of testdata/crossrun, written by a real run
// against the simulator (testdata/crossrun/README.md says how).
func realRun(t *testing.T, name string) CrossRunInput {
	t.Helper()
	file := filepath.Join("testdata", "crossrun", name+".json")
	s, err := summary.ReadJSON(file)
	if err != nil {
		t.Fatal(err)
	}
	return CrossRunInput{Label: name, File: file, Summary: s}
}

// judged are the runs, the first the baseline, each treatment judged
// against it as llmrun compare judges by default.
func judged(runs ...CrossRunInput) []CrossRunInput {
	base := regression.FromSummary(runs[0].Summary, regression.DefaultConfidence)
	for i := range runs[1:] {
		cur := regression.FromSummary(runs[i+1].Summary, regression.DefaultConfidence)
		rs := []regression.Run{cur, base}
		o := regression.Options{Tolerance: 0.1, Confidence: regression.DefaultConfidence}
		runs[i+1].Against = regression.Report{Runs: rs, Figures: regression.Headline(), Comparisons: regression.Compare(rs, regression.Headline(), o), Options: o}
	}
	return runs
}

// renderCross is the page of c as it reads: its HTML with the entities
// html/template wrote (&#43; for +) unescaped.
func renderCross(t *testing.T, c CrossRun) string {
	t.Helper()
	return html.UnescapeString(renderCrossHTML(t, c))
}

// renderCrossHTML is the page of c.
func renderCrossHTML(t *testing.T, c CrossRun) string {
	t.Helper()
	var buf bytes.Buffer
	if err := RenderCrossRun(&buf, c); err != nil {
		t.Fatalf("RenderCrossRun: %v", err)
	}
	return buf.String()
}

// svgOf is the SVG of the chart name in page, "" when it has none.
func svgOf(page, name string) string {
	i := strings.Index(page, `data-chart="`+name+`"`)
	if i < 0 {
		return ""
	}
	return page[i : i+strings.Index(page[i:], "</svg>")]
}

// frontLabel says whether the chart's svg labels label as on its front.
func frontLabel(svg, label string) bool {
	return regexp.MustCompile(`data-mark="front"><circle[^>]*/><text[^>]*>` + regexp.QuoteMeta(label) + `</text>`).MatchString(svg)
}

// Two runs against simulators with a faster and a slower decode step, and
// a sweep, drawn per GPU with --gpus 8: one point per run and per level,
// the faster run on the front and the slower off it, and a table of the
// runs with compare's verdicts.
func TestCrossRunOfRealRuns(t *testing.T) {
	runs := judged(realRun(t, "decode-5ms"), realRun(t, "decode-20ms"), realRun(t, "sweep"))
	page := renderCross(t, CrossRun{Runs: runs, GPUs: []int{8}})
	fast, slow, sweep := runs[0].Summary, runs[1].Summary, runs[2].Summary
	if fast.Serving.OutputTokenThroughput <= slow.Serving.OutputTokenThroughput {
		t.Fatalf("the planted runs are not as planted: %v tok/s for the fast decode, %v for the slow", fast.Serving.OutputTokenThroughput, slow.Serving.OutputTokenThroughput)
	}
	for _, name := range []string{"pareto-user", "pareto-ttft"} {
		svg := svgOf(page, name)
		if svg == "" {
			t.Fatalf("the page has no chart %s", name)
		}
		if n, want := strings.Count(svg, `class="data dot`), 2+len(sweep.Capacity.Levels); n != want {
			t.Errorf("%s: %d points, want %d: one per run and one per level of the sweep", name, n, want)
		}
		if !strings.Contains(svg, "decode-5ms: "+textfmt.Num(fast.Serving.OutputTokenThroughput/8)+" output tok/s per GPU") {
			t.Errorf("%s: the fast run's point is not its output throughput over 8 GPUs (%s)", name, textfmt.Num(fast.Serving.OutputTokenThroughput/8))
		}
		if n := strings.Count(svg, `data-mark="front"`); n < 2 {
			t.Errorf("%s: %d front marks", name, n)
		}
		if !frontLabel(svg, "decode-5ms") {
			t.Errorf("%s: the fast run, on the front, is not labelled", name)
		}
		if frontLabel(svg, "decode-20ms") {
			t.Errorf("%s: the slow run, which the fast one beats on both axes, is labelled as on the front", name)
		}
	}
	for _, want := range []string{
		"Per GPU: each run's output throughput divided by 8 GPUs (--gpus).",
		"Sweeps and single runs together: each level of sweep is a point, and each of decode-5ms, decode-20ms one point for its whole run.",
		`<th class="num baseline">decode-5ms<br><span class="role">baseline</span></th>`,
		`<th class="num">decode-20ms<br><span class="role">treatment</span></th>`,
		"sweep, 4 levels by concurrency",
		"decode-5ms @", // not a sweep: no level
	} {
		if strings.HasSuffix(want, "@") {
			if strings.Contains(page, want) {
				t.Errorf("a single run's point is named with a level: %q", want)
			}
			continue
		}
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The table shows compare's own verdicts.
	for _, c := range runs[1].Against.Comparisons {
		change, _, verdict := regression.Cells(c)
		if cell := change + " " + verdict; !strings.Contains(page, cell) {
			t.Errorf("the table lacks %s's %q", c.Figure.Name, cell)
		}
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page has %q", bad)
		}
	}
}

// Per GPU only when it is known for every run: by --gpus, else by each
// run's GPU telemetry; else the whole deployment's throughput, saying
// which run lacks a GPU count.
func TestCrossRunGPUBasis(t *testing.T) {
	fast, slow := realRun(t, "decode-5ms"), realRun(t, "decode-20ms")
	for _, tc := range []struct {
		name  string
		runs  []CrossRunInput
		gpus  []int
		wants []string
	}{
		{"--gpus", []CrossRunInput{fast, slow}, []int{3}, []string{"divided by 3 GPUs (--gpus)",
			"decode-20ms: " + textfmt.Num(slow.Summary.Serving.OutputTokenThroughput/3) + " output tok/s per GPU"}},
		{"--gpus per run", []CrossRunInput{fast, slow}, []int{2, 8}, []string{"divided by its GPUs (--gpus): decode-5ms by 2, decode-20ms by 8.",
			"decode-5ms: " + textfmt.Num(fast.Summary.Serving.OutputTokenThroughput/2) + " output tok/s per GPU",
			"decode-20ms: " + textfmt.Num(slow.Summary.Serving.OutputTokenThroughput/8) + " output tok/s per GPU"}},
		{"telemetry", []CrossRunInput{fast, slow}, nil, []string{"divided by the GPUs its GPU telemetry reported",
			"decode-5ms: " + textfmt.Num(fast.Summary.Serving.OutputTokenThroughput/2) + " output tok/s per GPU",
			"decode-20ms: " + textfmt.Num(slow.Summary.Serving.OutputTokenThroughput/4) + " output tok/s per GPU"}},
		{"a run without telemetry", []CrossRunInput{fast, slow, realRun(t, "sweep")}, nil, []string{
			"Not per GPU: no --gpus was given and 1 run (sweep) has no GPU telemetry",
			"decode-5ms: " + textfmt.Num(fast.Summary.Serving.OutputTokenThroughput) + " output tok/s, whole deployment (not per GPU)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := renderCross(t, CrossRun{Runs: judged(tc.runs...), GPUs: tc.gpus})
			for _, want := range tc.wants {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
		})
	}
}

// A run whose requests all failed has no point, and the page says so; the
// SLO is drawn on the TTFT chart; the baseline need not be the first run.
func TestCrossRunFailedRunSLOAndBaseline(t *testing.T) {
	runs := judged(realRun(t, "decode-20ms"), realRun(t, "failed"), realRun(t, "decode-5ms"))
	page := renderCross(t, CrossRun{Runs: runs, Baseline: 0, SLO: &summary.SLO{TTFTP99: 500}})
	if !strings.Contains(page, "failed: no completed request in the run, so no point.") {
		t.Errorf("the page does not say that the failed run has no point")
	}
	for _, name := range []string{"pareto-user", "pareto-ttft"} {
		if n := strings.Count(svgOf(page, name), `class="data dot`); n != 2 {
			t.Errorf("%s: %d points, want 2", name, n)
		}
	}
	if !strings.Contains(svgOf(page, "pareto-ttft"), `data-mark="slo"`) || strings.Contains(svgOf(page, "pareto-user"), `data-mark="slo"`) {
		t.Errorf("the SLO is not drawn on the TTFT chart alone")
	}
	page = renderCross(t, CrossRun{Runs: judged(realRun(t, "decode-5ms"), realRun(t, "decode-20ms")), Baseline: 1})
	if !strings.Contains(page, `<th class="num baseline">decode-20ms`) || !strings.Contains(page, "llmrun report: 2 runs against decode-20ms") {
		t.Errorf("the second run is not shown as the baseline")
	}
}

func TestRenderCrossRunErrors(t *testing.T) {
	one := []CrossRunInput{realRun(t, "decode-5ms")}
	two := append(one, realRun(t, "decode-20ms"))
	for _, tc := range []struct {
		c    CrossRun
		want string
	}{
		{CrossRun{Runs: one}, "want two runs or more"},
		{CrossRun{Runs: two, Baseline: 2}, "a baseline among them"},
		{CrossRun{Runs: two, GPUs: []int{-1}}, "-1 GPUs"},
		{CrossRun{Runs: two, GPUs: []int{2, 0}}, "0 GPUs"},
		{CrossRun{Runs: two, GPUs: []int{1, 2, 3}}, "3 GPU counts for 2 runs"},
	} {
		if err := RenderCrossRun(&bytes.Buffer{}, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.c.Baseline, err, tc.want)
		}
	}
}

// Laid out by Chromium, the fronts' labels cover no point and no other
// label; the screenshot shows the charts.
func TestCrossRunInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	runs := judged(realRun(t, "decode-5ms"), realRun(t, "decode-20ms"), realRun(t, "sweep"))
	page := renderCrossHTML(t, CrossRun{Runs: runs, GPUs: []int{8}, SLO: &summary.SLO{TTFTP99: 500}})
	for _, chart := range []string{"pareto-user", "pareto-ttft"} {
		dots, labels := `svg[data-chart="`+chart+`"] circle.dot`, `svg[data-chart="`+chart+`"] g.mark[data-mark="front"] text`
		boxes := browsertest.Boxes(t, bin, page, 1280, dots, labels)
		if len(boxes[dots]) != 2+len(runs[2].Summary.Capacity.Levels) {
			t.Fatalf("%s: chromium lays out %d points", chart, len(boxes[dots]))
		}
		var placed []browsertest.Box
		for _, l := range boxes[labels] {
			if l.Width == 0 {
				continue // a label with no room: in the front table only
			}
			for _, d := range boxes[dots] {
				if overlap(l, d) {
					t.Errorf("%s: a front label at %+v covers the point at %+v", chart, l, d)
				}
			}
			for _, o := range placed {
				if overlap(l, o) {
					t.Errorf("%s: front labels at %+v and %+v overlap", chart, l, o)
				}
			}
			placed = append(placed, l)
		}
		if len(placed) == 0 {
			t.Errorf("%s: no front label laid out", chart)
		}
	}

	dir := t.TempDir()
	file, shot := filepath.Join(dir, "crossrun.html"), filepath.Join(dir, "crossrun.png")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	img := browsertest.Screenshot(t, bin, file, shot, 1280, 1400)
	// The charts' dots are in the runs' colours: the baseline's blue
	// (#1864ab) and the first treatment's orange (#d9480f) are on screen.
	seen := map[string]bool{}
	for c := range browsertest.Colours(img, image.Rectangle{}) {
		seen[fmt.Sprintf("%02x%02x%02x", c[0], c[1], c[2])] = true
	}
	for _, c := range []string{"1864ab", "d9480f"} {
		if !seen[c] {
			t.Errorf("the screenshot has no pixel of #%s", c)
		}
	}
}

// overlap says whether two boxes share more than an edge.
func overlap(a, b browsertest.Box) bool {
	return a.Left < b.Left+b.Width && b.Left < a.Left+a.Width && a.Top < b.Top+b.Height && b.Top < a.Top+a.Height
}

// A GPU two targets report (two scrapes of one node) counts once, known
// by its UUID, else by its host and index; GPUs of several targets known
// by neither are all counted, and the count is said to be unsure.
func TestTelemetryGPUsCountsEachGPUOnce(t *testing.T) {
	target := func(gpus ...summary.GPU) summary.ServerTarget {
		return summary.ServerTarget{Kind: summary.TargetGPU, GPUs: gpus}
	}
	uuid := func(id string) summary.GPU { return summary.GPU{UUID: id} }
	onHost := func(host, id string) summary.GPU { return summary.GPU{Host: host, ID: id} }
	index := func(id string) summary.GPU { return summary.GPU{ID: id} }
	for _, tc := range []struct {
		name    string
		targets []summary.ServerTarget
		want    int
		unsure  bool
	}{
		{"no telemetry", nil, 0, false},
		{"one target", []summary.ServerTarget{target(uuid("a"), uuid("b"))}, 2, false},
		{"two targets, one node, by UUID", []summary.ServerTarget{target(uuid("a"), uuid("b")), target(uuid("a"), uuid("b"))}, 2, false},
		{"two targets, two nodes, by UUID", []summary.ServerTarget{target(uuid("a"), uuid("b")), target(uuid("c"), uuid("d"))}, 4, false},
		{"two targets, one node, by host and index", []summary.ServerTarget{target(onHost("n1", "0"), onHost("n1", "1")), target(onHost("n1", "0"), onHost("n1", "1"))}, 2, false},
		{"two targets, two nodes, by host and index", []summary.ServerTarget{target(onHost("n1", "0")), target(onHost("n2", "0"))}, 2, false},
		{"one target, by index only", []summary.ServerTarget{target(index("0"), index("1"))}, 2, false},
		{"two targets, by index only", []summary.ServerTarget{target(index("0"), index("1")), target(index("0"), index("1"))}, 4, true},
		{"a server target is no GPU", []summary.ServerTarget{{Kind: summary.TargetServer}, target(uuid("a"))}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &summary.Summary{}
			if tc.targets != nil {
				s.Server = &summary.Server{Targets: tc.targets}
			}
			if n, unsure := telemetryGPUs(s); n != tc.want || unsure != tc.unsure {
				t.Errorf("%d GPUs, unsure %v; want %d, %v", n, unsure, tc.want, tc.unsure)
			}
		})
	}
	// The page says when it cannot tell.
	fast, slow := realRun(t, "decode-5ms"), realRun(t, "decode-20ms")
	slow.Summary = &summary.Summary{Meta: slow.Summary.Meta, Serving: slow.Summary.Serving, Latency: slow.Summary.Latency,
		Server: &summary.Server{Targets: []summary.ServerTarget{target(index("0")), target(index("0"))}}}
	page := renderCross(t, CrossRun{Runs: judged(fast, slow)})
	if want := "The telemetry of decode-20ms (2 GPUs) names some GPUs by neither"; !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
}

// With an SLO, a point is judged by its own figures (a sweep's level by
// its TTFT p99, not the sweep's): those that miss it are hollow, named so
// in the legend and off the front, and the findings lead with the
// configuration of most throughput per GPU within it. (TTFT p99 in the
// testdata: the sweep's levels 43.9, 51.5, 79.0 and 207.6 ms, the runs
// 71.8 and 72.1 ms.)
func TestCrossRunWithinTheSLO(t *testing.T) {
	runs := judged(realRun(t, "decode-5ms"), realRun(t, "decode-20ms"), realRun(t, "sweep"))
	page := renderCross(t, CrossRun{Runs: runs, GPUs: []int{2}, SLO: &summary.SLO{TTFTP99: 60}})
	answer := "Within TTFT p99 ≤ 60 ms, success rate ≥ 99 %: the most output tok/s per GPU is sweep @concurrency 2 (111.9 tok/s per GPU at 158.4 tok/s per user, TTFT p99 51.5 ms)."
	findings := page[strings.Index(page, `id="findings"`):]
	if i := strings.Index(findings, "<strong>"); i < 0 || !strings.HasPrefix(findings[i+len("<strong>"):], answer) {
		t.Errorf("the findings do not lead with %q:\n%.600s", answer, findings)
	}
	for _, want := range []string{
		"Against tok/s per user, the front within the SLO (what no other configuration beats on both axes): sweep @concurrency 2, sweep @concurrency 1.",
		"Against TTFT p99, the front within the SLO (what no other configuration beats on both axes): sweep @concurrency 1, sweep @concurrency 2.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, name := range []string{"pareto-user", "pareto-ttft"} {
		svg := svgOf(page, name)
		if n := len(regexp.MustCompile(`class="data dot c\d hollow"`).FindAllString(svg, -1)); n != 4 {
			t.Errorf("%s: %d hollow points, want 4 (both runs, the sweep's levels 4 and 8)", name, n)
		}
		if n := strings.Count(svg, `class="data dot`); n != 6 {
			t.Errorf("%s: %d points, want 6", name, n)
		}
		if !strings.Contains(svg, `class="swatch swatch-dot hollow"`) || !strings.Contains(svg, ">misses the SLO</text>") {
			t.Errorf("%s: the legend does not name the hollow points", name)
		}
		for _, off := range []string{"decode-5ms", "sweep @concurrency 4", "sweep @concurrency 8"} {
			if frontLabel(svg, off) {
				t.Errorf("%s: %s, which misses the SLO, is on the front", name, off)
			}
		}
	}
	// No point within the SLO: the answer says so.
	page = renderCross(t, CrossRun{Runs: runs, GPUs: []int{2}, SLO: &summary.SLO{TTFTP99: 10}})
	if want := "Within TTFT p99 ≤ 10 ms, success rate ≥ 99 %: no configuration meets the SLO."; !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
	// Without an SLO, no point is hollow and no answer is given.
	page = renderCross(t, CrossRun{Runs: runs, GPUs: []int{2}})
	if regexp.MustCompile(`class="data dot c\d hollow"`).MatchString(page) || strings.Contains(page, "Within ") {
		t.Errorf("a page without an SLO marks points as missing it")
	}
}

// Laid out by Chromium, the TTFT chart's front labels of a sweep's close
// levels, left of an SLO line, keep the order of their points (the upper
// label the upper point's), and one away from its point has a leader.
// (Whole throughput and a 60 ms SLO: the labels of @concurrency 1 and 2
// went right of the line, the lower point's on top.)
func TestCrossRunFrontLabelsInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	runs := judged(realRun(t, "decode-5ms"), realRun(t, "decode-20ms"), realRun(t, "sweep"))
	page := renderCrossHTML(t, CrossRun{Runs: runs, SLO: &summary.SLO{TTFTP99: 60}})
	front := `svg[data-chart="pareto-ttft"] g.mark[data-mark="front"]`
	rings, labels, leaders := front+" circle", front+" text", front+" path.leader"
	boxes := browsertest.Boxes(t, bin, page, 1280, rings, labels, leaders)
	if len(boxes[rings]) != 2 || len(boxes[labels]) != 2 {
		t.Fatalf("%d front points and %d labels, want 2 of each (the sweep's levels 1 and 2)", len(boxes[rings]), len(boxes[labels]))
	}
	centre := func(b browsertest.Box) (float64, float64) { return b.Left + b.Width/2, b.Top + b.Height/2 }
	_, y0 := centre(boxes[rings][0])
	_, y1 := centre(boxes[rings][1])
	l0, l1 := boxes[labels][0], boxes[labels][1]
	if l0.Width == 0 || l1.Width == 0 {
		t.Fatalf("a front label is not drawn: %+v, %+v", l0, l1)
	}
	if (y0 < y1) != (l0.Top < l1.Top) {
		t.Errorf("the labels at %+v and %+v are in the reverse order of their points (%.1f, %.1f)", l0, l1, y0, y1)
	}
	far := 0
	for i, l := range []browsertest.Box{l0, l1} {
		x, y := centre(boxes[rings][i])
		dx := max(l.Left-x, x-(l.Left+l.Width), 0)
		dy := max(l.Top-y, y-(l.Top+l.Height), 0)
		if math.Hypot(dx, dy) > 2*ringRadius {
			far++
		}
	}
	if len(boxes[leaders]) < far {
		t.Errorf("%d labels away from their points, %d leaders", far, len(boxes[leaders]))
	}
}
