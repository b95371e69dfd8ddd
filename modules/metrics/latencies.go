package metrics

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies is a distribution of non-negative values (latencies in ms)
// held as a trend's Stats holds its values: an HDR histogram of the same
// range and precision, with the exact extremes beside it, so that its
// percentiles are those Stats.Percentile gives for the same values, to
// the bit. The zero value is empty.
//
// Values go into a dense histogram (184 KiB, fast to record into) until
// Seal encodes its populated buckets compactly, the form for an interval
// that is over: about two bytes a bucket, so some 200 B for 100
// latencies and 2 KB for 1,000, whatever their range. Sealed Latencies
// read, merge and take late values in that form, in time that grows with
// the buckets they hold. Reset empties a Latencies and keeps its dense
// histogram for the next interval.
type Latencies struct {
	count    int64
	min, max float64
	// dense holds the values until Seal, compact after it (see encoder);
	// at most one of them holds any.
	dense   *hdr.Histogram
	compact []byte
	// late are values added once sealed, not encoded yet.
	late []float64
	// sealed says that values go into compact.
	sealed bool
}

// maxLate is how many values added to sealed Latencies wait to be
// encoded, so that each addition does not cost an encoding.
const maxLate = 64

// denseHistograms holds emptied dense histograms that sealed Latencies
// gave back, for the next ones to record into; scratchPacked holds empty
// packed ones, through which Seal reads a dense histogram's buckets.
var (
	denseHistograms = sync.Pool{New: func() any { return newHistogram() }}
	scratchPacked   = sync.Pool{New: func() any { return hdr.NewPacked(1, histMax, histSigFigs) }}
)

// Add records a value, which must not be negative.
func (l *Latencies) Add(v float64) { l.AddN(v, 1) }

// AddN records n values v (a weighted sample's, a folded bucket of
// inter-token gaps), as n calls of Add would, in one step while not
// sealed. v must not be negative; n ≤ 0 records nothing.
func (l *Latencies) AddN(v float64, n int64) {
	if n <= 0 {
		return
	}
	if l.count == 0 || v < l.min {
		l.min = v
	}
	if l.count == 0 || v > l.max {
		l.max = v
	}
	l.count += n
	if l.sealed {
		for range n {
			l.late = append(l.late, v)
			if len(l.late) == maxLate {
				l.fold(nil, nil)
			}
		}
		return
	}
	if l.dense == nil {
		l.dense = denseHistograms.Get().(*hdr.Histogram)
	}
	recordAbs(l.dense, v, n)
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
	// Same geometry everywhere: merges drop nothing.
	switch {
	case l.sealed && other.sealed:
		l.fold(other.compact, other.late)
	case l.sealed:
		l.fold(encodeDense(other.dense), nil)
	default:
		if l.dense == nil {
			l.dense = denseHistograms.Get().(*hdr.Histogram)
		}
		if !other.sealed {
			l.dense.Merge(other.dense)
			return
		}
		var buf [2 * maxLate]int64
		merged(other.compact, nil, sortedLate(&buf, other.late, nil), func(v, n int64) bool {
			_ = l.dense.RecordValues(v, n) // a bucket's lowest value: in range
			return true
		})
	}
}

