package report

import (
	"bytes"
	"fmt"
	"image"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summary"
)

// latencyRow makes a latency row with the given p50 and p99 = tail × p50.
func latencyRow(metric, label string, p50, tail float64) summary.LatencyRow {
	p99 := p50 * tail
	return summary.LatencyRow{Metric: metric, Label: label, Count: 1200, Mean: p50 * 1.1, Min: p50 / 3, Max: p99 * 2,
		P: map[string]float64{"p50": p50, "p90": p50 + (p99-p50)/3, "p95": p50 + (p99-p50)/2, "p99": p99}}
}

// steadyRun is a 2-minute constant-VUs run with a timeline, errors,
// checks and thresholds, and text that needs escaping.
func steadyRun() *summary.Summary {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := &summary.Summary{
		SchemaVersion: summary.SchemaVersion,
		Meta: summary.Meta{
			Tool: "llmrun", Version: "v0.9.0", Script: "chat<script>alert(1)</script>.js", ScriptSHA256: "0123456789abcdef0123",
			Target: "http://gpu-1:8000/v1", BaseURL: "http://gpu-1:8000/v1", Models: []string{"llama-3-8b"}, Seed: 42,
			Host: "bench-1", OS: "linux", CPUs: 16, GoVersion: "go1.26", Start: start, End: start.Add(2 * time.Minute),
			LoadShape: []summary.ScenarioShape{{Name: "chat", Executor: "constant-vus", Description: "16 VUs for 2m0s", MaxVUs: 16}},
			Tags:      map[string]string{"env": "staging"}, RunID: "abc123", TestID: "nightly", SLO: summary.SLO{TTFTP99: 1500, TPOTP99: 25},
		},
		Serving: summary.Serving{DurationSeconds: 120, Requests: 1210, OK: 1200, Failed: 10, SuccessRate: 1200.0 / 1210,
			RequestThroughput: 10, OutputTokens: 240000, PromptTokens: 600000, MeanInputTokens: 500, MeanOutputTokens: 200,
			OutputTokenThroughput: 2000, TotalTokenThroughput: 7000},
		Latency: []summary.LatencyRow{
			latencyRow("llm_ttft", "TTFT", 120, 8), latencyRow("llm_tpot", "TPOT", 18, 1.6),
			latencyRow("llm_itl", "ITL", 17, 4), latencyRow("llm_e2e", "E2E", 3700, 2), latencyRow("llm_ttfb", "TTFB", 100, 8),
		},
		Errors: []summary.ErrorClassCount{{Class: "http_5xx", Count: 8, Messages: []summary.ErrorCount{{Message: "HTTP 503: <b>overloaded</b> & busy", Count: 8}}},
			{Class: "timeout", Count: 2}},
		Retries:           []summary.ErrorClassCount{{Class: "http_429", Count: 4}},
		ScriptErrors:      []summary.ErrorCount{{Message: "TypeError: r.text is undefined", Count: 3}},
		OtherScriptErrors: 1,
		Client:            health.Report{CPU: 0.95, Procs: 2, Warnings: []string{"the load generator's CPU was saturated"}},
		AbortedBy:         "llm_failed rate<0.001",
		Checks:            []summary.Check{{Name: "status is 200", Passes: 1200, Fails: 10}, {Name: "has tokens", Group: "chat", Passes: 1200}},
		Thresholds: []summary.ThresholdResult{{Metric: "llm_ttft", Threshold: "p(99)<2000", Value: 960, Passed: true},
			{Metric: "llm_failed", Threshold: "rate<0.001", Value: 0.008, Passed: false}},
		Metrics: map[string]summary.MetricSummary{"llm_ttft": {Type: "trend", Contains: "time", Unit: "ms"}},
	}
	for i := range 120 {
		t := float64(i + 1)
		warm := math.Min(1, t/10)
		s.Timeline = append(s.Timeline, summary.TimelinePoint{T: t, Seconds: 1, Requests: int64(10 * warm), Failed: int64(i % 13 / 12),
			OutputTokens: int64(2000 * warm), ActiveVUs: 16, InFlight: int64(15 + i%2),
			TTFTP50: 110 + 10*math.Sin(t/7), TTFTP99: 400 + 300*math.Sin(t/11)*math.Sin(t/11), E2EP50: 3600 + 100*math.Sin(t/5), E2EP99: 6000})
	}
	// An interval in which nothing completed: a gap, not a 0.
	s.Timeline[50].TTFTP50, s.Timeline[50].TTFTP99, s.Timeline[50].E2EP50, s.Timeline[50].E2EP99 = 0, 0, 0, 0
	return s
}

