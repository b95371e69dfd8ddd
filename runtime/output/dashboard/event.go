// Package dashboard serves a run's live web dashboard: one embedded page
// (no CDN, works offline) and a server-sent-events stream of the run's
// figures, one event each period, read from the engine's Progress, the
// requests' window aggregates (runtime/window), the server readings
// (serverwatch), the thresholds' reading so far, the client's health
// (runtime/health) and a sweep's or search's levels as the run judged
// them. A client first gets the history so far (bounded), then
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
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
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
	// JoulesPerToken is the GPUs' energy per output token of the period:
	// their power at the last read (summed over the GPU targets) times
	// the period, over the output tokens that arrived in it; nil without
	// a power reading or tokens.
	JoulesPerToken *float64 `json:"joulesPerToken,omitempty"`
	// Thresholds are each threshold's reading so far; none when the
	// script sets none.
	Thresholds []Threshold `json:"thresholds,omitempty"`
	// Health are the warnings of the client's health over its last
	// reading (health.Report's words): that llmrun itself may not have
	// kept up; none when it did.
	Health []string `json:"health,omitempty"`
	// Levels are a sweep's or a capacity search's levels that have ended,
	// as the run judged them at their end, and SLO the objective they
	// were judged against (nil without one).
	Levels []Level `json:"levels,omitempty"`
	SLO    *SLO    `json:"slo,omitempty"`
	// Done says the run is over: the last event.
	Done bool `json:"done,omitempty"`
	// End says, on the last event, why the run ended before its plan
	// did (Dashboard.End): "interrupted (Ctrl-C or a signal)", "aborted
	// by its threshold llm_e2e p(90)<200 (abortOnFail)", ...; "" when it
	// ran its plan.
	End string `json:"end,omitempty"`
	// Instances are a distributed run's instances, on instance 0's
	// dashboard (whose figures are all instances' merged); nil otherwise.
	Instances []Instance `json:"instances,omitempty"`
	// ScenariosLeftOut is how many scenarios were left out of Scenarios
	// to keep the event within MaxEventSize; All counts them still.
	ScenariosLeftOut int `json:"scenariosLeftOut,omitempty"`
}

// Scenario is one scenario's progress and its figures of the interval.
type Scenario struct {
	Name  string `json:"name"`
	Phase string `json:"phase"`
	// Progress is the fraction of the scenario run and ETA the seconds
	// left (0 when not known), as the terminal's live view shows them
	// (engine.ScenarioProgress.Fraction and Remaining): an
	// iteration-based scenario's by its iterations too, one stopped
	// early's where it stopped.
	// Phase is "interrupted" once the run's stop cut it short.
	Progress   float64 `json:"progress"`
	ETA        float64 `json:"eta"`
	VUs        int64   `json:"vus"`
	MaxVUs     int     `json:"maxVUs"`
	Iterations int64   `json:"iterations"`
	// Dropped are the iterations an arrival-rate executor could not
	// start, since the scenario started; PeriodDropped those of the
	// period.
	Dropped       int64 `json:"dropped"`
	PeriodDropped int64 `json:"periodDropped"`
	// Lagged are the iterations an arrival-rate executor started in the
	// period, Lag their mean lag behind their plan in ms (0 without any).
	Lagged int64   `json:"lagged"`
	Lag    float64 `json:"lag"`
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
	// ITL are the percentiles of every inter-token gap, in ms.
	ITL Percentiles `json:"itl"`
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

// Threshold is one threshold's reading so far: its metric (with its
// selector) and expression as written, the value observed (nil when not
// evaluated yet: Note says why) and whether it is met.
type Threshold struct {
	Metric string   `json:"metric"`
	Source string   `json:"source"`
	Value  *float64 `json:"value,omitempty"`
	Unit   string   `json:"unit,omitempty"`
	Passed bool     `json:"passed"`
	Note   string   `json:"note,omitempty"`
}

// Level is a level of a sweep or a capacity search: its figures and,
// with an SLO, its verdict: "met" or "missed", and for a search's level
// "inconclusive" too (counted as not met); "" without an SLO.
type Level struct {
	Variable string  `json:"variable"`
	Level    float64 `json:"level"`
	Scenario string  `json:"scenario"`
	ReqRate  float64 `json:"reqRate"`
	TokRate  float64 `json:"tokRate"`
	TTFTP99  float64 `json:"ttftP99"`
	TPOTP99  float64 `json:"tpotP99"`
	Success  float64 `json:"success"`
	Verdict  string  `json:"verdict,omitempty"`
}

// SLO is the latency objective a sweep's levels are judged against, in
// ms; 0 where it sets none.
type SLO struct {
	TTFTP99 float64 `json:"ttftP99,omitempty"`
	TPOTP99 float64 `json:"tpotP99,omitempty"`
}

// healthWindow is the least time the client's health is judged over:
// shorter readings would warn of a moment's spike.
const healthWindow = 5 * time.Second

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
	// lags and dropped are each scenario's lag counters and dropped
	// iterations at the last event.
	lags    map[string]lagReading
	dropped map[string]int64
	// probe judges the client's health since probeStart; health is its
	// last reading (not measured before the first). The collector's is
	// the instance's one probe: its warnings go in the events, and
	// instance 0's line and another instance's report read it too.
	probe      *health.Probe
	probeStart time.Time
	health     health.Report
	// Progress and Servers read the run; Servers may be nil. thresholds
	// reads the thresholds so far, nil until ReadThresholds.
	progress   func() engine.Progress
	servers    func() []serverwatch.Now
	thresholds func() []threshold.Result
	// instances, on instance 0 of a distributed run, are the others'
	// figures (WithInstances); nil otherwise.
	instances *Instances
	// levels and slo are what SetLevels gave, under mu.
	levels []Level
	slo    *SLO
}

