package report

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/summary"
	"golang.org/x/net/html"
)

func ptr(v float64) *float64 { return &v }

// searchRun is sweepRun's levels found by a concurrency search that
// tried 4, 8, 16, 32, then 24 (inconclusive: its p99 not bounded above)
// and bracketed the capacity between 16 and 24.
func searchRun() *summary.Summary {
	s := sweepRun()
	s.Capacity.Search = &summary.CapacitySearch{Variable: "concurrency", Low: 16, High: 24, Estimate: 19.5959, Width: 0.25, Confidence: 0.95,
		Levels: []summary.SearchLevel{
			{Level: 4, Seconds: 6.1, Requests: 400, Verdict: "met", Figure: "ttft_p99", Value: 200, Lo: ptr(180), Hi: ptr(230), Bound: 1000},
			{Level: 8, Seconds: 6.2, Requests: 800, Verdict: "met", Figure: "ttft_p99", Value: 300, Lo: ptr(280), Hi: ptr(330), Bound: 1000},
			{Level: 16, Seconds: 6.3, Requests: 1300, Verdict: "met", Figure: "ttft_p99", Value: 700, Lo: ptr(650), Hi: ptr(760), Bound: 1000},
			{Level: 32, Seconds: 6.4, Requests: 1500, Verdict: "missed", Figure: "ttft_p99", Value: 2400, Lo: ptr(2300), Hi: ptr(2500), Bound: 1000},
			{Level: 24, Seconds: 18.5, Requests: 310, Verdict: "inconclusive", Figure: "ttft_p99", Value: 990, Lo: ptr(900), Bound: 1000,
				Why: "the p99's upper bound needs 368 requests", Extended: true},
		},
		Stop: "bracketed within ±25 %: concurrency 16 met the SLO and concurrency 24 did not", Seconds: 43.5}
	return s
}

