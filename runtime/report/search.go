package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// searchView is a capacity search's section, which leads its report: the
// capacity with its bracket, why the search stopped and what it took,
// the levels in the order tried on a chart, and their table.
type searchView struct {
	Variable string
	// Answer says the capacity and its bracket in one line; Facts are
	// the width asked, the confidence, the levels and the time.
	Answer string
	Facts  []field
	Stop   string
	Chart  *Chart
	Levels []searchRow
	// Why says, for each level not met with an open interval, how many
	// requests it would take.
	Why []string
}

// searchRow is one level tried, its verdict's class the verdict.
type searchRow struct {
	Cells   []string
	Verdict string
}

// The verdicts a search gives a level (runtime/capacity's), in the order
// the chart names them.
var searchVerdicts = []string{"met", "missed", "inconclusive"}

// searchSection draws what a capacity search found; nil for a result
// without one.
func searchSection(s *summary.Summary) *searchView {
	if s.Capacity == nil || s.Capacity.Search == nil {
		return nil
	}
	sr := s.Capacity.Search
	variable := orDash(sr.Variable)
	level := func(v float64) string { return variable + " " + levelText(v) }
	v := &searchView{Variable: variable, Stop: sr.Stop}
	switch {
	case sr.Low > 0 && sr.High > 0:
		v.Answer = fmt.Sprintf("Capacity: %s, between %s, which met the SLO, and %s, which did not (±%.1f %%).",
			variable+" "+textfmt.Num(sr.Estimate), levelText(sr.Low), levelText(sr.High), 100*capacity.HalfWidth(sr.Low, sr.High))
	case sr.Low > 0:
		v.Answer = fmt.Sprintf("Capacity: at least %s: no level tried above it missed the SLO.", level(sr.Low))
	default:
		v.Answer = "Capacity: none found: no level tried met the SLO."
	}
	// The capacity and its bracket are in the answer, once.
	v.Facts = []field{
		{"width asked", fmt.Sprintf("±%g %%", 100*sr.Width)},
		{"confidence", fmt.Sprintf("%g %%", 100*sr.Confidence)},
		{"levels tried", strconv.Itoa(len(sr.Levels))},
		{"time of the levels", textfmt.Num(sr.Seconds) + " s"},
	}
	if sr.GoodputShare > 0 {
		v.Facts = append(v.Facts, field{"good requests asked", fmt.Sprintf("≥ %g %%", 100*sr.GoodputShare)})
	}
	for i, l := range sr.Levels {
		extended := ""
		if l.Extended {
			extended = "yes"
		}
		v.Levels = append(v.Levels, searchRow{Verdict: l.Verdict, Cells: []string{strconv.Itoa(i + 1), levelText(l.Level),
			textfmt.Num(l.Seconds), strconv.FormatInt(l.Requests, 10), l.Verdict, orDash(figureName(l.Figure)),
			figureText(l.Figure, l.Value), intervalText(l), figureText(l.Figure, l.Bound), extended}})
		if l.Verdict != "met" && l.Why != "" {
			v.Why = append(v.Why, level(l.Level)+": "+l.Why)
		}
	}
	v.Chart = searchChart(sr, variable)
	return v
}

// levelText writes a level as the search named it (71.55, not 71.5), "-"
// for none.
func levelText(v float64) string {
	if v <= 0 {
		return "-"
	}
	return capacity.FormatLevel(v)
}

// metricOf is a deciding figure without its scenario: "ttft_p99" for
// "chat: ttft_p99".
func metricOf(figure string) string {
	if _, metric, ok := strings.Cut(figure, ": "); ok {
		return metric
	}
	return figure
}

// figureName is a deciding figure as the page names it: "chat: TTFT
// p99" for "chat: ttft_p99".
func figureName(figure string) string {
	scenario, name, ok := strings.Cut(figure, ": ")
	if !ok {
		scenario, name = "", figure
	}
	if n, ok := map[string]string{"ttft_p99": "TTFT p99", "tpot_p99": "TPOT p99", "success_rate": "success rate", "goodput_share": "good requests"}[name]; ok {
		name = n
	}
	if scenario != "" {
		return scenario + ": " + name
	}
	return name
}

