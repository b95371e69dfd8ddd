package executor

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/llmrun/llmrun/runtime/executor/segment"
)

// Arrival processes of the arrival-rate executors.
const (
	// ArrivalConstant spaces starts evenly, as k6 does.
	ArrivalConstant = "constant"
	// ArrivalPoisson draws exponential gaps: a Poisson process.
	ArrivalPoisson = "poisson"
	// ArrivalGamma draws gamma-distributed gaps of shape burstiness: a
	// renewal process whose gaps have a coefficient of variation of
	// 1/sqrt(burstiness) (1 is Poisson, lower is burstier).
	ArrivalGamma = "gamma"
)

// SeedFor derives a scenario's own seed from the run's seed and the
// scenario's name, so that scenarios draw independent arrivals and a run
// with the same seed draws the same ones.
func SeedFor(seed int64, scenario string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(scenario))
	return splitmix64(h.Sum64() ^ splitmix64(uint64(seed)))
}

// newRand returns the random source of a schedule.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, splitmix64(seed+1))) }

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Schedule is an arrival-rate scenario's timeline: the planned start of
// each iteration, as an offset from the scenario's start, in order.
//
// Planned starts are generated in "operational time", counted in expected
// arrivals: arrival i is at u_i, where u_{i+1} − u_i is a gap of mean 1
// drawn from the arrival process (always 1 for constant arrivals, Exp(1)
// for Poisson, Gamma(k, 1/k) for gamma). Each u_i is then mapped to wall
// time by inverting Λ(t) = ∫₀ᵗ rate(s) ds, the expected number of arrivals
// by t (time rescaling). With a constant rate this is gaps of mean 1/rate;
// with a ramping rate it gives a Poisson process of intensity rate(t)
// exactly, and a gamma process whose local rate follows rate(t). Each
// planned start is computed from u_i alone, never by adding wall-clock
// gaps, so rounding does not accumulate: the millionth start of a 3/s
// schedule is within a nanosecond of 333333.333 s.
type Schedule struct {
	gap    func() float64 // nil: constant arrivals
	curve  *curve
	closed bool // an arrival at exactly the end is planned (ramping-arrival-rate)
	u      float64
	comp   float64 // Kahan compensation of u
	// scale maps u to the operational time the curve inverts: 1, or a
	// normalized schedule's factor (newNormalizedSchedule).
	scale float64
	done  bool
	// part is the execution segment whose arrivals the schedule returns:
	// of the whole plan's arrivals, numbered from 0, those it owns.
	part  segment.Part
	index int64 // the number of the next arrival of the whole plan
}

// newSchedule returns the schedule of process over c: the first arrival at
// the start (atStart, constant-arrival-rate as in k6) or after one gap.
func newSchedule(process string, burstiness float64, seed uint64, c *curve, atStart, closed bool) *Schedule {
	s := &Schedule{curve: c, closed: closed, scale: 1}
	rng := newRand(seed)
	switch process {
	case ArrivalPoisson:
		s.gap = rng.ExpFloat64
	case ArrivalGamma:
		k := burstiness
		s.gap = func() float64 { return gammaRand(rng, k) / k }
	}
	if !atStart {
		s.advance()
	}
	return s
}

// newNormalizedSchedule returns the schedule of process over c whose n-th
// arrival falls at exactly operational time n, as vLLM's bench places its
// arrivals (vllm/benchmarks/serve.py, get_request): the first arrival one
// gap after the start, and the cumulative gaps scaled by n over the sum of
// the first n. The gaps are those newSchedule draws for seed, drawn once
// more up front to sum them; that stops, with ctx's error, once ctx is
// done (a signal while a million gaps are drawn).
func newNormalizedSchedule(ctx context.Context, process string, burstiness float64, seed uint64, c *curve, n int) (*Schedule, error) {
	sum := newSchedule(process, burstiness, seed, c, false, false)
	for i := range n - 1 {
		if i%drawsPerCheck == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		sum.advance()
	}
	s := newSchedule(process, burstiness, seed, c, false, false)
	if sum.u > 0 {
		s.scale = float64(n) / sum.u
	}
	return s, nil
}

// drawsPerCheck is how many gaps newNormalizedSchedule draws between two
// looks at its context: well under a millisecond of drawing.
const drawsPerCheck = 1 << 14

func (s *Schedule) advance() {
	if s.gap == nil {
		s.u++ // exact up to 2^53
		return
	}
	y := s.gap() - s.comp
	t := s.u + y
	s.comp = (t - s.u) - y
	s.u = t
}

// Next returns the next planned start of the segment's part, or false
// when the schedule has ended.
func (s *Schedule) Next() (time.Duration, bool) {
	for {
		t, ok := s.next()
		if !ok {
			return 0, false
		}
		s.index++
		if s.part.Owns(s.index - 1) {
			return t, true
		}
	}
}

// next returns the next planned start of the whole plan.
func (s *Schedule) next() (time.Duration, bool) {
	if s.done {
		return 0, false
	}
	t, ok := s.curve.at(s.u*s.scale, s.closed)
	if !ok {
		s.done = true
		return 0, false
	}
	s.advance()
	return t, true
}

// maxDraws is how many random planned starts Drain and SkipTo draw one
// by one to count them exactly; beyond that they count the expected
// number, so that a huge rate cannot keep them busy.
const maxDraws = 1 << 20

// iteration implements arrivals: a schedule's iterations run under the
// scenario's context.
func (s *Schedule) iteration(iter context.Context) context.Context { return iter }

// close implements arrivals: a schedule holds nothing.
func (s *Schedule) close() error { return nil }