// sweepRun is a 5-level concurrency sweep whose throughput flattens at 32
// while TTFT climbs, with an SLO of TTFT p99 1000 ms met up to 16.
func sweepRun() *summary.Summary {
	s := steadyRun()
	s.Meta.Script = "sweep.js"
	type lv struct {
		c, tput, t50, t99, succ float64
	}
	data := []lv{{4, 800, 90, 200, 1}, {8, 1500, 100, 300, 1}, {16, 2600, 140, 700, 1}, {32, 3100, 400, 2400, 0.999}, {64, 3150, 1800, 9000, 0.97}}
	c := &summary.Capacity{Variable: "concurrency", SLO: summary.SLO{TTFTP99: 1000, TPOTP99: 60},
		Method: "saturation: the first level whose output throughput grows by less than 10 % over the level before while TTFT p99 grows by more than 50 %; max within SLO: the level of highest output throughput whose TTFT p99 and TPOT p99 meet the SLO"}
	s.Meta.LoadShape = nil
	for _, d := range data {
		name := fmt.Sprintf("c%02.0f", d.c)
		l := summary.CapacityLevel{Scenario: name, Level: d.c, RequestRate: d.tput / 200, OutputThroughput: d.tput, SuccessRate: d.succ,
			TTFTP50: d.t50, TTFTP99: d.t99, TPOTP50: 15 + d.c/4, TPOTP99: 20 + d.c/2, MeetsSLO: d.t99 <= 1000}
		c.Levels = append(c.Levels, l)
		s.Meta.LoadShape = append(s.Meta.LoadShape, summary.ScenarioShape{Name: name, Executor: "constant-vus", Description: fmt.Sprintf("%.0f VUs for 1m0s", d.c), MaxVUs: int(d.c)})
		s.Scenarios = append(s.Scenarios, summary.ScenarioSummary{Name: name,
			Serving: summary.Serving{OK: int64(d.tput * 60 / 200), SuccessRate: d.succ, RequestThroughput: d.tput / 200, OutputTokenThroughput: d.tput},
			Latency: []summary.LatencyRow{latencyRow("llm_ttft", "TTFT", d.t50, d.t99/d.t50), latencyRow("llm_itl", "ITL", 15, 1+d.c/16)}})
	}
	// Levels out of order in the file are drawn in order.
	c.Levels[0], c.Levels[4] = c.Levels[4], c.Levels[0]
	sat, best := c.Levels[3], c.Levels[2]
	c.Saturation, c.MaxWithinSLO = &sat, &best
	s.Capacity = c
	return s
}

// emptyRun is a run in which no request completed.
func emptyRun() *summary.Summary {
	return &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{Tool: "llmrun", Script: "empty.js"}}
}

// render renders s and parses the page.
func render(t *testing.T, s *summary.Summary) (string, *html.Node) {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, s); err != nil {
		t.Fatalf("Render: %v", err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("parsing the report: %v", err)
	}
	return buf.String(), doc
}

// attr returns a node's attribute.
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// hasClass reports whether a node has a class.
func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// findAll returns the nodes under n (n included) that match.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if match(d) {
			out = append(out, d)
		}
	}
	if match(n) {
		out = append([]*html.Node{n}, out...)
	}
	return out
}

// element matches elements by tag name.
func element(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == tag }
}

// text returns the text under n.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// charts returns the page's charts by data-chart name; a name twice fails.
func charts(t *testing.T, doc *html.Node) map[string]*html.Node {
	t.Helper()
	out := map[string]*html.Node{}
	for _, n := range findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "data-chart"); return ok }) {
		name, _ := attr(n, "data-chart")
		if _, dup := out[name]; dup {
			t.Errorf("two charts named %q", name)
		}
		out[name] = n
	}
	return out
}

// chartTexts returns the lines of text that stand for charts with nothing
// to show, by chart name.
func chartTexts(doc *html.Node) map[string]string {
	out := map[string]string{}
	for _, n := range findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "data-chart-text"); return ok }) {
		name, _ := attr(n, "data-chart-text")
		out[name] = text(n)
	}
	return out
}

// drawn returns a chart's data elements: series paths and dots.
func drawn(chart *html.Node) []*html.Node {
	return findAll(chart, func(n *html.Node) bool {
		return n.Type == html.ElementNode && (n.Data == "path" || n.Data == "circle") && hasClass(n, "data")
	})
}

// mark returns the group of a chart's data-mark.
func mark(chart *html.Node, name string) *html.Node {
	ms := findAll(chart, func(n *html.Node) bool { v, _ := attr(n, "data-mark"); return v == name })
	if len(ms) == 0 {
		return nil
	}
	return ms[0]
}

// checkCharts checks that the page has the charts named, each an
// accessible SVG with tick labels and at least one drawn element, and
// returns them.
func checkCharts(t *testing.T, doc *html.Node, names ...string) map[string]*html.Node {
	t.Helper()
	all := charts(t, doc)
	for _, name := range names {
		c := all[name]
		if c == nil {
			t.Errorf("chart %q missing; have %v", name, slices.Sorted(maps.Keys(all)))
			continue
		}
		if c.Data != "svg" {
			t.Errorf("chart %q is a <%s>, want <svg>", name, c.Data)
		}
		if role, _ := attr(c, "role"); role != "img" {
			t.Errorf("chart %q: role %q, want img", name, role)
		}
		if titles := findAll(c, element("title")); len(titles) == 0 || titles[0].Parent != c || strings.TrimSpace(text(titles[0])) == "" {
			t.Errorf("chart %q has no title", name)
		}
		if ticks := findAll(c, func(n *html.Node) bool { return element("g")(n) && hasClass(n, "ticks") }); len(ticks) == 0 || len(findAll(ticks[0], element("text"))) < 4 {
			t.Errorf("chart %q has too few tick labels", name)
		}
		if len(drawn(c)) == 0 {
			t.Errorf("chart %q draws no data", name)
		}
	}
	return all
}

