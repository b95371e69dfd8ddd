package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/llmrun/llmrun/internal/redact"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/window"
)

// The states of an instance of a distributed run.
const (
	InstanceRunning = "running"
	InstanceDone    = "done"
	InstanceLost    = "lost"
)

// Bounds of what instance 0 takes from another instance's report.
const (
	// maxReportScenarios bounds the scenarios of one instance's reports
	// (a plan has as many on every instance).
	maxReportScenarios = 256
	// maxReportErrors bounds a scenario's error classes in a report.
	maxReportErrors = 64
	// maxReportText bounds a name or a health cause in bytes.
	maxReportText = 256
	// MaxListedInstances bounds the instances an event lists, so that
	// it stays within MaxEventSize: instance 0, then the lost ones, then
	// the others by index.
	MaxListedInstances = 50
)

// Instance is one instance of a distributed run as instance 0 last heard
// of it.
type Instance struct {
	Index int    `json:"index"`
	State string `json:"state"`
	// LastHeard is the seconds since its figures last arrived (since the
	// dashboard started, when none have).
	LastHeard float64 `json:"lastHeard"`
	// Requests are the requests it ended so far, in the events' figures
	// (a report heard after an event counts in the next).
	Requests int64 `json:"requests"`
	// Health is its client-health line of its last period; Limited says
	// the client did not keep up (health.Report.Limit).
	Health  string `json:"health"`
	Limited bool   `json:"limited,omitempty"`
	// Lost says why it was lost, LostAt when, in seconds since the
	// dashboard started.
	Lost   string  `json:"lost,omitempty"`
	LostAt float64 `json:"lostAt,omitempty"`
}

// report is what an instance other than 0 sends instance 0 every period:
// each scenario's window aggregate of the period, its progress and the
// output tokens that arrived in it, and the client's health over it.
type report struct {
	Scenarios []reportScenario `json:"scenarios"`
	Health    reportHealth     `json:"health"`
	// Done says the instance's run is over: its last report.
	Done bool `json:"done,omitempty"`
}