// Drain ends the schedule and returns how many planned starts Next had
// still to return: exact for constant arrivals, computed without drawing
// them; drawn for random ones, up to maxDraws, then the expected number.
func (s *Schedule) Drain() int {
	n := s.SkipTo(s.curve.end)
	s.done = true
	return n
}

// SkipTo skips the planned starts at or before offset and returns how
// many of the segment's part it skipped, as Drain counts them.
func (s *Schedule) SkipTo(offset time.Duration) int {
	n := int64(s.skipTo(offset))
	s.index += n
	return int(s.part.Count(s.index-n, s.index))
}

// skipTo skips the planned starts of the whole plan at or before offset
// and returns how many it skipped.
func (s *Schedule) skipTo(offset time.Duration) int {
	if s.done {
		return 0
	}
	l := s.curve.cumulative(offset)
	if s.gap != nil {
		return s.skipRandom(offset, l)
	}
	last := s.lastU()
	if s.u > last || (!s.closed && s.u >= last) || l < s.u {
		return 0
	}
	n := int(math.Floor(l-s.u)) + 1
	if s.closed {
		n = min(n, int(math.Floor(last-s.u))+1)
	} else {
		n = min(n, int(math.Ceil(last-s.u)))
	}
	s.u += float64(n)
	return n
}

// skipRandom skips the random planned starts at or before offset, whose
// operational time is l: drawn while there are few, else counted by
// their expected number.
func (s *Schedule) skipRandom(offset time.Duration, l float64) int {
	n := 0
	for ; n < maxDraws; n++ {
		t, ok := s.curve.at(s.u*s.scale, s.closed)
		if !ok {
			s.done = true
			return n
		}
		if t > offset {
			return n
		}
		s.advance()
	}
	if u := l / s.scale; u > s.u {
		n += int(u - s.u)
		s.u, s.comp = u, 0
		s.advance()
	}
	return n
}

// lastU is the operational time of the last planned start possible.
func (s *Schedule) lastU() float64 {
	if s.closed {
		return s.curve.total*(1+1e-12) + 1e-9
	}
	return s.curve.total
}

// curve is a piecewise-linear rate over time, and the inverse of its
// integral.
type curve struct {
	segs  []piece
	end   time.Duration
	total float64 // Λ(end)
	i     int     // the piece of the last lookup: lookups only go forward
}

// piece is a stretch of the curve: the rate goes linearly from r0 to r1
// (per second) over dur seconds, from start; l0 and l1 are Λ at both ends.
type piece struct {
	start  time.Duration
	dur    float64
	r0, r1 float64
	l0, l1 float64
}

// newCurve returns the curve that starts at startRate and moves linearly to
// each stage's target over its duration; rates are per unit.
func newCurve(startRate float64, stages []Stage, unit time.Duration) *curve {
	perSecond := float64(time.Second) / float64(unit)
	c := &curve{}
	from := startRate * perSecond
	var at time.Duration
	var l float64
	for _, st := range stages {
		to := st.target() * perSecond
		d := st.Duration.D.Seconds()
		if st.Duration.D > 0 {
			seg := piece{start: at, dur: d, r0: from, r1: to, l0: l}
			seg.l1 = l + (from+to)/2*d
			l = seg.l1
			c.segs = append(c.segs, seg)
		}
		from = to
		at += st.Duration.D
	}
	c.end, c.total = at, l
	return c
}

// at returns the offset t with Λ(t) = u: the planned start of the arrival
// at operational time u. Without closed, arrivals end strictly before the
// curve's end; with it, one at the very end is kept.
func (c *curve) at(u float64, closed bool) (time.Duration, bool) {
	if closed {
		if u > c.total*(1+1e-12)+1e-9 {
			return 0, false
		}
		u = min(u, c.total)
	} else if u >= c.total {
		return 0, false
	}
	for c.i < len(c.segs) && (u > c.segs[c.i].l1 || c.segs[c.i].l1 == c.segs[c.i].l0) {
		c.i++
	}
	if c.i == len(c.segs) {
		return 0, false
	}
	seg := c.segs[c.i]
	a := min(max(u-seg.l0, 0), seg.l1-seg.l0)
	var s float64
	if seg.r1 == seg.r0 {
		s = a / seg.r0
	} else {
		// r0·s + (r1−r0)/(2·dur)·s² = a, in the form that stays exact
		// when r0 is 0 and does not cancel when the rate falls.
		disc := max(seg.r0*seg.r0+2*(seg.r1-seg.r0)*a/seg.dur, 0)
		if den := seg.r0 + math.Sqrt(disc); den > 0 {
			s = 2 * a / den
		}
	}
	s = min(max(s, 0), seg.dur)
	t := seg.start + time.Duration(math.Round(s*float64(time.Second)))
	if !closed && t >= c.end {
		return 0, false
	}
	return min(t, c.end), true
}

// cumulative is Λ(t), the expected number of arrivals by offset t.
func (c *curve) cumulative(t time.Duration) float64 {
	for _, seg := range c.segs {
		s := (t - seg.start).Seconds()
		if s <= seg.dur {
			if s <= 0 {
				return seg.l0
			}
			return seg.l0 + seg.r0*s + (seg.r1-seg.r0)*s*s/(2*seg.dur)
		}
	}
	return c.total
}

// gammaRand draws from Gamma(k, 1) with Marsaglia and Tsang's method;
// shapes below 1 use Gamma(k+1)·U^(1/k).
func gammaRand(r *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaRand(r, k+1) * math.Pow(1-r.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