// byID is the element of the page with the id, nil when none.
func byID(doc *html.Node, id string) *html.Node {
	found := findAll(doc, func(n *html.Node) bool { v, ok := attr(n, "id"); return ok && v == id })
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

// A search's report leads with its section: the capacity with its
// bracket, why it stopped, the width, confidence, levels and time; a
// chart of the levels numbered in order, each coloured by its verdict
// with its interval as a bar (dashed when open), the bracket shaded and
// the SLO and the estimate drawn; and the levels in the order tried.
func TestRenderSearchLeadsWithTheCapacity(t *testing.T) {
	page, doc := render(t, searchRun())
	inOrderIn(t, page, `id="search"`, `id="search-verdict"`, `data-chart="search-levels"`, `id="search-levels"`, `id="capacity"`, `data-chart="latency-throughput"`, `id="serving"`)
	verdict := text(byID(doc, "search-verdict"))
	for _, want := range []string{"Capacity: concurrency 19.6, between 16, which met the SLO, and 24, which did not (±20.0 %).",
		"Stopped: bracketed within ±25 %: concurrency 16 met the SLO and concurrency 24 did not."} {
		if !strings.Contains(verdict, want) {
			t.Errorf("the search's verdict %q lacks %q", verdict, want)
		}
	}
	facts := text(byID(doc, "search-facts"))
	for _, want := range []string{"width asked±25 %", "confidence95 %", "levels tried5", "time of the levels43.5 s"} {
		if !strings.Contains(facts, want) {
			t.Errorf("the search's facts %q lack %q", facts, want)
		}
	}
	// Each figure once: the capacity and its bracket are the answer's.
	if strings.Contains(facts, "19.6") || strings.Contains(facts, "16 –") {
		t.Errorf("the facts %q repeat the capacity or its bracket", facts)
	}
	rows := findAll(byID(doc, "search-levels"), element("tr"))
	want := []string{"#concurrencysecondsrequestsverdictdeciding figurevalueintervalboundextended",
		"146.10400metTTFT p99200.0 ms[180.0, 230.0]1000 ms",
		"286.20800metTTFT p99300.0 ms[280.0, 330.0]1000 ms",
		"3166.301300metTTFT p99700.0 ms[650.0, 760.0]1000 ms",
		"4326.401500missedTTFT p992400 ms[2300, 2500]1000 ms",
		"52418.5310inconclusiveTTFT p99990.0 ms[900.0, +∞]1000 msyes"}
	if len(rows) != len(want) {
		t.Fatalf("the levels table has %d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		if got := text(r); got != want[i] {
			t.Errorf("levels table row %d: %q, want %q", i, got, want[i])
		}
	}
	if !strings.Contains(page, "concurrency 24: the p99&#39;s upper bound needs 368 requests") {
		t.Error("the page does not say why level 24's interval is open")
	}

	chart := checkCharts(t, doc, "search-levels")["search-levels"]
	dots := findAll(chart, func(n *html.Node) bool { return n.Data == "circle" && hasClass(n, "data") })
	verdicts := map[string]int{}
	for _, d := range dots {
		for _, v := range searchVerdicts {
			if hasClass(d, "verdict-"+v) {
				verdicts[v]++
			}
		}
	}
	if len(dots) != 5 || verdicts["met"] != 3 || verdicts["missed"] != 1 || verdicts["inconclusive"] != 1 {
		t.Errorf("the chart has %d dots, by verdict %v; want 5: 3 met, 1 missed, 1 inconclusive", len(dots), verdicts)
	}
	lines := findAll(chart, func(n *html.Node) bool { return n.Data == "path" && hasClass(n, "line") && hasClass(n, "interval") })
	if len(lines) != 2 {
		t.Fatalf("the chart has %d interval lines, want the closed ones and the open one", len(lines))
	}
	d, _ := attr(lines[0], "d")
	if n := strings.Count(d, "M"); n != 4 {
		t.Errorf("the closed intervals are %d bars, want 4: %s", n, d)
	}
	if d, _ := attr(lines[1], "d"); !hasClass(lines[1], "open") || strings.Count(d, "M") != 1 {
		t.Errorf("the open interval is not one dashed bar: %s", d)
	}
	for _, m := range []string{"slo", "capacity", "bracket"} {
		if mark(chart, m) == nil {
			t.Errorf("the chart has no %s", m)
		}
	}
	if got := text(mark(chart, "capacity")); got != "capacity ≈ 19.6" {
		t.Errorf("the estimate's label is %q", got)
	}
	if got := text(mark(chart, "slo")); got != "SLO TTFT p99 1000 ms" {
		t.Errorf("the SLO's label is %q", got)
	}
	var numbers []string
	for _, d := range dots {
		if l := d.NextSibling; l != nil && l.Data == "text" {
			numbers = append(numbers, text(l))
		}
	}
	if strings.Join(numbers, ",") != "1,2,3,4,5" {
		t.Errorf("the dots are numbered %v, want 1 to 5", numbers)
	}
	if n := strings.Count(page, "did not reach saturation"); n != 0 {
		t.Errorf("the search's page says %d times that a sweep did not reach saturation", n)
	}
}

// Levels decided by different figures, of different units, share one
// axis as each figure over its bound, a share's bound over it, so that
// the SLO is the line at 1 and above it is worse.
func TestSearchChartOfSeveralFigures(t *testing.T) {
	sr := &summary.CapacitySearch{Variable: "rate", Low: 2, High: 4, Estimate: 2.83, Confidence: 0.95, Levels: []summary.SearchLevel{
		{Level: 2, Verdict: "met", Figure: "chat: tpot_p99", Value: 40, Lo: ptr(38), Hi: ptr(45), Bound: 50},
		{Level: 4, Verdict: "missed", Figure: "rag: success_rate", Value: 0.9, Lo: ptr(0.85), Hi: ptr(0.95), Bound: 0.99},
	}}
	c := searchChart(sr, "rate")
	if got := c.AxisLabels[1].Text; !strings.HasPrefix(got, "deciding figure ÷ its SLO bound") {
		t.Errorf("the y axis is %q", got)
	}
	if len(c.Refs) == 0 || c.Refs[0].Label.Text != "SLO bound" {
		t.Fatalf("the SLO line is %+v", c.Refs)
	}
	var met, missed Dot
	for _, d := range c.Dots {
		switch d.Class {
		case "verdict-met":
			met = d
		case "verdict-missed":
			missed = d
		}
	}
	// The line is "M<left> <y>H<right>".
	left, _, _ := strings.Cut(strings.TrimPrefix(c.Refs[0].D, "M"), "H")
	sloPx := num(strings.Fields(left)[1])
	if !(num(met.CY) > sloPx && num(missed.CY) < sloPx) {
		t.Errorf("the met level (y %s) is not under the SLO line (y %.1f) and the missed one (y %s) over it", met.CY, sloPx, missed.CY)
	}
}

// The header names the first level's load and says how many more ran,
// instead of a line per level: the search's table has them.
func TestSearchShapesFoldTheLevels(t *testing.T) {
	_, doc := render(t, searchRun())
	shape := findAll(doc, func(n *html.Node) bool { return n.Data == "ul" && hasClass(n, "shape") })
	if len(shape) != 1 {
		t.Fatal("no load shape in the header")
	}
	got := text(shape[0])
	if !strings.HasPrefix(got, "c04: 4 VUs for 1m0s") || !strings.Contains(got, "then 4 more levels of the search") || strings.Contains(got, "c08") {
		t.Errorf("the load shape is %q", got)
	}
}

// inOrderIn checks that the page has each of marks, in that order.
func inOrderIn(t *testing.T, page string, marks ...string) {
	t.Helper()
	last := -1
	for _, m := range marks {
		at := strings.Index(page, m)
		if at < last {
			t.Errorf("%s is missing or out of order", m)
		}
		last = at
	}
}

// A mixed workload's levels decided by the same figure of different
// scenarios share its axis, in its unit; a search of one level draws it
// inside the axis, not at its edge.
func TestSearchChartOfAMixedWorkload(t *testing.T) {
	sr := &summary.CapacitySearch{Variable: "rate", Confidence: 0.5, Levels: []summary.SearchLevel{
		{Level: 40, Verdict: "inconclusive", Figure: "rag: ttft_p99", Value: 43, Lo: ptr(43), Bound: 400},
	}}
	c := searchChart(sr, "rate")
	if got := c.AxisLabels[1].Text; got != "TTFT p99 (ms)" {
		t.Errorf("the y axis is %q, want TTFT p99 (ms)", got)
	}
	if len(c.Dots) != 1 {
		t.Fatalf("%d dots, want 1", len(c.Dots))
	}
	if x := num(c.Dots[0].CX); x < chartWidth/2 || x > wideWidth-chartWidth/2 {
		t.Errorf("the one level is at x %.0f, want within the middle of the %d px chart", x, wideWidth)
	}
	// The open interval's bar goes past the SLO's line: it has no end.
	var bar string
	for _, l := range c.Lines {
		if l.Class == "interval open" {
			bar = l.D
		}
	}
	from, to, _ := strings.Cut(strings.TrimPrefix(bar, "M"), "L")
	sloLeft, _, _ := strings.Cut(strings.TrimPrefix(c.Refs[0].D, "M"), "H")
	if top, slo := min(num(strings.Fields(from)[1]), num(strings.Fields(to + " 0 0")[1])), num(strings.Fields(sloLeft)[1]); bar == "" || top >= slo {
		t.Errorf("the open interval's bar %q does not pass the SLO's line at y %.1f", bar, slo)
	}
	sr.Levels = append(sr.Levels, summary.SearchLevel{Level: 80, Verdict: "missed", Figure: "chat: ttft_p99", Value: 900, Lo: ptr(850), Hi: ptr(950), Bound: 400})
	if got := searchChart(sr, "rate").AxisLabels[1].Text; !strings.HasPrefix(got, "TTFT p99 (ms)") {
		t.Errorf("two scenarios' TTFT p99 make the y axis %q, want TTFT p99 (ms)", got)
	}
}

// The levels' table of a search says "inconclusive" of a level the search
// judged so, not that it missed the SLO.
func TestSearchLevelsTableSaysInconclusive(t *testing.T) {
	s := searchRun()
	s.Capacity.Search.Levels[3].Verdict = "inconclusive"
	_, doc := render(t, s)
	var row []string
	for _, tr := range findAll(byID(doc, "capacity"), element("tr")) {
		cells := findAll(tr, element("td"))
		if len(cells) > 1 && text(cells[1]) == "c32" {
			for _, c := range cells {
				row = append(row, text(c))
			}
		}
	}
	if !strings.Contains(strings.Join(row, "|"), "|inconclusive|") {
		t.Errorf("the levels' row of level 32 is %q: want the search's verdict, inconclusive", row)
	}
}
