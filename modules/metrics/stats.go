package metrics

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Trend values are recorded in HDR histograms as integers of 1/histScale of
// a unit: for Time metrics that is one microsecond. Values above histMax are
// clamped into the top bucket (the exact maximum is kept apart), so memory
// stays bounded; histSigFigs significant digits bound the relative error of a
// percentile to 0.1 %.
const (
	histScale   = 1000
	histMax     = 3_600_000_000 // one hour of milliseconds, in 1/histScale units
	histSigFigs = 3
	// smallTrend is how many values a trend keeps one by one before it
	// makes its histograms: a histogram over 1..histMax with histSigFigs
	// digits takes about 180 KiB, so a series of a few samples (a tag
	// with a value per request) would cost that much each.
	smallTrend = 64
)

// HistogramScale is how many histogram units make one unit of a trend's
// values: the histograms of Histograms hold round(|v| × HistogramScale).
const HistogramScale = histScale

// Stats is the aggregate of one metric's samples: counts, sum, extremes, the
// last value, the number of non-zero values (for rates) and, for trends, an
// HDR histogram of absolute values split by sign. The zero value is empty.
type Stats struct {
	Type Type
	// Count is the number of samples.
	Count int64
	// Sum is the sum of the values.
	Sum float64
	// Min and Max are the extreme values (0 when Count is 0).
	Min, Max float64
	// Last is the most recent value (for gauges).
	Last float64
	// NonZero counts the samples whose value was not zero (for rates).
	NonZero int64
	// SumSquares is the sum of the squared values, kept for trends only
	// (0 for other types): with Sum and Count it gives StdDev.
	SumSquares float64

	// lastTime is the time of Last's sample, so that Merge keeps the most
	// recent value whatever order series and shards are merged in.
	lastTime time.Time

	pos, neg *hdr.Histogram
	// small holds a trend's values until there are smallTrend of them;
	// then they go into pos and neg, and small is nil for good.
	small []weighted
}

// weighted is n samples of the value v.
type weighted struct {
	v float64
	n int64
}

func newStats(t Type) *Stats { return &Stats{Type: t} }

// TrendOf is the statistics of a trend of the values given, recorded as
// a run records its samples: for figures computed from samples another
// tool saved, by the same code as llmrun's own.
func TrendOf(values []float64) *Stats {
	s := newStats(Trend)
	for _, v := range values {
		s.add(v)
	}
	return s
}

func newHistogram() *hdr.Histogram { return hdr.New(1, histMax, histSigFigs) }

// scratchHistograms holds empty histograms for Percentile to record a
// small trend's values into, rather than make one per call.
var scratchHistograms = sync.Pool{New: func() any { return newHistogram() }}

// addAt adds n samples of a value sampled at t; Last stays when t is
// older than it.
func (s *Stats) addAt(v float64, n int64, t time.Time) {
	last, lastTime := s.Last, s.lastTime
	s.addN(v, n)
	if t.Before(lastTime) {
		s.Last = last
	} else {
		s.lastTime = t
	}
}

func (s *Stats) add(v float64) { s.addN(v, 1) }

// addN adds n ≥ 1 samples of the value v.
func (s *Stats) addN(v float64, n int64) {
	if s.Count == 0 || v < s.Min {
		s.Min = v
	}
	if s.Count == 0 || v > s.Max {
		s.Max = v
	}
	s.Count += n
	s.Sum += v * float64(n)
	s.Last = v
	if v != 0 {
		s.NonZero += n
	}
	if s.Type != Trend {
		return
	}
	s.SumSquares += v * v * float64(n)
	if s.pos == nil && s.neg == nil && len(s.small) < smallTrend {
		s.small = append(s.small, weighted{v, n})
		return
	}
	s.spill()
	s.record(v, n)
}

// spill moves the values kept one by one into the histograms.
func (s *Stats) spill() {
	for _, w := range s.small {
		s.record(w.v, w.n)
	}
	s.small = nil
}

// record adds n samples of v to the histogram of v's sign.
func (s *Stats) record(v float64, n int64) {
	h := &s.pos
	if v < 0 {
		h = &s.neg
	}
	if *h == nil {
		*h = newHistogram()
	}
	recordAbs(*h, v, n)
}

// recordAbs adds n samples of |v| to h.
func recordAbs(h *hdr.Histogram, v float64, n int64) {
	_ = h.RecordValues(scaled(v), n) // cannot fail: 0 ≤ scaled ≤ histMax
}

// scaled is |v| as histograms record it: in 1/histScale units, at most
// histMax.
func scaled(v float64) int64 {
	return min(int64(math.Round(math.Abs(v)*histScale)), histMax)
}

// Merge adds other's samples into s. Last becomes the more recent of the
// two last values (other's when their times are equal or unknown).
func (s *Stats) Merge(other *Stats) {
	if other == nil || other.Count == 0 {
		return
	}
	if s.Count == 0 || !other.lastTime.Before(s.lastTime) {
		s.Last, s.lastTime = other.Last, other.lastTime
	}
	if s.Count == 0 || other.Min < s.Min {
		s.Min = other.Min
	}
	if s.Count == 0 || other.Max > s.Max {
		s.Max = other.Max
	}
	s.Count += other.Count
	s.Sum += other.Sum
	s.SumSquares += other.SumSquares
	s.NonZero += other.NonZero
	if other.pos == nil && other.neg == nil && len(other.small) == 0 {
		return // not a trend, or no value kept
	}
	if s.pos == nil && s.neg == nil && other.pos == nil && other.neg == nil && len(s.small)+len(other.small) <= smallTrend {
		s.small = append(s.small, other.small...)
		return
	}
	s.spill()
	s.pos = mergeHist(s.pos, other.pos)
	s.neg = mergeHist(s.neg, other.neg)
	for _, w := range other.small {
		s.record(w.v, w.n)
	}
}

