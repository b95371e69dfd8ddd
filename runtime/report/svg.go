package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units (the charts scale to the page width).
const (
	// chartWidth and chartHeight are the default size: half the page's
	// width; wideWidth is for charts that take the whole width.
	chartWidth   = 600
	chartHeight  = 300
	wideWidth    = 1100
	marginLeft   = 64
	marginRight  = 24
	marginRight2 = 64 // with a right-hand axis
	marginTop    = 34
	marginBottom = 46
	// wideRange is the ratio of the largest to the smallest value above
	// which an axis that allows it is logarithmic.
	wideRange = 20
	// maxDots is the number of points up to which a line also shows a
	// dot at each point.
	maxDots = 40
	// dotRadius is a dot's radius; smallDotRadius that of a series that
	// marks every point however many there are.
	dotRadius      = 3.5
	smallDotRadius = 2
	// colours is the number of series colour classes (c0, c1, ...).
	colours = 6
	// charWidth is the approximate width of one character of the legend.
	charWidth = 6.5
)

// point is one datum of a series; a non-finite Y is a gap in the line.
type point struct {
	X, Y float64
	// Label is drawn next to the point's dot, Tip shows on hover.
	Label, Tip string
	// Hollow draws the point's dot as a ring (a point that misses the
	// SLO).
	Hollow bool
}

// series is one line of a chart.
type series struct {
	Name   string
	Points []point
	// Right puts the series on the right-hand axis.
	Right bool
	// Markers draws a dot at every point however many there are, so that
	// a point between two gaps, which makes no line, is seen.
	Markers bool
	// LabelBelow puts the points' labels under their dots.
	LabelBelow bool
	// Wide draws the line wide and pale, so that a series drawn after it
	// with the same values does not hide it.
	Wide bool
}

// refLine is a reference line across the plot: an SLO (horizontal) or a
// level (vertical).
type refLine struct {
	Value    float64
	Vertical bool
	Label    string
	// Mark names the line in the data-mark attribute.
	Mark string
}

// marker rings one point and labels it.
type marker struct {
	X, Y  float64
	Label string
	// Mark names the marker in the data-mark attribute.
	Mark string
	// Below puts the label under the point instead of above it.
	Below bool
}

// axisSpec says how an axis picks its range.
type axisSpec struct {
	Label string
	// Log allows a logarithmic axis when all values are positive and
	// the largest is at least LogRatio (default wideRange) times the
	// smallest.
	Log      bool
	LogRatio float64
	// Zero includes 0 in a linear axis's range.
	Zero bool
	// Lo and Hi, when Lo < Hi, fix the axis's range whatever the data.
	Lo, Hi float64
	// Ticks, when set, are the ticks (the levels of a sweep), and the
	// range spans them, or is Lo to Hi when those are set.
	Ticks []float64
	// TickText, when set, writes the ticks' labels instead of tickLabel.
	TickText func(float64) string
}

// band shades a stretch of the x axis, from From to To, and names it.
type band struct {
	From, To float64
	Label    string
	// Mark names the band in the data-mark attribute.
	Mark string
}

// chartSpec is what a chart draws, in data units.
type chartSpec struct {
	// Name is the data-chart attribute; Title the SVG's title; Caption
	// the text under it.
	Name, Title, Caption string
	// Width and Height are the size, chartWidth and chartHeight when 0.
	Width, Height int
	// RightMargin leaves room for a right-hand axis even without one, so
	// that charts sharing their x axis line up.
	RightMargin bool
	X, Y, Y2    axisSpec
	Series      []series
	Refs        []refLine
	Markers     []marker
	// Bands shade stretches of the x axis (a run's warmup), under the
	// data.
	Bands []band
	// Legend names the series even when there is one.
	Legend bool
	// Empty is the line of text that stands for the chart when no series
	// has a finite point.
	Empty string
}

// Chart is a chart laid out in SVG coordinates, all numbers formatted;
// the template draws it.
type Chart struct {
	Name, Title, Caption string
	// Text, when set, stands for the chart: a chart with nothing to show
	// is one line of text, not an empty panel.
	Text          string
	Width, Height int
	// Grid and Axes are path data.
	Grid, Axes              string
	XTicks, YTicks, Y2Ticks []Text
	AxisLabels              []Text
	Legend                  []LegendItem
	Lines                   []Line
	Dots                    []Dot
	Refs                    []Ref
	Marks                   []Mark
	Bands                   []Band
}

