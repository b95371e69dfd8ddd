package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// paretoPoint is one configuration's point on a Pareto chart: a run, or
// a level of a sweep, in data units.
type paretoPoint struct {
	X, Y float64
	// Label names the point on the chart (the run's label, with its
	// level for a sweep); Tip says its figures on hover.
	Label, Tip string
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
}

// frontMark names the front's marks and line in the data-mark attribute.
const frontMark = "front"

// buildPareto draws the runs' points as dots, unjoined, each run in its
// colour; rings the points of the front, joins them with a line and
// labels each where its label covers no point, no line and no other
// label. It returns the chart and the front's points, in the order of X.
func buildPareto(spec paretoSpec) (*Chart, []paretoPoint) {
	cs := chartSpec{Name: spec.Name, Title: spec.Title, Caption: spec.Caption, Width: chartWidth, Height: 380,
		X: spec.X, Y: spec.Y, Refs: spec.Refs, Legend: true, Empty: spec.Empty}
	var all []paretoPoint
	for _, r := range spec.Runs {
		// A gap between points keeps them unjoined: a run's points are
		// configurations, not a curve.
		se := series{Name: r.Name, Markers: true}
		for _, p := range r.Points {
			se.Points = append(se.Points, point{X: p.X, Y: p.Y, Tip: p.Tip}, point{X: math.NaN(), Y: math.NaN()})
		}
		cs.Series = append(cs.Series, se)
		all = append(all, r.Points...)
	}
	c := buildChart(cs)
	if c.Text != "" {
		return c, nil
	}
	at := map[string]xy{}
	var dots []xy
	for _, d := range c.Dots {
		p := xy{parseCoord(d.CX), parseCoord(d.CY)}
		at[d.Tip] = p
		dots = append(dots, p)
	}
	var front []paretoPoint
	var line []xy
	for _, i := range paretoFront(all, spec.XHigher) {
		p, ok := at[all[i].Tip]
		if !ok {
			continue
		}
		front = append(front, all[i])
		line = append(line, p)
	}
	plot := rect{marginLeft, marginTop, float64(c.Width - marginRight), float64(c.Height - marginBottom)}
	var segments [][2]xy
	for i := 1; i < len(line); i++ {
		segments = append(segments, [2]xy{line[i-1], line[i]})
	}
	var taken []rect
	for _, r := range c.Refs {
		var x, y0, y1 float64
		if _, err := fmt.Sscanf(r.D, "M%f %fV%f", &x, &y0, &y1); err == nil {
			segments = append(segments, [2]xy{{x, y0}, {x, y1}})
		}
		if r.Label.Text != "" {
			taken = append(taken, labelRect(r.Label))
		}
	}
	if len(line) > 1 {
		d := ""
		for i, p := range line {
			d += map[bool]string{true: "M", false: "L"}[i == 0] + f1(p.x) + " " + f1(p.y)
		}
		c.Refs = append(c.Refs, Ref{Mark: frontMark, D: d})
	}
	for i, p := range line {
		label, ok := placeLabel(p, front[i].Label, plot, dots, segments, taken)
		if ok {
			taken = append(taken, labelRect(label))
		} else {
			label = Text{}
		}
		c.Marks = append(c.Marks, Mark{Mark: frontMark, CX: f1(p.x), CY: f1(p.y), Label: label})
	}
	return c, front
}

// xy is a position in SVG coordinates.
type xy struct{ x, y float64 }

// rect is a rectangle in SVG coordinates.
type rect struct{ x0, y0, x1, y1 float64 }

func (b rect) overlaps(o rect) bool { return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1 }

func (b rect) inside(o rect) bool { return b.x0 >= o.x0 && b.x1 <= o.x1 && b.y0 >= o.y0 && b.y1 <= o.y1 }

// nearCircle says whether b comes within r of c.
func (b rect) nearCircle(c xy, r float64) bool {
	dx := c.x - math.Max(b.x0, math.Min(c.x, b.x1))
	dy := c.y - math.Max(b.y0, math.Min(c.y, b.y1))
	return dx*dx+dy*dy < r*r
}

// crosses says whether the segment s passes through b, tried every
// pixel along it.
func (b rect) crosses(s [2]xy) bool {
	n := math.Ceil(math.Hypot(s[1].x-s[0].x, s[1].y-s[0].y))
	for k := 0.0; k <= n; k++ {
		t := k / math.Max(n, 1)
		x, y := s[0].x+t*(s[1].x-s[0].x), s[0].y+t*(s[1].y-s[0].y)
		if x > b.x0 && x < b.x1 && y > b.y0 && y < b.y1 {
			return true
		}
	}
	return false
}

// Label geometry: a label's text is about labelAscent above its baseline
// and labelDescent below, labelChar wide per character (11 px text);
// labelPad keeps it that far from what it must not cover, and ringRadius
// is a front point's ring.
const (
	labelAscent  = 10
	labelDescent = 3
	labelChar    = 6.5
	labelPad     = 2
	ringRadius   = 9
)

// labelRect is where a label's text lies, padded.
func labelRect(t Text) rect {
	x, y := parseCoord(t.X), parseCoord(t.Y)
	w := labelChar * float64(utf8.RuneCountInString(t.Text))
	x0 := x
	switch t.Anchor {
	case "end":
		x0 = x - w
	case "middle":
		x0 = x - w/2
	}
	return rect{x0 - labelPad, y - labelAscent - labelPad, x0 + w + labelPad, y + labelDescent + labelPad}
}

// placeLabel finds where text, the label of the point at p, lies inside
// plot and clear of every dot (with its ring), every segment and every
// rect taken: to the right, the left, above, below or on a diagonal of
// the point, nearest first. false when nowhere is clear.
func placeLabel(p xy, text string, plot rect, dots []xy, segments [][2]xy, taken []rect) (Text, bool) {
	for _, d := range []float64{ringRadius + 4, ringRadius + 14, ringRadius + 28} {
		diag := d * 0.7
		for _, c := range []Text{
			{X: f1(p.x + d), Y: f1(p.y + 4), Anchor: "start"},
			{X: f1(p.x - d), Y: f1(p.y + 4), Anchor: "end"},
			{X: f1(p.x), Y: f1(p.y - d), Anchor: "middle"},
			{X: f1(p.x), Y: f1(p.y + d + labelAscent), Anchor: "middle"},
			{X: f1(p.x + diag), Y: f1(p.y - diag), Anchor: "start"},
			{X: f1(p.x - diag), Y: f1(p.y - diag), Anchor: "end"},
			{X: f1(p.x + diag), Y: f1(p.y + diag + labelAscent), Anchor: "start"},
			{X: f1(p.x - diag), Y: f1(p.y + diag + labelAscent), Anchor: "end"},
		} {
			c.Text = text
			b := labelRect(c)
			if !b.inside(plot) || slices.ContainsFunc(taken, b.overlaps) ||
				slices.ContainsFunc(dots, func(d xy) bool { return b.nearCircle(d, ringRadius) }) ||
				slices.ContainsFunc(segments, b.crosses) {
				continue
			}
			return c, true
		}
	}
	return Text{}, false
}

// parseCoord reads back a coordinate f1 wrote.
func parseCoord(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
