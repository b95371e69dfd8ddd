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
	// duration.
	Scaled(factor float64, duration time.Duration) Config
}

// Load implements Scalable: the rate per second.
func (c *ConstantArrivalRate) Load() float64 {
	return c.Rate * float64(time.Second) / float64(c.unit())
}

// Scaled implements Scalable. A copy runs for duration, whatever
// iterations the original counted.
func (c *ConstantArrivalRate) Scaled(factor float64, duration time.Duration) Config {
	out := *c
	out.Rate = c.Rate * factor
	out.Duration = Duration{D: duration, Set: true}
	out.Iterations, out.Normalize = nil, false
	return &out
}

// Load implements Scalable: the VUs.
func (c *ConstantVUs) Load() float64 { return float64(c.VUs) }

// Scaled implements Scalable: the VUs are rounded, at least one.
func (c *ConstantVUs) Scaled(factor float64, duration time.Duration) Config {
	out := *c
	out.VUs = max(1, int(math.Round(float64(c.VUs)*factor)))
	out.Duration = Duration{D: duration, Set: true}
	return &out
}
