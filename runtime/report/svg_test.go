package report

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/summary"
)

// A horizontal line's label goes where no data is drawn: above the line
// at the plot's right end, else under it, else at the left end, else
// above the plot, outside it.
func TestFreeLabelKeepsOffTheData(t *testing.T) {
	area := plot{left: 64, right: 1076, top: 34, bottom: 194}
	const text = "SLO TTFT p99 800 ms"
	across := func(y float64) polyline { return polyline{{area.left, y}, {area.right, y}} }
	rightEnd := func(y float64) polyline { return polyline{{900, y}, {area.right, y}} }
	for _, tc := range []struct {
		name   string
		y      float64
		drawn  []polyline
		texts  []box
		x, ty  string
		anchor string
	}{
		{"no data", 100, nil, nil, "1072.0", "95.0", "end"},
		{"data far from the line", 100, []polyline{across(180)}, nil, "1072.0", "95.0", "end"},
		{"a line over it at the right", 100, []polyline{rightEnd(90)}, nil, "1072.0", "115.0", "end"},
		{"a line crossing the label's place", 100, []polyline{{{1000, 60}, {1070, 96}}}, nil, "1072.0", "115.0", "end"},
		{"a lone dot over it at the right", 100, []polyline{{{1050, 92}}}, nil, "1072.0", "115.0", "end"},
		{"a point's label over it at the right", 100, nil, []box{{1040, 85, 1060, 97}}, "1072.0", "115.0", "end"},
		{"lines over and under it at the right", 100, []polyline{rightEnd(90), rightEnd(110)}, nil, "68.0", "95.0", "start"},
		{"lines over and under it throughout", 100, []polyline{across(90), across(110)}, nil, "1076.0", "28.0", "end"},
		{"the line at the plot's top", 38, nil, nil, "1072.0", "53.0", "end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := freeLabel(text, tc.y, area, tc.drawn, tc.texts)
			if got.X != tc.x || got.Y != tc.ty || got.Anchor != tc.anchor || got.Text != text {
				t.Errorf("label at (%s, %s) anchored %s, want (%s, %s) anchored %s", got.X, got.Y, got.Anchor, tc.x, tc.ty, tc.anchor)
			}
		})
	}
}

// A vertical line's label goes beside it at the plot's top, on the side
// away from the nearer edge, else on the other side, else at the bottom,
// else further along the line, else above the plot: never over data. The
// second line's label goes under the first's.
func TestFreeVerticalLabelKeepsOffTheData(t *testing.T) {
	area := plot{left: 64, right: 576, top: 34, bottom: 254}
	const text = "max within SLO"
	across := func(y float64) polyline { return polyline{{area.left, y}, {area.right, y}} }
	for _, tc := range []struct {
		name          string
		x             float64
		nth           int
		drawn         []polyline
		px, y, anchor string
	}{
		{"nothing near", 200, 0, nil, "204.0", "46.0", "start"},
		{"nothing near, in the right half", 500, 0, nil, "496.0", "46.0", "end"},
		{"the second line", 200, 1, nil, "204.0", "60.0", "start"},
		{"data at its side at the top", 200, 0, []polyline{{{210, 40}, {400, 40}}}, "196.0", "46.0", "end"},
		{"data across the top", 200, 0, []polyline{across(40)}, "204.0", "248.0", "start"},
		{"data across the top and the bottom", 200, 0, []polyline{across(40), across(245)}, "204.0", "60.0", "start"},
		{"data all along it", 200, 0, everyTenPixels(area), "204.0", "28.0", "start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := freeVerticalLabel(text, tc.x, area, tc.nth, tc.drawn, nil)
			if got.X != tc.px || got.Y != tc.y || got.Anchor != tc.anchor || got.Text != text {
				t.Errorf("label at (%s, %s) anchored %s, want (%s, %s) anchored %s", got.X, got.Y, got.Anchor, tc.px, tc.y, tc.anchor)
			}
		})
	}
}

