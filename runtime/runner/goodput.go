package runner

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// ParseGoodput parses per-request goodput bounds as --goodput takes them
// (threshold.Goodput): KEY:VALUE pairs, as vLLM's --goodput, separated by
// commas or spaces, the keys ttft, tpot and e2e (or vLLM's e2el), each
// value a positive number of milliseconds (500) or a duration (500ms,
// 1.5s). "ttft:500,tpot:50".
func ParseGoodput(s string) (summary.GoodputBounds, error) {
	objectives, err := threshold.Goodput.Parse(s)
	return boundsOf(objectives, goodputFields), err
}

// goodputFields are where each metric's bound of threshold.Goodput goes.
var goodputFields = map[string]func(*summary.GoodputBounds) *float64{
	"llm_ttft": func(b *summary.GoodputBounds) *float64 { return &b.TTFT },
	"llm_tpot": func(b *summary.GoodputBounds) *float64 { return &b.TPOT },
	"llm_e2e":  func(b *summary.GoodputBounds) *float64 { return &b.E2E },
}

// Goodput returns the run's per-request goodput bounds: bounds when any
// is set (--goodput), else the script's options.goodput ({ ttft: 500,
// tpot: '50ms', e2e: 10000 }, or the text --goodput takes). Errors are
// *engine.ConfigError naming the field.
func Goodput(o engine.Options, bounds summary.GoodputBounds) (summary.GoodputBounds, error) {
	if !bounds.IsZero() || len(o.Goodput) == 0 || bytes.Equal(o.Goodput, []byte("null")) {
		return bounds, nil
	}
	fromScript, err := goodputOption(o.Goodput)
	if err != nil {
		return bounds, &engine.ConfigError{Field: "options.goodput", Err: err}
	}
	return fromScript, nil
}

func goodputOption(raw json.RawMessage) (summary.GoodputBounds, error) {
	objectives, err := threshold.Goodput.ParseOption(raw)
	return boundsOf(objectives, goodputFields), err
}

// goodputCounter counts, per scenario, the requests that ended and those
// that met the bounds. Records come from every VU: a scenario's counts
// are found without a lock once it has them.
type goodputCounter struct {
	bounds    summary.GoodputBounds
	scenarios sync.Map // scenario name → *goodputCounts
}

type goodputCounts struct{ good, requests atomic.Int64 }

// AddRequest implements llm.RequestSink; warmup requests make no record.
func (g *goodputCounter) AddRequest(r *llm.Record) {
	name, _ := r.Tags.Get("scenario")
	c, ok := g.scenarios.Load(name)
	if !ok {
		c, _ = g.scenarios.LoadOrStore(name, new(goodputCounts))
	}
	counts := c.(*goodputCounts)
	counts.requests.Add(1)
	if r.OK && g.bounds.Good(r.TTFT, r.TPOT, r.E2E) {
		counts.good.Add(1)
	}
}

// set puts the counts into the summary's serving blocks: the run's, and
// each scenario's.
func (g *goodputCounter) set(sum *summary.Summary) {
	var good, requests int64
	g.scenarios.Range(func(_, c any) bool {
		counts := c.(*goodputCounts)
		good += counts.good.Load()
		requests += counts.requests.Load()
		return true
	})
	sum.Serving.SetGoodput(g.bounds, good, requests)
	for i := range sum.Scenarios {
		sc := &sum.Scenarios[i]
		var good, requests int64
		if c, ok := g.scenarios.Load(sc.Name); ok {
			good, requests = c.(*goodputCounts).good.Load(), c.(*goodputCounts).requests.Load()
		}
		sc.Serving.SetGoodput(g.bounds, good, requests)
	}
}