// isShare says whether a deciding figure is a share of requests (the
// success rate or the good requests), not a latency in ms.
func isShare(figure string) bool {
	return strings.HasSuffix(figure, "success_rate") || strings.HasSuffix(figure, "goodput_share")
}

// figureText writes a deciding figure's value in its unit: a share as a
// percentage, a latency in ms.
func figureText(figure string, v float64) string {
	if isShare(figure) {
		return percent(v)
	}
	return textfmt.Millis(v) + " ms"
}

// intervalText writes a level's confidence interval, a side the samples
// leave open as ∞.
func intervalText(l summary.SearchLevel) string {
	side := func(v *float64, open string) string {
		if v == nil {
			return open
		}
		if isShare(l.Figure) {
			return percent(*v)
		}
		return textfmt.Millis(*v)
	}
	return "[" + side(l.Lo, "−∞") + ", " + side(l.Hi, "+∞") + "]"
}

// searchChart draws the levels tried: each at its level (x), numbered in
// the order tried, its deciding figure (y) with its confidence interval
// as a bar, coloured by its verdict; the bracket shaded, the estimate a
// vertical line, the SLO's bound a horizontal one. When the levels were
// decided by different figures, y is each figure over its bound (a
// share's bound over the figure, so that above 1 is always worse) and
// the SLO is the line at 1.
func searchChart(sr *summary.CapacitySearch, variable string) *Chart {
	// A mixed workload's figures name their scenario ("rag: ttft_p99"),
	// whose bound is the SLO's for every scenario: one axis serves a
	// figure whatever its scenario.
	figures := map[string]bool{}
	for _, l := range sr.Levels {
		figures[metricOf(l.Figure)] = true
	}
	relative := len(figures) > 1
	y := func(l summary.SearchLevel, v float64) float64 {
		switch {
		case !relative:
			return v
		case isShare(l.Figure):
			return l.Bound / v
		}
		return v / l.Bound
	}
	yAxis := axisSpec{Label: "deciding figure ÷ its SLO bound", Log: true, Zero: true}
	slo := refLine{Value: 1, Label: "SLO bound", Mark: "slo"}
	if !relative && len(sr.Levels) > 0 {
		first := sr.Levels[0]
		metric := figureName(metricOf(first.Figure))
		yAxis.Label = metric + " (ms)"
		slo = refLine{Value: first.Bound, Label: "SLO " + metric + " " + figureText(first.Figure, first.Bound), Mark: "slo"}
		if isShare(first.Figure) {
			yAxis = axisSpec{Label: metric + " (share)", Zero: true}
		}
	}
	levelAxis := axisSpec{Label: variable + ", each level numbered in the order tried", Log: true, LogRatio: 8, Zero: true}
	byVerdict := map[string][]point{}
	var closed, open []point
	// edge is where a bar whose interval the samples leave open ends: a
	// quarter past the farthest figure or bound drawn on that side, so
	// that it does not end on the SLO's line.
	lowEdge, highEdge := math.Inf(1), math.Inf(-1)
	for _, l := range sr.Levels {
		for _, v := range []float64{l.Value, l.Bound} {
			if v > 0 && finite(y(l, v)) {
				lowEdge, highEdge = min(lowEdge, y(l, v)), max(highEdge, y(l, v))
			}
		}
	}
	lowEdge, highEdge = lowEdge/1.25, highEdge*1.25
	gap := point{X: math.NaN(), Y: math.NaN()}
	for i, l := range sr.Levels {
		levelAxis.Ticks = append(levelAxis.Ticks, l.Level)
		name := fmt.Sprintf("#%d %s %s", i+1, variable, levelText(l.Level))
		tip := fmt.Sprintf("%s: %s, %s %s %s (bound %s)", name, l.Verdict, orDash(figureName(l.Figure)), figureText(l.Figure, l.Value), intervalText(l), figureText(l.Figure, l.Bound))
		byVerdict[l.Verdict] = append(byVerdict[l.Verdict], point{X: l.Level, Y: y(l, l.Value), Label: strconv.Itoa(i + 1), Tip: tip}, gap)
		var lo, hi float64
		bar := &closed
		if l.Lo != nil {
			lo = *l.Lo
		} else {
			lo, bar = lowEdge, &open
		}
		if l.Hi != nil {
			hi = *l.Hi
		} else {
			hi, bar = highEdge, &open
		}
		// y flips a share's interval: its low end is the higher ratio.
		*bar = append(*bar, point{X: l.Level, Y: y(l, lo)}, point{X: l.Level, Y: y(l, hi)}, gap)
	}
	spec := chartSpec{
		Name:  "search-levels",
		Title: fmt.Sprintf("Levels tried, numbered in order: the deciding figure with its %g %% confidence interval, coloured by verdict", 100*sr.Confidence),
		Width: wideWidth, Height: 340,
		X: levelAxis, Y: yAxis, Legend: true,
		Empty: "Levels tried: none.",
		Refs:  []refLine{slo},
	}
	// classes are the series' CSS classes, in the series' order.
	var classes []string
	for _, verdict := range searchVerdicts {
		if pts := byVerdict[verdict]; len(pts) > 0 {
			spec.Series = append(spec.Series, series{Name: verdict, Points: pts, Markers: true})
			classes = append(classes, "verdict-"+verdict)
		}
	}
	bars := len(spec.Series)
	confidence := fmt.Sprintf("%g %% interval", 100*sr.Confidence)
	if len(closed) > 0 {
		spec.Series = append(spec.Series, series{Name: confidence, Points: closed})
		classes = append(classes, "interval")
	}
	if len(open) > 0 {
		spec.Series = append(spec.Series, series{Name: confidence + ", open on a side (dashed)", Points: open})
		classes = append(classes, "interval open")
	}
	if sr.Low > 0 && sr.High > 0 {
		spec.Bands = []band{{From: sr.Low, To: sr.High, Mark: "bracket"}}
		spec.Refs = append(spec.Refs, refLine{Value: sr.Estimate, Vertical: true, Mark: "capacity",
			Label: "capacity ≈ " + textfmt.Num(sr.Estimate)})
	}
	if len(sr.Levels) == 1 {
		// One level: in the middle of the axis, not at its edge.
		spec.X.Lo, spec.X.Hi = 0, 2*sr.Levels[0].Level
	}
	c := buildChart(spec)
	restyle(c, classes, bars)
	return c
}