// Seal encodes the values compactly and gives the dense histogram back
// for other Latencies to reuse. Values added after join the compact form,
// as they would a sealed interval that a late request joins.
func (l *Latencies) Seal() {
	if l.sealed {
		return
	}
	l.sealed = true
	if l.dense == nil {
		return
	}
	l.compact = encodeDense(l.dense)
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

// MemorySize is roughly how many bytes l's values take.
func (l *Latencies) MemorySize() int {
	if l.dense != nil {
		return l.dense.ByteSize()
	}
	return cap(l.compact) + 8*cap(l.late)
}

// Percentile returns the value below which p percent (0–100) of the
// values fall, as Stats.Percentile does: from the histogram, within 0.1 %,
// the exact Min and Max at the ends; 0 when empty.
func (l *Latencies) Percentile(p float64) float64 {
	if l.count == 0 {
		return 0
	}
	return percentile(p, 0, l.count, l.min, l.max, func(_ bool, q float64) int64 {
		if !l.sealed {
			return l.dense.ValueAtPercentile(q)
		}
		return l.valueAtPercentile(q)
	})
}

// valueAtPercentile is what hdr.Histogram.ValueAtPercentile gives for
// sealed Latencies' histogram: the highest value of the bucket where the
// running count reaches the percentile's rank (the lowest for the 0th).
func (l *Latencies) valueAtPercentile(q float64) int64 {
	target := percentileRank(max(q, 0), l.count)
	var running, at int64
	if len(l.late) == 0 {
		for c := (cursor{b: l.compact}); running < target && c.next(); {
			running += c.n
			at = c.v
		}
	} else {
		var buf [2 * maxLate]int64
		merged(l.compact, nil, sortedLate(&buf, l.late, nil), func(v, n int64) bool {
			running += n
			at = v
			return running < target
		})
	}
	if q <= 0 {
		return at
	}
	return at + 1<<bucketShift(at) - 1
}

// percentileRank is the running count at which a histogram of total
// values reaches the q-th percentile, as hdr.Histogram.ValueAtPercentile
// ranks it.
func percentileRank(q float64, total int64) int64 {
	rank := min(q, 100)/100*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// fold makes l's compact form that of its own values, late ones included,
// and of those of the compact form other and of the values otherLate.
func (l *Latencies) fold(other []byte, otherLate []float64) {
	var buf [2 * maxLate]int64
	late := sortedLate(&buf, l.late, otherLate)
	e := encoder{buf: make([]byte, 0, len(l.compact)+len(other)+3*len(late))}
	merged(l.compact, other, late, e.add)
	l.compact, l.late = e.buf, nil
	if spare := cap(e.buf) - len(e.buf); spare > len(e.buf)/8 {
		l.compact = slices.Clone(e.buf)
	}
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

// subBucketBits is log2 of the histograms' sub-bucket count (2·10^histSigFigs
// rounded up to a power of two): their buckets are 1 unit wide below
// 2^subBucketBits, then twice as wide from each power of two on.
const subBucketBits = 11

// bucketShift is log2 of the width of the histogram bucket that holds v.
func bucketShift(v int64) int {
	return max(0, bits.Len64(uint64(v))-subBucketBits)
}

// lowestInBucket is the lowest value of the histogram bucket that holds v:
// the value the histogram reports the bucket by.
func lowestInBucket(v int64) int64 {
	s := bucketShift(v)
	return v >> s << s
}

// encoder writes the compact form of a histogram: for each populated
// bucket in ascending order, two uvarints, its lowest value's distance
// from the bucket before's (from 0 for the first) in widths of that
// bucket, and its count.
type encoder struct {
	buf  []byte
	prev int64
}

// add appends a bucket, by its lowest value, and its count; it is
// func(v, n int64) bool for merged to call.
func (e *encoder) add(v, n int64) bool {
	e.buf = binary.AppendUvarint(e.buf, uint64((v-e.prev)>>bucketShift(e.prev)))
	e.buf = binary.AppendUvarint(e.buf, uint64(n))
	e.prev = v
	return true
}

// encodeDense returns the compact form of a dense histogram.
func encodeDense(h *hdr.Histogram) []byte {
	p := scratchPacked.Get().(*hdr.PackedHistogram)
	defer scratchPacked.Put(p)
	defer p.Reset()
	p.MergeFrom(h) // same geometry: drops nothing
	var e encoder
	for v, n := range p.ForEachBucket {
		e.add(v, n)
	}
	return slices.Clone(e.buf)
}

// cursor reads a compact form bucket by bucket.
type cursor struct {
	b []byte
	// v and n are the bucket read last, its lowest value and its count.
	v, n int64
}

// next reads the next bucket, and says whether there was one.
func (c *cursor) next() bool {
	if len(c.b) == 0 {
		return false
	}
	gap, k := uvarint(c.b)
	n, m := uvarint(c.b[k:])
	c.b = c.b[k+m:]
	c.v += int64(gap) << bucketShift(c.v)
	c.n = int64(n)
	return true
}

// uvarint is binary.Uvarint, with a shortcut for the one-byte numbers
// that most of a compact form's are.
func uvarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// merged calls fn with the buckets of the compact forms a and b and of
// the sorted bucket values late (one value each), in ascending order of
// value, the counts of equal ones added up, until fn returns false.
func merged(a, b []byte, late []int64, fn func(v, n int64) bool) {
	ca, cb := cursor{b: a}, cursor{b: b}
	okA, okB := ca.next(), cb.next()
	i := 0
	for okA || okB || i < len(late) {
		v := int64(math.MaxInt64)
		if okA {
			v = ca.v
		}
		if okB {
			v = min(v, cb.v)
		}
		if i < len(late) {
			v = min(v, late[i])
		}
		var n int64
		if okA && ca.v == v {
			n += ca.n
			okA = ca.next()
		}
		if okB && cb.v == v {
			n += cb.n
			okB = cb.next()
		}
		for ; i < len(late) && late[i] == v; i++ {
			n++
		}
		if !fn(v, n) {
			return
		}
	}
}

// sortedLate returns the buckets, by their lowest values, of the values
// of a and b (at most maxLate each), sorted, in buf.
func sortedLate(buf *[2 * maxLate]int64, a, b []float64) []int64 {
	out := buf[:0]
	for _, v := range a {
		out = append(out, lowestInBucket(scaled(v)))
	}
	for _, v := range b {
		out = append(out, lowestInBucket(scaled(v)))
	}
	slices.Sort(out)
	return out
}
