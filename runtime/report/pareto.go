package report

import (
	"math"
	"slices"
)

// paretoPoint is one configuration's point on a Pareto chart: a run, or
// a level of a sweep, in data units.
type paretoPoint struct {
	X, Y float64
	// Label names the point on the chart (the run's label, with its
	// level for a sweep); Tip says its figures on hover.
	Label, Tip string
	// Misses says that the point misses the SLO: it is drawn hollow and
	// is not on the front.
	Misses bool
}

// paretoFront returns the indices of the points no other point beats:
// none is at least as good on both axes and better on one. Y is better
// higher; X higher when xHigher, else lower. Equal points are all on the
// front. The indices are in the order of X, then Y.
func paretoFront(pts []paretoPoint, xHigher bool) []int {
	better := func(a, b float64, higher bool) bool {
		if higher {
			return a > b
		}
		return a < b
	}
	var front []int
	for i, p := range pts {
		beaten := slices.ContainsFunc(pts, func(q paretoPoint) bool {
			atLeast := !better(p.X, q.X, xHigher) && q.Y >= p.Y
			return atLeast && (better(q.X, p.X, xHigher) || q.Y > p.Y)
		})
		if !beaten {
			front = append(front, i)
		}
	}
	slices.SortStableFunc(front, func(a, b int) int {
		if c := cmpFloat(pts[a].X, pts[b].X); c != 0 {
			return c
		}
		return cmpFloat(pts[a].Y, pts[b].Y)
	})
	return front
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// paretoRun is the points of one run on a Pareto chart, drawn in one
// colour.
type paretoRun struct {
	Name   string
	Points []paretoPoint
}

// paretoSpec is a Pareto chart: the runs' points, which way X is better,
// and the reference lines (an SLO) to draw.
type paretoSpec struct {
	Name, Title, Caption string
	X, Y                 axisSpec
	XHigher              bool
	Runs                 []paretoRun
	Refs                 []refLine
	Empty                string
	// Misses names the hollow points in the legend ("misses the SLO").
	Misses string
}

// frontMark names the front's marks and line in the data-mark attribute.
const frontMark = "front"

// buildPareto draws the runs' points as dots, unjoined, each run in its
// colour, those that miss the SLO hollow (named in the legend); rings the
// points of the front of the others, joins them with a line and labels
// each where its label covers no point, no line and no other label. It
// returns the chart and the front's points, in the order of X.
func buildPareto(spec paretoSpec) (*Chart, []paretoPoint) {
	cs := chartSpec{Name: spec.Name, Title: spec.Title, Caption: spec.Caption, Width: chartWidth, Height: 380,
		X: spec.X, Y: spec.Y, Refs: spec.Refs, Legend: true, Empty: spec.Empty}
	var all, within []paretoPoint
	for _, r := range spec.Runs {
		// A gap between points keeps them unjoined: a run's points are
		// configurations, not a curve.
		se := series{Name: r.Name, Markers: true}
		for _, p := range r.Points {
			se.Points = append(se.Points, point{X: p.X, Y: p.Y, Tip: p.Tip, Hollow: p.Misses}, point{X: math.NaN(), Y: math.NaN()})
			if !p.Misses {
				within = append(within, p)
			}
		}
		cs.Series = append(cs.Series, se)
		all = append(all, r.Points...)
	}
	c := buildChart(cs)
	if c.Text != "" {
		return c, nil
	}
	if len(within) < len(all) {
		c.addHollowLegend(spec.Misses)
	}
	area := plot{marginLeft, float64(c.Width - marginRight), marginTop, float64(c.Height - marginBottom)}
	// Labels keep off every dot, with the room of a front point's ring,
	// off the reference lines and the front's line, and off each other.
	at := map[string][2]float64{}
	var taken []box
	for _, d := range c.Dots {
		p := [2]float64{num(d.CX), num(d.CY)}
		at[d.Tip] = p
		taken = append(taken, ringBox(p[0], p[1], ringRadius))
	}
	var front []paretoPoint
	var line polyline
	for _, i := range paretoFront(within, spec.XHigher) {
		p, ok := at[within[i].Tip]
		if !ok {
			continue
		}
		front = append(front, within[i])
		line = append(line, p)
	}
	drawn := []polyline{line}
	for _, r := range c.Refs {
		if line := refPixels(r); line != nil {
			drawn = append(drawn, line)
		}
		if r.Label.Text != "" {
			taken = append(taken, labelBox(r.Label))
		}
	}
	if len(line) > 1 {
		d := ""
		for i, p := range line {
			d += map[bool]string{true: "M", false: "L"}[i == 0] + f1(p[0]) + " " + f1(p[1])
		}
		c.Refs = append(c.Refs, Ref{Mark: frontMark, D: d})
	}
	for i, p := range line {
		label, ok := placeLabel(p, front[i].Label, area, drawn, taken)
		if ok {
			taken = append(taken, labelBox(label))
		}
		c.Marks = append(c.Marks, Mark{Mark: frontMark, CX: f1(p[0]), CY: f1(p[1]), Label: label})
	}
	return c, front
}

// ringRadius is a front point's ring.
const ringRadius = 9

// placeLabel places text, the label of the front point at p: to the
// right, the left, above, below or on a diagonal of the point, nearest
// first, at the first place free of the drawn lines and the boxes taken.
// false when no place is free.
func placeLabel(p [2]float64, text string, area plot, drawn []polyline, taken []box) (Text, bool) {
	var places []Text
	for _, d := range []float64{ringRadius + 4, ringRadius + 14, ringRadius + 28} {
		diag := d * 0.7
		x, y := p[0], p[1]
		places = append(places,
			Text{X: f1(x + d), Y: f1(y + 4), Anchor: "start"},
			Text{X: f1(x - d), Y: f1(y + 4), Anchor: "end"},
			Text{X: f1(x), Y: f1(y - d), Anchor: "middle"},
			Text{X: f1(x), Y: f1(y + d + labelAscent), Anchor: "middle"},
			Text{X: f1(x + diag), Y: f1(y - diag), Anchor: "start"},
			Text{X: f1(x - diag), Y: f1(y - diag), Anchor: "end"},
			Text{X: f1(x + diag), Y: f1(y + diag + labelAscent), Anchor: "start"},
			Text{X: f1(x - diag), Y: f1(y + diag + labelAscent), Anchor: "end"},
		)
	}
	return firstFree(text, places, area, drawn, taken)
}

// addHollowLegend adds to the legend, after the series, a hollow dot
// named text.
func (c *Chart) addHollowLegend(text string) {
	x := float64(marginLeft)
	if n := len(c.Legend); n > 0 {
		last := c.Legend[n-1].Label
		x = num(last.X) + charWidth*float64(len([]rune(last.Text))) + 16
	}
	cx := x + 8
	c.Legend = append(c.Legend, LegendItem{Class: "swatch-dot " + hollowClass,
		D:     "M" + f1(cx-dotRadius) + " 14a" + f1(dotRadius) + " " + f1(dotRadius) + " 0 1 0 " + f1(2*dotRadius) + " 0a" + f1(dotRadius) + " " + f1(dotRadius) + " 0 1 0 " + f1(-2*dotRadius) + " 0",
		Label: Text{X: f1(x + 20), Y: "18", Text: text, Anchor: "start"}})
}