// checkFinite fails on NaN or infinities anywhere in the page.
func checkFinite(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"NaN", "Inf"} {
		if i := strings.Index(page, bad); i >= 0 {
			t.Errorf("the page has %q: ...%s...", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
}

// pathXs returns the x coordinates of a path's M and L commands.
func pathXs(t *testing.T, d string) []float64 {
	t.Helper()
	var xs []float64
	for _, cmd := range strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'L' }) {
		x, err := strconv.ParseFloat(strings.Fields(cmd)[0], 64)
		if err != nil {
			t.Fatalf("path %q: %v", d, err)
		}
		xs = append(xs, x)
	}
	return xs
}

var (
	latencyNames  = []string{"latency-ttft", "latency-tpot", "latency-itl", "latency-e2e"}
	timelineNames = []string{"time-throughput", "time-requests", "time-latency", "time-load"}
	sweepNames    = []string{"sweep-ttft", "sweep-throughput", "sweep-success", "latency-throughput"}
)

func TestRenderSteadyRun(t *testing.T) {
	page, doc := render(t, steadyRun())
	checkFinite(t, page)
	all := checkCharts(t, doc, slices.Concat(latencyNames, timelineNames)...)
	for _, name := range sweepNames {
		if all[name] != nil {
			t.Errorf("a run without sweep has chart %q", name)
		}
	}
	// Every text is escaped: the script name and error message make no
	// element, and the page has no script at all.
	if n := len(findAll(doc, element("script"))) + len(findAll(doc, element("b"))); n > 0 {
		t.Errorf("the page has %d <script> or <b> elements from unescaped text", n)
	}
	if !strings.Contains(page, "chat&lt;script&gt;alert(1)&lt;/script&gt;.js") {
		t.Errorf("the script's name is not in the page, escaped")
	}
	for _, want := range []string{"1210 (1200 ok, 10 failed)", "99.17 %", "10 req/s", "2000 tok/s", "7000 tok/s", "v0.9.0", "bench-1", "16 VUs for 2m0s", "2026-11-29 12:00:00 UTC",
		"http_5xx", "8× HTTP 503: <b>overloaded</b> & busy", "4 retried attempts (http_429 4)", "TypeError: r.text is undefined", "other messages",
		"the load generator's CPU was saturated", "aborted early by a threshold: llm_failed rate<0.001", "status is 200", "chat › has tokens", "p(99)<2000", "rate<0.001", "0.008"} {
		if !strings.Contains(text(doc), want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	// The latency table: one row per metric, with its p99.
	if !strings.Contains(text(doc), "960.0") {
		t.Errorf("the latency table lacks TTFT p99")
	}
	// Thresholds show pass and fail.
	var verdicts []string
	for _, td := range findAll(doc, element("td")) {
		if hasClass(td, "pass") || hasClass(td, "fail") {
			verdicts = append(verdicts, text(td))
		}
	}
	if !slices.Contains(verdicts, "pass") || !slices.Contains(verdicts, "fail") {
		t.Errorf("thresholds' verdicts %v, want a pass and a fail", verdicts)
	}
	// The interval in which nothing completed is a gap in the latency
	// lines, which start again after it.
	for _, line := range drawn(all["time-latency"]) {
		if d, _ := attr(line, "d"); line.Data == "path" && strings.Count(d, "M") != 2 {
			t.Errorf("a latency line has %d segments, want 2 around the gap", strings.Count(d, "M"))
		}
	}
	// The run's SLO is on the TTFT and TPOT distributions and over time.
	for name, want := range map[string]string{"latency-ttft": "SLO TTFT p99 1500 ms", "latency-tpot": "SLO TPOT p99 25.0 ms", "time-latency": "SLO TTFT p99 1500 ms"} {
		if m := mark(all[name], "slo"); m == nil || text(m) != want {
			t.Errorf("chart %s has no SLO line %q", name, want)
		}
	}
	for _, name := range []string{"latency-itl", "latency-e2e"} {
		if mark(all[name], "slo") != nil {
			t.Errorf("chart %s has an SLO line", name)
		}
	}
	if !strings.Contains(text(doc), "TTFT p99 ≤ 1500 ms, TPOT p99 ≤ 25.0 ms") {
		t.Errorf("the header does not give the SLO")
	}
	// Active VUs and requests in flight are often equal: the VUs' line is
	// wide and pale under the other, not hidden by it.
	for _, line := range findAll(all["time-load"], func(n *html.Node) bool { return element("path")(n) && hasClass(n, "data") }) {
		if name := text(line); hasClass(line, "wide") != (name == "active VUs") {
			t.Errorf("time-load's %s line: wide %v", name, hasClass(line, "wide"))
		}
	}
	// The over-time charts share their time axis.
	var axes []string
	for _, name := range timelineNames {
		var ticks []string
		for _, txt := range findAll(all[name], element("text")) {
			if a, _ := attr(txt, "text-anchor"); a == "middle" && txt.Parent != nil && hasClass(txt.Parent, "ticks") {
				x, _ := attr(txt, "x")
				ticks = append(ticks, x+"="+text(txt))
			}
		}
		axes = append(axes, strings.Join(ticks, " "))
	}
	if len(slices.Compact(slices.Clone(axes))) != 1 {
		t.Errorf("the over-time charts' time axes differ:\n%s", strings.Join(axes, "\n"))
	}
}

func TestRenderSweep(t *testing.T) {
	s := sweepRun()
	page, doc := render(t, s)
	checkFinite(t, page)
	all := checkCharts(t, doc, slices.Concat(latencyNames, timelineNames, sweepNames)...)
	curve := all["latency-throughput"]

	slo := mark(curve, "slo")
	if slo == nil || len(findAll(slo, element("path"))) != 1 {
		t.Fatalf("the curve has no SLO line")
	}
	if got := text(slo); got != "SLO TTFT p99 1000 ms" {
		t.Errorf("SLO label %q", got)
	}
	for name, want := range map[string]string{"saturation": "saturation: concurrency 32", "max-within-slo": "max within SLO: concurrency 16, 2600 tok/s"} {
		m := mark(curve, name)
		if m == nil || len(findAll(m, element("circle"))) != 1 {
			t.Errorf("the curve has no %s marker", name)
			continue
		}
		if got := text(m); got != want {
			t.Errorf("%s label %q, want %q", name, got, want)
		}
	}
	// TTFT p50 (c0) and p99 (c1): one dot per level each, labelled with
	// the level, joined in level order (the file lists them out of
	// order).
	for _, class := range []string{"c0", "c1"} {
		var labels []string
		for _, n := range findAll(curve, element("text")) {
			if n.PrevSibling != nil && n.PrevSibling.Data == "circle" && hasClass(n.PrevSibling, "data") && hasClass(n.PrevSibling, class) {
				labels = append(labels, text(n))
			}
		}
		if want := []string{"4", "8", "16", "32", "64"}; !slices.Equal(labels, want) {
			t.Errorf("series %s: level labels %v, want %v", class, labels, want)
		}
	}
	lines := findAll(curve, func(n *html.Node) bool { return element("path")(n) && hasClass(n, "data") })
	if len(lines) != 2 {
		t.Fatalf("the curve has %d lines, want 2 (TTFT p50 and p99)", len(lines))
	}
	for _, line := range lines {
		d, _ := attr(line, "d")
		if xs := pathXs(t, d); len(xs) != 5 || !slices.IsSorted(xs) {
			t.Errorf("the curve's points %v are not in level order", xs)
		}
	}
	if legend := text(curve); !strings.Contains(legend, "TTFT p50") || !strings.Contains(legend, "TTFT p99") {
		t.Errorf("the curve does not name its two series")
	}
	if caps := findAll(curve.Parent, element("figcaption")); len(caps) != 1 || text(caps[0]) != s.Capacity.Method {
		t.Errorf("the curve's caption is not the method")
	}
	// The level charts mark the two levels and the SLO.
	for _, name := range []string{"sweep-ttft", "sweep-throughput", "sweep-success"} {
		for _, m := range []string{"saturation", "max-within-slo"} {
			if mark(all[name], m) == nil {
				t.Errorf("chart %s does not mark %s", name, m)
			}
		}
	}
	if mark(all["sweep-ttft"], "slo") == nil {
		t.Errorf("the TTFT chart has no SLO line")
	}
	for _, want := range []string{"The server saturates at concurrency 32", "is 2600 output tok/s, at concurrency 16", "max within SLO", "c64"} {
		if !strings.Contains(text(doc), want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

// A sweep's page leads with its answer: the verdict, the levels table and
// the latency-throughput curve come before the whole-run figures, which
// say that they pool the levels; there is one verdict, and no
// per-scenario table repeating the levels.
func TestRenderSweepLeadsWithTheAnswer(t *testing.T) {
	page, doc := render(t, sweepRun())
	order := []string{`id="verdict"`, `id="levels"`, `data-chart="latency-throughput"`, `data-chart="sweep-ttft"`, `id="timeline"`, `id="serving"`, `id="latency"`, `data-chart="latency-ttft"`}
	at := make([]int, len(order))
	for i, marker := range order {
		if at[i] = strings.Index(page, marker); at[i] < 0 {
			t.Fatalf("the page has no %s", marker)
		}
		if i > 0 && at[i] < at[i-1] {
			t.Errorf("%s comes before %s", marker, order[i-1])
		}
	}
	for _, id := range []string{"serving", "latency"} {
		sections := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "id"); return element("section")(n) && v == id })
		if len(sections) != 1 || !strings.Contains(strings.ToLower(text(sections[0])), "all levels pooled: not the latency of any level") {
			t.Errorf("section %s does not say that it pools the levels", id)
		}
	}
	if n := strings.Count(text(doc), "The server saturates at") + strings.Count(text(doc), "did not reach saturation"); n != 1 {
		t.Errorf("the page gives %d verdicts, want 1", n)
	}
	if strings.Contains(page, `id="scenarios"`) {
		t.Errorf("a sweep whose scenarios are all levels has a per-scenario table")
	}
	// The levels table: a row per level, in order, with the level's counts
	// and percentiles from its scenario.
	levels := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "id"); return v == "levels" })[0]
	rows := findAll(levels, element("tr"))
	var header []string
	for _, th := range findAll(rows[0], element("th")) {
		header = append(header, text(th))
	}
	want := []string{"concurrency", "scenario", "ok", "failed", "success", "req/s", "out tok/s", "TTFT p50", "TTFT p95", "TTFT p99", "TPOT p50", "TPOT p99", "ITL p99", "meets SLO", ""}
	if !slices.Equal(header, want) {
		t.Errorf("levels table header %q, want %q", header, want)
	}
	if len(rows) != 6 {
		t.Fatalf("levels table has %d rows, want a header and 5 levels", len(rows))
	}
	var cells []string
	for _, td := range findAll(rows[3], element("td")) {
		cells = append(cells, text(td))
	}
	// Level 16: 2600 tok/s, 780 ok, TTFT p95 = (140 + 700) / 2, ITL p99 15 × 2.
	if want := []string{"16", "c16", "780", "0", "100.00 %", "13", "2600", "140.0", "420.0", "700.0", "19.0", "28.0", "30.0", "yes", "max within SLO"}; !slices.Equal(cells, want) {
		t.Errorf("level 16's row %q, want %q", cells, want)
	}
}

