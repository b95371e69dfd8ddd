package engine

import "context"

// chain holds, during a run, which scenario starts after which
// (startAfter) and which chains were stopped.
type chain struct {
	scenarios []Scenario
	// before[i] is the index of the scenario i starts after, -1 for none;
	// ended[i] is closed once scenario i ended, or will never start.
	before []int
	ended  []chan struct{}
	// stopped[i] says that the scenarios after i do not start; it is
	// written before ended[i] is closed, and read after.
	stopped []bool
}

func newChain(scs []Scenario) *chain {
	c := &chain{scenarios: scs, before: make([]int, len(scs)), ended: make([]chan struct{}, len(scs)), stopped: make([]bool, len(scs))}
	index := make(map[string]int, len(scs))
	for i, sc := range scs {
		index[sc.Name] = i
		c.ended[i] = make(chan struct{})
	}
	for i, sc := range scs {
		c.before[i] = -1
		if sc.StartAfter != "" {
			c.before[i] = index[sc.StartAfter]
		}
	}
	return c
}

// awaitStart waits until scenario i may start: at once, or when the one
// it starts after ended. It reports false when ctx ended first or when
// the scenario is skipped: the one before it was, or stopped its chain.
// A skipped scenario passes the skip on to those after it.
func (c *chain) awaitStart(ctx context.Context, i int) bool {
	b := c.before[i]
	if b < 0 {
		return ctx.Err() == nil
	}
	select {
	case <-c.ended[b]:
	case <-ctx.Done():
		return false
	}
	if c.stopped[b] {
		c.stopped[i] = true
		return false
	}
	return ctx.Err() == nil
}

// hasNext reports whether a scenario starts after scenario i.
func (c *chain) hasNext(i int) bool { return len(c.after(i)) > 0 }

// stop skips the scenarios after scenario i (before it is marked ended).
func (c *chain) stop(i int) { c.stopped[i] = true }

// after names the scenarios that start after scenario i, directly or not,
// in the order they would start.
func (c *chain) after(i int) []string {
	var names []string
	for j := range c.scenarios {
		for b := c.before[j]; b >= 0; b = c.before[b] {
			if b == i {
				names = append(names, c.scenarios[j].Name)
				break
			}
		}
	}
	return names
}
