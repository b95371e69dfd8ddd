package report

import (
	"cmp"
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
		if c := cmp.Compare(pts[a].X, pts[b].X); c != 0 {
			return c
		}
		return cmp.Compare(pts[a].Y, pts[b].Y)
	})
	return front
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
		c.Refs = append(c.Refs, Ref{Mark: frontMark, D: line.path()})
	}
	// Leaders cross neither the front's line nor each other; they may
	// cross a reference line.
	placed := labelsPlaced{lines: []polyline{line}}
	for i, p := range line {
		mark := Mark{Mark: frontMark, CX: f1(p[0]), CY: f1(p[1])}
		if label, leader, ok := placeLabel(p, front[i].Label, area, drawn, taken, placed); ok {
			mark.Label = label
			taken = append(taken, labelBox(label))
			placed.labels = append(placed.labels, placedLabel{p, labelBox(label)})
			if leader != nil {
				mark.Leader = leader.path()
				drawn, placed.lines = append(drawn, leader), append(placed.lines, leader)
			}
		}
		c.Marks = append(c.Marks, mark)
	}
	return c, front
}

// placedLabel is a front label already placed: its point and its box.
type placedLabel struct {
	point [2]float64
	box   box
}

// labelsPlaced are a chart's front labels placed so far, and the lines a
// leader may not cross (the front's and the other leaders).
type labelsPlaced struct {
	labels []placedLabel
	lines  []polyline
}

// ringRadius is a front point's ring.
const ringRadius = 9

// placeLabel places text, the label of the front point at p: to the
// right, the left, above, below or on a diagonal of the point, nearest
// first, at the first place free of the drawn lines and the boxes taken
// whose way to the point crosses no box taken, no other leader and not
// the front's line; a place that keeps the labels placed before in the
// order of their points (one above another as their points are, side by
// side as they are) first. A label not beside its point gets a leader,
// a line to it from its point's ring. false when no place is free.
func placeLabel(p [2]float64, text string, area plot, drawn []polyline, taken []box, placed labelsPlaced) (Text, polyline, bool) {
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
	// Further out, where a leader joins them, beside the point a line or
	// a few higher or lower: room beside a neighbour's label or dot, or
	// past a reference line.
	for _, d := range []float64{ringRadius + 14, ringRadius + 28, ringRadius + 42, ringRadius + 56, ringRadius + 70} {
		for lines := 1.0; lines <= 4; lines++ {
			for _, dy := range []float64{-lines * stackShift, lines * stackShift} {
				x, y := p[0], p[1]+4+dy
				places = append(places, Text{X: f1(x + d), Y: f1(y), Anchor: "start"}, Text{X: f1(x - d), Y: f1(y), Anchor: "end"})
			}
		}
	}
	reaches := func(t Text) bool { return leaderClear(p, glyphBox(labelBox(t)), placed.lines, taken) }
	inOrder := func(t Text) bool { return reaches(t) && keepsOrder(p, labelBox(t), placed.labels) }
	label, ok := firstFreeWhere(text, places, area, drawn, taken, inOrder)
	if !ok {
		label, ok = firstFreeWhere(text, places, area, drawn, taken, reaches)
	}
	if !ok {
		return Text{}, nil, false
	}
	return label, leaderTo(p, glyphBox(labelBox(label))), true
}

// stackShift is how far above or below its point a label beside it may
// go: its height and clearance, so that it clears a neighbour's label on
// the point's line.
const stackShift = labelAscent + labelDescent + 2*labelClear

// leaderReach is how far from its point a label's glyphs may start and
// still be beside it, with no leader.
const leaderReach = ringRadius + 6

// leaderTo is the leader from the ring of the point at p to the nearest
// point of b, a label's glyphs; nil when the label is beside the point.
func leaderTo(p [2]float64, b box) polyline {
	q := [2]float64{max(b[0], min(p[0], b[2])), max(b[1], min(p[1], b[3]))}
	dx, dy := q[0]-p[0], q[1]-p[1]
	dist := math.Hypot(dx, dy)
	if dist <= leaderReach {
		return nil
	}
	return polyline{{p[0] + dx/dist*ringRadius, p[1] + dy/dist*ringRadius}, q}
}

// leaderClear reports whether the way from the point at p to a label
// whose glyphs are b crosses none of lines and no box taken but the
// point's own ring.
func leaderClear(p [2]float64, b box, lines []polyline, taken []box) bool {
	leader := leaderTo(p, b)
	if leader == nil {
		return true
	}
	for _, line := range lines {
		for i := 1; i < len(line); i++ {
			if segmentsMeet(leader[0], leader[1], line[i-1], line[i]) {
				return false
			}
		}
	}
	return !slices.ContainsFunc(taken, func(t box) bool {
		own := p[0] >= t[0] && p[0] <= t[2] && p[1] >= t[1] && p[1] <= t[3]
		return !own && segmentCrosses(t, leader[0], leader[1])
	})
}

// keepsOrder reports whether a label of box b for the point at p keeps
// the order of the labels placed before: above one it is stacked with
// when its point is above that one's, left of one beside it when its
// point is left of that one's.
func keepsOrder(p [2]float64, b box, placed []placedLabel) bool {
	for _, o := range placed {
		stacked := b[0] < o.box[2] && o.box[0] < b[2]
		beside := b[1] < o.box[3] && o.box[1] < b[3]
		if stacked && math.Abs(p[1]-o.point[1]) >= 1 && (p[1] < o.point[1]) != (b[1] < o.box[1]) {
			return false
		}
		if beside && math.Abs(p[0]-o.point[0]) >= 1 && (p[0] < o.point[0]) != (b[0] < o.box[0]) {
			return false
		}
	}
	return true
}

// addHollowLegend adds to the legend, after the series, a hollow dot
// named text.
func (c *Chart) addHollowLegend(text string) {
	x := float64(marginLeft)
	if n := len(c.Legend); n > 0 {
		last := c.Legend[n-1].Label
		x = num(last.X) + textWidth(last.Text) + 16
	}
	cx := x + 8
	c.Legend = append(c.Legend, LegendItem{Class: "swatch-dot " + hollowClass,
		D:     "M" + f1(cx-dotRadius) + " 14a" + f1(dotRadius) + " " + f1(dotRadius) + " 0 1 0 " + f1(2*dotRadius) + " 0a" + f1(dotRadius) + " " + f1(dotRadius) + " 0 1 0 " + f1(-2*dotRadius) + " 0",
		Label: Text{X: f1(x + 20), Y: "18", Text: text, Anchor: "start"}})
}
