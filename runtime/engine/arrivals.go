package engine

import (
	"cmp"
	"slices"
	"sync"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
)

// TokenCount is how many output tokens of one scenario and model have
// arrived since the run started.
type TokenCount struct {
	Scenario, Model string
	Tokens          int64
}

// tokenArrivals counts the output tokens of a run's LLM requests as they
// arrive, warmup excluded, in one sharded counter per scenario and model
// (the llm module's Hooks.Arrivals).
// The counts only grow: readers take differences between their readings.
type tokenArrivals struct {
	shards int

	mu       sync.Mutex
	counters map[arrivalKey]*metrics.ShardedCounter
}

var _ llm.ArrivalCounters = (*tokenArrivals)(nil)

// arrivalKey is a scenario and a model.
type arrivalKey struct{ scenario, model string }

// newTokenArrivals returns counters of the given number of shards each.
func newTokenArrivals(shards int) *tokenArrivals {
	return &tokenArrivals{shards: shards, counters: map[arrivalKey]*metrics.ShardedCounter{}}
}

// Counter returns the counter of a scenario and model, making it the
// first time. It implements llm.ArrivalCounters.
func (a *tokenArrivals) Counter(scenario, model string) *metrics.ShardedCounter {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := arrivalKey{scenario, model}
	c := a.counters[k]
	if c == nil {
		c = metrics.NewShardedCounter(a.shards)
		a.counters[k] = c
	}
	return c
}

// counts returns the count of each scenario and model that has one, sorted
// by scenario then model, and their sum.
func (a *tokenArrivals) counts() ([]TokenCount, int64) {
	a.mu.Lock()
	out := make([]TokenCount, 0, len(a.counters))
	for k, c := range a.counters {
		out = append(out, TokenCount{Scenario: k.scenario, Model: k.model, Tokens: c.Total()})
	}
	a.mu.Unlock()
	slices.SortFunc(out, func(x, y TokenCount) int {
		return cmp.Or(cmp.Compare(x.Scenario, y.Scenario), cmp.Compare(x.Model, y.Model))
	})
	var total int64
	for _, c := range out {
		total += c.Tokens
	}
	return out, total
}
