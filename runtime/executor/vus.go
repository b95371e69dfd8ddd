package executor

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/runtime/textfmt"
)

// ConstantVUs runs a fixed number of VUs looping over iterations for a
// duration.
type ConstantVUs struct {
	Base
	VUs      int      `json:"vus"`
	Duration Duration `json:"duration"`
}

// Validate implements Config.
func (c *ConstantVUs) Validate() error {
	if c.VUs <= 0 {
		return fmt.Errorf("vus must be at least 1, got %d", c.VUs)
	}
	if err := checkVUs("vus", c.VUs); err != nil {
		return err
	}
	if !c.Duration.Set || c.Duration.D <= 0 {
		return fmt.Errorf("duration is required and must be positive (e.g. \"30s\")")
	}
	return c.validate()
}

// MaxVUs implements Config.
func (c *ConstantVUs) MaxVUs() int { return c.VUs }

// MaxDuration implements Config.
func (c *ConstantVUs) MaxDuration() time.Duration { return c.Duration.D + c.graceful() }

// Plan implements Config.
func (c *ConstantVUs) Plan() Plan { return Plan{Duration: c.Duration.D} }

// Describe implements Config.
func (c *ConstantVUs) Describe() string {
	return fmt.Sprintf("%s for %s (gracefulStop %s)", textfmt.Count(c.VUs, "looping VU"), c.Duration.D, c.graceful())
}

// PreAllocatedVUs implements Config.
func (c *ConstantVUs) PreAllocatedVUs() int { return c.VUs }

// NewExecutor implements Config.
func (c *ConstantVUs) NewExecutor(uint64) Executor { return constantVUs{c} }

type constantVUs struct{ cfg *ConstantVUs }

func (e constantVUs) Run(ctx context.Context, pool Pool) error {
	startCtx, iterCtx, cancel := stopContexts(ctx, e.cfg.Duration.D, e.cfg.graceful())
	defer cancel()
	loop(pool.VUs()[:e.cfg.VUs], func(vu VU) {
		for starting(startCtx, iterCtx) {
			vu.RunIteration(iterCtx)
			backOff(startCtx, vu)
		}
	})
	return nil
}

// DefaultMaxDuration bounds the iteration-based executors, as in k6.
const DefaultMaxDuration = 10 * time.Minute

// iterationLimits holds what the iteration-based executors share.
type iterationLimits struct {
	Base
	VUs        int `json:"vus"`
	Iterations int `json:"iterations"`
	// Limit is "maxDuration": iterations not started by then are skipped.
	Limit Duration `json:"maxDuration"`
}

func (c *iterationLimits) limit() time.Duration {
	if c.Limit.Set {
		return c.Limit.D
	}
	return DefaultMaxDuration
}

func (c *iterationLimits) validate() error {
	if c.VUs <= 0 {
		return fmt.Errorf("vus must be at least 1, got %d", c.VUs)
	}
	if err := checkVUs("vus", c.VUs); err != nil {
		return err
	}
	if c.Iterations <= 0 {
		return fmt.Errorf("iterations must be at least 1, got %d", c.Iterations)
	}
	if c.Limit.Set && c.Limit.D <= 0 {
		return fmt.Errorf("maxDuration must be positive, got %s", c.Limit.D)
	}
	return c.Base.validate()
}

// MaxVUs implements Config.
func (c *iterationLimits) MaxVUs() int { return c.VUs }

// PreAllocatedVUs implements Config.
func (c *iterationLimits) PreAllocatedVUs() int { return c.VUs }

// MaxDuration implements Config.
func (c *iterationLimits) MaxDuration() time.Duration { return c.limit() + c.graceful() }

// Plan implements Config.
func (c *SharedIterations) Plan() Plan {
	return Plan{Duration: c.limit(), Iterations: int64(c.Iterations)}
}

// Plan implements Config: each VU runs Iterations.
func (c *PerVUIterations) Plan() Plan {
	return Plan{Duration: c.limit(), Iterations: int64(c.Iterations) * int64(c.VUs)}
}

// SharedIterations shares a total number of iterations among VUs: faster
// VUs run more of them.
type SharedIterations struct{ iterationLimits }

// Validate implements Config.
func (c *SharedIterations) Validate() error {
	if err := c.iterationLimits.validate(); err != nil {
		return err
	}
	if c.Iterations < c.VUs {
		return fmt.Errorf("iterations (%d) must be at least vus (%d): each VU needs one", c.Iterations, c.VUs)
	}
	return nil
}

// Describe implements Config.
func (c *SharedIterations) Describe() string {
	return fmt.Sprintf("%s shared among %s (maxDuration %s, gracefulStop %s)", textfmt.Count(c.Iterations, "iteration"), textfmt.Count(c.VUs, "VU"), c.limit(), c.graceful())
}

// NewExecutor implements Config.
func (c *SharedIterations) NewExecutor(uint64) Executor { return sharedIterations{c} }

type sharedIterations struct{ cfg *SharedIterations }

func (e sharedIterations) Run(ctx context.Context, pool Pool) error {
	startCtx, iterCtx, cancel := stopContexts(ctx, e.cfg.limit(), e.cfg.graceful())
	defer cancel()
	var started atomic.Int64
	total := int64(e.cfg.Iterations)
	loop(pool.VUs()[:e.cfg.VUs], func(vu VU) {
		for starting(startCtx, iterCtx) && started.Add(1) <= total {
			vu.RunIteration(iterCtx)
			if started.Load() < total {
				backOff(startCtx, vu)
			}
		}
	})
	countUnrun(ctx, pool, total, min(started.Load(), total))
	return nil
}

// countUnrun counts the iterations of planned that never started when
// the run went on but the scenario's maxDuration ended it first: they are
// dropped (DropMaxDuration), not forgotten, so that the summary does not
// call the scenario done. A run that was stopped (ctx) counts none: its
// end is told as an interruption.
func countUnrun(ctx context.Context, pool Pool, planned, started int64) {
	if ctx.Err() == nil && started < planned {
		pool.DroppedIterations(int(min(planned-started, math.MaxInt)), DropMaxDuration)
	}
}

// PerVUIterations has each VU run the same number of iterations.
type PerVUIterations struct{ iterationLimits }

// Validate implements Config.
func (c *PerVUIterations) Validate() error { return c.iterationLimits.validate() }

// Describe implements Config.
func (c *PerVUIterations) Describe() string {
	return fmt.Sprintf("%s for each of %s (maxDuration %s, gracefulStop %s)", textfmt.Count(c.Iterations, "iteration"), textfmt.Count(c.VUs, "VU"), c.limit(), c.graceful())
}

// NewExecutor implements Config.
func (c *PerVUIterations) NewExecutor(uint64) Executor { return perVUIterations{c} }

type perVUIterations struct{ cfg *PerVUIterations }

func (e perVUIterations) Run(ctx context.Context, pool Pool) error {
	startCtx, iterCtx, cancel := stopContexts(ctx, e.cfg.limit(), e.cfg.graceful())
	defer cancel()
	var started atomic.Int64
	loop(pool.VUs()[:e.cfg.VUs], func(vu VU) {
		for i := 0; i < e.cfg.Iterations && starting(startCtx, iterCtx); i++ {
			started.Add(1)
			vu.RunIteration(iterCtx)
			if i+1 < e.cfg.Iterations {
				backOff(startCtx, vu)
			}
		}
	})
	countUnrun(ctx, pool, int64(e.cfg.Iterations)*int64(e.cfg.VUs), started.Load())
	return nil
}