// Latency over time draws a marker at each interval in which requests
// completed, lines only between neighbouring intervals, and nothing at an
// interval without a completed request: a lone interval between two gaps
// is a marker, not a line nor nothing.
func TestLatencyOverTimeDrawsWhatWasMeasured(t *testing.T) {
	s := steadyRun()
	for _, i := range []int{60, 62} {
		s.Timeline[i].TTFTP50, s.Timeline[i].TTFTP99, s.Timeline[i].E2EP50, s.Timeline[i].E2EP99 = 0, 0, 0, 0
	}
	_, doc := render(t, s)
	chart := checkCharts(t, doc, "time-latency")["time-latency"]
	measured := len(s.Timeline) - 3
	for i, name := range []string{"TTFT p50", "TTFT p99", "E2E p50", "E2E p99"} {
		class := "c" + strconv.Itoa(i)
		var xs []float64
		for _, dot := range findAll(chart, func(n *html.Node) bool { return element("circle")(n) && hasClass(n, "data") && hasClass(n, class) }) {
			cx, _ := attr(dot, "cx")
			x, err := strconv.ParseFloat(cx, 64)
			if err != nil {
				t.Fatal(err)
			}
			xs = append(xs, x)
		}
		if len(xs) != measured {
			t.Fatalf("%s: %d markers, want one per interval with a completed request (%d)", name, len(xs), measured)
		}
		// The intervals are a second each: one step of x between
		// neighbours, two across a gap.
		step := xs[1] - xs[0]
		isolated := 0
		for k := 1; k+1 < len(xs); k++ {
			if xs[k]-xs[k-1] > 1.5*step && xs[k+1]-xs[k] > 1.5*step {
				isolated++
			}
		}
		if isolated != 1 {
			t.Errorf("%s: %d markers between two gaps, want 1 (interval 61)", name, isolated)
		}
		lines := findAll(chart, func(n *html.Node) bool { return element("path")(n) && hasClass(n, "data") && hasClass(n, class) })
		if len(lines) != 1 {
			t.Fatalf("%s: %d lines", name, len(lines))
		}
		d, _ := attr(lines[0], "d")
		for _, sub := range strings.Split(d, "M")[1:] {
			px := pathXs(t, "M"+sub)
			if len(px) < 2 {
				t.Errorf("%s: a line of one point %q", name, sub)
			}
			for k := 1; k < len(px); k++ {
				if px[k]-px[k-1] > 1.5*step {
					t.Errorf("%s: a segment from x %v to %v crosses an interval without data", name, px[k-1], px[k])
				}
			}
		}
		if n := strings.Count(d, "M"); n != 3 {
			t.Errorf("%s: %d stretches of line, want 3 around the gaps at 50 and 60-62", name, n)
		}
	}
}