// A marker's label goes above its point, leaning away from the nearer
// side, unless data or another label is there: then to the other lean,
// under the point, or further out.
func TestMarkerLabelKeepsOffTheData(t *testing.T) {
	area := plot{left: 64, right: 1076, top: 34, bottom: 394}
	const label = "max within SLO: concurrency 4, 298.5 tok/s"
	sx := scale{lo: 0, hi: 1000, p0: area.left, p1: area.right}
	sy := scale{lo: 0, hi: 360, p0: area.bottom, p1: area.top}
	// The point is at (266.4, 214), x 200, y 180, in the left half: its
	// label leans right; at x 600 (671.2) it leans left.
	for _, tc := range []struct {
		name   string
		x      float64
		drawn  []polyline
		texts  []box
		px, y  string
		anchor string
	}{
		{"nothing near", 200, nil, nil, "266.4", "192.0", "start"},
		{"nothing near, in the right half", 600, nil, nil, "671.2", "192.0", "end"},
		{"a line through its place above", 200, []polyline{{{260, 180}, {600, 190}}}, nil, "266.4", "242.0", "start"},
		{"a line through its place above, to the left only", 600, []polyline{{{400, 188}, {660, 188}}}, nil, "671.2", "192.0", "start"},
		{"a line above and a point's label under it", 200, []polyline{{{64, 188}, {600, 188}}}, []box{{270, 228, 290, 246}}, "266.4", "170.0", "start"},
		{"data all around it", 200, everyTenPixels(area), nil, "266.4", "28.0", "start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Chart{}
			c.drawMarker(marker{X: tc.x, Y: 180, Label: label, Mark: "max-within-slo"}, sx, sy, area, tc.drawn, tc.texts)
			if len(c.Marks) != 1 {
				t.Fatalf("marks %+v, want one", c.Marks)
			}
			if got := c.Marks[0].Label; got.Y != tc.y || got.Anchor != tc.anchor || got.X != tc.px {
				t.Errorf("label at (%s, %s) anchored %s, want (%s, %s) anchored %s", got.X, got.Y, got.Anchor, tc.px, tc.y, tc.anchor)
			}
		})
	}
}

// The percentile axis is a log scale of 1 − p: p90, p99 and p99.9 are
// equally apart, and the tail from p90 to the max takes most of the
// width instead of a sliver at its right edge.
func TestPercentileAxisSpreadsTheTail(t *testing.T) {
	row := summary.LatencyRow{Metric: "llm_ttft", Label: "TTFT", Count: 1000, Min: 10, Max: 900,
		P: map[string]float64{"p50": 40, "p90": 80, "p95": 120, "p99": 400}}
	c := percentileChart([]summary.LatencyRow{row}, nil, "llm_ttft", "TTFT", 0)
	ticks := map[string]float64{}
	var labels []string
	for _, tk := range c.XTicks {
		x, err := strconv.ParseFloat(tk.X, 64)
		if err != nil {
			t.Fatal(err)
		}
		ticks[tk.Text] = x
		labels = append(labels, tk.Text)
	}
	want := []string{"min", "p50", "p90", "p99", "p99.9", "max"}
	if len(labels) != len(want) {
		t.Fatalf("x ticks %v, want %v", labels, want)
	}
	for i := range want {
		if labels[i] != want[i] {
			t.Fatalf("x ticks %v, want %v", labels, want)
		}
	}
	decade := ticks["p99"] - ticks["p90"]
	if math.Abs(ticks["p99.9"]-ticks["p99"]-decade) > 0.2 || decade < 100 {
		t.Errorf("p90 at %.1f, p99 at %.1f, p99.9 at %.1f: want equally apart, 100 px or more", ticks["p90"], ticks["p99"], ticks["p99.9"])
	}
	if tail, width := ticks["max"]-ticks["p90"], ticks["max"]-ticks["min"]; tail < width/2 {
		t.Errorf("p90 to max spans %.1f px of %.1f: the tail is crushed", tail, width)
	}
	// The dots sit at their percentiles: p99's on the p99 tick.
	if len(c.Dots) != 6 || c.Dots[4].CX != f1(ticks["p99"]) {
		t.Errorf("dots %+v: want 6, the fifth (p99) at x %s", c.Dots, f1(ticks["p99"]))
	}
}

