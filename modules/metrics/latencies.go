package metrics

import (
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies is a distribution of non-negative values (latencies in ms)
// held as a trend's Stats holds its values: an HDR histogram of the same
// range and precision, with the exact extremes beside it, so that its
// percentiles are those Stats.Percentile gives for the same values, to
// the bit. The zero value is empty.
//
// Values go into a dense histogram (about 180 KiB, fast to record into)
// until Seal moves them into a packed one, whose size grows with the
// number of distinct values it holds rather than with their range: the
// form for an interval that is over. Reset empties a Latencies and keeps
// its dense histogram for the next interval.
type Latencies struct {
	count    int64
	min, max float64
	// dense holds the values until Seal, packed after it; at most one of
	// them is not nil.
	dense  *hdr.Histogram
	packed *hdr.PackedHistogram
	// sealed says that values go into packed.
	sealed bool
}

// denseHistograms holds emptied dense histograms that sealed Latencies
// gave back, for the next ones to record into.
var denseHistograms = sync.Pool{New: func() any { return newHistogram() }}

// Add records a value, which must not be negative.
func (l *Latencies) Add(v float64) {
	if l.count == 0 || v < l.min {
		l.min = v
	}
	if l.count == 0 || v > l.max {
		l.max = v
	}
	l.count++
	switch {
	case l.dense != nil:
		recordAbs(l.dense, v, 1)
	case l.sealed:
		if l.packed == nil {
			l.packed = newPacked()
		}
		recordAbs(l.packed, v, 1)
	default:
		l.dense = denseHistograms.Get().(*hdr.Histogram)
		recordAbs(l.dense, v, 1)
	}
}

// Count is the number of values.
func (l *Latencies) Count() int64 { return l.count }

// Min is the smallest value, 0 when empty.
func (l *Latencies) Min() float64 { return l.min }

// Max is the largest value, 0 when empty.
func (l *Latencies) Max() float64 { return l.max }

// Merge adds other's values to l. l stays in its form; an empty l that is
// not sealed takes other's.
func (l *Latencies) Merge(other *Latencies) {
	if other.count == 0 {
		return
	}
	if l.count == 0 || other.min < l.min {
		l.min = other.min
	}
	if l.count == 0 || other.max > l.max {
		l.max = other.max
	}
	if l.count == 0 && l.dense == nil && other.sealed {
		l.sealed = true
	}
	l.count += other.count
	if l.sealed {
		if l.packed == nil {
			l.packed = newPacked()
		}
		// Same geometry: nothing is dropped.
		if other.dense != nil {
			l.packed.MergeFrom(other.dense)
		} else {
			l.packed.Merge(other.packed)
		}
		l.packed.Compact()
		return
	}
	if l.dense == nil {
		l.dense = denseHistograms.Get().(*hdr.Histogram)
	}
	if other.dense != nil {
		l.dense.Merge(other.dense)
	} else {
		other.packed.MergeInto(l.dense)
	}
}

// Seal moves the values into a packed histogram trimmed to fit, and
// gives the dense one back for other Latencies to reuse. Values added
// after go into the packed histogram, as they would into a sealed
// interval that a late request joins.
func (l *Latencies) Seal() {
	l.sealed = true
	if l.dense == nil {
		return
	}
	if l.packed == nil {
		l.packed = newPacked()
	}
	l.packed.MergeFrom(l.dense) // same geometry: drops nothing
	l.packed.Compact()
	l.dense.Reset()
	denseHistograms.Put(l.dense)
	l.dense = nil
}

// Reset empties l, unsealed, keeping its dense histogram if it has one.
func (l *Latencies) Reset() {
	if l.dense != nil {
		l.dense.Reset()
	}
	*l = Latencies{dense: l.dense}
}

// MemorySize is roughly how many bytes l's histogram holds.
func (l *Latencies) MemorySize() int {
	switch {
	case l.dense != nil:
		return int(l.dense.ByteSize())
	case l.packed != nil:
		return l.packed.GetMemorySize()
	}
	return 0
}

// Percentile returns the value below which p percent (0–100) of the
// values fall, as Stats.Percentile does: from the histogram, within 0.1 %,
// the exact Min and Max at the ends; 0 when empty.
func (l *Latencies) Percentile(p float64) float64 {
	if l.count == 0 {
		return 0
	}
	return percentile(p, 0, l.count, l.min, l.max, func(_ bool, q float64) int64 {
		if l.dense != nil {
			return l.dense.ValueAtPercentile(q)
		}
		return l.packed.ValueAtPercentile(q)
	})
}

// percentile returns the value below which p percent (0–100) of negCount
// negative values and posCount others fall, whose extremes are min and
// max: the exact extremes at the ends, else from valueAt, which gives the
// q-th percentile of the histogram of the negative values' absolute values
// or of the others, in 1/histScale units. It is 0 when there is no value.
func percentile(p float64, negCount, posCount int64, min, max float64, valueAt func(negative bool, q float64) int64) float64 {
	if negCount+posCount == 0 {
		return 0
	}
	if p <= 0 {
		return min
	}
	if p >= 100 {
		return max
	}
	rank := p / 100 * float64(negCount+posCount)
	var v float64
	if rank <= float64(negCount) {
		// Among negatives, the rank-th smallest value is the
		// (negCount-rank+1)-th smallest absolute value.
		q := 100 * (float64(negCount) - rank + 1) / float64(negCount)
		v = -float64(valueAt(true, q)) / histScale
	} else {
		q := 100 * (rank - float64(negCount)) / float64(posCount)
		v = float64(valueAt(false, q)) / histScale
	}
	return math.Min(math.Max(v, min), max)
}

func newPacked() *hdr.PackedHistogram { return hdr.NewPacked(1, histMax, histSigFigs) }
