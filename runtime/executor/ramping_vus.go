package executor

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// DefaultGracefulRampDown is k6's default gracefulRampDown.
const DefaultGracefulRampDown = 30 * time.Second

// RampingVUs runs a number of looping VUs that follows its stages: from
// StartVUs, the number of active VUs moves linearly to each stage's
// target over the stage's duration. A VU ramped down finishes its
// iteration, within GracefulRampDown, and starts no other one until it is
// ramped up again.
type RampingVUs struct {
	Base
	StartVUs         int      `json:"startVUs"`
	Stages           []Stage  `json:"stages"`
	GracefulRampDown Duration `json:"gracefulRampDown"`
	// part is the execution segment the VUs are counted for (Segment).
	part segment.Part
}

// Validate implements Config.
func (c *RampingVUs) Validate() error {
	if c.StartVUs < 0 {
		return fmt.Errorf("startVUs must not be negative, got %d", c.StartVUs)
	}
	if err := checkVUs("startVUs", c.StartVUs); err != nil {
		return err
	}
	if err := validateStages(c.Stages, true); err != nil {
		return err
	}
	if c.GracefulRampDown.D < 0 {
		return fmt.Errorf("gracefulRampDown must not be negative, got %s", c.GracefulRampDown.D)
	}
	if c.wholeMaxVUs() < 1 {
		return fmt.Errorf("startVUs or a stage's target must be at least 1: the stages never run a VU")
	}
	return c.validate()
}

func (c *RampingVUs) rampDown() time.Duration {
	if c.GracefulRampDown.Set {
		return c.GracefulRampDown.D
	}
	return DefaultGracefulRampDown
}

// MaxVUs implements Config: the largest of startVUs and the targets (of
// the segment's part).
func (c *RampingVUs) MaxVUs() int { return c.part.ScaleInt(c.wholeMaxVUs()) }

// wholeMaxVUs is the largest of startVUs and the targets.
func (c *RampingVUs) wholeMaxVUs() int {
	n := c.StartVUs
	for _, st := range c.Stages {
		n = max(n, int(st.target()))
	}
	return n
}

// startVUs is StartVUs, of the segment's part.
func (c *RampingVUs) startVUs() int { return c.part.ScaleInt(c.StartVUs) }

// PreAllocatedVUs implements Config.
func (c *RampingVUs) PreAllocatedVUs() int { return c.MaxVUs() }

// MaxDuration implements Config.
func (c *RampingVUs) MaxDuration() time.Duration { return stagesDuration(c.Stages) + c.graceful() }

// Plan implements Config.
func (c *RampingVUs) Plan() Plan { return Plan{Duration: stagesDuration(c.Stages)} }

// Describe implements Config.
func (c *RampingVUs) Describe() string {
	return fmt.Sprintf("up to %s over %s for %s, from %d (gracefulRampDown %s, gracefulStop %s)",
		textfmt.Count(c.MaxVUs(), "looping VU"), textfmt.Count(len(c.Stages), "stage"), stagesDuration(c.Stages), c.startVUs(), c.rampDown(), c.graceful())
}

// NewExecutor implements Config.
func (c *RampingVUs) NewExecutor(uint64) Executor { return rampingVUs{c} }

// vuStep is a change of the number of active VUs, at an offset from the
// scenario's start.
type vuStep struct {
	at  time.Duration
	vus int
}

// steps is the target as a step function: each change of the number of
// active VUs of the segment's part, when the whole plan's count changes
// its part (wholeSteps).
func (c *RampingVUs) steps() []vuStep {
	if c.part.Whole() {
		return c.wholeSteps()
	}
	var out []vuStep
	last := c.startVUs()
	for _, st := range c.wholeSteps() {
		if v := c.part.ScaleInt(st.vus); v != last {
			out = append(out, vuStep{st.at, v})
			last = v
		}
	}
	return out
}