// Requests per second have a chart of their own, beside output tokens,
// whose line they would otherwise lie on; failures are a second line when
// there are some, and a caption saying there were none otherwise.
func TestRequestsOverTimeHaveTheirOwnChart(t *testing.T) {
	s := steadyRun()
	_, doc := render(t, s)
	all := checkCharts(t, doc, "time-throughput", "time-requests")
	legend := func(c *html.Node) []string {
		var names []string
		for _, g := range findAll(c, func(n *html.Node) bool { return element("g")(n) && hasClass(n, "legend") }) {
			names = append(names, text(g))
		}
		return names
	}
	if got := legend(all["time-throughput"]); !slices.Equal(got, []string{"output tok/s"}) {
		t.Errorf("throughput legend %q, want output tok/s alone", got)
	}
	if got := legend(all["time-requests"]); !slices.Equal(got, []string{"requests/s", "failed/s"}) {
		t.Errorf("requests legend %q, want requests/s and failed/s", got)
	}
	// The requests line spans its own axis: from the ramp's first second
	// (1 request) to the steady 10, most of the plot's height.
	line := findAll(all["time-requests"], func(n *html.Node) bool { return element("path")(n) && hasClass(n, "c0") && hasClass(n, "data") })
	if len(line) != 1 {
		t.Fatalf("the requests chart has %d requests/s lines", len(line))
	}
	d, _ := attr(line[0], "d")
	var ys []float64
	for _, cmd := range strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'L' }) {
		y, err := strconv.ParseFloat(strings.Fields(cmd)[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		ys = append(ys, y)
	}
	if extent := slices.Max(ys) - slices.Min(ys); extent < 60 {
		t.Errorf("the requests/s line spans %.1f px of its chart, want most of it", extent)
	}

	for i := range s.Timeline {
		s.Timeline[i].Failed = 0
	}
	_, doc = render(t, s)
	c := checkCharts(t, doc, "time-requests")["time-requests"]
	if got := legend(c); !slices.Equal(got, []string{"requests/s"}) {
		t.Errorf("without failures, requests legend %q, want requests/s alone", got)
	}
	if caps := findAll(c.Parent, element("figcaption")); len(caps) != 1 || text(caps[0]) != "No request failed." {
		t.Errorf("without failures the requests chart does not say so")
	}
}

// A sweep in which every request of every level succeeded has no success
// chart, a flat line at 100 %, but a line saying so.
func TestRenderSweepAllSucceeded(t *testing.T) {
	s := sweepRun()
	for i := range s.Capacity.Levels {
		s.Capacity.Levels[i].SuccessRate = 1
	}
	var requests int64
	for i := range s.Scenarios {
		sv := &s.Scenarios[i].Serving
		sv.Requests, sv.Failed, sv.SuccessRate = sv.OK, 0, 1
		requests += sv.OK
	}
	_, doc := render(t, s)
	if charts(t, doc)["sweep-success"] != nil {
		t.Errorf("a sweep without failure has a success-rate chart")
	}
	if got, want := chartTexts(doc)["sweep-success"], fmt.Sprintf("success rate 100 %% throughout: %d requests, 0 failed", requests); got != want {
		t.Errorf("the success line is %q, want %q", got, want)
	}
	// One level with a failure brings the chart back.
	s.Scenarios[4].Serving.Failed = 3
	_, doc = render(t, s)
	checkCharts(t, doc, "sweep-success")
}

func TestRenderSweepWithoutSLO(t *testing.T) {
	s := sweepRun()
	s.Capacity.SLO, s.Capacity.MaxWithinSLO = summary.SLO{}, nil
	page, doc := render(t, s)
	checkFinite(t, page)
	curve := checkCharts(t, doc, "latency-throughput")["latency-throughput"]
	if mark(curve, "slo") != nil || mark(curve, "max-within-slo") != nil {
		t.Errorf("a sweep without SLO has an SLO line or a max-within-SLO marker")
	}
	if mark(curve, "saturation") == nil {
		t.Errorf("the saturation marker is missing")
	}
	if !strings.Contains(text(doc), "No SLO was set.") {
		t.Errorf("the verdict does not say there is no SLO")
	}
}

func TestRenderEmptyRun(t *testing.T) {
	page, doc := render(t, emptyRun())
	checkFinite(t, page)
	// A chart with nothing to draw is one line of text, not a panel.
	if all := charts(t, doc); len(all) != 0 {
		t.Errorf("an empty run has charts %v", slices.Sorted(maps.Keys(all)))
	}
	said := chartTexts(doc)
	for _, name := range latencyNames {
		if !strings.Contains(said[name], "sample") {
			t.Errorf("chart %q is not a line saying it has no sample: %q", name, said[name])
		}
	}
	if !strings.Contains(text(doc), "No request completed") {
		t.Errorf("the page does not say no request completed")
	}
}

// TestRenderSinglePoints draws one interval, one level, and latencies
// that are all equal or 0: nothing divides by a zero range.
func TestRenderSinglePoints(t *testing.T) {
	s := emptyRun()
	s.Latency = []summary.LatencyRow{
		{Metric: "llm_ttft", Label: "TTFT", Count: 1, Mean: 5, Min: 5, Max: 5, P: map[string]float64{"p50": 5, "p90": 5, "p95": 5, "p99": 5}},
		{Metric: "llm_tpot", Label: "TPOT", Count: 1, P: map[string]float64{}},
		{Metric: "llm_itl", Label: "ITL", Count: 1, Max: math.NaN(), P: map[string]float64{"p50": math.Inf(1)}},
	}
	s.Serving = summary.Serving{Requests: 1, OK: 1, SuccessRate: 1}
	s.Timeline = []summary.TimelinePoint{{T: 1, Seconds: 1, Requests: 1, OutputTokens: 10, ActiveVUs: 1, InFlight: 1, TTFTP50: 5, TTFTP99: 5, E2EP50: 50, E2EP99: 50}}
	lvl := summary.CapacityLevel{Scenario: "c1", Level: 1, OutputThroughput: 10, SuccessRate: 1, TTFTP50: 5, TTFTP99: 5, MeetsSLO: true}
	s.Capacity = &summary.Capacity{Variable: "rate", Levels: []summary.CapacityLevel{lvl}, SLO: summary.SLO{TTFTP99: 5}, Saturation: &lvl, MaxWithinSLO: &lvl, Method: "one level"}
	page, doc := render(t, s)
	checkFinite(t, page)
	all := checkCharts(t, doc, slices.Concat([]string{"latency-ttft", "latency-tpot"}, timelineNames, []string{"sweep-ttft", "sweep-throughput", "latency-throughput"})...)
	if got := chartTexts(doc)["sweep-success"]; got != "success rate 100 % throughout: 1 request, 0 failed" {
		t.Errorf("the one-level sweep's success chart is %q, want its line of text", got)
	}
	for _, m := range []string{"slo", "saturation", "max-within-slo"} {
		if mark(all["latency-throughput"], m) == nil {
			t.Errorf("the one-level curve has no %s mark", m)
		}
	}
	// A zero-length timeline interval has no rate: a gap, not a NaN.
	s.Timeline[0].Seconds = 0
	page, _ = render(t, s)
	checkFinite(t, page)
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   axisSpec
		values []float64
		log    bool
	}{
		{"none", axisSpec{}, nil, false},
		{"one", axisSpec{}, []float64{5}, false},
		{"zero", axisSpec{}, []float64{0}, false},
		{"zero with zero", axisSpec{Zero: true}, []float64{0, 0}, false},
		{"negative", axisSpec{}, []float64{-3}, false},
		{"non-finite", axisSpec{Log: true}, []float64{math.NaN(), math.Inf(1), math.Inf(-1)}, false},
		{"narrow", axisSpec{Log: true, Zero: true}, []float64{100, 150}, false},
		{"wide", axisSpec{Log: true, Zero: true}, []float64{10, 5000}, true},
		{"wide with zero", axisSpec{Log: true}, []float64{0, 10, 5000}, false},
		{"fixed", axisSpec{Lo: 0, Hi: 100}, []float64{500}, false},
		{"tiny", axisSpec{}, []float64{1e-9, 2e-9}, false},
		{"huge", axisSpec{}, []float64{-1e308, 1e308}, false},
		{"ticks", axisSpec{Ticks: []float64{4, 8, 16}, Log: true, LogRatio: 4}, nil, true},
		{"one tick", axisSpec{Ticks: []float64{4}, Log: true, Zero: true}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScale(tc.spec, tc.values, 0, 100)
			if s.log != tc.log {
				t.Errorf("log %v, want %v", s.log, tc.log)
			}
			if !(s.lo < s.hi) || !finite(s.lo) || !finite(s.hi) {
				t.Errorf("domain [%v, %v]", s.lo, s.hi)
			}
			if len(s.ticks) == 0 {
				t.Errorf("no tick")
			}
			for _, v := range append(tc.values, s.ticks...) {
				if p, ok := s.px(v); ok && (p < -1e-6 || p > 100+1e-6) && tc.spec.Lo >= tc.spec.Hi {
					t.Errorf("%v maps to %v, outside the axis", v, p)
				}
			}
		})
	}
}

