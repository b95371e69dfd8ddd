package summary

import (
	"math"

	"github.com/llmrun/llmrun/runtime/servermetrics"
)

// A server's quantile is known only to the bucket it falls in. The result
// file keeps Prometheus' interpolation within that bucket (what Grafana's
// histogram_quantile shows) and the buckets; ServerQuantile is what both
// say together, and the one rule by which the console, the HTML report,
// compare and the thresholds print or judge a server quantile.

// NarrowBucket is how wide a bucket may be, as its upper bound over its
// lower, for its interpolation to stand as the quantile: a quantile in
// (0.04, 0.06] interpolated as 0.05 is off by at most half the lower
// bound. Wider, and the quantile is printed as the interval it is known
// to lie in.
const NarrowBucket = 1.5

// ServerQuantile is what a server histogram's buckets say of one of its
// quantiles.
type ServerQuantile struct {
	// Interpolated is Prometheus' histogram_quantile: the file's p50, p90
	// or p99.
	Interpolated float64
	// Lower and Upper bound the quantile, Lower < x ≤ Upper: the bucket it
	// fell in, Upper tightened by Markov's inequality (the figures are
	// durations, never negative, so a q-quantile is at most the exact
	// mean / (1 − q)); Upper is +Inf for a quantile above the highest
	// bound. Both are 0 without buckets.
	Lower, Upper float64
	// Bounded says the buckets were there to bound it.
	Bounded bool
}

// Quantile is what the figure says of its q-quantile (0.5, 0.9 or 0.99
// for the stored ones; any q where it has buckets); false when it has no
// value, as for an empty histogram.
func (f WindowFigure) Quantile(q float64) (ServerQuantile, bool) {
	stored := map[float64]*float64{0.5: f.P50, 0.9: f.P90, 0.99: f.P99}[q]
	h, hasBuckets := f.histogram()
	var out ServerQuantile
	switch {
	case stored != nil:
		out.Interpolated = *stored
	case hasBuckets:
		v, ok := h.Quantile(q)
		if !ok {
			return out, false
		}
		out.Interpolated = v
	default:
		return out, false
	}
	if hasBuckets {
		out.Lower, out.Upper, out.Bounded = h.QuantileBounds(q)
	}
	return out, true
}

// histogram is the figure's buckets as servermetrics reads them, the +Inf
// bucket put back; false when it has none or no count.
func (f WindowFigure) histogram() (servermetrics.Histogram, bool) {
	if len(f.Buckets) == 0 || f.Count == nil {
		return servermetrics.Histogram{}, false
	}
	h := servermetrics.Histogram{Count: *f.Count, Buckets: make([]servermetrics.Bucket, 0, len(f.Buckets)+1)}
	if f.Sum != nil {
		h.Sum = *f.Sum
	} else {
		h.Sum = -1 // no mean, no Markov bound
	}
	for _, b := range f.Buckets {
		h.Buckets = append(h.Buckets, servermetrics.Bucket{UpperBound: b.Le, Count: b.Count})
	}
	h.Buckets = append(h.Buckets, servermetrics.Bucket{UpperBound: math.Inf(+1), Count: *f.Count})
	return h, true
}

// Exact says the quantile stands as a number: its bucket is narrow (its
// upper bound at most NarrowBucket times its lower, the lower above 0),
// or its bounds meet. Without buckets nothing says how fine it is, and it
// is not exact.
func (q ServerQuantile) Exact() bool {
	if !q.Bounded {
		return false
	}
	return q.Upper == q.Lower || q.Lower > 0 && q.Upper <= NarrowBucket*q.Lower
}

// IsNumber says the quantile prints as a number, which a difference may
// subtract: it is exact, or the file has no buckets to say otherwise.
func (q ServerQuantile) IsNumber() bool { return q.Exact() || !q.Bounded }

// Value is the quantile as a number: the interpolation, kept within the
// bounds (the mean's bound can cut below it).
func (q ServerQuantile) Value() float64 {
	if !q.Bounded {
		return q.Interpolated
	}
	return min(max(q.Interpolated, q.Lower), q.Upper)
}

// Format writes the quantile by the rule: the value when exact (or when
// the file has no buckets to say otherwise), "≤ upper" when its bucket
// starts at 0, "> lower" above the highest bound, "lower–upper"
// otherwise; each bound by format.
func (q ServerQuantile) Format(format func(float64) string) string {
	switch {
	case q.IsNumber():
		return format(q.Value())
	case q.Lower <= 0:
		return "≤ " + format(q.Upper)
	case math.IsInf(q.Upper, +1):
		return "> " + format(q.Lower)
	}
	return format(q.Lower) + "–" + format(q.Upper)
}

// HistogramMean is a histogram figure's mean, Sum over Count, exact where
// its quantiles are not; nil without observations.
func (f WindowFigure) HistogramMean() *float64 {
	if f.Mean != nil {
		return f.Mean
	}
	if f.Sum == nil || f.Count == nil || *f.Count <= 0 {
		return nil
	}
	mean := *f.Sum / *f.Count
	return &mean
}

// OutsideServer is llmrun's TTFT (row, ms) less the server's (ttft, its
// TTFT histogram figure) by stat ("mean", "p50" or "p99"): the time of
// the network, HTTP and the client. A difference of means is exact; one
// of percentiles only where the server's quantile is a number (IsNumber):
// false where it is an interval, or either figure is missing.
func OutsideServer(row LatencyRow, ttft WindowFigure, stat string) (float64, bool) {
	if stat == "mean" {
		mean := ttft.HistogramMean()
		if mean == nil || row.Count == 0 {
			return 0, false
		}
		return row.Mean - 1000**mean, true
	}
	client, ok := row.P[stat]
	q, known := map[string]float64{"p50": 0.5, "p90": 0.9, "p99": 0.99}[stat]
	if !ok || !known {
		return 0, false
	}
	server, ok := ttft.Quantile(q)
	if !ok || !server.IsNumber() {
		return 0, false
	}
	return client - 1000*server.Value(), true
}