// The header's duration is one figure, not the same twice.
func TestDurationText(t *testing.T) {
	for _, tc := range []struct {
		secs float64
		want string
	}{{38.94, "38.9s"}, {120, "2m0s"}, {0.05, "100ms"}, {0, "-"}, {math.NaN(), "-"}} {
		if got := durationText(tc.secs); got != tc.want {
			t.Errorf("durationText(%g) = %q, want %q", tc.secs, got, tc.want)
		}
	}
}

// The warmup is the timeline's stretch before the measured window, which
// ends with it: from 0 to the timeline's end less the window's length.
func TestWarmupBand(t *testing.T) {
	start := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	run := func(warmup int64, last float64) *summary.Summary {
		return &summary.Summary{Meta: summary.Meta{Start: start, End: start.Add(35700 * time.Millisecond)},
			Serving:  summary.Serving{WarmupIterations: warmup, WarmupRequests: warmup},
			Timeline: []summary.TimelinePoint{{T: 1, Seconds: 1}, {T: last, Seconds: last - 1}}}
	}
	for _, tc := range []struct {
		name string
		s    *summary.Summary
		to   float64
	}{
		{"a warmup", run(31, 40.75), 5.05},
		{"no warmup", run(0, 40.75), 0},
		{"a timeline no longer than the window", run(31, 35.7), 0},
		{"no timeline", &summary.Summary{Serving: summary.Serving{WarmupIterations: 3}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := warmupBand(tc.s)
			switch {
			case tc.to == 0 && b != nil:
				t.Errorf("band %+v, want none", b)
			case tc.to > 0 && (len(b) != 1 || b[0].From != 0 || math.Abs(b[0].To-tc.to) > 1e-9 || b[0].Mark != "warmup"):
				t.Errorf("band %+v, want one from 0 to %g", b, tc.to)
			}
		})
	}
}

// Each label placed is one the next keep off: an SLO line near the top
// of the plot does not put its label over a vertical line's.
func TestLabelsKeepOffEachOther(t *testing.T) {
	c := buildChart(chartSpec{Name: "labels", Title: "labels",
		X: axisSpec{Label: "x", Lo: 0, Hi: 100}, Y: axisSpec{Label: "y", Lo: 0, Hi: 100},
		Series: []series{{Name: "low", Points: []point{{X: 0, Y: 1}, {X: 100, Y: 1}}}},
		Refs: []refLine{{Value: 95, Vertical: true, Label: "saturation", Mark: "saturation"},
			{Value: 90, Label: "SLO TTFT p99 90 ms", Mark: "slo"}}})
	if len(c.Refs) != 2 {
		t.Fatalf("refs %+v, want two", c.Refs)
	}
	if v, h := c.Refs[0].Label, c.Refs[1].Label; labelBox(v).overlaps(labelBox(h)) {
		t.Errorf("the SLO label at (%s, %s) %s covers the vertical line's at (%s, %s) %s", h.X, h.Y, h.Anchor, v.X, v.Y, v.Anchor)
	}
}

// A reference line drawn is one the later labels keep off: the SLO's
// label is not crossed by the vertical "max within SLO" line drawn before
// it, as in a sweep's TTFT chart whose highest level within the SLO is
// near the plot's right end.
func TestLabelsKeepOffReferenceLines(t *testing.T) {
	for _, level := range []float64{70, 80, 90, 95} {
		t.Run(strconv.FormatFloat(level, 'g', -1, 64), func(t *testing.T) {
			c := buildChart(chartSpec{Name: "sweep-ttft", Title: "sweep-ttft",
				X: axisSpec{Label: "concurrency", Lo: 0, Hi: 100}, Y: axisSpec{Label: "TTFT p99", Lo: 0, Hi: 100},
				Series: []series{{Name: "TTFT p99", Points: []point{{X: 0, Y: 1}, {X: 100, Y: 1}}}},
				Refs: []refLine{{Value: level, Vertical: true, Label: "max within SLO", Mark: "max-within-slo"},
					{Value: 50, Label: "SLO TTFT p99 500.0 ms", Mark: "slo"}}})
			if len(c.Refs) != 2 {
				t.Fatalf("refs %+v, want two", c.Refs)
			}
			vertical, slo := refPixels(c.Refs[0]), c.Refs[1].Label
			if crosses(labelBox(slo), []polyline{vertical}) {
				t.Errorf("the SLO label at (%s, %s) %s is crossed by the vertical line %s", slo.X, slo.Y, slo.Anchor, c.Refs[0].D)
			}
		})
	}
}

