package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestLengthsMatchTheirParameters draws 200,000 samples of each
// distribution at a fixed seed and compares their mean and quantiles with
// the distribution's own.
func TestLengthsMatchTheirParameters(t *testing.T) {
	const n = 200_000
	// The quantiles of a standard normal used below.
	const z50, z90, z99 = 0.0, 1.2815515655446004, 2.3263478740408408
	ln := LogNormal{Mean: 512, Sigma: 0.8, Min: 1, Max: 1 << 24}
	mu := math.Log(ln.Median())
	cases := []struct {
		d    Length
		mean float64
		q    map[float64]float64 // quantile → value
		tol  float64             // relative
	}{
		{Fixed{N: 128}, 128, map[float64]float64{0.5: 128, 0.99: 128}, 0},
		{Uniform{Min: 100, Max: 300}, 200, map[float64]float64{0.5: 200, 0.9: 280}, 0.01},
		{Normal{Mean: 1000, StdDev: 100, Min: 0, Max: 1 << 24}, 1000,
			map[float64]float64{0.5: 1000, 0.9: 1000 + 100*z90, 0.99: 1000 + 100*z99}, 0.01},
		{ln, 512, map[float64]float64{0.5: math.Exp(mu + 0.8*z50), 0.9: math.Exp(mu + 0.8*z90), 0.99: math.Exp(mu + 0.8*z99)}, 0.03},
		{Empirical{Values: []int{10, 20, 30, 40}}, 25, map[float64]float64{0.5: 20}, 0.02},
	}
	for _, tc := range cases {
		t.Run(tc.d.String(), func(t *testing.T) {
			if err := Validate(tc.d); err != nil {
				t.Fatal(err)
			}
			r := newStream(42, 1, 1)
			xs := make([]int, n)
			sum := 0.0
			for i := range xs {
				xs[i] = tc.d.Sample(r)
				sum += float64(xs[i])
			}
			slices.Sort(xs)
			if got := sum / n; !near(got, tc.mean, tc.tol) {
				t.Errorf("mean %.2f, want %.2f ± %.0f %%", got, tc.mean, 100*tc.tol)
			}
			for q, want := range tc.q {
				if got := float64(xs[int(q*n)]); !near(got, want, tc.tol+1/want) {
					t.Errorf("p%g %.0f, want %.1f ± %.0f %%", 100*q, got, want, 100*tc.tol)
				}
			}
		})
	}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// TestLengthsStayWithinBounds draws from distributions whose bounds cut
// deep into them: every sample is within the bounds, and the truncation
// keeps the shape inside them (no pile-up at the bounds).
func TestLengthsStayWithinBounds(t *testing.T) {
	for _, d := range []Length{
		LogNormal{Mean: 512, Sigma: 0.8, Min: 32, Max: 600},
		Normal{Mean: 100, StdDev: 50, Min: 90, Max: 110},
		Uniform{Min: 5, Max: 5},
	} {
		lo, hi := boundsOf(d)
		r := newStream(1, 2, 3)
		atBound := 0
		for range 10_000 {
			v := d.Sample(r)
			if v < lo || v > hi {
				t.Fatalf("%s: sample %d out of bounds", d, v)
			}
			if v == hi && lo != hi {
				atBound++
			}
		}
		if atBound > 500 {
			t.Errorf("%s: %d of 10,000 samples at the upper bound: clamped, not truncated", d, atBound)
		}
	}
}

func boundsOf(d Length) (int, int) {
	switch d := d.(type) {
	case LogNormal:
		return d.Min, d.Max
	case Normal:
		return d.Min, d.Max
	case Uniform:
		return d.Min, d.Max
	}
	return 0, math.MaxInt
}

// TestStreamsAreReproducibleAndIndependent: the same keys give the same
// draws; another VU's stream, or another seed, differs.
func TestStreamsAreReproducibleAndIndependent(t *testing.T) {
	d := LogNormal{Mean: 512, Sigma: 0.8, Min: 32, Max: 8192}
	draw := func(seed int64, vu uint64) []int {
		r := newStream(seed, vu, 1)
		out := make([]int, 64)
		for i := range out {
			out[i] = d.Sample(r)
		}
		return out
	}
	if !slices.Equal(draw(1, 1), draw(1, 1)) {
		t.Error("the same seed and VU gave different lengths")
	}
	if slices.Equal(draw(1, 1), draw(1, 2)) {
		t.Error("VUs 1 and 2 drew the same lengths")
	}
	if slices.Equal(draw(1, 1), draw(2, 1)) {
		t.Error("seeds 1 and 2 drew the same lengths")
	}
}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		d    Length
		want string
	}{
		{LogNormal{Mean: 0, Sigma: 1, Max: 10}, "lognormal: mean"},
		{LogNormal{Mean: 10, Sigma: -1, Max: 10}, "lognormal: sigma"},
		{Normal{Mean: 10, StdDev: 0, Max: 10}, "normal: stddev"},
		{Uniform{Min: 10, Max: 5}, "uniform: max (5) must be ≥ min (10)"},
		{Uniform{Min: -1, Max: 5}, "uniform: min"},
		{Empirical{}, "empirical: no values"},
		{Fixed{N: -2}, "fixed"},
	} {
		err := Validate(tc.d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%#v) = %v, want an error containing %q", tc.d, err, tc.want)
		}
	}
}
