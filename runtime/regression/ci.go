package regression

import (
	"math"
	"slices"
)

// The statistics behind the confidence intervals: pure functions of
// counts, with the formulas docs/results.md ("How compare and trend
// judge") states.

// normalQuantile is the standard normal distribution's quantile: the z
// with P(Z ≤ z) = p, for 0 < p < 1.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// tQuantile is Student's t distribution's quantile with df degrees of
// freedom, for 0.5 ≤ p < 1: the t at which tCDF reaches p, found by
// bisection, for df up to exactTUpTo; beyond it the Cornish–Fisher
// expansion of Abramowitz and Stegun 26.7.5, within 0.01 % there.
func tQuantile(p float64, df int64) float64 {
	switch {
	case df < 1:
		return math.Inf(1)
	case df == 1:
		return math.Tan(math.Pi * (p - 0.5))
	case df > exactTUpTo:
		z, v := normalQuantile(p), float64(df)
		z2 := z * z
		g1 := (z2 + 1) * z / 4
		g2 := ((5*z2+16)*z2 + 3) * z / 96
		g3 := (((3*z2+19)*z2+17)*z2 - 15) * z / 384
		return z + g1/v + g2/(v*v) + g3/(v*v*v)
	}
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < p {
		lo, hi = hi, 2*hi
	}
	for range 100 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// exactTUpTo is the largest number of degrees of freedom whose t
// quantile is found from the distribution itself.
const exactTUpTo = 100

// tCDF is Student's t distribution's cumulative distribution at t ≥ 0
// with df ≥ 2 degrees of freedom: (1 + A(t|df)) / 2 with A of Abramowitz
// and Stegun 26.7.3 (even df) and 26.7.4 (odd df), θ = atan(t/√df).
func tCDF(t float64, df int64) float64 {
	theta := math.Atan(t / math.Sqrt(float64(df)))
	s, c := math.Sin(theta), math.Cos(theta)
	var a float64
	if df%2 == 0 {
		term, sum := 1.0, 1.0
		for k := int64(2); k <= df-2; k += 2 {
			term *= float64(k-1) / float64(k) * c * c
			sum += term
		}
		a = s * sum
	} else {
		term, sum := c, c
		for k := int64(3); k <= df-2; k += 2 {
			term *= float64(k-1) / float64(k) * c * c
			sum += term
		}
		a = 2 / math.Pi * (theta + s*sum)
	}
	return (1 + a) / 2
}

// exactRanksUpTo is the largest sample count whose order-statistic ranks
// are computed from the binomial distribution itself (a few milliseconds
// at most); beyond it, the normal approximation's ranks differ by less
// than one in ten thousand.
const exactRanksUpTo = 100000

// orderStatisticRanks returns the ranks (1-based) of the order statistics
// X(lo) ≤ X(hi) of n samples that bound their distribution's q-quantile
// with probability at least conf, each side missing it with at most
// (1 − conf)/2: the number of samples below the quantile is binomial
// (n, q), so P(X(lo) > ξq) = P(B ≤ lo−1) and P(X(hi) < ξq) = P(B ≥ hi). lo
// is 0 when no order statistic bounds the quantile from below, hi is n+1
// when none bounds it from above: too few samples.
func orderStatisticRanks(n int64, q, conf float64) (lo, hi int64) {
	if n < 1 {
		return 0, n + 1
	}
	tail := (1 - conf) / 2
	if n > exactRanksUpTo {
		z := normalQuantile(1 - tail)
		mean, sd := float64(n)*q, math.Sqrt(float64(n)*q*(1-q))
		lo = int64(math.Floor(mean - z*sd))
		hi = int64(math.Ceil(mean+z*sd)) + 1
		return max(lo, 0), min(hi, n+1)
	}
	// The cumulative binomial distribution, term by term; the terms in
	// logs: log P(B = k+1) = log P(B = k) + log((n−k)/(k+1)) + log(q/(1−q)).
	logOdds := math.Log(q) - math.Log1p(-q)
	logPMF := float64(n) * math.Log1p(-q) // P(B = 0)
	cdf := 0.0                            // P(B ≤ k−1) at the top of each round
	lo, hi = 0, n+1
	for k := int64(0); k <= n; k++ {
		if cdf <= tail {
			lo = k // P(X(k) > ξq) = P(B ≤ k−1) ≤ tail
		}
		if 1-cdf <= tail {
			hi = k // P(X(k) < ξq) = P(B ≥ k) ≤ tail
			break
		}
		cdf += math.Exp(logPMF)
		logPMF += math.Log(float64(n-k)/float64(k+1)) + logOdds
	}
	return lo, hi
}

// samplesToBound is the fewest samples whose order statistics bound a
// q-quantile on both sides with confidence conf: q^n and (1−q)^n both at
// most (1 − conf)/2.
func samplesToBound(q, conf float64) int64 {
	tail := math.Log((1 - conf) / 2)
	worst := math.Max(q, 1-q)
	return int64(math.Ceil(tail / math.Log(worst)))
}

// wilson is the Wilson score interval of a proportion: successes of n at
// confidence conf.
func wilson(successes, n int64, conf float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	return wilsonRate(float64(successes)/float64(n), n, conf)
}

// wilsonRate is the Wilson score interval of a proportion p of n samples
// at confidence conf; n must be positive.
func wilsonRate(p float64, n int64, conf float64) (lo, hi float64) {
	z := normalQuantile(1 - (1-conf)/2)
	nf := float64(n)
	center := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return math.Max(0, center-half), math.Min(1, center+half)
}

// mad is the median absolute deviation of xs from their median.
func mad(xs []float64) float64 {
	m := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return Median(dev)
}

// madScale makes a median absolute deviation a consistent estimate of a
// normal distribution's standard deviation.
const madScale = 1.4826

// Median returns the median of xs (the mean of the two middle values of
// an even count); xs is left as it is. It is NaN for no values.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
