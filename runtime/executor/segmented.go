package executor

import "github.com/llmrun/llmrun/runtime/executor/segment"

// This file implements Config.Segment for every executor: the VUs and
// iterations of a part are its share (segment.Part.Scale) of the whole
// plan's, so that the parts of a sequence add up to the whole exactly; an
// arrival-rate part starts the arrivals of the whole plan's schedule it
// owns (Schedule.part). Where a part would get no VU at all for work it
// must do (iterations of shared-iterations, arrivals), it gets one.

// Segment implements Config.
func (c *ConstantVUs) Segment(p segment.Part) Config {
	out := *c
	out.VUs = p.ScaleInt(c.VUs)
	return &out
}

// Segment implements Config: VUs and active VUs at any time are the
// part's share of the whole plan's.
func (c *RampingVUs) Segment(p segment.Part) Config {
	out := *c
	out.part = p
	return &out
}

// Segment implements Config: the part's share of the iterations, shared
// among its share of the VUs.
func (c *SharedIterations) Segment(p segment.Part) Config {
	out := *c
	out.Iterations = p.ScaleInt(c.Iterations)
	out.VUs = p.ScaleInt(c.VUs)
	if out.VUs == 0 && out.Iterations > 0 {
		out.VUs = 1
	}
	return &out
}

// Segment implements Config: the part's share of the VUs, each running
// the iterations of every VU.
func (c *PerVUIterations) Segment(p segment.Part) Config {
	out := *c
	out.VUs = p.ScaleInt(c.VUs)
	return &out
}

// Segment implements Config: the part's arrivals, iterations and VUs.
func (c *ConstantArrivalRate) Segment(p segment.Part) Config {
	out := *c
	out.arrivalFields = c.arrivalFields.segment(p)
	return &out
}

// Segment implements Config: the part's arrivals and VUs.
func (c *RampingArrivalRate) Segment(p segment.Part) Config {
	out := *c
	out.arrivalFields = c.arrivalFields.segment(p)
	return &out
}

// segment returns the fields of part p: its share of the VUs (at least one
// may run) and of maxConcurrency (at least one in flight).
func (f arrivalFields) segment(p segment.Part) arrivalFields {
	out := f
	out.part = p
	pre := p.ScaleInt(f.PreAllocatedVUs())
	maxVUs := max(1, p.ScaleInt(f.MaxVUs()))
	out.PreAllocated, out.MaxAllowedVUs = &pre, &maxVUs
	if f.MaxConcurrency != nil {
		n := max(1, p.ScaleInt(*f.MaxConcurrency))
		out.MaxConcurrency = &n
	}
	return out
}
