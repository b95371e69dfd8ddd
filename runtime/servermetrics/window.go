package servermetrics

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Selector picks the label sets of one metric family: those whose labels
// include every pair in Labels. Figures over several label sets (engines,
// models) are their sum; a figure per model is a Selector per model
// (LabelValues lists them).
type Selector struct {
	Name   string
	Labels map[string]string
}

// matches reports whether m has every label of s.
func (s Selector) matches(m *dto.Metric) bool {
	for name, want := range s.Labels {
		found := false
		for _, pair := range m.GetLabel() {
			if pair.GetName() == name {
				found = pair.GetValue() == want
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// metrics is the label sets of s in snap, each under its key.
func (s Selector) metrics(snap Snapshot) map[string]*dto.Metric {
	family := snap.Families[s.Name]
	if family == nil {
		return nil
	}
	out := map[string]*dto.Metric{}
	for _, m := range family.GetMetric() {
		if s.matches(m) {
			out[labelKey(m)] = m
		}
	}
	return out
}

// labelKey identifies a label set whatever the order of its labels.
func labelKey(m *dto.Metric) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, pair := range m.GetLabel() {
		pairs = append(pairs, pair.GetName()+"\xff"+pair.GetValue())
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "\xfe")
}

// scalar is the value of a counter, gauge or untyped metric; false for
// a histogram or summary.
func scalar(m *dto.Metric) (float64, bool) {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// Sum is the sum of the values of sel's label sets (counters, gauges or
// untyped) in snap; false when none has a value.
func Sum(snap Snapshot, sel Selector) (float64, bool) {
	total, found := 0.0, false
	for _, m := range sel.metrics(snap) {
		if v, ok := scalar(m); ok {
			total += v
			found = true
		}
	}
	return total, found
}

// CounterDelta is how much sel's counters rose from one snapshot to the
// other, summed over label sets. A label set whose value went down was
// restarted: its rise is its new value. One missing from `from` appeared
// within the window and rose from 0; one missing from `to` counts
// nothing. False when `to` has no label set of sel.
func CounterDelta(from, to Snapshot, sel Selector) (float64, bool) {
	before := sel.metrics(from)
	total, found := 0.0, false
	for key, m := range sel.metrics(to) {
		now, ok := scalar(m)
		if !ok {
			continue
		}
		found = true
		was := 0.0
		if old, ok := before[key]; ok {
			was, _ = scalar(old)
		}
		if now < was {
			was = 0
		}
		total += now - was
	}
	return total, found
}

// CounterIncrease is the rise of sel's counters over points, in time
// order: the sum of CounterDelta between neighbours, which sees a restart
// that a delta between the ends alone may miss. False when fewer than
// two points have the counter.
func CounterIncrease(points []Snapshot, sel Selector) (float64, bool) {
	total, found := 0.0, false
	var prev *Snapshot
	for i := range points {
		if len(sel.metrics(points[i])) == 0 {
			continue
		}
		if prev != nil {
			d, ok := CounterDelta(*prev, points[i], sel)
			if ok {
				total += d
				found = true
			}
		}
		prev = &points[i]
	}
	return total, found
}

// Between is the points of series (in time order) taken from `from` to
// `to`, both included.
func Between(series []Snapshot, from, to time.Time) []Snapshot {
	start := sort.Search(len(series), func(i int) bool { return !series[i].Time.Before(from) })
	end := sort.Search(len(series), func(i int) bool { return series[i].Time.After(to) })
	if end < start {
		return nil
	}
	return series[start:end]
}

// GaugeMean is the time-weighted mean of Sum(point, sel) over points, in
// time order: the value is taken to move in a straight line from one
// point to the next (the trapezoid rule), so an interval counts by its
// length whether points were skipped or not. One point is its own mean;
// points without the gauge are left out. False when none has it.
func GaugeMean(points []Snapshot, sel Selector) (float64, bool) {
	var (
		area, span, sum float64
		prevV           float64
		prevT           time.Time
		n               int
	)
	for _, p := range points {
		v, ok := Sum(p, sel)
		if !ok {
			continue
		}
		if n > 0 {
			dt := p.Time.Sub(prevT).Seconds()
			area += (v + prevV) / 2 * dt
			span += dt
		}
		prevV, prevT = v, p.Time
		sum += v
		n++
	}
	switch {
	case n == 0:
		return 0, false
	case span <= 0:
		return sum / float64(n), true
	}
	return area / span, true
}

// GaugeMax is the largest Sum(point, sel) over points; false when none
// has the gauge.
func GaugeMax(points []Snapshot, sel Selector) (float64, bool) {
	best, found := math.Inf(-1), false
	for _, p := range points {
		if v, ok := Sum(p, sel); ok {
			best = max(best, v)
			found = true
		}
	}
	return best, found
}

// Bucket is a histogram's count of observations at or below UpperBound
// (cumulative, as Prometheus exposes them).
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram is a distribution as Prometheus exposes it: cumulative
// buckets in order of their bound, the last one +Inf, and the count and
// sum of the observations.
type Histogram struct {
	Buckets []Bucket
	Count   float64
	Sum     float64
}

// histogramOf is m's histogram, its +Inf bucket added when the exposition
// left it implicit; false when m is not a histogram.
func histogramOf(m *dto.Metric) (Histogram, bool) {
	h := m.GetHistogram()
	if h == nil {
		return Histogram{}, false
	}
	out := Histogram{Count: float64(h.GetSampleCount()) + h.GetSampleCountFloat(), Sum: h.GetSampleSum()}
	for _, b := range h.GetBucket() {
		out.Buckets = append(out.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: float64(b.GetCumulativeCount()) + b.GetCumulativeCountFloat()})
	}
	if n := len(out.Buckets); n == 0 || !math.IsInf(out.Buckets[n-1].UpperBound, +1) {
		out.Buckets = append(out.Buckets, Bucket{UpperBound: math.Inf(+1), Count: out.Count})
	}
	return out, true
}

// restartedSince reports whether h counts fewer observations than was,
// in total or in any bucket: the server restarted between them.
func (h Histogram) restartedSince(was Histogram) bool {
	if h.Count < was.Count {
		return true
	}
	for _, old := range was.Buckets {
		if i := slices.IndexFunc(h.Buckets, func(b Bucket) bool { return b.UpperBound == old.UpperBound }); i >= 0 && h.Buckets[i].Count < old.Count {
			return true
		}
	}
	return false
}

// minus is h with was's observations taken away, bucket by bucket.
func (h Histogram) minus(was Histogram) Histogram {
	out := Histogram{Count: h.Count - was.Count, Sum: h.Sum - was.Sum, Buckets: slices.Clone(h.Buckets)}
	for i := range out.Buckets {
		if j := slices.IndexFunc(was.Buckets, func(b Bucket) bool { return b.UpperBound == out.Buckets[i].UpperBound }); j >= 0 {
			out.Buckets[i].Count -= was.Buckets[j].Count
		}
	}
	return out
}

// add adds other's observations to h: the buckets of each bound are
// summed, a bound one of them lacks taking only the other's count, as
// Prometheus' sum by (le) does.
func (h *Histogram) add(other Histogram) {
	h.Count += other.Count
	h.Sum += other.Sum
	for _, b := range other.Buckets {
		if i := slices.IndexFunc(h.Buckets, func(x Bucket) bool { return x.UpperBound == b.UpperBound }); i >= 0 {
			h.Buckets[i].Count += b.Count
			continue
		}
		h.Buckets = append(h.Buckets, b)
	}
	slices.SortFunc(h.Buckets, func(a, b Bucket) int { return compareFloat(a.UpperBound, b.UpperBound) })
}

// compareFloat orders two bounds.
func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// HistogramDelta is the observations sel's histograms took from one
// snapshot to the other, summed over label sets. A label set with fewer
// observations in `to` (in total or in a bucket) was restarted: its
// delta is all of `to`'s. One missing from `from` appeared within the
// window. False when `to` has no histogram of sel.
func HistogramDelta(from, to Snapshot, sel Selector) (Histogram, bool) {
	before := sel.metrics(from)
	var total Histogram
	found := false
	for key, m := range sel.metrics(to) {
		now, ok := histogramOf(m)
		if !ok {
			continue
		}
		found = true
		if old, ok := before[key]; ok {
			if was, ok := histogramOf(old); ok && !now.restartedSince(was) {
				now = now.minus(was)
			}
		}
		total.add(now)
	}
	return total, found
}

// Mean is the mean observation, Sum over Count; false when h is empty.
func (h Histogram) Mean() (float64, bool) {
	if h.Count <= 0 {
		return 0, false
	}
	return h.Sum / h.Count, true
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) of h by the rule of
// Prometheus' histogram_quantile: the bucket holding the rank q × count
// is found, and the value interpolated linearly within it (from 0 for
// the lowest bucket when its bound is above 0); a rank in the +Inf
// bucket is the highest finite bound. Bucket counts that decrease with
// the bound are raised to the largest before them. False for an empty
// histogram (no value, not 0), one without a +Inf bucket or a finite one,
// and a q outside [0, 1].
func (h Histogram) Quantile(q float64) (float64, bool) {
	r, ok := h.rankOf(q)
	if !ok {
		return 0, false
	}
	buckets, b, last := r.buckets, r.bucket, len(r.buckets)-1
	if b == last {
		return buckets[last-1].UpperBound, true
	}
	if b == 0 && buckets[0].UpperBound <= 0 {
		return buckets[0].UpperBound, true
	}
	lower, inBucket, rank := 0.0, buckets[b].Count, r.rank
	if b > 0 {
		lower = buckets[b-1].UpperBound
		inBucket -= buckets[b-1].Count
		rank -= buckets[b-1].Count
	}
	if inBucket == 0 {
		// q is 0 and the lowest bucket empty, where Prometheus' 0/0 gives
		// NaN: the quantile is the bucket's lower bound.
		return lower, true
	}
	return lower + (buckets[b].UpperBound-lower)*(rank/inBucket), true
}

// QuantileBounds is the interval the q-quantile of h's observations is
// known to lie in, for observations that are never negative (durations):
// the bucket that holds the rank q × count, from the bound below it
// (0 below the lowest bucket) to its own (+Inf for the +Inf bucket), the
// upper end tightened by Markov's inequality where q < 1: a q-quantile of
// values that are never negative is at most their mean / (1 − q), and
// the mean (Sum over Count) is exact where the buckets are not. The same
// histograms and q as Quantile give bounds; false otherwise.
func (h Histogram) QuantileBounds(q float64) (lower, upper float64, ok bool) {
	r, ok := h.rankOf(q)
	if !ok {
		return 0, 0, false
	}
	upper = r.buckets[r.bucket].UpperBound
	lower = min(0, upper)
	if r.bucket > 0 {
		lower = r.buckets[r.bucket-1].UpperBound
	}
	if mean, ok := h.Mean(); ok && q < 1 && mean >= 0 {
		upper = max(lower, min(upper, mean/(1-q)))
	}
	return lower, upper, true
}

// rank is where a quantile's rank falls in a histogram: its buckets in
// order, their counts raised to be non-decreasing, the rank q × count
// and the index of the bucket that holds it.
type rank struct {
	buckets []Bucket
	rank    float64
	bucket  int
}

// rankOf finds the bucket of the q-quantile's rank, as Quantile says;
// false where Quantile has no value.
func (h Histogram) rankOf(q float64) (rank, bool) {
	if !(q >= 0 && q <= 1) {
		return rank{}, false
	}
	buckets := slices.Clone(h.Buckets)
	slices.SortFunc(buckets, func(a, b Bucket) int { return compareFloat(a.UpperBound, b.UpperBound) })
	if len(buckets) < 2 || !math.IsInf(buckets[len(buckets)-1].UpperBound, +1) {
		return rank{}, false
	}
	for i := 1; i < len(buckets); i++ {
		buckets[i].Count = max(buckets[i].Count, buckets[i-1].Count)
	}
	total := buckets[len(buckets)-1].Count
	if total <= 0 {
		return rank{}, false
	}
	r := q * total
	last := len(buckets) - 1
	b := sort.Search(last, func(i int) bool { return buckets[i].Count >= r })
	return rank{buckets: buckets, rank: r, bucket: b}, true
}

// LabelValues is the values label takes in the family name across
// snaps, sorted: the models or engines a target serves.
func LabelValues(snaps []Snapshot, name, label string) []string {
	var values []string
	for _, snap := range snaps {
		for _, m := range snap.Families[name].GetMetric() {
			for _, pair := range m.GetLabel() {
				if pair.GetName() == label && !slices.Contains(values, pair.GetValue()) {
					values = append(values, pair.GetValue())
				}
			}
		}
	}
	slices.Sort(values)
	return values
}
