package report

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Label placement, one rule for every chart: a label is the box of its
// text (textBox); a place is free when that box is inside the plot and
// clear of the drawn lines and dots and of the boxes already taken
// (free); a label goes to the first free place of its chart's candidates
// (firstFree).

// Label geometry, for the charts' 11 px text: its glyphs rise about
// labelAscent above the baseline and fall labelDescent below it, each
// charWidth wide; labelClear is how far a label keeps from what it must
// not cover.
const (
	labelAscent  = 10
	labelDescent = 3
	labelClear   = 2
)

// polyline is a stretch of a series' line in pixels; one of a single
// point is a lone dot.
type polyline [][2]float64

// path is the polyline as an SVG path's d: "Mx0 y0Lx1 y1...".
func (l polyline) path() string {
	var d strings.Builder
	for i, p := range l {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		d.WriteString(cmd + f1(p[0]) + " " + f1(p[1]))
	}
	return d.String()
}

// plot is the plot area's edges in pixels.
type plot struct{ left, right, top, bottom float64 }

// box is a rectangle in pixels: left, top, right, bottom.
type box [4]float64

// overlaps reports whether two boxes share some area.
func (b box) overlaps(o box) bool { return b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3] }

// textWidth is the width of a label or legend name in pixels: charWidth
// a character (not a byte: a run's --label may be in any script).
func textWidth(text string) float64 { return charWidth * float64(utf8.RuneCountInString(text)) }

// textBox is the box of a label of the given anchor whose baseline
// starts, ends or is centred at (x, baseline), grown by labelClear.
func textBox(text, anchor string, x, baseline float64) box {
	width := textWidth(text)
	switch anchor {
	case "end":
		x -= width
	case "middle":
		x -= width / 2
	}
	return box{x - labelClear, baseline - labelAscent - labelClear, x + width + labelClear, baseline + labelDescent + labelClear}
}

// labelBox is the box of a label already placed.
func labelBox(l Text) box { return textBox(l.Text, l.Anchor, num(l.X), num(l.Y)) }

// ringBox is the square a ring of radius r around (x, y) takes, which
// labels keep off as they keep off other labels.
func ringBox(x, y, r float64) box { return box{x - r, y - r, x + r, y + r} }

// free reports whether a label's box (its clearance aside) is inside the
// plot, and clear of the drawn lines and dots and of the boxes of other
// labels.
func free(b box, area plot, drawn []polyline, texts []box) bool {
	if b[0]+labelClear < area.left || b[2]-labelClear > area.right || b[1]+labelClear < area.top || b[3]-labelClear > area.bottom || crosses(b, drawn) {
		return false
	}
	return !slices.ContainsFunc(texts, b.overlaps)
}

// firstFree returns text placed at the first of places that is free (see
// free), and true; or, when none is, false.
func firstFree(text string, places []Text, area plot, drawn []polyline, texts []box) (Text, bool) {
	return firstFreeWhere(text, places, area, drawn, texts, nil)
}

// firstFreeWhere is firstFree of the places that also pass also (every
// place when nil).
func firstFreeWhere(text string, places []Text, area plot, drawn []polyline, texts []box, also func(Text) bool) (Text, bool) {
	for _, place := range places {
		place.Text = text
		if free(labelBox(place), area, drawn, texts) && (also == nil || also(place)) {
			return place, true
		}
	}
	return Text{}, false
}

// glyphBox is a label's box without its clearance: where its glyphs are.
func glyphBox(b box) box {
	return box{b[0] + labelClear, b[1] + labelClear, b[2] - labelClear, b[3] - labelClear}
}

// segmentsMeet reports whether the segments a–b and c–d cross or touch.
func segmentsMeet(a, b, c, d [2]float64) bool {
	side := func(p, q, r [2]float64) float64 { return (q[0]-p[0])*(r[1]-p[1]) - (q[1]-p[1])*(r[0]-p[0]) }
	within := func(p, q, r [2]float64) bool {
		return min(p[0], q[0]) <= r[0] && r[0] <= max(p[0], q[0]) && min(p[1], q[1]) <= r[1] && r[1] <= max(p[1], q[1])
	}
	d1, d2, d3, d4 := side(c, d, a), side(c, d, b), side(a, b, c), side(a, b, d)
	if (d1 > 0) != (d2 > 0) && d1 != 0 && d2 != 0 && (d3 > 0) != (d4 > 0) && d3 != 0 && d4 != 0 {
		return true
	}
	return d1 == 0 && within(c, d, a) || d2 == 0 && within(c, d, b) || d3 == 0 && within(a, b, c) || d4 == 0 && within(a, b, d)
}

// num reads back a coordinate f1 wrote.
func num(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// crosses reports whether a drawn line or dot enters b, a dot counting
// with its radius: it keeps labels off the square around it.
func crosses(b box, drawn []polyline) bool {
	grown := box{b[0] - dotRadius, b[1] - dotRadius, b[2] + dotRadius, b[3] + dotRadius}
	inside := func(p [2]float64) bool {
		return p[0] >= grown[0] && p[0] <= grown[2] && p[1] >= grown[1] && p[1] <= grown[3]
	}
	for _, line := range drawn {
		for i, p := range line {
			if inside(p) {
				return true
			}
			if i > 0 && segmentCrosses(b, line[i-1], p) {
				return true
			}
		}
	}
	return false
}

// segmentCrosses reports whether the segment from a to z enters b,
// clipping it to the box's edges (Liang–Barsky).
func segmentCrosses(b box, a, z [2]float64) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := z[0]-a[0], z[1]-a[1]
	for _, edge := range [][2]float64{{-dx, a[0] - b[0]}, {dx, b[2] - a[0]}, {-dy, a[1] - b[1]}, {dy, b[3] - a[1]}} {
		p, q := edge[0], edge[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = max(t0, t)
		} else {
			t1 = min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}
