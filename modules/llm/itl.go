package llm

import (
	"iter"
	"math"
	"slices"
)

// maxExactITL is how many inter-token gaps a Result keeps one by one
// (Result.ITL); the gaps of a longer stream are folded into an itlFold.
const maxExactITL = 4096

// The buckets of an itlFold: bucket 0 holds the gaps up to itlLow
// milliseconds, bucket i ≥ 1 those in (itlLow·itlGrowth^(i-1),
// itlLow·itlGrowth^i], the last one everything above. A bucket stands for
// its geometric middle: within ±0.5 % of each gap it holds.
const (
	itlLow     = 0.001 // 1 µs
	itlGrowth  = 1.01
	itlBuckets = 2213 // up to one hour: itlLow·itlGrowth^2212 > 3.6e6 ms
)

// itlFold holds the inter-token gaps of a response beyond maxExactITL in
// fixed memory: their exact count and sum, and log-spaced buckets.
// Range over the buckets through a pointer (range &f.counts): a range over
// the array itself copies it, 17 KiB, onto the stack of every caller, the
// VU's goroutine's at the end of each request.
type itlFold struct {
	n      int
	sum    float64
	counts [itlBuckets]uint64
}

// add folds in one gap.
func (f *itlFold) add(gap float64) {
	f.n++
	f.sum += gap
	f.counts[itlBucket(gap)]++
}

// itlBucket is the bucket of a gap.
func itlBucket(gap float64) int {
	if !(gap > itlLow) { // NaN included
		return 0
	}
	i := int(math.Ceil(math.Log(gap/itlLow) / math.Log(itlGrowth)))
	return min(max(i, 1), itlBuckets-1)
}

// itlValue is the value a bucket stands for.
func itlValue(i int) float64 {
	if i == 0 {
		return itlLow
	}
	return itlLow * math.Pow(itlGrowth, float64(i)-0.5)
}

// addGap records one inter-token gap: in ITL while it holds fewer than
// maxExactITL, folded beyond.
func (r *Result) addGap(gap float64) {
	if len(r.ITL) < maxExactITL {
		r.ITL = append(r.ITL, gap)
		return
	}
	if r.itlFold == nil {
		r.itlFold = new(itlFold)
	}
	r.itlFold.add(gap)
	r.ITLFolded = r.itlFold.n
}

// itlCount is the number of the response's inter-token gaps.
func (r *Result) itlCount() int {
	return len(r.ITL) + r.ITLFolded
}

// itlMean is the mean of every gap, exact up to rounding.
func (r *Result) itlMean() float64 {
	sum := 0.0
	for _, gap := range r.ITL {
		sum += gap
	}
	if r.itlFold != nil {
		sum += r.itlFold.sum
	}
	return sum / float64(r.itlCount())
}

// itlP99 is the 99th percentile of every gap: exact while all are in ITL,
// within ±0.5 % beyond. sorted is scratch space, returned for reuse.
func (r *Result) itlP99(sorted []float64) (float64, []float64) {
	sorted = append(sorted[:0], r.ITL...)
	slices.Sort(sorted)
	rank := int(math.Ceil(0.99 * float64(r.itlCount()))) // 1-based
	if r.itlFold == nil {
		return sorted[rank-1], sorted
	}
	seen, next := 0, 0
	for b, n := range &r.itlFold.counts {
		v := itlValue(b)
		for next < len(sorted) && sorted[next] <= v {
			if seen++; seen >= rank {
				return sorted[next], sorted
			}
			next++
		}
		if seen += int(n); n > 0 && seen >= rank {
			return v, sorted
		}
	}
	return sorted[rank-1-seen+next], sorted // the rest of the exact ones
}

// foldedGaps yields the gaps folded beyond ITL: each bucket's value and
// how many gaps it holds.
func (r *Result) foldedGaps() iter.Seq2[float64, int64] {
	return func(yield func(float64, int64) bool) {
		if r.itlFold == nil {
			return
		}
		for b, n := range &r.itlFold.counts {
			if n > 0 && !yield(itlValue(b), int64(n)) {
				return
			}
		}
	}
}
