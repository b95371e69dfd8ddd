package metrics

import (
	"fmt"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram returns l's values as an HDR histogram of the geometry Stats
// record into, for an encoding another process reads (the result file's,
// runtime/summary's EncodeHDR); nil when l is empty. The histogram is
// the caller's.
func (l *Latencies) Histogram() *hdr.Histogram {
	if l.count == 0 {
		return nil
	}
	h := newHistogram()
	if !l.sealed {
		h.Merge(l.dense) // same geometry: drops nothing
		return h
	}
	var buf [2 * maxLate]int64
	merged(l.compact, nil, sortedLate(&buf, l.late, nil), func(v, n int64) bool {
		_ = h.RecordValues(v, n) // a bucket's lowest value: in range
		return true
	})
	return h
}

// LatenciesFromHistogram returns the Latencies whose values h holds (as
// Histogram gave it) with the exact extremes min and max, which it takes
// over. It fails when h has another geometry than Latencies record into
// (it would not merge exactly), or when min and max do not lie in h's
// lowest and highest buckets: what another process sent is checked, not
// trusted.
func LatenciesFromHistogram(h *hdr.Histogram, min, max float64) (Latencies, error) {
	if h == nil || h.TotalCount() == 0 {
		return Latencies{}, nil
	}
	if err := checkGeometry(h); err != nil {
		return Latencies{}, err
	}
	if math.IsNaN(min) || math.IsNaN(max) || min < 0 || min > max {
		return Latencies{}, fmt.Errorf("extremes %g and %g: not 0 ≤ min ≤ max", min, max)
	}
	lo, hi := scaled(min), scaled(max)
	if lowestInBucket(lo) != h.Min() || lowestInBucket(hi)+1<<bucketShift(hi)-1 != h.Max() {
		return Latencies{}, fmt.Errorf("extremes %g and %g lie outside the histogram's lowest and highest buckets", min, max)
	}
	return Latencies{count: h.TotalCount(), min: min, max: max, dense: h}, nil
}
