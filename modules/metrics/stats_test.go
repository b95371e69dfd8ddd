package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// exactPercentile is the nearest-rank percentile of sorted values.
func exactPercentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p/100*float64(len(sorted)) - 1e-9))
	return sorted[max(rank-1, 0)]
}

func TestTrendPercentilesWithinHDRPrecision(t *testing.T) {
	cases := []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"lognormal latency ms", func(r *rand.Rand) float64 { return math.Exp(5 + 0.8*r.NormFloat64()) }},
		{"uniform sub-millisecond", func(r *rand.Rand) float64 { return 0.01 + r.Float64() }},
		{"mixed signs", func(r *rand.Rand) float64 { return 100 * r.NormFloat64() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			st := newStats(Trend)
			vals := make([]float64, 20000)
			for i := range vals {
				vals[i] = tc.gen(r)
				st.add(vals[i])
			}
			sort.Float64s(vals)
			for _, p := range []float64{1, 10, 50, 90, 95, 99, 99.9} {
				want := exactPercentile(vals, p)
				got := st.Percentile(p)
				// 0.1 % relative precision of 3 significant digits, plus the
				// 1/histScale quantum for values near zero.
				tol := math.Abs(want)*0.002 + 2.0/histScale
				if math.Abs(got-want) > tol {
					t.Errorf("p%g = %g, want %g ± %g", p, got, want, tol)
				}
			}
			if st.Percentile(0) != vals[0] || st.Percentile(100) != vals[len(vals)-1] {
				t.Errorf("p0/p100 = %g/%g, want exact min/max %g/%g", st.Percentile(0), st.Percentile(100), vals[0], vals[len(vals)-1])
			}
		})
	}
}

func TestStatsMergeEqualsCombined(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b, all := newStats(Trend), newStats(Trend), newStats(Trend)
	for i := range 5000 {
		v := math.Exp(3 + r.NormFloat64())
		all.add(v)
		if i%3 == 0 {
			a.add(v)
		} else {
			b.add(v)
		}
	}
	a.Merge(b)
	if a.Count != all.Count || math.Abs(a.Sum-all.Sum) > 1e-6*all.Sum || a.Min != all.Min || a.Max != all.Max {
		t.Fatalf("merged count/sum/min/max = %d/%g/%g/%g, want %d/%g/%g/%g", a.Count, a.Sum, a.Min, a.Max, all.Count, all.Sum, all.Min, all.Max)
	}
	for _, p := range []float64{50, 90, 99} {
		if a.Percentile(p) != all.Percentile(p) {
			t.Errorf("p%g merged %g != combined %g", p, a.Percentile(p), all.Percentile(p))
		}
	}
}

func TestStatsByType(t *testing.T) {
	tests := []struct {
		typ    Type
		values []float64
		check  func(*Stats) bool
		want   string
	}{
		{Counter, []float64{1, 2, 3}, func(s *Stats) bool { return s.Sum == 6 && s.Count == 3 }, "sum 6"},
		{Gauge, []float64{5, 1, 3}, func(s *Stats) bool { return s.Last == 3 && s.Min == 1 && s.Max == 5 }, "last 3 min 1 max 5"},
		{Rate, []float64{1, 0, 1, 1}, func(s *Stats) bool { return s.Rate() == 0.75 }, "rate 0.75"},
		{Trend, []float64{10, 20, 30}, func(s *Stats) bool { return s.Mean() == 20 && math.Abs(s.Percentile(50)-20) <= 0.02 }, "mean and median 20"},
	}
	for _, tc := range tests {
		st := newStats(tc.typ)
		for _, v := range tc.values {
			st.add(v)
		}
		if !tc.check(st) {
			t.Errorf("%s of %v: want %s, got %+v", tc.typ, tc.values, tc.want, *st)
		}
		if tc.typ != Trend && st.pos != nil {
			t.Errorf("%s allocated a histogram", tc.typ)
		}
	}
}

func TestHugeValuesAreClampedNotLost(t *testing.T) {
	st := newStats(Trend)
	st.add(1e12)
	st.add(1)
	if st.Max != 1e12 || st.Percentile(100) != 1e12 || st.Count != 2 {
		t.Fatalf("max %g p100 %g count %d", st.Max, st.Percentile(100), st.Count)
	}
}