func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.5: "0.5", 3 * 0.1: "0.3", 250: "250", 2500: "2500", 25000: "25k", 1.5e6: "1.5M", -20: "-20"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestRenderInChromium opens a sweep's report in headless Chromium: the
// DOM it builds still has every chart with what it draws, and its
// screenshot is a picture, not a blank page.
func TestRenderInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	src, want := render(t, sweepRun())
	if err := os.WriteFile(page, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	dom := browsertest.Run(t, bin, page, "--dump-dom")
	got, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatalf("parsing chromium's DOM: %v", err)
	}
	wantCharts, gotCharts := charts(t, want), charts(t, got)
	if len(wantCharts) != len(slices.Concat(latencyNames, timelineNames, sweepNames)) {
		t.Fatalf("the page has charts %v", slices.Sorted(maps.Keys(wantCharts)))
	}
	for name, w := range wantCharts {
		g := gotCharts[name]
		if g == nil {
			t.Errorf("chart %q is not in chromium's DOM", name)
			continue
		}
		if n, m := len(drawn(g)), len(drawn(w)); n != m || n == 0 {
			t.Errorf("chart %q: chromium's DOM draws %d elements, the page %d", name, n, m)
		}
	}
	for _, m := range []string{"slo", "saturation", "max-within-slo"} {
		if gotCharts["latency-throughput"] == nil || mark(gotCharts["latency-throughput"], m) == nil {
			t.Errorf("the curve's %s mark is not in chromium's DOM", m)
		}
	}

	img := browsertest.Screenshot(t, bin, page, filepath.Join(dir, "report.png"), 1280, 4000)
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 3000 {
		t.Errorf("screenshot is %v, want about 1280×4000", b)
	}
	colours := browsertest.Colours(img, image.Rectangle{})
	inked := 0
	for c, n := range colours {
		if c[0] < 0xf0 || c[1] < 0xf0 || c[2] < 0xf0 {
			inked += n
		}
	}
	share := float64(inked) / float64(b.Dx()*b.Dy())
	t.Logf("screenshot %dx%d: %d colours, %.1f %% of pixels not white; chromium took %v in all", b.Dx(), b.Dy(), len(colours), 100*share, time.Since(start).Round(time.Millisecond))
	if len(colours) < 100 || share < 0.01 {
		t.Errorf("the screenshot looks blank: %d colours, %.2f %% of pixels not white", len(colours), 100*share)
	}
}

