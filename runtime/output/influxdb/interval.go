package influxdb

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/window"
)

// defaultScenario names the scenario of a record without a scenario tag.
const defaultScenario = "default"

// aggregates are the figures of the current interval, per scenario, which
// AddRequest updates and the interval ticker turns into llm_interval
// points. The ticker swaps the current set for a spare one under the lock
// and computes outside it, so AddRequest only ever waits for a few counter
// updates.
type aggregates struct {
	mu    sync.Mutex
	cur   map[string]*scenarioAgg
	spare map[string]*scenarioAgg
	// models are each scenario's models over the whole run, for llm_run.
	models map[string]map[string]struct{}
	// all sums the scenarios for the _all point; only the ticker uses it.
	all window.Aggregate
}

// scenarioAgg is one scenario's figures over an interval. Its output
// tokens are not here: they are counted as they arrive (arrivals).
type scenarioAgg struct {
	ended window.Aggregate
	// models is the scenario's entry of aggregates.models.
	models map[string]struct{}
}

// newAggregates returns empty aggregates.
func newAggregates() *aggregates {
	return &aggregates{cur: map[string]*scenarioAgg{}, models: map[string]map[string]struct{}{}}
}

// add counts one request.
func (a *aggregates) add(r *llm.Record) {
	name, _ := r.Tags.Get("scenario")
	if name == "" {
		name = defaultScenario
	}
	model, _ := r.Tags.Get("model")
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.cur[name]
	if s == nil {
		ms := a.models[name]
		if ms == nil {
			ms = map[string]struct{}{}
			a.models[name] = ms
		}
		s = &scenarioAgg{models: ms}
		a.cur[name] = s
	}
	if model != "" {
		s.models[model] = struct{}{}
	}
	s.ended.Add(r)
}

// interval returns the llm_interval points of the interval (start, end]
// and starts the next: one per scenario that had requests end or output
// tokens arrive (arrived, by scenario), and the _all point, with
// activeVUs when known (>= 0).
func (a *aggregates) interval(tags runTags, start, end time.Time, activeVUs int, arrived map[string]int64) []*write.Point {
	a.mu.Lock()
	ended := a.cur
	a.cur, a.spare = a.spare, nil
	if a.cur == nil {
		a.cur = map[string]*scenarioAgg{}
	}
	a.mu.Unlock()

	for name, s := range ended {
		if s.ended.Requests == 0 {
			delete(ended, name) // idle: free its histograms
		}
	}
	names := slices.Collect(maps.Keys(ended))
	for name := range arrived {
		if ended[name] == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	secs := end.Sub(start).Seconds()
	var points []*write.Point
	var allArrived int64
	// idle is the figures of a scenario that had tokens arrive and no
	// request end.
	var idle window.Aggregate
	for _, name := range names {
		fig := &idle
		if s := ended[name]; s != nil {
			fig = &s.ended
		}
		points = append(points, intervalPoint(tags, name, fig, secs, end, arrived[name]))
		allArrived += arrived[name]
		a.all.Merge(fig)
		fig.Reset()
	}
	all := intervalPoint(tags, allScenarios, &a.all, secs, end, allArrived)
	if activeVUs >= 0 {
		all.AddField("active_vus", activeVUs)
	}
	a.all.Reset()

	a.mu.Lock()
	a.spare = ended
	a.mu.Unlock()
	return append(points, all)
}

// scenarioModels returns each scenario's models, sorted.
func (a *aggregates) scenarioModels() map[string][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string][]string, len(a.models))
	for name, ms := range a.models {
		out[name] = slices.Sorted(maps.Keys(ms))
	}
	return out
}

// intervalPoint is the llm_interval point of a scenario's figures and of
// its output tokens that arrived, over secs seconds.
func intervalPoint(tags runTags, scenario string, fig *window.Aggregate, secs float64, end time.Time, arrived int64) *write.Point {
	p := tags.point(mInterval, end, "scenario", scenario)
	p.AddField("requests", fig.Requests)
	p.AddField("failed", fig.Failed)
	if secs > 0 {
		addFloat(p, "req_per_s", float64(fig.Requests)/secs)
		addFloat(p, "output_tok_per_s", float64(arrived)/secs)
		addFloat(p, "total_tok_per_s", float64(arrived+fig.PromptTokens)/secs)
	}
	percentiles(p, "ttft", &fig.TTFT, "p50", "p90", "p99")
	percentiles(p, "tpot", &fig.TPOT, "p50", "p99")
	percentiles(p, "e2e", &fig.E2E, "p50", "p99")
	for class, n := range fig.Errors {
		p.AddField("errors_"+class, n)
	}
	return p.SortFields()
}

// quantiles are the percentiles of the names percentiles takes.
var quantiles = map[string]float64{"p50": 50, "p90": 90, "p99": 99}

// percentiles adds the fields name_pNN of latencies' percentiles, in ms,
// unless there are none.
func percentiles(p *write.Point, name string, l *metrics.Latencies, ps ...string) {
	if l.Count() == 0 {
		return
	}
	for _, q := range ps {
		p.AddField(name+"_"+q, l.Percentile(quantiles[q]))
	}
}

// arrivals turns the run's cumulative counts of arrived output tokens
// (engine.Progress.Arrived) into those of each interval, by
// scenario. Only the interval ticker uses it.
type arrivals struct {
	// last is each scenario's count at the last reading.
	last map[string]int64
}

// since returns the output tokens of each scenario that arrived since the
// last reading, counts, leaving out scenarios with none.
func (a *arrivals) since(counts []engine.TokenCount) map[string]int64 {
	now := make(map[string]int64, len(a.last))
	for _, c := range counts {
		name := c.Scenario
		if name == "" {
			name = defaultScenario
		}
		now[name] += c.Tokens
	}
	out := make(map[string]int64, len(now))
	for name, n := range now {
		if d := n - a.last[name]; d > 0 {
			out[name] = d
		}
	}
	a.last = now
	return out
}