func mergeHist(dst, src *hdr.Histogram) *hdr.Histogram {
	if src == nil {
		return dst
	}
	if dst == nil {
		dst = newHistogram()
	}
	dst.Merge(src)
	return dst
}

// Histograms returns a trend's HDR histograms: pos holds the values ≥ 0,
// neg the absolute values of the negative ones, each in 1/HistogramScale
// units; either is nil when there is no value of its sign. They belong to
// s: callers read them (to encode them, say) and must not change them.
// A trend of few values keeps them one by one: its histograms are made
// for the call.
func (s *Stats) Histograms() (pos, neg *hdr.Histogram) {
	if len(s.small) == 0 {
		return s.pos, s.neg
	}
	c := &Stats{Type: s.Type}
	for _, w := range s.small {
		c.record(w.v, w.n)
	}
	return c.pos, c.neg
}

// StatsFromHistograms rebuilds a trend's Stats from what a result file
// keeps of it: base's exported fields (Count, Sum, SumSquares, Min, Max;
// its Type must be Trend) and the histograms Histograms gave, which the
// returned Stats takes over. It fails when a histogram has another
// geometry than those Stats record into (it would not merge exactly) or
// when their counts do not add up to base.Count.
func StatsFromHistograms(base Stats, pos, neg *hdr.Histogram) (*Stats, error) {
	if base.Type != Trend {
		return nil, fmt.Errorf("histograms of a %s metric: only trends have them", base.Type)
	}
	var total int64
	for _, h := range []*hdr.Histogram{pos, neg} {
		if h == nil {
			continue
		}
		if err := checkGeometry(h); err != nil {
			return nil, err
		}
		total += h.TotalCount()
	}
	if total != base.Count {
		return nil, fmt.Errorf("histograms hold %d values, the count is %d", total, base.Count)
	}
	st := &Stats{Type: Trend, Count: base.Count, Sum: base.Sum, SumSquares: base.SumSquares, Min: base.Min, Max: base.Max,
		Last: base.Last, NonZero: base.NonZero, pos: pos, neg: neg}
	return st, nil
}

// checkGeometry fails when h has another geometry than the histograms
// Stats and Latencies record into: it would not merge exactly.
func checkGeometry(h *hdr.Histogram) error {
	return CheckGeometry(h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
}

// CheckGeometry fails when a histogram of the range lowest..highest with
// sigFigs significant figures is not of the geometry Stats and Latencies
// record into: what reads another process's histograms checks it before
// it decodes one, whose counts a header of a few bytes can make tens of
// megabytes.
func CheckGeometry(lowest, highest, sigFigs int64) error {
	if lowest != 1 || highest != histMax || sigFigs != histSigFigs {
		return fmt.Errorf("histogram of range %d..%d with %d significant figures, want 1..%d with %d",
			lowest, highest, sigFigs, int64(histMax), histSigFigs)
	}
	return nil
}

// Clone returns a deep copy.
func (s *Stats) Clone() *Stats {
	c := *s
	if s.pos != nil {
		c.pos = s.pos.Clone()
	}
	if s.neg != nil {
		c.neg = s.neg.Clone()
	}
	c.small = slices.Clone(s.small)
	return &c
}

// Mean is Sum / Count, 0 when empty.
func (s *Stats) Mean() float64 {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / float64(s.Count)
}

// StdDev is the population standard deviation of the values, from Count,
// Sum and SumSquares: exact up to floating-point rounding, for trends (0
// for other types and when empty).
func (s *Stats) StdDev() float64 {
	if s.Count == 0 {
		return 0
	}
	mean := s.Mean()
	return math.Sqrt(math.Max(0, s.SumSquares/float64(s.Count)-mean*mean))
}

// Rate is the fraction of non-zero samples, 0 when empty.
func (s *Stats) Rate() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.NonZero) / float64(s.Count)
}

// Percentile returns the value below which p percent (0–100) of the samples
// fall, from the HDR histogram (within 0.1 %; the exact Min and Max at the
// ends). It is 0 for an empty or non-trend Stats.
func (s *Stats) Percentile(p float64) float64 {
	if s.Count == 0 {
		return 0
	}
	negCount, posCount := s.signCounts()
	return percentile(p, negCount, posCount, s.Min, s.Max, s.valueAtPercentile)
}

// signCounts returns how many of a trend's values are negative and how
// many are not, as its histograms hold them.
func (s *Stats) signCounts() (neg, pos int64) {
	for _, w := range s.small {
		if w.v < 0 {
			neg += w.n
		} else {
			pos += w.n
		}
	}
	if s.neg != nil {
		neg += s.neg.TotalCount()
	}
	if s.pos != nil {
		pos += s.pos.TotalCount()
	}
	return neg, pos
}

// valueAtPercentile returns the q-th percentile of the histogram of the
// negative values (their absolute values) or of the others. A trend that
// keeps its values one by one records those of that sign into a scratch
// histogram, as Histograms would into a new one, and answers from it.
func (s *Stats) valueAtPercentile(negative bool, q float64) int64 {
	if len(s.small) == 0 {
		if negative {
			return s.neg.ValueAtPercentile(q)
		}
		return s.pos.ValueAtPercentile(q)
	}
	h := scratchHistograms.Get().(*hdr.Histogram)
	for _, w := range s.small {
		if (w.v < 0) == negative {
			recordAbs(h, w.v, w.n)
		}
	}
	v := h.ValueAtPercentile(q)
	h.Reset()
	scratchHistograms.Put(h)
	return v
}
