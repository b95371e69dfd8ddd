// Package dashboard serves a run's live web dashboard: one embedded page
// (no CDN, works offline) and a server-sent-events stream of the run's
// figures, one event each period, read from the engine's Progress, the
// requests' window aggregates (runtime/window) and the server readings
// (serverwatch). A client first gets the history so far (bounded), then
// live events; a slow client's events are dropped and counted, never
// waited for.
package dashboard

import (
	"maps"
	"sync"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/window"
)

// Version is the version of the event's shape; a reader of events checks
// it (a recorded stream outlives the binary that wrote it).
const Version = 1

// Event is what one period of the run sends to the page.
type Event struct {
	V int `json:"v"`
	// Elapsed is the seconds since the dashboard's run started; Period the
	// seconds the interval figures cover.
	Elapsed float64 `json:"t"`
	Period  float64 `json:"period"`
	// Scenarios are each scenario's progress and figures of the
	// interval, All the scenarios' pooled.
	Scenarios []Scenario `json:"scenarios"`
	All       Figures    `json:"all"`
	// Servers are the run's scrape targets at their last read.
	Servers []Server `json:"servers,omitempty"`
	// Done says the run is over: the last event.
	Done bool `json:"done,omitempty"`
	// ScenariosLeftOut is how many scenarios were left out of Scenarios
	// to keep the event within MaxEventSize; All counts them still.
	ScenariosLeftOut int `json:"scenariosLeftOut,omitempty"`
}

// Scenario is one scenario's progress and its figures of the interval.
type Scenario struct {
	Name  string `json:"name"`
	Phase string `json:"phase"`
	// Progress is the fraction of its duration run; ETA the seconds left
	// (0 when not known).
	Progress   float64 `json:"progress"`
	ETA        float64 `json:"eta"`
	VUs        int64   `json:"vus"`
	MaxVUs     int     `json:"maxVUs"`
	Iterations int64   `json:"iterations"`
	// Dropped are the iterations an arrival-rate executor could not
	// start, since the scenario started.
	Dropped int64 `json:"dropped"`
	Figures
}

// Figures are the requests that ended in an interval.
type Figures struct {
	Requests int64            `json:"requests"`
	Failed   int64            `json:"failed"`
	Errors   map[string]int64 `json:"errors,omitempty"`
	// ReqRate is requests/s, TokRate output tokens/s over the interval.
	ReqRate float64 `json:"reqRate"`
	TokRate float64 `json:"tokRate"`
	// TTFT, TPOT and E2E are the successful requests' percentiles in ms.
	TTFT Percentiles `json:"ttft"`
	TPOT Percentiles `json:"tpot"`
	E2E  Percentiles `json:"e2e"`
}

// Percentiles are p50, p90 and p99; all 0 when nothing was measured.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// Server is a scrape target at its last read; figures it did not report
// are nil.
type Server struct {
	Kind        string   `json:"kind"`
	URL         string   `json:"url"`
	Engine      string   `json:"engine,omitempty"`
	Failed      string   `json:"failed,omitempty"`
	Running     *float64 `json:"running,omitempty"`
	Waiting     *float64 `json:"waiting,omitempty"`
	KVCache     *float64 `json:"kvCache,omitempty"`
	Preemptions *float64 `json:"preemptions,omitempty"`
	GPUUtil     *float64 `json:"gpuUtil,omitempty"`
	Power       *float64 `json:"power,omitempty"`
}

// Collector gathers the requests that end in each period into window
// aggregates, a scenario each, and turns them with the run's progress
// into an Event. AddRequest is safe for concurrent use; Next is called by
// one goroutine at a time.
type Collector struct {
	mu sync.Mutex
	// adding are the aggregates of the period AddRequest counts into, by
	// scenario. Next swaps them with spare under mu and reads and empties
	// them outside it: merging and reading histograms takes milliseconds,
	// which the requests that end meanwhile do not wait for.
	adding map[string]*window.Aggregate

	// Next's own: the aggregates it emptied, the elapsed time and output
	// tokens at its last event, and the pooled figures it reuses.
	spare  map[string]*window.Aggregate
	start  time.Time
	last   time.Duration
	tokens map[string]int64
	pooled window.Aggregate
	// Progress and Servers read the run; Servers may be nil.
	progress func() engine.Progress
	servers  func() []serverwatch.Now
}

