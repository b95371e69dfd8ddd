package regression

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestQuantiles(t *testing.T) {
	near := func(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }
	for _, c := range []struct{ p, want float64 }{{0.975, 1.959964}, {0.995, 2.575829}, {0.5, 0}, {0.9, 1.281552}} {
		if got := normalQuantile(c.p); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("normalQuantile(%g) = %g, want %g", c.p, got, c.want)
		}
	}
	// Student's t, from the usual tables.
	for _, c := range []struct {
		p    float64
		df   int64
		want float64
	}{
		{0.975, 1, 12.706}, {0.995, 1, 63.657}, {0.975, 2, 4.303}, {0.995, 2, 9.925},
		{0.975, 3, 3.182}, {0.995, 3, 5.841}, {0.995, 5, 4.032}, {0.975, 10, 2.228},
		{0.995, 19, 2.861}, {0.995, 30, 2.750}, {0.975, 100, 1.984}, {0.995, 120, 2.617}, {0.975, 1000, 1.962},
	} {
		if got := tQuantile(c.p, c.df); !near(got, c.want, 0.0005) {
			t.Errorf("tQuantile(%g, %d) = %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
}

// The ranks are those of the binomial distribution: the classic 95 %
// interval of the median of 100 samples is X(40)..X(61); a p99 needs 528
// samples to be bounded at 99 %.
func TestOrderStatisticRanks(t *testing.T) {
	for _, c := range []struct {
		n          int64
		q, conf    float64
		wantLo, hi int64
	}{
		{100, 0.5, 0.95, 40, 61},
		{12, 0.99, 0.99, 10, 13},
		{1000, 0.99, 0.99, 981, 998},
		{30, 0.5, 0.99, 8, 23},
		{527, 0.99, 0.99, 515, 528},
		{528, 0.99, 0.99, 516, 528},
		{7, 0.5, 0.99, 0, 8},
		{0, 0.5, 0.99, 0, 1},
	} {
		lo, hi := orderStatisticRanks(c.n, c.q, c.conf)
		if lo != c.wantLo || hi != c.hi {
			t.Errorf("orderStatisticRanks(%d, %g, %g) = %d, %d; want %d, %d", c.n, c.q, c.conf, lo, hi, c.wantLo, c.hi)
		}
	}
	for _, c := range []struct {
		q, conf float64
		want    int64
	}{{0.99, 0.99, 528}, {0.99, 0.95, 368}, {0.5, 0.99, 8}, {0.9, 0.99, 51}} {
		n := samplesToBound(c.q, c.conf)
		if n != c.want {
			t.Errorf("samplesToBound(%g, %g) = %d, want %d", c.q, c.conf, n, c.want)
		}
		if lo, hi := orderStatisticRanks(n, c.q, c.conf); lo < 1 || hi > n {
			t.Errorf("%d samples do not bound the %g-quantile: ranks %d, %d", n, c.q, lo, hi)
		}
		if lo, hi := orderStatisticRanks(n-1, c.q, c.conf); lo >= 1 && hi <= n-1 {
			t.Errorf("%d samples bound the %g-quantile: ranks %d, %d", n-1, c.q, lo, hi)
		}
	}
	// Beyond the exact computation, the normal approximation's ranks
	// differ by less than one in ten thousand.
	for _, q := range []float64{0.5, 0.9, 0.99} {
		lo1, hi1 := orderStatisticRanks(exactRanksUpTo, q, 0.99)
		lo2, hi2 := orderStatisticRanks(exactRanksUpTo+1, q, 0.99)
		if d := lo2 - lo1; d < 0 || d > exactRanksUpTo/10000 {
			t.Errorf("q %g: lower rank %d exact, %d approximated", q, lo1, lo2)
		}
		if d := hi2 - hi1; d < 0 || d > exactRanksUpTo/10000 {
			t.Errorf("q %g: upper rank %d exact, %d approximated", q, hi1, hi2)
		}
	}
}

// The intervals hold what they promise: over many samples of a known
// distribution, the order statistics' interval covers the true quantile
// at least as often as its level says.
func TestOrderStatisticCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials, conf = 2000, 0.95
	for _, c := range []struct {
		n int64
		q float64
	}{{50, 0.5}, {200, 0.9}, {1000, 0.99}} {
		truth := -math.Log(1 - c.q) // the exponential distribution's quantile
		lo, hi := orderStatisticRanks(c.n, c.q, conf)
		covered := 0
		xs := make([]float64, c.n)
		for range trials {
			for i := range xs {
				xs[i] = rng.ExpFloat64()
			}
			slices.Sort(xs)
			if xs[lo-1] <= truth && truth <= xs[hi-1] {
				covered++
			}
		}
		// Binomial noise over 2,000 trials is about 0.5 %.
		if share := float64(covered) / trials; share < conf-0.015 {
			t.Errorf("n %d, q %g: the interval covered the quantile in %.1f %% of trials, want %g %%", c.n, c.q, 100*share, 100*conf)
		}
	}
}

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n         int64
		conf, lo, hi float64
	}{
		{0, 10, 0.95, 0, 0.2775},
		{10, 10, 0.95, 0.7225, 1},
		{50, 100, 0.95, 0.4038, 0.5962},
	} {
		lo, hi := wilson(c.k, c.n, c.conf)
		if math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("wilson(%d, %d) = %.4f, %.4f; want %.4f, %.4f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestMedianAndMAD(t *testing.T) {
	for _, c := range []struct {
		xs       []float64
		med, dev float64
	}{
		{[]float64{5}, 5, 0},
		{[]float64{3, 1, 2}, 2, 1},
		{[]float64{4, 1, 3, 2}, 2.5, 1},
		{[]float64{10, 10, 1000, 10, 9}, 10, 0},
		{[]float64{1, 100}, 50.5, 49.5},
	} {
		in := slices.Clone(c.xs)
		if got := Median(c.xs); got != c.med {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.med)
		}
		if got := mad(c.xs); got != c.dev {
			t.Errorf("mad(%v) = %v, want %v", c.xs, got, c.dev)
		}
		if !slices.Equal(in, c.xs) {
			t.Errorf("Median or mad changed their argument: %v", c.xs)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
}