// A point's label covers no point of any series: a search's levels can
// lie close together on the latency–throughput curve, and a long label
// to the right of one point ran over the next (a search report in CI:
// "a label at (745, 1768) 233×13 covers a data point at (974, 1767)").
// A label with no free place is left off; the point's tooltip keeps it.
func TestPointLabelsKeepOffOtherPoints(t *testing.T) {
	c := buildChart(chartSpec{Name: "curve", Title: "curve",
		X: axisSpec{Label: "x", Lo: 0, Hi: 100}, Y: axisSpec{Label: "y", Lo: 0, Hi: 100},
		Series: []series{
			{Name: "levels", Points: []point{{X: 50, Y: 50, Label: "search@40 (TTFT p99 120 ms, 40 req/s)"}, {X: 90, Y: 10, Label: "search@160"}}},
			{Name: "other", Points: []point{{X: 65, Y: 53}, {X: 80, Y: 60}}},
		}})
	labelled := 0
	for _, d := range c.Dots {
		if d.Label == nil {
			continue
		}
		labelled++
		lb := glyphBox(labelBox(*d.Label))
		for _, o := range c.Dots {
			x, y := num(o.CX), num(o.CY)
			if x+dotRadius > lb[0] && x-dotRadius < lb[2] && y+dotRadius > lb[1] && y-dotRadius < lb[3] {
				t.Errorf("the label %q at (%s, %s) %s covers the point at (%s, %s)", d.Label.Text, d.Label.X, d.Label.Y, d.Label.Anchor, o.CX, o.CY)
			}
		}
	}
	if labelled != 2 {
		t.Errorf("%d points labelled, want 2: there is room for both", labelled)
	}
}

// The legend spaces its items by the characters of their names, not the
// bytes: a run named in another script than Latin (a --label) takes no
// more room than its glyphs, and the hollow dot's item follows the last
// as the series' items follow each other.
func TestLegendSpacesNamesByCharacters(t *testing.T) {
	names := []string{"基准", "abc", "наш"}
	var runs []paretoRun
	for i, n := range names {
		runs = append(runs, paretoRun{Name: n, Points: []paretoPoint{{X: float64(i + 1), Y: float64(i + 1), Label: n, Tip: n, Misses: i == 1}}})
	}
	c, _ := buildPareto(paretoSpec{Name: "legend", Title: "legend", X: axisSpec{Label: "x", Zero: true}, Y: axisSpec{Label: "y", Zero: true},
		Runs: runs, Misses: "misses the SLO"})
	if len(c.Legend) != len(names)+1 {
		t.Fatalf("legend %+v, want %d items", c.Legend, len(names)+1)
	}
	for i := 1; i < len(c.Legend); i++ {
		prev := c.Legend[i-1].Label
		// The name, a gap of 16 px, the next swatch of 16 and 4 px to its name.
		want := num(prev.X) + charWidth*float64(len([]rune(prev.Text))) + 36
		if got := num(c.Legend[i].Label.X); math.Abs(got-want) > 0.1 {
			t.Errorf("legend item %d (%s) starts at x %.1f, want %.1f: %.1f past %q", i, c.Legend[i].Label.Text, got, want, got-num(prev.X), prev.Text)
		}
	}
}

// everyTenPixels are lines across the whole plot 10 px apart: no label
// fits anywhere in it.
func everyTenPixels(area plot) []polyline {
	var lines []polyline
	for y := area.top; y <= area.bottom; y += 10 {
		lines = append(lines, polyline{{area.left, y}, {area.right, y}})
	}
	return lines
}