// NewCollector returns a collector of a run that starts at start.
func NewCollector(start time.Time, progress func() engine.Progress, servers func() []serverwatch.Now) *Collector {
	return &Collector{start: start, adding: map[string]*window.Aggregate{}, spare: map[string]*window.Aggregate{},
		tokens: map[string]int64{}, progress: progress, servers: servers}
}

// AddRequest counts a request that ended; it implements llm.RequestSink.
func (c *Collector) AddRequest(r *llm.Record) {
	name, _ := r.Tags.Get("scenario")
	c.mu.Lock()
	a := c.adding[name]
	if a == nil {
		a = &window.Aggregate{}
		c.adding[name] = a
	}
	a.Add(r)
	c.mu.Unlock()
}

// Next is the event of the period that ends at now, whose aggregates it
// empties for the next.
func (c *Collector) Next(now time.Time) Event {
	p := c.progress()
	var servers []serverwatch.Now
	if c.servers != nil {
		servers = c.servers()
	}
	c.mu.Lock()
	ended := c.adding
	c.adding, c.spare = c.spare, ended
	c.mu.Unlock()
	elapsed := now.Sub(c.start)
	period := (elapsed - c.last).Seconds()
	c.last = elapsed
	ev := Event{V: Version, Elapsed: elapsed.Seconds(), Period: period}
	tokens := map[string]int64{}
	for _, t := range p.Arrived {
		tokens[t.Scenario] += t.Tokens
	}
	c.pooled.Reset()
	var pooledTokens int64
	for _, sp := range p.Scenarios {
		name := sp.Name
		if rd := p.Round; rd != nil {
			name = engine.RoundName(sp.Name, rd.Level)
			sp.Phase, sp.Elapsed, sp.Duration = engine.PhaseRunning, rd.Elapsed, rd.Duration
		}
		s := Scenario{Name: name, Phase: string(sp.Phase), VUs: sp.ActiveVUs, MaxVUs: sp.MaxVUs, Iterations: sp.IterationsEnded}
		for _, d := range sp.Dropped {
			s.Dropped += d
		}
		if sp.Duration > 0 {
			s.Progress = min(sp.Elapsed.Seconds()/sp.Duration.Seconds(), 1)
			s.ETA = max(sp.Duration-sp.Elapsed, 0).Seconds()
		}
		if sp.Phase == engine.PhaseDone {
			s.Progress, s.ETA = 1, 0
		}
		newTokens := tokens[name] - c.tokens[name]
		c.tokens[name] = tokens[name]
		pooledTokens += newTokens
		if a := ended[name]; a != nil {
			s.Figures = figures(a, newTokens, period)
		} else {
			s.Figures = figures(&window.Aggregate{}, newTokens, period)
		}
		ev.Scenarios = append(ev.Scenarios, s)
	}
	// Pooled: every request of the period, a scenario's not running (a
	// search's round that just ended) too.
	for _, a := range ended {
		c.pooled.Merge(a)
		a.Reset()
	}
	ev.All = figures(&c.pooled, pooledTokens, period)
	for _, t := range servers {
		ev.Servers = append(ev.Servers, Server{Kind: t.Kind, URL: t.URL, Engine: t.EngineTitle, Failed: t.Failed,
			Running: t.Running, Waiting: t.Waiting, KVCache: t.KVCacheUsage, Preemptions: t.Preemptions,
			GPUUtil: t.Utilization, Power: t.Power})
	}
	return ev
}

// figures are a's over period seconds, with tokens output tokens.
func figures(a *window.Aggregate, tokens int64, period float64) Figures {
	f := Figures{Requests: a.Requests, Failed: a.Failed, TTFT: percentiles(&a.TTFT), TPOT: percentiles(&a.TPOT), E2E: percentiles(&a.E2E)}
	if len(a.Errors) > 0 {
		f.Errors = maps.Clone(a.Errors)
	}
	if period > 0 {
		f.ReqRate, f.TokRate = float64(a.Requests)/period, float64(tokens)/period
	}
	return f
}

func percentiles(l *metrics.Latencies) Percentiles {
	if l.Count() == 0 {
		return Percentiles{}
	}
	return Percentiles{P50: l.Percentile(50), P90: l.Percentile(90), P99: l.Percentile(99)}
}
