package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/executor"
)

// scenarioPool is the executor.Pool of one running scenario: the VUs
// initialised for it before the run, VUs initialised on demand, and the
// sink of what its executor reports (iteration_lag, dropped_iterations,
// warnings).
type scenarioPool struct {
	e     *Engine
	sc    *Scenario
	index int
	vus   []executor.VU
	setup []byte
	tags  *metrics.TagSet
	sink  metrics.Sink
	live  *scenarioLive
	// shared, in a capacity search, are the VUs every round of the
	// scenario uses in turn; nil otherwise.
	shared *sharedVUs
}

// newPool binds vus, the VUs initialised for scenario i, to it.
func (e *Engine) newPool(i int, vus []*vu, setupJSON []byte) (*scenarioPool, error) {
	sc := &e.scenarios[i]
	p := &scenarioPool{
		e:     e,
		sc:    sc,
		index: i,
		vus:   make([]executor.VU, len(vus)),
		setup: setupJSON,
		tags:  metrics.NewTagSet(scenarioTags(sc, e.options.Tags)),
		sink:  e.agg.Shard(i),
		live:  e.live[i],
	}
	for j, v := range vus {
		if err := v.bind(sc, p.tags, setupJSON, p.live); err != nil {
			return nil, err
		}
		p.vus[j] = v
	}
	return p, nil
}

// VUs implements executor.Pool.
func (p *scenarioPool) VUs() []executor.VU { return p.vus }

// NewVU implements executor.Pool: it initialises a VU with the next ID,
// runs the script's init code in it and binds it to the scenario.
func (p *scenarioPool) NewVU(ctx context.Context) (executor.VU, error) {
	if p.shared != nil {
		if v, err := p.shared.spare(p); v != nil || err != nil {
			return v, err
		}
	}
	id := p.e.nextVUID.Add(1)
	v, err := p.e.newVU(ctx, id, p.e.envs[p.index])
	if err != nil {
		return nil, fmt.Errorf("initialising VU %d for scenario %s: %w", id, p.sc.Name, err)
	}
	if err := v.bind(p.sc, p.tags, p.setup, p.live); err != nil {
		return nil, err
	}
	if p.shared != nil {
		p.shared.keep(v)
	}
	return v, nil
}

// IterationLag implements executor.Pool: the VU, one of this pool's,
// records the lag when its next iteration starts, unless that iteration
// is warmup.
func (p *scenarioPool) IterationLag(v executor.VU, lag time.Duration) {
	u := v.(*vu)
	u.lag, u.lagged = lag, true
}

// DroppedIterations implements executor.Pool. Arrivals dropped while the
// scenario is still in its warmup are left out, as warmup is of every
// figure.
func (p *scenarioPool) DroppedIterations(n int, cause executor.DropCause) {
	now := time.Now()
	if p.live.warmup.warming(now) {
		return
	}
	p.live.dropped[cause].Add(int64(n))
	p.sink.AddSamples([]metrics.Sample{{Metric: p.e.run.builtin.droppedIterations, Tags: p.tags, Time: now, Value: float64(n)}})
}

// Warn implements executor.Pool: the warning goes to the run's logger
// (stderr), naming the scenario.
func (p *scenarioPool) Warn(msg string) {
	p.e.log().Warn(msg, "scenario", p.sc.Name)
}

// log is the run's logger (stderr): Config.Logger, else slog's default.
func (e *Engine) log() *slog.Logger {
	if e.cfg.Logger == nil {
		return slog.Default()
	}
	return e.cfg.Logger
}
