package influxdb

import (
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
)

// Histograms hold microseconds, from 1 µs to an hour (longer values are
// recorded as an hour), to 3 significant digits.
const (
	histMax    = int64(time.Hour / time.Microsecond)
	histDigits = 3
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
	all *scenarioAgg
	// none is the figures of a scenario no request of which ended in the
	// interval, whose output tokens arrived all the same: always empty,
	// only the ticker uses it.
	none *scenarioAgg
}

// scenarioAgg is one scenario's figures over an interval. Its output
// tokens are not here: they are counted as they arrive (arrivals).
type scenarioAgg struct {
	requests, failed int64
	// promptTokens are the completed requests' prompt tokens.
	promptTokens int64
	// ttft, tpot and e2e are the completed requests' latencies, in µs.
	ttft, tpot, e2e *hdrhistogram.Histogram
	errors          map[string]int64
	// models is the scenario's entry of aggregates.models.
	models map[string]struct{}
}

// newAggregates returns empty aggregates.
func newAggregates() *aggregates {
	return &aggregates{cur: map[string]*scenarioAgg{}, models: map[string]map[string]struct{}{},
		all: newScenarioAgg(nil), none: newScenarioAgg(nil)}
}

// newScenarioAgg returns empty figures of a scenario whose models go to
// models.
func newScenarioAgg(models map[string]struct{}) *scenarioAgg {
	return &scenarioAgg{
		ttft:   hdrhistogram.New(1, histMax, histDigits),
		tpot:   hdrhistogram.New(1, histMax, histDigits),
		e2e:    hdrhistogram.New(1, histMax, histDigits),
		errors: map[string]int64{},
		models: models,
	}
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
		s = newScenarioAgg(ms)
		a.cur[name] = s
	}
	s.requests++
	if model != "" {
		s.models[model] = struct{}{}
	}
	if !r.OK {
		s.failed++
		s.errors[errorClass(r)]++
		return
	}
	s.promptTokens += int64(r.PromptTokens)
	record(s.ttft, r.TTFT)
	record(s.tpot, r.TPOT)
	record(s.e2e, r.E2E)
}

// record adds a latency in ms to a histogram, unless it is 0 (not
// measured).
func record(h *hdrhistogram.Histogram, ms float64) {
	if !(ms > 0) {
		return
	}
	us := int64(math.Round(ms * 1000))
	_ = h.RecordValue(min(max(us, 1), histMax)) // in range: never fails
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
		if s.requests == 0 {
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
	for _, name := range names {
		s := ended[name]
		if s == nil {
			s = a.none // tokens arrived, no request ended
		}
		points = append(points, s.point(tags, name, secs, end, arrived[name]))
		allArrived += arrived[name]
		a.all.merge(s)
		s.reset()
	}
	all := a.all.point(tags, allScenarios, secs, end, allArrived)
	if activeVUs >= 0 {
		all.AddField("active_vus", activeVUs)
	}
	a.all.reset()

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

// point is the llm_interval point of the figures and of the output tokens
// that arrived, over secs seconds.
func (s *scenarioAgg) point(tags runTags, scenario string, secs float64, end time.Time, arrived int64) *write.Point {
	p := tags.point(mInterval, end, "scenario", scenario)
	p.AddField("requests", s.requests)
	p.AddField("failed", s.failed)
	if secs > 0 {
		addFloat(p, "req_per_s", float64(s.requests)/secs)
		addFloat(p, "output_tok_per_s", float64(arrived)/secs)
		addFloat(p, "total_tok_per_s", float64(arrived+s.promptTokens)/secs)
	}
	percentiles(p, "ttft", s.ttft, "p50", "p90", "p99")
	percentiles(p, "tpot", s.tpot, "p50", "p99")
	percentiles(p, "e2e", s.e2e, "p50", "p99")
	for class, n := range s.errors {
		p.AddField("errors_"+class, n)
	}
	return p.SortFields()
}

// quantiles are the percentiles of the names percentiles takes.
var quantiles = map[string]float64{"p50": 50, "p90": 90, "p99": 99}

// percentiles adds the fields name_pNN of a histogram's percentiles, in
// ms, unless it is empty.
func percentiles(p *write.Point, name string, h *hdrhistogram.Histogram, ps ...string) {
	if h.TotalCount() == 0 {
		return
	}
	qs := make([]float64, len(ps))
	for i, q := range ps {
		qs[i] = quantiles[q]
	}
	for i, v := range h.ValueAtPercentilesSlice(qs) {
		p.AddField(name+"_"+ps[i], float64(v)/1000)
	}
}

// merge adds another scenario's figures to s.
func (s *scenarioAgg) merge(o *scenarioAgg) {
	s.requests += o.requests
	s.failed += o.failed
	s.promptTokens += o.promptTokens
	s.ttft.Merge(o.ttft)
	s.tpot.Merge(o.tpot)
	s.e2e.Merge(o.e2e)
	for class, n := range o.errors {
		s.errors[class] += n
	}
}

// reset empties the figures for the next interval.
func (s *scenarioAgg) reset() {
	s.requests, s.failed, s.promptTokens = 0, 0, 0
	s.ttft.Reset()
	s.tpot.Reset()
	s.e2e.Reset()
	clear(s.errors)
}

// arrivals turns the run's cumulative counts of arrived output tokens
// (output.Progress.OutputTokens) into those of each interval, by
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