func TestRenderNil(t *testing.T) {
	if err := Render(&bytes.Buffer{}, nil); err == nil {
		t.Error("Render(nil) succeeded")
	}
}

// The load shape says when each scenario started: at the run's start,
// from a start time, or after the scenario it was chained to.
func TestLoadShapeSaysWhenAScenarioStarted(t *testing.T) {
	for _, tc := range []struct {
		shape summary.ScenarioShape
		want  string
	}{
		{summary.ScenarioShape{StartTime: "0s"}, ""},
		{summary.ScenarioShape{}, ""},
		{summary.ScenarioShape{StartTime: "30s"}, ", from 30s"},
		{summary.ScenarioShape{StartTime: "0s", StartAfter: "c1"}, ", after c1"},
		{summary.ScenarioShape{StartTime: "5s", StartAfter: "c1"}, ", 5s after c1 ended"},
	} {
		if got := startOf(tc.shape); got != tc.want {
			t.Errorf("startOf(%+v) = %q, want %q", tc.shape, got, tc.want)
		}
	}
}

// The scenario table shows the VUs each scenario used out of its maxVUs
// ("-" for a result that did not keep them), and the alerts name a
// scenario the run's stop ended before its plan, with where it stopped.
func TestScenarioTableShowsVUsUsedAndWhereAScenarioStopped(t *testing.T) {
	s := steadyRun()
	at := 0.3
	s.Meta.LoadShape = []summary.ScenarioShape{{Name: "chat", MaxVUs: 16, PeakVUs: 12, InterruptedAt: &at}, {Name: "rag", MaxVUs: 4}}
	s.Scenarios = []summary.ScenarioSummary{{Name: "chat"}, {Name: "rag"}}
	out, _ := render(t, s)
	for _, want := range []string{"VUs used/max", "<td>chat</td><td class=\"num\">12/16</td>", "<td>rag</td><td class=\"num\">-/4</td>", "interrupted before the end of its plan: chat at 30%"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The host line of a merged result of several machines says how many,
// and that their CPUs are a total; one machine's reads as before.
func TestHostLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta summary.Meta
		want string
	}{
		{"one host", summary.Meta{Host: "vm", OS: "linux/amd64", CPUs: 2}, "vm (linux/amd64, 2 CPUs)"},
		{"two hosts", summary.Meta{Host: "gen-1, gen-2", OS: "linux/amd64", CPUs: 4}, "2 hosts: gen-1, gen-2 (linux/amd64, 4 CPUs in all)"},
		{"no CPU count", summary.Meta{Host: "gen-1, gen-2"}, "2 hosts: gen-1, gen-2"},
		{"no host", summary.Meta{}, "-"},
	} {
		var got string
		for _, f := range metaFields(&summary.Summary{Meta: tc.meta}) {
			if f.Label == "host" {
				got = f.Value
			}
		}
		if got != tc.want {
			t.Errorf("%s: host %q, want %q", tc.name, got, tc.want)
		}
	}
}

