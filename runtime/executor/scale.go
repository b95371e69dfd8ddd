package executor

import (
	"math"
	"time"
)

// Scalable is a Config whose load a capacity search scales round by
// round: an arrival rate, or a number of VUs.
type Scalable interface {
	Config
	// Load is the load the config declares: iterations per second, or
	// VUs.
	Load() float64
	// Scaled is a copy of the config at factor times its load, run for
	// duration, validated as the config is: a load beyond llmrun's limits
	// is an error naming the field.
	Scaled(factor float64, duration time.Duration) (Config, error)
}

// Load implements Scalable: the rate per second.
func (c *ConstantArrivalRate) Load() float64 {
	return c.Rate * float64(time.Second) / float64(c.unit())
}

// Scaled implements Scalable. A copy runs for duration, whatever
// iterations the original counted.
func (c *ConstantArrivalRate) Scaled(factor float64, duration time.Duration) (Config, error) {
	out := *c
	out.Rate = c.Rate * factor
	out.Duration = Duration{D: duration, Set: true}
	out.Iterations, out.Normalize = nil, false
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return &out, nil
}

// Load implements Scalable: the VUs.
func (c *ConstantVUs) Load() float64 { return float64(c.VUs) }

// Scaled implements Scalable: the VUs are rounded, at least one.
func (c *ConstantVUs) Scaled(factor float64, duration time.Duration) (Config, error) {
	vus := math.Round(float64(c.VUs) * factor)
	if err := checkVUs("vus", vus); err != nil {
		// Checked before the conversion to int, which would overflow.
		return nil, err
	}
	out := *c
	out.VUs = max(1, int(vus))
	out.Duration = Duration{D: duration, Set: true}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return &out, nil
}
