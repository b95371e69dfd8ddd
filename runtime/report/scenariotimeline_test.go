package report

import (
	"bytes"
	"image"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/runtime/summary"
)

// mixedRun is steadyRun as a run of two scenarios with their own
// timelines and a 10-second warmup: chat all along but for 60–70 s, in
// which it had nothing, and rag from 30 s on, slower.
func mixedRun() *summary.Summary {
	s := steadyRun()
	s.Meta.Script = "mixed.js"
	s.Meta.LoadShape = []summary.ScenarioShape{
		{Name: "chat", Executor: "constant-vus", Description: "8 VUs for 2m0s", MaxVUs: 8},
		{Name: "rag", Executor: "constant-vus", Description: "8 VUs for 1m30s", MaxVUs: 8, StartTime: "30s"},
	}
	s.Serving.WarmupRequests = 40
	s.Meta.End = s.Meta.Start.Add(110 * time.Second)
	chat := summary.ScenarioSummary{Name: "chat", Serving: summary.Serving{OK: 800, SuccessRate: 1, RequestThroughput: 7, OutputTokenThroughput: 1400},
		Latency: []summary.LatencyRow{latencyRow("llm_ttft", "TTFT", 90, 3), latencyRow("llm_e2e", "E2E", 2000, 2)}}
	rag := summary.ScenarioSummary{Name: "rag", Serving: summary.Serving{OK: 400, SuccessRate: 1, RequestThroughput: 4, OutputTokenThroughput: 800},
		Latency: []summary.LatencyRow{latencyRow("llm_ttft", "TTFT", 400, 4), latencyRow("llm_e2e", "E2E", 6000, 2)}}
	for _, p := range s.Timeline {
		if p.T <= 60 || p.T > 70 {
			c := p
			c.Requests, c.OutputTokens, c.ActiveVUs, c.TTFTP50, c.TTFTP99 = p.Requests/2, p.OutputTokens*2/3, 8, 90, 250
			chat.Timeline = append(chat.Timeline, c)
		}
		if p.T > 30 {
			r := p
			r.Requests, r.OutputTokens, r.ActiveVUs, r.TTFTP50, r.TTFTP99 = p.Requests/2, p.OutputTokens/3, 8, 400, 1600
			rag.Timeline = append(rag.Timeline, r)
		}
	}
	s.Scenarios = []summary.ScenarioSummary{chat, rag}
	return s
}

// scenarioTimelineNames are the charts over time by scenario.
var scenarioTimelineNames = []string{"scenario-time-throughput", "scenario-time-ttft"}

