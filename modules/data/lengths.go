package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Length is a distribution of token counts: prompt or output lengths.
// Sample draws from r, so a distribution is shared read-only and each VU
// brings its own random stream.
type Length interface {
	// Sample draws one length, a whole number of tokens.
	Sample(r *rand.Rand) int
	// String describes the distribution with its parameters, for reports.
	String() string
}

// Fixed is always N.
type Fixed struct{ N int }

// Uniform is uniform over the whole numbers from Min to Max, both included.
type Uniform struct{ Min, Max int }

// Normal is a normal distribution of mean Mean and standard deviation
// StdDev, truncated to [Min, Max] (see truncated) and rounded.
type Normal struct {
	Mean, StdDev float64
	Min, Max     int
}

// LogNormal is a log-normal distribution truncated to [Min, Max] and
// rounded: the long tail of real prompt lengths (median a few hundred
// tokens, p99 several thousand). Mean is the arithmetic mean of the
// untruncated distribution and Sigma the standard deviation of the
// logarithm, so exp(μ) = Mean·exp(-Sigma²/2) is its median.
type LogNormal struct {
	Mean, Sigma float64
	Min, Max    int
}

// Empirical draws one of Values, each equally likely: lengths measured from
// a dataset or from production logs.
type Empirical struct{ Values []int }

// maxRedraws bounds the draws a truncated distribution makes for one
// sample before it clamps to its bounds.
const maxRedraws = 64

func (f Fixed) Sample(*rand.Rand) int { return f.N }

func (f Fixed) String() string { return "fixed(" + strconv.Itoa(f.N) + ")" }

func (u Uniform) Sample(r *rand.Rand) int { return u.Min + r.IntN(u.Max-u.Min+1) }

func (u Uniform) String() string { return fmt.Sprintf("uniform(min=%d, max=%d)", u.Min, u.Max) }

func (n Normal) Sample(r *rand.Rand) int {
	return truncated(r, n.Min, n.Max, func() float64 { return n.Mean + n.StdDev*r.NormFloat64() })
}

func (n Normal) String() string {
	return fmt.Sprintf("normal(mean=%.4g, stddev=%.4g, min=%d, max=%d)", n.Mean, n.StdDev, n.Min, n.Max)
}

// Median is the median of the untruncated distribution, exp(μ).
func (l LogNormal) Median() float64 { return l.Mean * math.Exp(-l.Sigma*l.Sigma/2) }

func (l LogNormal) Sample(r *rand.Rand) int {
	mu := math.Log(l.Median())
	return truncated(r, l.Min, l.Max, func() float64 { return math.Exp(mu + l.Sigma*r.NormFloat64()) })
}

func (l LogNormal) String() string {
	return fmt.Sprintf("lognormal(mean=%.4g, sigma=%.4g, min=%d, max=%d)", l.Mean, l.Sigma, l.Min, l.Max)
}

func (e Empirical) Sample(r *rand.Rand) int { return e.Values[r.IntN(len(e.Values))] }

func (e Empirical) String() string { return fmt.Sprintf("empirical(%d values)", len(e.Values)) }

// truncated draws from draw, rounded to the nearest whole number, until a
// value falls within [lo, hi]: the truncated distribution, whose shape
// inside the bounds is the original one. Bounds that leave almost no mass
// would make that endless, so after maxRedraws draws the last one is
// clamped.
func truncated(r *rand.Rand, lo, hi int, draw func() float64) int {
	var v float64
	for range maxRedraws {
		v = math.Round(draw())
		if v >= float64(lo) && v <= float64(hi) {
			return int(v)
		}
	}
	return int(math.Max(float64(lo), math.Min(float64(hi), v)))
}

// Validate checks a distribution's parameters, naming the one at fault.
func Validate(l Length) error {
	switch d := l.(type) {
	case Fixed:
		if d.N < 0 {
			return fmt.Errorf("fixed: the length must be ≥ 0, got %d", d.N)
		}
	case Uniform:
		return bounds("uniform", d.Min, d.Max)
	case Normal:
		if err := positive("normal", "stddev", d.StdDev); err != nil {
			return err
		}
		return bounds("normal", d.Min, d.Max)
	case LogNormal:
		if err := positive("lognormal", "mean", d.Mean); err != nil {
			return err
		}
		if err := positive("lognormal", "sigma", d.Sigma); err != nil {
			return err
		}
		return bounds("lognormal", d.Min, d.Max)
	case Empirical:
		if len(d.Values) == 0 {
			return errors.New("empirical: no values to draw from")
		}
		for i, v := range d.Values {
			if v < 0 {
				return fmt.Errorf("empirical: value %d is negative (%d)", i, v)
			}
		}
	}
	return nil
}

func positive(dist, field string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: %s must be a positive number, got %g", dist, field, v)
	}
	return nil
}

func bounds(dist string, lo, hi int) error {
	if lo < 0 {
		return fmt.Errorf("%s: min must be ≥ 0, got %d", dist, lo)
	}
	if hi < lo {
		return fmt.Errorf("%s: max (%d) must be ≥ min (%d)", dist, hi, lo)
	}
	return nil
}
