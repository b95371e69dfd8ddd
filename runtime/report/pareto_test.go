package report

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestParetoFront(t *testing.T) {
	pts := func(xy ...float64) []paretoPoint {
		var out []paretoPoint
		for i := 0; i < len(xy); i += 2 {
			out = append(out, paretoPoint{X: xy[i], Y: xy[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		points  []paretoPoint
		xHigher bool
		want    []int
	}{
		{"no point", nil, true, nil},
		{"one point", pts(5, 5), true, []int{0}},
		{"one point, x lower better", pts(5, 5), false, []int{0}},
		{"dominated on both axes", pts(1, 1, 2, 2), true, []int{1}},
		{"dominated on both axes, x lower better", pts(1, 1, 2, 2), false, []int{0, 1}},
		{"beaten on y at equal x", pts(3, 1, 3, 2), true, []int{1}},
		{"beaten on x at equal y", pts(3, 2, 4, 2), true, []int{1}},
		{"beaten on x at equal y, x lower better", pts(3, 2, 4, 2), false, []int{0}},
		{"equal points are both on the front", pts(3, 2, 3, 2, 1, 1), true, []int{0, 1}},
		{"a trade-off: all on the front, in the order of x", pts(3, 1, 1, 3, 2, 2), true, []int{1, 2, 0}},
		{"a trade-off with one inside it", pts(1, 10, 10, 1, 4, 4, 3, 3), true, []int{0, 2, 1}},
		{"latency: lower x and higher y win", pts(100, 50, 200, 80, 150, 40, 300, 80), false, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := paretoFront(tc.points, tc.xHigher); !slices.Equal(got, tc.want) {
				t.Errorf("front %v, want %v", got, tc.want)
			}
		})
	}
}

// The front's labels go where they cover no dot, no ring, no front line
// and no other label, and stay inside the plot, however crowded the
// points; one with no room is left out, never drawn over a point.
func TestParetoLabelsCoverNothing(t *testing.T) {
	for _, n := range []int{1, 3, 12, 40} {
		t.Run(fmt.Sprint(n, " points"), func(t *testing.T) {
			var runs []paretoRun
			for r := range 3 {
				run := paretoRun{Name: fmt.Sprint("config-", r)}
				for i := range n {
					// Points along a saturating curve, the runs' curves
					// close together: the front crowds into one corner.
					x := float64(i+1) * (1 + 0.05*float64(r))
					run.Points = append(run.Points, paretoPoint{X: x, Y: 100 * (1 - math.Exp(-x/4)) * (1 + 0.03*float64(r)),
						Label: fmt.Sprintf("config-%d @concurrency %d", r, i+1), Tip: fmt.Sprint(r, "/", i)})
				}
				runs = append(runs, run)
			}
			c, front := buildPareto(paretoSpec{Name: "p", X: axisSpec{Label: "x", Zero: true}, Y: axisSpec{Label: "y", Zero: true}, XHigher: false, Runs: runs,
				Refs: []refLine{{Value: float64(n) / 2, Vertical: true, Label: "SLO", Mark: "slo"}}})
			if len(front) == 0 || len(c.Marks) != len(front) {
				t.Fatalf("%d front points, %d marks", len(front), len(c.Marks))
			}
			var line [][2][2]float64
			for i := 1; i < len(c.Marks); i++ {
				line = append(line, [2][2]float64{{num(c.Marks[i-1].CX), num(c.Marks[i-1].CY)}, {num(c.Marks[i].CX), num(c.Marks[i].CY)}})
			}
			area := box{marginLeft, marginTop, float64(c.Width - marginRight), float64(c.Height - marginBottom)}
			var placed []box
			for _, m := range c.Marks {
				if m.Label.Text == "" {
					continue
				}
				// b is where the label's glyphs are, its clearance aside.
				b := labelBox(m.Label)
				b = box{b[0] + labelClear, b[1] + labelClear, b[2] - labelClear, b[3] - labelClear}
				if b[0] < area[0] || b[1] < area[1] || b[2] > area[2] || b[3] > area[3] {
					t.Errorf("label %q at %v leaves the plot %v", m.Label.Text, b, area)
				}
				for _, d := range c.Dots {
					if nearCircle(b, num(d.CX), num(d.CY), ringRadius) {
						t.Errorf("label %q at %v covers the point at %s,%s", m.Label.Text, b, d.CX, d.CY)
					}
				}
				for _, s := range line {
					if sampledCrossing(b, s) {
						t.Errorf("label %q at %v crosses the front line %v", m.Label.Text, b, s)
					}
				}
				for _, o := range placed {
					if b.overlaps(o) {
						t.Errorf("label %q at %v covers another label at %v", m.Label.Text, b, o)
					}
				}
				placed = append(placed, b)
			}
			if len(placed) == 0 {
				t.Errorf("no front label placed")
			}
			t.Logf("%d of %d front labels placed", len(placed), len(front))
		})
	}
}

// nearCircle says whether b comes within r of (x, y).
func nearCircle(b box, x, y, r float64) bool {
	dx := x - max(b[0], min(x, b[2]))
	dy := y - max(b[1], min(y, b[3]))
	return dx*dx+dy*dy < r*r
}

// sampledCrossing says whether the segment s passes through b, tried
// every pixel along it.
func sampledCrossing(b box, s [2][2]float64) bool {
	n := math.Ceil(math.Hypot(s[1][0]-s[0][0], s[1][1]-s[0][1]))
	for k := 0.0; k <= n; k++ {
		t := k / math.Max(n, 1)
		x, y := s[0][0]+t*(s[1][0]-s[0][0]), s[0][1]+t*(s[1][1]-s[0][1])
		if x > b[0] && x < b[2] && y > b[1] && y < b[3] {
			return true
		}
	}
	return false
}

// Two front labels stacked one over the other both fit where their
// texts are a few pixels apart: the clearance between labels is no
// larger than the one the front's labels were drawn with. (The layout of
// crossrun's testdata sweep.json and decode-5ms.json, TTFT SLO 60 ms.)
func TestParetoPlacesStackedFrontLabels(t *testing.T) {
	sweep := paretoRun{Name: "concurrency-sweep"}
	for i, xy := range [][2]float64{{43.9, 151.9}, {51.5, 223.8}, {79.0, 447.3}, {207.6, 767.1}} {
		sweep.Points = append(sweep.Points, paretoPoint{X: xy[0], Y: xy[1], Label: fmt.Sprint("concurrency-sweep @concurrency ", 1<<i), Tip: fmt.Sprint(i)})
	}
	single := paretoRun{Name: "decode-5ms", Points: []paretoPoint{{X: 71.8, Y: 1062.1, Label: "decode-5ms", Tip: "single"}}}
	c, front := buildPareto(paretoSpec{Name: "pareto-ttft", X: axisSpec{Label: "TTFT p99 (ms)", Log: true, Zero: true}, Y: axisSpec{Label: "tok/s", Zero: true},
		Runs: []paretoRun{sweep, single}, Refs: []refLine{{Value: 60, Vertical: true, Label: "SLO TTFT p99 60.0 ms", Mark: "slo"}}})
	if len(front) != 3 {
		t.Fatalf("front %+v, want 3 points", front)
	}
	for _, m := range c.Marks {
		if m.Label.Text == "" {
			t.Errorf("the front point at (%s, %s) has no label", m.CX, m.CY)
		}
	}
}

// Front labels keep the order of their points: of two labels one above
// the other, the upper is the upper point's. A label not beside its
// point has a leader from the point's ring to its text, which crosses no
// other label. (The first layout is crossrun's testdata sweep.json per
// GPU of one, TTFT SLO 60 ms: the labels of @concurrency 1 and 2 went
// right of the SLO line, the lower point's label on top.)
func TestParetoLabelsKeepTheirPointsOrder(t *testing.T) {
	sweepOf := func(name string, xy ...[2]float64) paretoRun {
		run := paretoRun{Name: name}
		for i, p := range xy {
			run.Points = append(run.Points, paretoPoint{X: p[0], Y: p[1], Label: fmt.Sprint(name, " @concurrency ", 1<<i), Tip: fmt.Sprint(name, i)})
		}
		return run
	}
	for _, tc := range []struct {
		name string
		runs []paretoRun
		slo  float64
		// everyLabel says that the layout has room for every front
		// label; a crowded one may leave some to the front's table.
		everyLabel bool
	}{
		{"testdata sweep, SLO 60 ms", []paretoRun{
			sweepOf("sweep", [2]float64{43.9, 151.9}, [2]float64{51.5, 223.8}, [2]float64{79.0, 447.3}, [2]float64{207.6, 767.1}),
			{Name: "decode-5ms", Points: []paretoPoint{{X: 71.8, Y: 1062.1, Label: "decode-5ms", Tip: "single"}}},
			{Name: "decode-20ms", Points: []paretoPoint{{X: 72.1, Y: 360.9, Label: "decode-20ms", Tip: "slow"}}},
		}, 60, true},
		{"testdata sweep per GPU, SLO 75 ms", []paretoRun{
			sweepOf("sweep", [2]float64{43.9, 75.9}, [2]float64{51.5, 111.9}, [2]float64{79.0, 223.7}, [2]float64{207.6, 383.5}),
			{Name: "decode-5ms", Points: []paretoPoint{{X: 71.8, Y: 531.1, Label: "decode-5ms", Tip: "single"}}},
			{Name: "decode-20ms", Points: []paretoPoint{{X: 72.1, Y: 90.2, Label: "decode-20ms", Tip: "slow"}}},
		}, 75, true},
		{"close levels", []paretoRun{sweepOf("concurrency-sweep", [2]float64{40, 100}, [2]float64{42, 130}, [2]float64{45, 160}, [2]float64{300, 900})}, 50, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// As the page draws them: a point over the SLO misses it.
			for _, r := range tc.runs {
				for i := range r.Points {
					r.Points[i].Misses = r.Points[i].X > tc.slo
				}
			}
			c, _ := buildPareto(paretoSpec{Name: "pareto-ttft", X: axisSpec{Label: "TTFT p99 (ms)", Log: true, Zero: true}, Y: axisSpec{Label: "tok/s", Zero: true},
				Runs: tc.runs, Refs: []refLine{{Value: tc.slo, Vertical: true, Label: "SLO TTFT p99", Mark: "slo"}}, Misses: "misses the SLO"})
			type labelled struct {
				point [2]float64
				glyph box
			}
			var ls []labelled
			for _, m := range c.Marks {
				if m.Label.Text == "" {
					if tc.everyLabel {
						t.Errorf("the front point at (%s, %s) has no label", m.CX, m.CY)
					}
					continue
				}
				p, g := [2]float64{num(m.CX), num(m.CY)}, glyphBox(labelBox(m.Label))
				ls = append(ls, labelled{p, g})
				gap := math.Hypot(p[0]-max(g[0], min(p[0], g[2])), p[1]-max(g[1], min(p[1], g[3])))
				if m.Leader == "" {
					if gap > leaderReach {
						t.Errorf("%q is %.1f px from its point, with no leader", m.Label.Text, gap)
					}
					continue
				}
				var x0, y0, x1, y1 float64
				if _, err := fmt.Sscanf(m.Leader, "M%f %fL%f %f", &x0, &y0, &x1, &y1); err != nil {
					t.Fatalf("leader %q: %v", m.Leader, err)
				}
				if r := math.Hypot(x0-p[0], y0-p[1]); math.Abs(r-ringRadius) > 0.2 {
					t.Errorf("%q: its leader starts %.1f px from its point, not on its ring", m.Label.Text, r)
				}
				if x1 < g[0]-0.1 || x1 > g[2]+0.1 || y1 < g[1]-0.1 || y1 > g[3]+0.1 {
					t.Errorf("%q: its leader ends at (%g, %g), not on its text %v", m.Label.Text, x1, y1, g)
				}
				for _, o := range c.Marks {
					if o.Label.Text != "" && o.Label != m.Label && segmentCrosses(glyphBox(labelBox(o.Label)), [2]float64{x0, y0}, [2]float64{x1, y1}) {
						t.Errorf("%q: its leader crosses the label %q", m.Label.Text, o.Label.Text)
					}
				}
			}
			for i, a := range ls {
				for _, b := range ls[i+1:] {
					stacked := a.glyph[0] < b.glyph[2] && b.glyph[0] < a.glyph[2]
					if stacked && a.point[1] != b.point[1] && (a.point[1] < b.point[1]) != (a.glyph[1] < b.glyph[1]) {
						t.Errorf("the labels at %v and %v are stacked in the reverse order of their points %v and %v", a.glyph, b.glyph, a.point, b.point)
					}
				}
			}
		})
	}
}