func TestStdDev(t *testing.T) {
	tests := []struct {
		typ    Type
		values []float64
		want   float64
	}{
		{Trend, []float64{2, 4, 4, 4, 5, 5, 7, 9}, 2},
		{Trend, []float64{-3, 3}, 3},
		{Trend, []float64{1000.5, 1000.5, 1000.5}, 0},
		{Trend, nil, 0},
		{Counter, []float64{1, 5}, 0},
	}
	for _, tc := range tests {
		st := newStats(tc.typ)
		for _, v := range tc.values {
			st.add(v)
		}
		if got := st.StdDev(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s %v: std %g, want %g", tc.typ, tc.values, got, tc.want)
		}
	}
	// Merging keeps the sum of squares.
	a, b := newStats(Trend), newStats(Trend)
	for _, v := range []float64{2, 4, 4, 4} {
		a.add(v)
	}
	for _, v := range []float64{5, 5, 7, 9} {
		b.add(v)
	}
	a.Merge(b)
	if got := a.StdDev(); math.Abs(got-2) > 1e-9 {
		t.Errorf("merged std %g, want 2", got)
	}
}

// A trend rebuilt from its encoded histograms and exported fields has the
// same figures, and merges as the original does.
func TestStatsFromHistograms(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	orig := newStats(Trend)
	for range 3000 {
		orig.add(50 * r.NormFloat64())
	}
	pos, neg := orig.Histograms()
	decode := func(h *hdr.Histogram) *hdr.Histogram {
		t.Helper()
		enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		back, err := hdr.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	base := Stats{Type: Trend, Count: orig.Count, Sum: orig.Sum, SumSquares: orig.SumSquares, Min: orig.Min, Max: orig.Max}
	back, err := StatsFromHistograms(base, decode(pos), decode(neg))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []float64{0, 1, 25, 50, 90, 99, 99.9, 100} {
		if back.Percentile(p) != orig.Percentile(p) {
			t.Errorf("p%g: rebuilt %g, original %g", p, back.Percentile(p), orig.Percentile(p))
		}
	}
	if back.Mean() != orig.Mean() || back.StdDev() != orig.StdDev() {
		t.Errorf("mean/std rebuilt %g/%g, original %g/%g", back.Mean(), back.StdDev(), orig.Mean(), orig.StdDev())
	}
	merged, direct := newStats(Trend), orig.Clone()
	merged.Merge(back)
	merged.Merge(orig)
	direct.Merge(orig)
	if merged.Percentile(99) != direct.Percentile(99) || merged.Count != direct.Count {
		t.Errorf("merging a rebuilt trend: p99 %g count %d, want %g %d", merged.Percentile(99), merged.Count, direct.Percentile(99), direct.Count)
	}

	bad := []struct {
		name     string
		base     Stats
		pos, neg *hdr.Histogram
	}{
		{"not a trend", Stats{Type: Counter, Count: orig.Count}, pos, neg},
		{"count mismatch", Stats{Type: Trend, Count: orig.Count + 1}, pos, neg},
		{"other geometry", Stats{Type: Trend, Count: 0}, hdr.New(1, 1000, 2), nil},
	}
	for _, tc := range bad {
		if _, err := StatsFromHistograms(tc.base, tc.pos, tc.neg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TrendOf is the statistics of the values given: their count, mean and
// extremes exactly, a percentile to the histograms' precision, whether
// they fit in the few kept one by one or not.
func TestTrendOf(t *testing.T) {
	for _, n := range []int{1, smallTrend, 5 * smallTrend} {
		values := make([]float64, n)
		var sum float64
		for i := range values {
			values[i] = 10 + float64((i*7919)%101)*1.5
			sum += values[i]
		}
		sorted := slices.Sorted(slices.Values(values))
		got := TrendOf(values)
		// The 99th percentile lies between the values either side of its
		// rank.
		below, above := sorted[int(0.99*float64(n-1))], sorted[n-1]
		p99 := got.Percentile(99)
		if got.Type != Trend || got.Count != int64(n) || math.Abs(got.Mean()-sum/float64(n)) > 1e-9 || got.Min != sorted[0] || got.Max != sorted[n-1] ||
			p99 < below*0.999 || p99 > above*1.001 {
			t.Errorf("%d values: count %d, mean %g, min %g, max %g, p99 %g; want %d, %g, %g, %g, p99 from %g to %g",
				n, got.Count, got.Mean(), got.Min, got.Max, p99, n, sum/float64(n), sorted[0], sorted[n-1], below, above)
		}
	}
}
