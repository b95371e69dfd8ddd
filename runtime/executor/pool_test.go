package executor

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// testPool is a Pool over fixed VUs that records what the executor
// reports. When mk is set, NewVU returns mk() after initDelay.
type testPool struct {
	pre       []VU
	mk        func() VU
	initDelay time.Duration

	created atomic.Int64
	dropped atomic.Int64
	byCause [DropCauses]atomic.Int64
	mu      sync.Mutex
	lags    []time.Duration
	warns   []string
}

func fixed(vs []VU) *testPool { return &testPool{pre: vs} }

func (p *testPool) VUs() []VU { return p.pre }

func (p *testPool) NewVU(ctx context.Context) (VU, error) {
	if p.mk == nil {
		return nil, errors.New("test pool: no VU may be created")
	}
	if p.initDelay > 0 {
		select {
		case <-time.After(p.initDelay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.created.Add(1)
	return p.mk(), nil
}

func (p *testPool) IterationLag(_ VU, d time.Duration) {
	p.mu.Lock()
	p.lags = append(p.lags, d)
	p.mu.Unlock()
}

func (p *testPool) DroppedIterations(n int, cause DropCause) {
	p.dropped.Add(int64(n))
	p.byCause[cause].Add(int64(n))
}

func (p *testPool) Warn(msg string) {
	p.mu.Lock()
	p.warns = append(p.warns, msg)
	p.mu.Unlock()
}

func (p *testPool) recorded() (lags []time.Duration, warns []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.lags...), append([]string(nil), p.warns...)
}

// flightVU is a VU whose iterations last work; it counts iterations and,
// through a shared gauge, the iterations in flight and their peak.
type flightVU struct {
	work     time.Duration
	inFlight *atomic.Int64
	peak     *atomic.Int64
	started  *atomic.Int64
	done     *atomic.Int64
}

func (v *flightVU) RunIteration(ctx context.Context) {
	v.started.Add(1)
	n := v.inFlight.Add(1)
	for {
		p := v.peak.Load()
		if n <= p || v.peak.CompareAndSwap(p, n) {
			break
		}
	}
	defer v.inFlight.Add(-1)
	if v.work <= 0 {
		v.done.Add(1)
		return
	}
	t := time.NewTimer(v.work)
	defer t.Stop()
	select {
	case <-t.C:
		v.done.Add(1)
	case <-ctx.Done():
	}
}

// flight is a family of flightVUs sharing their counters.
type flight struct {
	work                          time.Duration
	inFlight, peak, started, done atomic.Int64
}

func (f *flight) vu() VU {
	return &flightVU{work: f.work, inFlight: &f.inFlight, peak: &f.peak, started: &f.started, done: &f.done}
}

func (f *flight) vus(n int) []VU {
	out := make([]VU, n)
	for i := range out {
		out[i] = f.vu()
	}
	return out
}

// decodeStrictForTest decodes js into cfg as the options parser does,
// refusing unknown fields.
func decodeStrictForTest(js string, cfg Config) error {
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(cfg)
}