// Band is a shaded stretch of the plot with its label.
type Band struct {
	Mark, X, Y, W, H string
	Label            Text
}

// Text is a text element.
type Text struct {
	X, Y, Text string
	// Anchor is the text-anchor: start, middle or end.
	Anchor string
	// Rotate turns the text a quarter anticlockwise about its position.
	Rotate bool
}

// LegendItem is a series' swatch and name.
type LegendItem struct {
	Class, D string
	Label    Text
}

// Line is a series' path.
type Line struct {
	Class, D, Name string
}

// Dot is one data point.
type Dot struct {
	Class, CX, CY, R, Tip string
	Label                 *Text
}

// Ref is a reference line with its label.
type Ref struct {
	Mark, D string
	Label   Text
}

// Mark is a highlighted point with its label.
type Mark struct {
	Mark, CX, CY string
	Label        Text
	// Leader, when set, is the path of a line from the point's ring to
	// its label, drawn when the label is not beside the point.
	Leader string
}

// scale maps data values to pixels along one axis.
type scale struct {
	// lo and hi bound the domain, as log10 of the values on a log axis.
	lo, hi float64
	log    bool
	// p0 and p1 are the pixels of lo and hi.
	p0, p1 float64
	ticks  []float64
}

// px returns the pixel of v, false when v cannot be drawn on the axis.
func (s scale) px(v float64) (float64, bool) {
	if s.log {
		if v <= 0 {
			return 0, false
		}
		v = math.Log10(v)
	}
	p := s.p0 + (v-s.lo)/(s.hi-s.lo)*(s.p1-s.p0)
	return p, finite(p)
}