// wholeSteps is the whole plan's target as a step function: each change
// of the number of active VUs. Ramping from a to b over d, the count
// reaches each value v between them at the point of the line from
// (start, a) to (start+d, b) where it equals v.
func (c *RampingVUs) wholeSteps() []vuStep {
	var out []vuStep
	from := c.StartVUs
	var at time.Duration
	for _, st := range c.Stages {
		to, d := int(st.target()), st.Duration.D
		switch {
		case to == from:
		case d == 0:
			out = append(out, vuStep{at, to})
		case to > from:
			for v := from + 1; v <= to; v++ {
				out = append(out, vuStep{at + time.Duration(float64(d)*float64(v-from)/float64(to-from)), v})
			}
		default:
			for v := from - 1; v >= to; v-- {
				out = append(out, vuStep{at + time.Duration(float64(d)*float64(from-v)/float64(from-to)), v})
			}
		}
		from = to
		at += d
	}
	return out
}

// targetAt is the number of active VUs the stages ask for at offset t.
func (c *RampingVUs) targetAt(t time.Duration) int {
	steps := c.steps()
	i := sort.Search(len(steps), func(i int) bool { return steps[i].at > t })
	if i == 0 {
		return c.startVUs()
	}
	return steps[i-1].vus
}

type rampingVUs struct{ cfg *RampingVUs }

// ramp is the shared state of a ramping-vus run: VU slot i is active while
// i < target.
type ramp struct {
	target atomic.Int64
	slots  []rampSlot

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each change of target
}

type rampSlot struct {
	mu sync.Mutex
	// cancel interrupts the iteration the slot runs, nil between
	// iterations.
	cancel context.CancelFunc
	// gen counts the slot's ramp-downs, so that the timer of an earlier
	// one cannot cut a later iteration.
	gen int
}

func (e rampingVUs) Run(ctx context.Context, pool Pool) error {
	c := e.cfg
	startCtx, iterCtx, cancel := stopContexts(ctx, stagesDuration(c.Stages), c.graceful())
	defer cancel()
	start := time.Now()
	vus := pool.VUs()[:c.MaxVUs()]
	r := &ramp{slots: make([]rampSlot, len(vus)), changed: make(chan struct{})}
	r.target.Store(int64(c.startVUs()))

	var wg sync.WaitGroup
	for i, vu := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runSlot(i, vu, startCtx, iterCtx)
		}()
	}

	timer := time.NewTimer(0)
	defer timer.Stop()
	grace := c.rampDown()
	for _, st := range c.steps() {
		if d := time.Until(start.Add(st.at)); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-startCtx.Done():
			}
		}
		if startCtx.Err() != nil {
			break
		}
		r.set(st.vus, grace)
	}
	wg.Wait()
	return nil
}

// set changes the number of active VUs to n. VUs ramped down finish their
// iteration, which is interrupted if it is still running after grace
// (unless the VU was ramped up again meanwhile).
func (r *ramp) set(n int, grace time.Duration) {
	old := int(r.target.Swap(int64(n)))
	for i := n; i < old && i < len(r.slots); i++ {
		s := &r.slots[i]
		s.mu.Lock()
		s.gen++
		gen := s.gen
		s.mu.Unlock()
		time.AfterFunc(grace, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.gen == gen && int64(i) >= r.target.Load() && s.cancel != nil {
				s.cancel()
			}
		})
	}
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *ramp) changes() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// runSlot runs VU slot i: iterations while the slot is active, waiting
// while it is not, until starting stops.
func (r *ramp) runSlot(i int, vu VU, startCtx, iterCtx context.Context) {
	s := &r.slots[i]
	for {
		// Read the change channel before the target, so that a change
		// after the check closes the channel waited on.
		ch := r.changes()
		if int64(i) >= r.target.Load() {
			select {
			case <-ch:
				continue
			case <-startCtx.Done():
				return
			}
		}
		for starting(startCtx, iterCtx) {
			s.mu.Lock()
			if int64(i) >= r.target.Load() {
				s.mu.Unlock()
				break
			}
			itCtx, cancelIt := context.WithCancel(iterCtx)
			s.cancel = cancelIt
			s.mu.Unlock()
			vu.RunIteration(itCtx)
			s.mu.Lock()
			s.cancel = nil
			s.mu.Unlock()
			cancelIt()
			backOff(startCtx, vu)
		}
		if !starting(startCtx, iterCtx) {
			return
		}
	}
}