// restyle gives a chart's series the classes named (the chart's own are
// a colour per series, c0, c1, ...), and leaves out the dots of the
// series from the first of nodots on: the ends of its bars.
func restyle(c *Chart, classes []string, nodots int) {
	class := func(old string) (string, int) {
		for i, name := range classes {
			if old == "c"+strconv.Itoa(i%colours) {
				return name, i
			}
		}
		return old, -1
	}
	for i := range c.Lines {
		c.Lines[i].Class, _ = class(c.Lines[i].Class)
	}
	for i := range c.Legend {
		c.Legend[i].Class, _ = class(c.Legend[i].Class)
	}
	c.Dots = slices.DeleteFunc(c.Dots, func(d Dot) bool {
		_, i := class(d.Class)
		return i >= nodots
	})
	for i := range c.Dots {
		c.Dots[i].Class, _ = class(c.Dots[i].Class)
	}
}

// searchShapes is the load shape the header lists: for a search, whose
// every level is a scenario of its own, only the first level's, and a
// line that says how many more levels ran (the search's table has them);
// for other runs, the load shape itself and "".
func searchShapes(s *summary.Summary) ([]summary.ScenarioShape, string) {
	shapes := s.Meta.LoadShape
	if s.Capacity == nil || s.Capacity.Search == nil || len(s.Capacity.Search.Levels) < 2 {
		return shapes, ""
	}
	sr := s.Capacity.Search
	later := map[string]bool{}
	for _, l := range s.Capacity.Levels {
		if l.Level != sr.Levels[0].Level {
			later[l.Scenario] = true
		}
	}
	kept := slices.DeleteFunc(slices.Clone(shapes), func(sh summary.ScenarioShape) bool { return later[sh.Name] })
	if len(kept) == len(shapes) {
		return shapes, ""
	}
	return kept, fmt.Sprintf("then %s of the search, each at its own %s for its step: the levels tried, below",
		textfmt.Count(len(sr.Levels)-1, "more level"), sr.Variable)
}
