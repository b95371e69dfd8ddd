package metrics

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
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