// A run of several scenarios draws each over time, a line per scenario
// from its own timeline, before anything pooled: a scenario's line stops
// where it had nothing, the warmup is shaded, and the TTFT chart carries
// the SLO. A result without scenario timelines (a file written before
// them) or a sweep has no such charts.
func TestScenarioTimelineCharts(t *testing.T) {
	s := mixedRun()
	// Points no run writes, as a damaged file may have: no time, off the
	// time axis, at no time at all.
	rag := &s.Scenarios[1]
	rag.Timeline = append(rag.Timeline, summary.TimelinePoint{T: 1e9, Seconds: 1, Requests: 5, OutputTokens: 1e6, TTFTP99: 7},
		summary.TimelinePoint{T: -3, Seconds: -1, OutputTokens: 9}, summary.TimelinePoint{T: 119.5})
	page, doc := render(t, s)
	checkFinite(t, page)
	all := checkCharts(t, doc, scenarioTimelineNames...)
	for _, name := range scenarioTimelineNames {
		chart := all[name]
		if chart == nil {
			continue
		}
		if mark(chart, "warmup") == nil {
			t.Errorf("%s: no warmup band", name)
		}
		width, _ := attr(chart, "width")
		w, err := strconv.ParseFloat(width, 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range findAll(chart, func(n *html.Node) bool { return element("path")(n) && hasClass(n, "data") }) {
			d, _ := attr(line, "d")
			for _, x := range pathXs(t, d) {
				if x < 0 || x > w {
					t.Errorf("%s: a line drawn at x %g, off the chart's %g", name, x, w)
				}
			}
		}
		// The points off the axis do not stretch the throughput's scale.
		if ticks := findAll(chart, func(n *html.Node) bool { return element("g")(n) && hasClass(n, "ticks") }); name == "scenario-time-throughput" && len(ticks) == 1 {
			if labels := text(ticks[0]); !strings.Contains(labels, "1500") {
				t.Errorf("%s: tick labels %q, want the scale of the data, up to 1500 tok/s", name, labels)
			}
		}
		stretches := map[string]int{}
		for _, line := range findAll(chart, func(n *html.Node) bool { return element("path")(n) && hasClass(n, "data") }) {
			d, _ := attr(line, "d")
			stretches[strings.TrimSpace(text(line))] += strings.Count(d, "M")
		}
		// chat's line breaks at its gap, rag's is one from 30 s on.
		if stretches["chat"] != 2 || stretches["rag"] != 1 {
			t.Errorf("%s: stretches of line by scenario %v, want chat 2 (around 60–70 s) and rag 1", name, stretches)
		}
	}
	if ttft := all["scenario-time-ttft"]; ttft != nil && mark(ttft, "slo") == nil {
		t.Errorf("the TTFT chart by scenario has no SLO line")
	}
	// Before the pooled figures and the pooled charts over time.
	order := map[string]int{}
	for i, sec := range findAll(doc, element("section")) {
		id, _ := attr(sec, "id")
		order[id] = i
	}
	if at, ok := order["scenario-timeline"]; !ok || at > order["serving"] || at > order["timeline"] {
		t.Errorf("sections in order %v: want scenario-timeline before serving and timeline", order)
	}

	old := mixedRun()
	for i := range old.Scenarios {
		old.Scenarios[i].Timeline = nil
	}
	sweep := sweepRun()
	for i := range sweep.Scenarios {
		sweep.Scenarios[i].Timeline = mixedRun().Scenarios[0].Timeline
	}
	for name, s := range map[string]*summary.Summary{"without scenario timelines": old, "a sweep": sweep} {
		page, doc := render(t, s)
		if got := charts(t, doc); got["scenario-time-throughput"] != nil || strings.Contains(page, `id="scenario-timeline"`) {
			t.Errorf("%s: charts over time by scenario", name)
		}
	}
}

// In Chromium the charts over time by scenario are drawn, above the
// pooled figures, each series in its own colour; the screenshot is
// /tmp/st-scenario-timeline.png, to be looked at.
func TestScenarioTimelineInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	src, _ := render(t, mixedRun())
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, err := html.Parse(bytes.NewReader(browsertest.Run(t, bin, page, "--dump-dom")))
	if err != nil {
		t.Fatal(err)
	}
	checkCharts(t, dom, scenarioTimelineNames...)
	boxes := browsertest.Boxes(t, bin, src, 1280, "#scenario-timeline svg", "#serving", "#scenario-timeline .line.c0", "#scenario-timeline .line.c1")
	svgs, serving := boxes["#scenario-timeline svg"], boxes["#serving"]
	if len(svgs) != 2 || len(serving) != 1 {
		t.Fatalf("boxes %+v", boxes)
	}
	for _, b := range svgs {
		if b.Width < 600 || b.Height < 200 || b.Top+b.Height > serving[0].Top {
			t.Errorf("a chart by scenario at %+v; want a wide chart above the pooled figures at %g", b, serving[0].Top)
		}
	}
	for _, sel := range []string{"#scenario-timeline .line.c0", "#scenario-timeline .line.c1"} {
		if ls := boxes[sel]; len(ls) != 2 || ls[0].Width < 100 {
			t.Errorf("%s: lines %+v, want one wide line in each chart", sel, ls)
		}
	}

	shot := filepath.Join(os.TempDir(), "st-scenario-timeline.png")
	img := browsertest.Screenshot(t, bin, page, shot, 1280, 2400)
	// Both scenarios' colours (report.css's c0 and c1) are inked in the
	// charts by scenario.
	charts := browsertest.Colours(img, image.Rect(0, int(svgs[0].Top), img.Bounds().Max.X, int(svgs[1].Top+svgs[1].Height)))
	inked := map[string]int{"chat": charts[browsertest.RGB{0x18, 0x64, 0xab}], "rag": charts[browsertest.RGB{0xd9, 0x48, 0x0f}]}
	t.Logf("screenshot %s: pixels of each scenario's colour in the charts by scenario: %v", shot, inked)
	if inked["chat"] < 200 || inked["rag"] < 200 {
		t.Errorf("the charts by scenario in the screenshot: pixels of each scenario's colour %v, want both drawn", inked)
	}
}