// lagReading is a scenario's lag counters at one reading.
type lagReading struct {
	n     int64
	total time.Duration
}

// NewCollector returns a collector of a run that starts at start.
func NewCollector(start time.Time, progress func() engine.Progress, servers func() []serverwatch.Now) *Collector {
	return &Collector{start: start, adding: map[string]*window.Aggregate{}, spare: map[string]*window.Aggregate{},
		tokens: map[string]int64{}, lags: map[string]lagReading{}, dropped: map[string]int64{},
		probe: health.Start(), probeStart: time.Now(), progress: progress, servers: servers}
}

// ReadThresholds has each event carry the thresholds' reading that
// read returns (engine.Engine.ThresholdsSoFar), taken once a period.
// Call it before the dashboard starts.
func (c *Collector) ReadThresholds(read func() []threshold.Result) { c.thresholds = read }

// SetLevels has the next events carry the levels of a sweep or a search
// that have ended, as the run judged them at a level's end (its capacity
// verdict so far: a search's with its levels' verdicts in Search). Safe
// to call while the dashboard runs.
func (c *Collector) SetLevels(capacity *summary.Capacity) {
	slo := capacity.SLO
	var objective *SLO
	if slo.TTFTP99 > 0 || slo.TPOTP99 > 0 {
		objective = &SLO{TTFTP99: slo.TTFTP99, TPOTP99: slo.TPOTP99}
	}
	out := make([]Level, len(capacity.Levels))
	for i, l := range capacity.Levels {
		out[i] = Level{Variable: capacity.Variable, Level: l.Level, Scenario: l.Scenario, ReqRate: l.RequestRate, TokRate: l.OutputThroughput,
			TTFTP99: l.TTFTP99, TPOTP99: l.TPOTP99, Success: l.SuccessRate}
		switch {
		case capacity.Search != nil:
			out[i].Verdict = capacity.Search.VerdictOf(l.Level)
		case objective == nil:
		case l.MeetsSLO:
			out[i].Verdict = "met"
		default:
			out[i].Verdict = "missed"
		}
	}
	c.mu.Lock()
	c.levels, c.slo = out, objective
	c.mu.Unlock()
}

// AddRequest counts a request that ended; it implements llm.RequestSink.
func (c *Collector) AddRequest(r *llm.Record) {
	name, _ := r.Tags.Get("scenario")
	c.mu.Lock()
	a := c.adding[name]
	if a == nil {
		a = &window.Aggregate{CountITL: true}
		c.adding[name] = a
	}
	a.Add(r)
	c.mu.Unlock()
}

// Next is the event of the period that ends at now, whose aggregates it
// empties for the next.
func (c *Collector) Next(now time.Time) Event { return c.event(now, false) }

// Last is the run's last event, at now, marked done: the run and, on
// instance 0 of a distributed run, instance 0 itself are over.
func (c *Collector) Last(now time.Time) Event { return c.event(now, true) }

