package main

import (
	"fmt"
	"slices"
	"time"
)

// minWindowSamples is the fewest samples each window of the flatness rule
// needs for a verdict.
const minWindowSamples = 3

// point is one reading of a quantity, at a time since the client started.
type point struct {
	at time.Duration
	v  float64
}

// points returns value of each sample.
func points(samples []sample, value func(sample) float64) []point {
	p := make([]point, len(samples))
	for i, s := range samples {
		p[i] = point{s.at, value(s)}
	}
	return p
}

// flatRule is the flatness rule of one quantity: its median over the
// second half of the load may exceed its median over the first third by
// at most pct percent of that, or by floor, whichever is larger, and so
// may its least-squares trend over the second half, projected over that
// half. Medians, not maxima: a leak raises the level the quantity keeps
// coming back to, while the bounded cost of a few large responses in
// flight at once (the simulator's 2 MiB lines) only raises its peaks,
// which are reported but not judged.
type flatRule struct {
	what  string // "RSS", "open files"
	unit  string // " MiB", ""
	pct   float64
	floor float64
}

// flatVerdict is a flatRule applied to a run's samples.
type flatVerdict struct {
	rule                flatRule
	firstEnd, lateStart time.Duration
	baseline, late      float64 // medians
	peakFirst, peakLate float64 // maxima
	limit               float64
	nFirst, nLate       int
	slopePerMin         float64 // least-squares slope over the second half
	trend               float64 // slopePerMin over the second half's length
	flat, enough        bool
}

// judgeFlat applies r to the points read while the load ran (at or
// before loadEnd).
func judgeFlat(all []point, loadEnd time.Duration, r flatRule) flatVerdict {
	var load []point
	for _, p := range all {
		if p.at <= loadEnd {
			load = append(load, p)
		}
	}
	v := flatVerdict{rule: r}
	if len(load) == 0 {
		return v
	}
	end := load[len(load)-1].at
	v.firstEnd, v.lateStart = end/3, end/2
	var first, late []point
	for _, p := range load {
		if p.at <= v.firstEnd {
			first = append(first, p)
		}
		if p.at >= v.lateStart {
			late = append(late, p)
		}
	}
	v.nFirst, v.nLate = len(first), len(late)
	v.baseline, v.peakFirst = median(first), peak(first)
	v.late, v.peakLate = median(late), peak(late)
	v.limit = max(v.baseline*r.pct/100, r.floor)
	v.slopePerMin = slope(late)
	v.trend = v.slopePerMin * (end - v.lateStart).Minutes()
	v.enough = v.nFirst >= minWindowSamples && v.nLate >= minWindowSamples
	v.flat = v.enough && v.late-v.baseline <= v.limit && v.trend <= v.limit
	return v
}

// median is the median value of the points (0 when there are none).
func median(ps []point) float64 {
	if len(ps) == 0 {
		return 0
	}
	vs := make([]float64, len(ps))
	for i, p := range ps {
		vs[i] = p.v
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

// peak is the largest value of the points (0 when there are none).
func peak(ps []point) float64 {
	m := 0.0
	for _, p := range ps {
		m = max(m, p.v)
	}
	return m
}

// slope is the least-squares slope of the points over time, per minute.
func slope(ps []point) float64 {
	n := float64(len(ps))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for _, p := range ps {
		x, y := p.at.Minutes(), p.v
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// word is the verdict: FLAT, GROWING or INCONCLUSIVE.
func (v flatVerdict) word() string {
	switch {
	case !v.enough:
		return "INCONCLUSIVE"
	case v.flat:
		return "FLAT"
	}
	return "GROWING"
}

// String describes the verdict with its numbers and its rule.
func (v flatVerdict) String() string {
	r := v.rule
	if !v.enough {
		return fmt.Sprintf("%s: INCONCLUSIVE: %d readings in the first third and %d in the second half of the load, want %d in each",
			r.what, v.nFirst, v.nLate, minWindowSamples)
	}
	growth := v.late - v.baseline
	pct := 0.0
	if v.baseline > 0 {
		pct = 100 * growth / v.baseline
	}
	return fmt.Sprintf("%s: median %.1f%s over the first third (to %s), %.1f%s over the second half (from %s): %+.1f%s (%+.1f %%); "+
		"trend %+.2f%s/min over the second half (%+.1f%s over it); peaks %.1f%s and %.1f%s\n"+
		"  %s (rule: the second half's median, and its trend over it, may exceed the first third's median by at most max(%g %%, %g%s) = %.1f%s)",
		r.what, v.baseline, r.unit, v.firstEnd.Round(time.Second), v.late, r.unit, v.lateStart.Round(time.Second),
		growth, r.unit, pct, v.slopePerMin, r.unit, v.trend, r.unit, v.peakFirst, r.unit, v.peakLate, r.unit,
		v.word(), r.pct, r.floor, r.unit, v.limit, r.unit)
}
