package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

// goodputKeys are the bounds --goodput and options.goodput know, with
// where each goes; e2el is vLLM's name of e2e.
var goodputKeys = map[string]func(*summary.GoodputBounds) *float64{
	"ttft": func(b *summary.GoodputBounds) *float64 { return &b.TTFT },
	"tpot": func(b *summary.GoodputBounds) *float64 { return &b.TPOT },
	"e2e":  func(b *summary.GoodputBounds) *float64 { return &b.E2E },
	"e2el": func(b *summary.GoodputBounds) *float64 { return &b.E2E },
}

const goodputWant = "want KEY:MS pairs such as ttft:500,tpot:50,e2el:10000 (keys ttft, tpot, e2e or e2el)"

// ParseGoodput parses per-request goodput bounds as --goodput takes them:
// KEY:VALUE pairs, as vLLM's --goodput, separated by commas or spaces,
// the keys ttft, tpot and e2e (or vLLM's e2el), each value a positive
// number of milliseconds (500) or a duration (500ms, 1.5s).
// "ttft:500,tpot:50".
func ParseGoodput(s string) (summary.GoodputBounds, error) {
	var b summary.GoodputBounds
	pairs := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(pairs) == 0 {
		return b, errors.New("empty: " + goodputWant)
	}
	seen := map[*float64]bool{}
	for _, pair := range pairs {
		key, value, ok := strings.Cut(pair, ":")
		field, known := goodputKeys[key]
		switch {
		case !ok:
			return summary.GoodputBounds{}, fmt.Errorf("%q: %s", pair, goodputWant)
		case !known:
			return summary.GoodputBounds{}, fmt.Errorf("%q: unknown metric; want ttft, tpot, e2e or e2el", key)
		case seen[field(&b)]:
			return summary.GoodputBounds{}, fmt.Errorf("%s given twice", key)
		}
		seen[field(&b)] = true
		ms, err := parseMillis(value)
		if err != nil {
			return summary.GoodputBounds{}, fmt.Errorf("%s: %w", key, err)
		}
		*field(&b) = ms
	}
	return b, nil
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
	return millisOption(raw, goodputKeys, ParseGoodput,
		"want an object such as { ttft: 500, tpot: 50, e2e: 10000 } (milliseconds)", "unknown metric; want ttft, tpot, e2e or e2el")
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