// event is the event of the period that ends at now; done marks the
// run's last.
func (c *Collector) event(now time.Time, done bool) Event {
	p := c.progress()
	var servers []serverwatch.Now
	if c.servers != nil {
		servers = c.servers()
	}
	ended, levels, slo := c.swap()
	own := c.readHealth(now)
	others := c.instances.merge(ended, healthOf(own))
	elapsed := now.Sub(c.start)
	period := (elapsed - c.last).Seconds()
	c.last = elapsed
	ev := Event{V: Version, Elapsed: elapsed.Seconds(), Period: period, Levels: levels, SLO: slo,
		Thresholds: c.readThresholds(), Health: own.Warnings, Done: done}
	tokens := arrivedTokens(p)
	c.pooled.Reset()
	var pooledTokens int64
	for _, sp := range p.Scenarios {
		name := sp.Name
		if rd := p.Round; rd != nil {
			name = engine.RoundName(sp.Name, rd.Level)
			sp.Phase, sp.Elapsed, sp.Duration, sp.Iterations = engine.PhaseRunning, rd.Elapsed, rd.Duration, 0
		}
		s := Scenario{Name: name, Phase: string(sp.Phase), VUs: sp.ActiveVUs, MaxVUs: sp.MaxVUs, Iterations: sp.IterationsEnded,
			Progress: sp.Fraction(), Dropped: sp.NotStarted()}
		if left, ok := sp.Remaining(); ok {
			s.ETA = left.Seconds()
		}
		// The drop and lag counters are the scenario's since it started,
		// through a search's rounds: read against its last reading, by its
		// own name, not its round's.
		s.PeriodDropped = s.Dropped - c.dropped[sp.Name]
		c.dropped[sp.Name] = s.Dropped
		last := c.lags[sp.Name]
		if s.Lagged = sp.Lagged - last.n; s.Lagged > 0 {
			s.Lag = float64(sp.LagTotal-last.total) / float64(time.Millisecond) / float64(s.Lagged)
		}
		c.lags[sp.Name] = lagReading{sp.Lagged, sp.LagTotal}
		// As the terminal's live view: where a scenario the run's stop
		// cut stopped, not "done 100 %".
		if sp.StoppedEarly() {
			s.Phase = "interrupted"
		}
		newTokens := tokens[name] - c.tokens[name] + others.tokens[name]
		c.tokens[name] = tokens[name]
		others.add(&s)
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
	var power float64
	var powered bool
	for _, t := range servers {
		ev.Servers = append(ev.Servers, Server{Kind: t.Kind, URL: t.URL, Engine: t.EngineTitle, Failed: t.Failed,
			Running: t.Running, Waiting: t.Waiting, KVCache: t.KVCacheUsage, Preemptions: t.Preemptions,
			GPUUtil: t.Utilization, Power: t.Power})
		if t.Power != nil {
			power, powered = power+*t.Power, true
		}
	}
	if powered && pooledTokens > 0 {
		j := power * period / float64(pooledTokens)
		ev.JoulesPerToken = &j
	}
	ev.Instances = c.instances.list(now, c.start, done)
	return ev
}

// swap takes the aggregates of the period that ends, by scenario, and
// gives AddRequest the emptied ones of the last; with them the levels
// and SLO that SetLevels gave last.
func (c *Collector) swap() (map[string]*window.Aggregate, []Level, *SLO) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ended := c.adding
	c.adding, c.spare = c.spare, ended
	return ended, c.levels, c.slo
}

// arrivedTokens are the output tokens arrived so far by scenario.
func arrivedTokens(p engine.Progress) map[string]int64 {
	tokens := map[string]int64{}
	for _, t := range p.Arrived {
		tokens[t.Scenario] += t.Tokens
	}
	return tokens
}

// readThresholds is the thresholds' reading now; none without a reader.
func (c *Collector) readThresholds() []Threshold {
	if c.thresholds == nil {
		return nil
	}
	results := c.thresholds()
	out := make([]Threshold, len(results))
	for i, r := range results {
		out[i] = Threshold{Metric: r.Key, Source: r.Source, Unit: r.Unit, Passed: r.Passed, Note: r.Note}
		if r.Evaluated {
			v := r.Value
			out[i].Value = &v
		}
	}
	return out
}

// readHealth is the client's health: read anew, and its probe started
// again, once healthWindow has passed since its start, else the last
// reading (not measured before the first).
func (c *Collector) readHealth(now time.Time) health.Report {
	if now.Sub(c.probeStart) >= healthWindow {
		c.health = c.probe.Stop()
		c.probe, c.probeStart = health.Start(), now
	}
	return c.health
}

// figures are a's over period seconds, with tokens output tokens.
func figures(a *window.Aggregate, tokens int64, period float64) Figures {
	f := Figures{Requests: a.Requests, Failed: a.Failed, TTFT: percentiles(&a.TTFT), TPOT: percentiles(&a.TPOT), E2E: percentiles(&a.E2E),
		ITL: percentiles(&a.ITL)}
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