// newScale fits an axis to values (non-finite ones ignored) between the
// pixels p0 and p1.
func newScale(spec axisSpec, values []float64, p0, p1 float64) scale {
	s := scale{p0: p0, p1: p1}
	if spec.Lo < spec.Hi && finite(spec.Hi-spec.Lo) {
		s.lo, s.hi = spec.Lo, spec.Hi
		s.ticks = spec.Ticks
		if len(s.ticks) == 0 {
			s.ticks = linearTicks(s.lo, s.hi, true)
		}
		return s
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var ticks []float64
	for _, v := range slices.Concat(values, spec.Ticks) {
		if finite(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	for _, t := range spec.Ticks {
		if finite(t) {
			ticks = append(ticks, t)
		}
	}
	ratio := spec.LogRatio
	if ratio <= 0 {
		ratio = wideRange
	}
	switch {
	case lo > hi: // no value
		lo, hi = 0, 1
	case spec.Log && lo > 0 && hi/lo >= ratio && len(ticks) > 0:
		// A margin of a twentieth of the range on either side keeps the
		// outer ticks' points off the plot's edges.
		s.log = true
		pad := (math.Log10(hi) - math.Log10(lo)) / 20
		s.lo, s.hi, s.ticks = math.Log10(lo)-pad, math.Log10(hi)+pad, ticks
		return s
	case spec.Log && lo > 0 && hi/lo >= ratio:
		s.log = true
		s.lo, s.hi = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		s.ticks = logTicks(s.lo, s.hi)
		return s
	}
	if spec.Zero {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	if hi == lo || !finite(hi-lo) {
		pad := math.Abs(lo) / 2
		if pad == 0 || !finite(pad) {
			pad = 1
		}
		lo, hi = lo-pad, hi+pad
		if spec.Zero {
			lo = max(lo, 0)
		}
	}
	if len(ticks) > 0 {
		pad := (hi - lo) / 20
		s.lo, s.hi, s.ticks = lo-pad, hi+pad, ticks
		if spec.Zero && lo >= 0 {
			s.lo = lo
		}
		return s
	}
	s.ticks = linearTicks(lo, hi, false)
	s.lo, s.hi = s.ticks[0], s.ticks[len(s.ticks)-1]
	if s.hi <= s.lo {
		s.lo, s.hi = lo, hi
	}
	return s
}

// linearTicks returns round ticks: inside [lo, hi] when inside is set,
// else covering it, the first at or below lo and the last at or above hi.
func linearTicks(lo, hi float64, inside bool) []float64 {
	step := niceStep((hi - lo) / 5)
	first, last := math.Floor(lo/step), math.Ceil(hi/step)
	if inside {
		first, last = math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
	}
	var ticks []float64
	for k := first; k <= last && len(ticks) < 50; k++ {
		// Multiplying an integer by the step avoids accumulating rounding
		// errors.
		v := k * step
		if v == 0 {
			v = 0 // not -0
		}
		ticks = append(ticks, v)
	}
	if len(ticks) == 0 {
		ticks = []float64{lo, hi}
	}
	return ticks
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || !finite(raw) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		return mag
	case f <= 2:
		return 2 * mag
	case f <= 5:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// logTicks returns the ticks of a log axis from 10^lo to 10^hi: every
// decade (every few when there are many), with 2 and 5 times each when
// there are few.
func logTicks(lo, hi float64) []float64 {
	decades := hi - lo
	every := math.Ceil(decades / 8)
	var ticks []float64
	for k := lo; k <= hi; k += every {
		d := math.Pow(10, k)
		ticks = append(ticks, d)
		if decades <= 2 && k < hi {
			ticks = append(ticks, 2*d, 5*d)
		}
	}
	return ticks
}

// hollowClass is the class of a hollow dot and of its legend swatch.
const hollowClass = "hollow"

// textChart is a chart that has nothing to draw: one line of text.
func textChart(name, text string) *Chart {
	return &Chart{Name: name, Text: text}
}

// buildChart lays a chart out, or makes it its Empty text when no series
// has a point to draw.
func buildChart(spec chartSpec) *Chart {
	width, height := cmp.Or(spec.Width, chartWidth), cmp.Or(spec.Height, chartHeight)
	c := &Chart{Name: spec.Name, Title: spec.Title, Caption: spec.Caption, Width: width, Height: height}
	hasRight := false
	var xs, ys, y2s []float64
	for _, se := range spec.Series {
		hasRight = hasRight || se.Right
		for _, p := range se.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			xs = append(xs, p.X)
			if se.Right {
				y2s = append(y2s, p.Y)
			} else {
				ys = append(ys, p.Y)
			}
		}
	}
	if len(xs) == 0 {
		return textChart(spec.Name, spec.Empty)
	}
	for _, r := range spec.Refs {
		if r.Vertical {
			xs = append(xs, r.Value)
		} else {
			ys = append(ys, r.Value)
		}
	}
	left, right := float64(marginLeft), float64(width-marginRight)
	if hasRight || spec.RightMargin {
		right = float64(width - marginRight2)
	}
	top, bottom := float64(marginTop), float64(height-marginBottom)
	sx := newScale(spec.X, xs, left, right)
	sy := newScale(spec.Y, ys, bottom, top)
	sy2 := newScale(spec.Y2, y2s, bottom, top)

	var grid strings.Builder
	for _, t := range sx.ticks {
		x, ok := sx.px(t)
		if !ok {
			continue
		}
		grid.WriteString("M" + f1(x) + " " + f1(top) + "V" + f1(bottom))
		label := tickLabel(t)
		if spec.X.TickText != nil {
			label = spec.X.TickText(t)
		}
		c.XTicks = append(c.XTicks, Text{X: f1(x), Y: f1(bottom + 16), Text: label, Anchor: "middle"})
	}
	for _, t := range sy.ticks {
		y, ok := sy.px(t)
		if !ok {
			continue
		}
		grid.WriteString("M" + f1(left) + " " + f1(y) + "H" + f1(right))
		c.YTicks = append(c.YTicks, Text{X: f1(left - 6), Y: f1(y + 4), Text: tickLabel(t), Anchor: "end"})
	}
	c.Grid = grid.String()
	c.Axes = "M" + f1(left) + " " + f1(top) + "V" + f1(bottom) + "H" + f1(right)
	midY := f1((top + bottom) / 2)
	c.AxisLabels = []Text{
		{X: f1((left + right) / 2), Y: f1(float64(height - 8)), Text: axisTitle(spec.X.Label, sx), Anchor: "middle"},
		{X: "14", Y: midY, Text: axisTitle(spec.Y.Label, sy), Anchor: "middle", Rotate: true},
	}
	if hasRight {
		c.Axes += "V" + f1(top)
		for _, t := range sy2.ticks {
			if y, ok := sy2.px(t); ok {
				c.Y2Ticks = append(c.Y2Ticks, Text{X: f1(right + 6), Y: f1(y + 4), Text: tickLabel(t), Anchor: "start"})
			}
		}
		c.AxisLabels = append(c.AxisLabels, Text{X: f1(float64(width - 10)), Y: midY, Text: axisTitle(spec.Y2.Label, sy2), Anchor: "middle", Rotate: true})
	}

	for _, b := range spec.Bands {
		c.drawBand(b, sx, left, right, top, bottom)
	}
	legendX := left
	// drawn are the series' lines in pixels and texts the boxes of their
	// points' labels, which other labels keep off.
	var drawn []polyline
	var texts []box
	var pending []dotLabel
	for i, se := range spec.Series {
		class := "c" + strconv.Itoa(i%colours)
		if se.Wide {
			class += " wide"
		}
		ys := sy
		if se.Right {
			ys = sy2
		}
		lines, labels := c.drawSeries(se, class, sx, ys)
		drawn, pending = append(drawn, lines...), append(pending, labels...)
		if len(spec.Series) > 1 || spec.Legend {
			c.Legend = append(c.Legend, LegendItem{Class: class, D: "M" + f1(legendX) + " 14h16",
				Label: Text{X: f1(legendX + 20), Y: "18", Text: se.Name, Anchor: "start"}})
			legendX += 36 + textWidth(se.Name)
		}
	}
	area := plot{left, right, top, bottom}
	// The points' labels are placed once every series is drawn, so that
	// none covers another series' point or line.
	for _, l := range pending {
		if label, ok := firstFree(l.text, l.places(), area, drawn, texts); ok {
			c.Dots[l.dot].Label = &label
			texts = append(texts, labelBox(label))
		}
	}
	vertical := 0
	// Each line and label placed is one the next labels keep off.
	for _, r := range spec.Refs {
		if line, ok := c.drawRef(r, sx, sy, plot{left, right, top, bottom}, vertical, drawn, texts); ok {
			drawn = append(drawn, line)
			texts = append(texts, labelBox(c.Refs[len(c.Refs)-1].Label))
		}
		if r.Vertical {
			vertical++
		}
	}
	for _, m := range spec.Markers {
		if c.drawMarker(m, sx, sy, plot{left, right, top, bottom}, drawn, texts) {
			texts = append(texts, labelBox(c.Marks[len(c.Marks)-1].Label))
		}
	}
	return c
}

// dotLabel is a point's label still to be placed: the dot it names (an
// index into Chart.Dots), where the dot is, and whether its series puts
// labels below its points first.
type dotLabel struct {
	dot   int
	x, y  float64
	text  string
	below bool
}

// places are where a point's label may go, nearest first: beside the
// point on the right, then on the left, above, below, then farther out.
func (l dotLabel) places() []Text {
	above, under := l.y-7, l.y+16
	if l.below {
		above, under = under, above
	}
	places := make([]Text, 0, 12)
	for _, d := range []float64{7, 20} {
		places = append(places,
			Text{X: f1(l.x + d), Y: f1(above), Anchor: "start"},
			Text{X: f1(l.x + d), Y: f1(under), Anchor: "start"},
			Text{X: f1(l.x - d), Y: f1(above), Anchor: "end"},
			Text{X: f1(l.x - d), Y: f1(under), Anchor: "end"},
			Text{X: f1(l.x), Y: f1(l.y - 2*d), Anchor: "middle"},
			Text{X: f1(l.x), Y: f1(l.y + 2*d + labelAscent), Anchor: "middle"},
		)
	}
	return places
}

// drawSeries adds a series' line and, for short series or one with
// Markers, its dots, and returns its stretches in pixels and its points'
// labels still to be placed (buildChart places them clear of every
// series); a point that cannot be drawn breaks the line, so
// that no segment joins the points on either side of a gap.
func (c *Chart) drawSeries(se series, class string, sx, sy scale) ([]polyline, []dotLabel) {
	var d strings.Builder
	// run is the current stretch of drawable points; one of a single
	// point makes no line, only its dot.
	var run []string
	var lines []polyline
	var pixels polyline
	var labels []dotLabel
	endRun := func() {
		if len(run) > 1 {
			d.WriteString("M" + strings.Join(run, "L"))
		}
		if len(pixels) > 0 {
			lines = append(lines, pixels)
		}
		run, pixels = run[:0], nil
	}
	var dots []Dot
	for _, p := range se.Points {
		x, okx := sx.px(p.X)
		y, oky := sy.px(p.Y)
		if !okx || !oky {
			endRun()
			continue
		}
		run = append(run, f1(x)+" "+f1(y))
		pixels = append(pixels, [2]float64{x, y})
		dot := Dot{Class: class, CX: f1(x), CY: f1(y), R: f1(dotRadius), Tip: p.Tip}
		if p.Hollow {
			dot.Class += " " + hollowClass
		}
		if p.Label != "" {
			labels = append(labels, dotLabel{dot: len(dots), x: x, y: y, text: p.Label, below: se.LabelBelow})
		}
		dots = append(dots, dot)
	}
	endRun()
	if d.Len() > 0 {
		c.Lines = append(c.Lines, Line{Class: class, D: d.String(), Name: se.Name})
	}
	first := len(c.Dots)
	switch {
	case len(dots) <= maxDots:
		c.Dots = append(c.Dots, dots...)
	case se.Markers:
		for _, dot := range dots {
			dot.R = f1(smallDotRadius)
			c.Dots = append(c.Dots, dot)
		}
	default:
		// No dot is drawn, so no label either.
		return lines, nil
	}
	for i := range labels {
		labels[i].dot += first
	}
	return lines, labels
}

// drawBand shades a stretch of the x axis over the plot's height, its
// label at the top of the stretch, inside it.
func (c *Chart) drawBand(b band, sx scale, left, right, top, bottom float64) {
	x0, ok0 := sx.px(b.From)
	x1, ok1 := sx.px(b.To)
	if !ok0 || !ok1 {
		return
	}
	x0, x1 = max(min(x0, x1), left), min(max(x0, x1), right)
	if x1-x0 < 1 {
		return
	}
	c.Bands = append(c.Bands, Band{Mark: b.Mark, X: f1(x0), Y: f1(top), W: f1(x1 - x0), H: f1(bottom - top),
		Label: Text{X: f1(x0 + 4), Y: f1(top + 12), Text: b.Label, Anchor: "start"}})
}

// drawRef adds a reference line when its value is on the axis, and
// returns the line in pixels (false when it is not on the axis); its
// label goes where no data or line (drawn) or other label (texts) is: a
// horizontal line's above or under the line, at its right or left end,
// else above the plot; a vertical line's, the nth of which this is,
// beside it at the plot's top or bottom, the labels of several one under
// the other.
func (c *Chart) drawRef(r refLine, sx, sy scale, area plot, nth int, drawn []polyline, texts []box) (polyline, bool) {
	if r.Vertical {
		x, ok := sx.px(r.Value)
		if !ok {
			return nil, false
		}
		c.Refs = append(c.Refs, Ref{Mark: r.Mark, D: "M" + f1(x) + " " + f1(area.top) + "V" + f1(area.bottom),
			Label: freeVerticalLabel(r.Label, x, area, nth, drawn, texts)})
		return polyline{{x, area.top}, {x, area.bottom}}, true
	}
	y, ok := sy.px(r.Value)
	if !ok {
		return nil, false
	}
	c.Refs = append(c.Refs, Ref{Mark: r.Mark, D: "M" + f1(area.left) + " " + f1(y) + "H" + f1(area.right),
		Label: freeLabel(r.Label, y, area, drawn, texts)})
	return polyline{{area.left, y}, {area.right, y}}, true
}

// refPixels reads a reference line drawn by drawRef back into pixels,
// nil for a path of another shape.
func refPixels(r Ref) polyline {
	var x0, y0, to float64
	if _, err := fmt.Sscanf(r.D, "M%f %fV%f", &x0, &y0, &to); err == nil {
		return polyline{{x0, y0}, {x0, to}}
	}
	if _, err := fmt.Sscanf(r.D, "M%f %fH%f", &x0, &y0, &to); err == nil {
		return polyline{{x0, y0}, {to, y0}}
	}
	return nil
}

// freeLabel places the label of a horizontal line at height y where it
// crosses no drawn line or dot nor another label (texts): above the line
// or under it, at the plot's right end or its left; when every place is
// taken, above the plot, at its right end (outside it, where no data is).
func freeLabel(text string, y float64, area plot, drawn []polyline, texts []box) Text {
	if place, ok := firstFree(text, []Text{
		{X: f1(area.right - 4), Y: f1(y - 5), Anchor: "end"},
		{X: f1(area.right - 4), Y: f1(y + 5 + labelAscent), Anchor: "end"},
		{X: f1(area.left + 4), Y: f1(y - 5), Anchor: "start"},
		{X: f1(area.left + 4), Y: f1(y + 5 + labelAscent), Anchor: "start"},
	}, area, drawn, texts); ok {
		return place
	}
	return Text{X: f1(area.right), Y: f1(area.top - 6), Text: text, Anchor: "end"}
}

// freeVerticalLabel places the label of the nth vertical line, at x,
// beside it where it crosses no drawn line, dot or other label: at the
// plot's top, on the side away from the nearer edge, else the other side,
// else at the plot's bottom, else further along the line from the top;
// the labels of several lines go one under the other. When every place
// is taken it goes above the plot (outside it, where no data is).
func freeVerticalLabel(text string, x float64, area plot, nth int, drawn []polyline, texts []box) Text {
	lean, other := Text{X: f1(x + 4), Anchor: "start"}, Text{X: f1(x - 4), Anchor: "end"}
	if x > (area.left+area.right)/2 {
		lean, other = other, lean
	}
	top, bottom := area.top+12+14*float64(nth), area.bottom-6-14*float64(nth)
	var places []Text
	for _, y := range append([]float64{top, bottom}, alongLine(top, bottom)...) {
		for _, side := range []Text{lean, other} {
			side.Text, side.Y = text, f1(y)
			places = append(places, side)
		}
	}
	if place, ok := firstFree(text, places, area, drawn, texts); ok {
		return place
	}
	lean.Text, lean.Y = text, f1(area.top-6)
	return lean
}

// alongLine are the baselines 14 px apart strictly between top and
// bottom, from the top: a label's further places along a vertical line.
func alongLine(top, bottom float64) []float64 {
	var ys []float64
	for y := top + 14; y < bottom; y += 14 {
		ys = append(ys, y)
	}
	return ys
}

// drawMarker rings a point when it is on the axes (false when it is
// not); its label goes above
// it (under it when Below), leaning away from the nearer side, or, when
// that place crosses data or another label, to the first free one of the
// other side, the other lean, or further out; when none is free, above
// the plot.
func (c *Chart) drawMarker(m marker, sx, sy scale, area plot, drawn []polyline, texts []box) bool {
	x, okx := sx.px(m.X)
	y, oky := sy.px(m.Y)
	if !okx || !oky {
		return false
	}
	above, below := y-22, y+28
	if m.Below {
		above, below = below, above
	}
	lean, other := "start", "end"
	if x > (area.left+area.right)/2 {
		lean, other = other, lean
	}
	places := []Text{
		{X: f1(x), Y: f1(above), Anchor: lean},
		{X: f1(x), Y: f1(above), Anchor: other},
		{X: f1(x), Y: f1(below), Anchor: lean},
		{X: f1(x), Y: f1(below), Anchor: other},
		{X: f1(x), Y: f1(2*above - y), Anchor: lean},
		{X: f1(x), Y: f1(2*below - y), Anchor: lean},
	}
	label, ok := firstFree(m.Label, places, area, drawn, texts)
	if !ok {
		// Every place near the point is taken: above the plot, outside
		// it, where no data is, rather than over a point.
		label = Text{X: f1(x), Y: f1(area.top - 6), Text: m.Label, Anchor: lean}
	}
	c.Marks = append(c.Marks, Mark{Mark: m.Mark, CX: f1(x), CY: f1(y), Label: label})
	return true
}

// axisTitle adds "(log)" to the label of a logarithmic axis.
func axisTitle(label string, s scale) string {
	if s.log {
		return label + " (log)"
	}
	return label
}

// tickLabel formats a tick value compactly: 0.5, 250, 2500, 25k, 1.5M.
func tickLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

// f1 formats a coordinate with one decimal.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