type reportScenario struct {
	Name         string           `json:"name"`
	VUs          int64            `json:"vus"`
	MaxVUs       int              `json:"maxVUs"`
	Iterations   int64            `json:"iterations"`
	Dropped      int64            `json:"dropped"`
	Tokens       int64            `json:"tokens"`
	Requests     int64            `json:"requests"`
	Failed       int64            `json:"failed"`
	PromptTokens int64            `json:"promptTokens"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	TTFT         *wireLatencies   `json:"ttft,omitempty"`
	TPOT         *wireLatencies   `json:"tpot,omitempty"`
	E2E          *wireLatencies   `json:"e2e,omitempty"`
	ITL          *wireLatencies   `json:"itl,omitempty"`
}

// wireLatencies are a window's latencies in the result file's encoding
// of a histogram (summary.EncodeHDR), with the exact extremes.
type wireLatencies struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	HDR string  `json:"hdr"`
}

// reportHealth is what the client-health verdict reads of a period's
// health.Report.
type reportHealth struct {
	CPU      float64 `json:"cpu"`
	Procs    int     `json:"procs"`
	SchedP99 float64 `json:"schedP99"`
	Cause    string  `json:"cause,omitempty"`
}

// Reporter is the dashboard's side on an instance other than 0: its
// Collector counts the instance's requests and judges its client's
// health, and Report turns each period's into the report instance 0
// merges.
type Reporter struct {
	collector *Collector
	tokens    map[string]int64
}

// NewReporter returns the reporter of an instance's run, which reads
// progress.
func NewReporter(progress func() engine.Progress) *Reporter {
	return &Reporter{collector: NewCollector(time.Now(), progress, nil), tokens: map[string]int64{}}
}

// Collector is the collector the instance's requests go to.
func (r *Reporter) Collector() *Collector { return r.collector }

// Report is the period's report since the last, encoded as one line of
// JSON; done marks the instance's last. One goroutine calls it at a time.
func (r *Reporter) Report(done bool) []byte { return r.report(time.Now(), done) }

// report is Report at now.
func (r *Reporter) report(now time.Time, done bool) []byte {
	p := r.collector.progress()
	ended, _, _ := r.collector.swap()
	rep := report{Health: healthOf(r.collector.readHealth(now)), Done: done}
	tokens := arrivedTokens(p)
	for _, sp := range p.Scenarios {
		s := reportScenario{Name: sp.Name, VUs: sp.ActiveVUs, MaxVUs: sp.MaxVUs, Iterations: sp.IterationsEnded, Dropped: sp.NotStarted(),
			Tokens: tokens[sp.Name] - r.tokens[sp.Name]}
		r.tokens[sp.Name] = tokens[sp.Name]
		if a := ended[sp.Name]; a != nil {
			s.setFigures(a)
			a.Reset()
		}
		rep.Scenarios = append(rep.Scenarios, s)
	}
	// A scenario's requests that ended after it left the progress.
	for name, a := range ended {
		if a.Requests > 0 {
			s := reportScenario{Name: name}
			s.setFigures(a)
			rep.Scenarios = append(rep.Scenarios, s)
		}
		a.Reset()
	}
	b, _ := json.Marshal(rep) // plain data: it encodes
	return b
}

// setFigures puts a's figures into s.
func (s *reportScenario) setFigures(a *window.Aggregate) {
	s.Requests, s.Failed, s.PromptTokens = a.Requests, a.Failed, a.PromptTokens
	if len(a.Errors) > 0 {
		s.Errors = make(map[string]int64, len(a.Errors))
		for k, n := range a.Errors {
			if n > 0 {
				s.Errors[k] = n
			}
		}
	}
	s.TTFT, s.TPOT, s.E2E, s.ITL = encodeLatencies(&a.TTFT), encodeLatencies(&a.TPOT), encodeLatencies(&a.E2E), encodeLatencies(&a.ITL)
}

func encodeLatencies(l *metrics.Latencies) *wireLatencies {
	if l.Count() == 0 {
		return nil
	}
	return &wireLatencies{Min: l.Min(), Max: l.Max(), HDR: summary.EncodeHDR(l.Histogram())}
}

// aggregate is the window aggregate s carries, checked.
func (s *reportScenario) aggregate() (*window.Aggregate, error) {
	a := &window.Aggregate{Requests: s.Requests, Failed: s.Failed, PromptTokens: s.PromptTokens}
	if len(s.Errors) > maxReportErrors {
		return nil, fmt.Errorf("%d error classes: at most %d", len(s.Errors), maxReportErrors)
	}
	var failed int64
	for class, n := range s.Errors {
		if n < 0 || len(class) > maxReportText {
			return nil, fmt.Errorf("error class %.40q: %d requests", class, n)
		}
		failed += n
	}
	if s.Requests < 0 || s.Failed < 0 || s.Failed > s.Requests || failed > s.Failed || s.PromptTokens < 0 {
		return nil, fmt.Errorf("%d requests, %d failed (%d by class), %d prompt tokens", s.Requests, s.Failed, failed, s.PromptTokens)
	}
	if len(s.Errors) > 0 {
		a.Errors = s.Errors
	}
	for _, l := range []struct {
		name string
		from *wireLatencies
		to   *metrics.Latencies
		// perRequest: one latency a successful request at most; ITL
		// holds every gap between tokens.
		perRequest bool
	}{{"ttft", s.TTFT, &a.TTFT, true}, {"tpot", s.TPOT, &a.TPOT, true}, {"e2e", s.E2E, &a.E2E, true}, {"itl", s.ITL, &a.ITL, false}} {
		if l.from == nil {
			continue
		}
		h, err := summary.DecodeHDR(l.from.HDR)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
		if *l.to, err = metrics.LatenciesFromHistogram(h, l.from.Min, l.from.Max); err != nil {
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
		if l.perRequest && l.to.Count() > s.Requests {
			return nil, fmt.Errorf("%s: %d latencies of %d requests", l.name, l.to.Count(), s.Requests)
		}
	}
	return a, nil
}

// healthOf is what a period's health report says of the client.
func healthOf(r health.Report) reportHealth {
	return reportHealth{CPU: r.CPU, Procs: r.Procs, SchedP99: r.SchedDelayP99, Cause: r.Cause}
}

// line is the client-health line of h, and whether the client did not
// keep up.
func (h reportHealth) line() (string, bool) {
	r := health.Report{CPU: h.CPU, Procs: h.Procs, SchedDelayP99: h.SchedP99, Cause: h.Cause}
	if !r.Measured() {
		return "not measured yet", false
	}
	if limit := r.Limit(); limit != "" {
		return "not keeping up: " + limit, true
	}
	return fmt.Sprintf("keeping up (CPU %s, scheduling delay p99 %.1f ms)", r.OwnCPU(), h.SchedP99), false
}

// Instances is instance 0's account of a distributed run's instances:
// the figures the others sent since the last event, which the Collector
// merges into its own (late ones count in the next event), and each
// one's state. Received and Lost implement rendezvous.Receiver.
type Instances struct {
	mu   sync.Mutex
	own  ownInstance
	peer []*peerInstance // instance i at i-1
}

// ownInstance is instance 0 itself: its requests so far, and its
// client's health as its Collector last read it.
type ownInstance struct {
	requests int64
	health   reportHealth
}

// peerInstance is another instance as instance 0 heard of it.
type peerInstance struct {
	state    string
	heard    time.Time
	requests int64
	health   reportHealth
	lost     string
	lostAt   time.Time
	// pending are its figures heard since the last event, by scenario;
	// progress its last report's progress by scenario.
	pending  map[string]*window.Aggregate
	tokens   map[string]int64
	progress map[string]reportScenario
}

// NewInstances returns the account of a run of n instances.
func NewInstances(n int) *Instances {
	in := &Instances{}
	for range n - 1 {
		in.peer = append(in.peer, &peerInstance{state: InstanceRunning, pending: map[string]*window.Aggregate{},
			tokens: map[string]int64{}, progress: map[string]reportScenario{}})
	}
	return in
}

// Received takes one report of instance i; an error says it is not one,
// and why.
func (in *Instances) Received(i int, msg []byte) error {
	if i < 1 || i > len(in.peer) {
		return fmt.Errorf("instance %d of %d", i, len(in.peer)+1)
	}
	var rep report
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		return fmt.Errorf("not a dashboard report: %w", err)
	}
	if len(rep.Scenarios) > maxReportScenarios {
		return fmt.Errorf("%d scenarios: at most %d", len(rep.Scenarios), maxReportScenarios)
	}
	aggs := make([]*window.Aggregate, len(rep.Scenarios))
	for k := range rep.Scenarios {
		s := &rep.Scenarios[k]
		if s.Name == "" || len(s.Name) > maxReportText || s.Tokens < 0 || s.VUs < 0 || s.MaxVUs < 0 || s.Iterations < 0 || s.Dropped < 0 {
			return fmt.Errorf("scenario %.40q: a count out of range", s.Name)
		}
		a, err := s.aggregate()
		if err != nil {
			return fmt.Errorf("scenario %.40q: %w", s.Name, err)
		}
		aggs[k] = a
	}
	if h := rep.Health; math.IsNaN(h.CPU) || h.Procs < 0 || math.IsNaN(h.SchedP99) {
		return errors.New("health figures out of range")
	}
	rep.Health.Cause = redact.Escape(rep.Health.Cause, maxReportText)

	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.peer[i-1]
	if p.state != InstanceRunning {
		return nil
	}
	for k, s := range rep.Scenarios {
		pending := p.pending[s.Name]
		if pending == nil {
			if len(p.pending) >= maxReportScenarios {
				return fmt.Errorf("more than %d scenarios", maxReportScenarios)
			}
			pending = &window.Aggregate{}
			p.pending[s.Name] = pending
		}
		pending.Merge(aggs[k])
		p.tokens[s.Name] += s.Tokens
		s.Errors, s.TTFT, s.TPOT, s.E2E, s.ITL = nil, nil, nil, nil, nil
		p.progress[s.Name] = s
	}
	p.heard, p.health = time.Now(), rep.Health
	if rep.Done {
		p.state = InstanceDone
	}
	return nil
}

// Lost names instance i lost, for why, unless its run was over.
func (in *Instances) Lost(i int, why string) {
	if i < 1 || i > len(in.peer) {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.peer[i-1]
	if p.state == InstanceRunning {
		p.state, p.lost, p.lostAt = InstanceLost, redact.Escape(why, maxReportText), time.Now()
	}
}

// others are the other instances' figures of an event by scenario: the
// output tokens that arrived, and their progress summed.
type others struct {
	tokens   map[string]int64
	progress map[string]reportScenario
}

// merge counts instance 0's own requests of the period in ended, and
// its client's health own, then merges into ended the other instances'
// heard since the last event, and returns their tokens and progress. A
// nil Instances merges nothing.
func (in *Instances) merge(ended map[string]*window.Aggregate, own reportHealth) others {
	o := others{tokens: map[string]int64{}, progress: map[string]reportScenario{}}
	if in == nil {
		return o
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.own.health = own
	for _, a := range ended {
		in.own.requests += a.Requests
	}
	for _, p := range in.peer {
		for name, a := range p.pending {
			if ended[name] == nil {
				ended[name] = &window.Aggregate{}
			}
			ended[name].Merge(a)
			p.requests += a.Requests
			a.Reset()
			o.tokens[name] += p.tokens[name]
			p.tokens[name] = 0
		}
		for name, s := range p.progress {
			sum := o.progress[name]
			if p.state == InstanceRunning {
				sum.VUs += s.VUs
			}
			sum.MaxVUs += s.MaxVUs
			sum.Iterations += s.Iterations
			sum.Dropped += s.Dropped
			o.progress[name] = sum
		}
	}
	return o
}

// add adds the other instances' progress of s's scenario to s.
func (o others) add(s *Scenario) {
	p := o.progress[s.Name]
	s.VUs += p.VUs
	s.MaxVUs += p.MaxVUs
	s.Iterations += p.Iterations
	s.Dropped += p.Dropped
}

// list is every instance's state at now, of a dashboard started at
// start, done when instance 0's run is over; nil for a nil Instances.
func (in *Instances) list(now, start time.Time, done bool) []Instance {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	line, limited := in.own.health.line()
	own := Instance{Index: 0, State: InstanceRunning, Requests: in.own.requests, Health: line, Limited: limited}
	if done {
		own.State = InstanceDone
	}
	out := []Instance{own}
	for k, p := range in.peer {
		heard := p.heard
		if heard.IsZero() {
			heard = start
		}
		line, limited := p.health.line()
		inst := Instance{Index: k + 1, State: p.state, LastHeard: max(0, now.Sub(heard).Seconds()), Requests: p.requests,
			Health: line, Limited: limited, Lost: p.lost}
		if p.state == InstanceLost {
			inst.LostAt = max(0, p.lostAt.Sub(start).Seconds())
		}
		out = append(out, inst)
	}
	if len(out) > MaxListedInstances {
		lost := slices.DeleteFunc(slices.Clone(out[1:]), func(i Instance) bool { return i.State != InstanceLost })
		rest := slices.DeleteFunc(out[1:], func(i Instance) bool { return i.State == InstanceLost })
		out = slices.Concat(out[:1], lost, rest)[:MaxListedInstances]
	}
	return out
}

// WithInstances makes c merge the other instances' figures, which in
// receives, into its events, and list the instances; call it before
// the dashboard starts.
func (c *Collector) WithInstances(in *Instances) *Collector {
	c.instances = in
	return c
}