// linearPercentile reads a histogram's percentiles as vLLM computes them
// (numpy's linear interpolation between the samples around rank
// (n − 1)·p/100), within the histogram's 0.1 %, not the sample at a rank.
func TestLinearPercentile(t *testing.T) {
	var forty []float64
	for i := 1; i <= 40; i++ {
		forty = append(forty, float64(i*i)) // 1, 4, 9, ..., 1600 ms
	}
	for _, tc := range []struct {
		name    string
		samples []float64
		p, want float64
	}{
		{"median of an even count: between the middle two", forty, 50, (400 + 441) / 2.0},
		{"p99 of 40: short of the largest", forty, 99, 1521 + 0.61*(1600-1521)},
		{"p90 of 40", forty, 90, 1296 + 0.1*(1369-1296)},
		{"p100: the largest", forty, 100, 1600},
		{"one sample", []float64{12.5}, 99, 12.5},
		{"p50 of three", []float64{10, 20, 40}, 50, 20},
	} {
		got := linearPercentile(metrics.TrendOf(tc.samples), tc.p)
		if math.Abs(got-tc.want) > 0.001*tc.want {
			t.Errorf("%s: p%g = %g, want %g within 0.1 %%", tc.name, tc.p, got, tc.want)
		}
	}
}

// TestWarningsFoldIntoOneLine: two warnings or more fold into one line
// that says how many, so that they do not push the answer below the fold
// (a loaded machine adds two of its own); one warning shows as it is.
func TestWarningsFoldIntoOneLine(t *testing.T) {
	folded := func(doc *html.Node) []*html.Node {
		return findAll(doc, func(n *html.Node) bool {
			return n.Type == html.ElementNode && n.Data == "details" && slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "id" && a.Val == "warnings" })
		})
	}
	many := steadyRun()
	many.Client.Warnings = append(many.Client.Warnings, "other processes on this machine took the CPU", "arrival-rate iterations started up to 10.0 ms late (p99)")
	n := len(alerts(many))
	_, doc := render(t, many)
	details := folded(doc)
	if len(details) != 1 {
		t.Fatalf("%d warnings: %d folded blocks, want 1", n, len(details))
	}
	summaries := findAll(details[0], element("summary"))
	if len(summaries) != 1 || !strings.HasPrefix(text(summaries[0]), fmt.Sprintf("%d warnings about how these figures were measured", n)) {
		t.Errorf("the folded line does not say how many warnings: %q", text(details[0]))
	}
	for _, w := range alerts(many) {
		if !strings.Contains(text(details[0]), w) {
			t.Errorf("the folded block lacks the warning %q", w)
		}
	}

	one := steadyRun()
	one.AbortedBy, one.Client.Warnings = "", nil
	if len(alerts(one)) != 1 {
		one.Client.Warnings = []string{"the load generator's CPU was saturated"}
	}
	if got := len(alerts(one)); got != 1 {
		t.Fatalf("the run with one warning has %d", got)
	}
	_, doc = render(t, one)
	if len(folded(doc)) != 0 {
		t.Error("one warning is folded; it should show as it is")
	}
	if !strings.Contains(text(doc), alerts(one)[0]) {
		t.Errorf("the one warning %q is not on the page", alerts(one)[0])
	}
}
