package prometheus

import (
	"maps"
	"sync"
	"sync/atomic"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
)

// latencyBuckets are the latency histograms' upper bounds, in seconds: 20
// exponential buckets from 5 ms to 120 s, which cover a fast TPOT and a
// long reasoning answer alike, each about 1.7 times the one before.
var latencyBuckets = prom.ExponentialBucketsRange(0.005, 120, 20)

// The labels of the per-request metrics: the scenario and the model, never
// user tags, which could make a series per request.
const (
	scenarioLabel = "scenario"
	modelLabel    = "model"
)

// collectors are the output's collectors.
type collectors struct {
	ttft, tpot, itlMean, e2e  *prom.HistogramVec
	requests, errors          *prom.CounterVec
	inputTokens, cachedTokens *prom.CounterVec

	// series caches the children of each (scenario, model), so that a
	// request allocates nothing: a map replaced, never changed, when a
	// pair is added (under mu), so that reading it takes no lock.
	series atomic.Pointer[map[seriesKey]*series]
	mu     sync.Mutex
}

// seriesKey is a scenario and a model.
type seriesKey struct{ scenario, model string }

// series are the children of one (scenario, model).
type series struct {
	ttft, tpot, itlMean, e2e  prom.Observer
	ok, failed                prom.Counter
	inputTokens, cachedTokens prom.Counter
}

// newCollectors returns the per-request collectors, not yet registered.
func newCollectors() *collectors {
	labels := []string{scenarioLabel, modelLabel}
	histogram := func(name, help string) *prom.HistogramVec {
		return prom.NewHistogramVec(prom.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, labels)
	}
	counter := func(name, help string, extra ...string) *prom.CounterVec {
		return prom.NewCounterVec(prom.CounterOpts{Name: name, Help: help}, append(labels[:len(labels):len(labels)], extra...))
	}
	m := &collectors{
		ttft:         histogram("llmrun_ttft_seconds", "Time to first token of the completed requests."),
		tpot:         histogram("llmrun_tpot_seconds", "Time per output token after the first, of the completed requests that had more than one."),
		itlMean:      histogram("llmrun_itl_mean_seconds", "Mean inter-token latency of each completed request with two or more token-bearing chunks."),
		e2e:          histogram("llmrun_e2e_seconds", "End-to-end latency of the completed requests."),
		requests:     counter("llmrun_requests_total", "Requests that ended, by status: ok or failed.", "status"),
		errors:       counter("llmrun_errors_total", "Failed requests, by error class.", "error_class"),
		inputTokens:  counter("llmrun_input_tokens_total", "Prompt tokens of the completed requests, as the server counted them."),
		cachedTokens: counter("llmrun_cached_tokens_total", "Prompt tokens the server served from its prefix cache."),
	}
	m.series.Store(&map[seriesKey]*series{})
	return m
}

// register registers the per-request collectors in reg, with those read
// from run's Progress at each scrape: llmrun_output_tokens_total and the
// gauges llmrun_active_vus and llmrun_max_vus; llmrun_run_info; and when
// the run reads scrape targets, their gauges (serverGauges).
func (m *collectors) register(reg *prom.Registry, run output.Run) error {
	progress := func(field func(engine.Progress) int) func() float64 {
		return func() float64 {
			if run.Progress == nil {
				return 0
			}
			return float64(field(run.Progress()))
		}
	}
	info := prom.NewGauge(prom.GaugeOpts{
		Name: "llmrun_run_info", Help: "The run's identity: its run ID and test ID (--testid); always 1.",
		ConstLabels: prom.Labels{"run_id": run.ID, "testid": run.TestID},
	})
	info.Set(1)
	for _, c := range []prom.Collector{
		m.ttft, m.tpot, m.itlMean, m.e2e, m.requests, m.errors, m.inputTokens, m.cachedTokens, newArrivedTokens(run),
		prom.NewGaugeFunc(prom.GaugeOpts{Name: "llmrun_active_vus", Help: "VUs running an iteration now."},
			progress(func(p engine.Progress) int { return int(p.ActiveVUs) })),
		prom.NewGaugeFunc(prom.GaugeOpts{Name: "llmrun_max_vus", Help: "The most VUs the run may use."},
			progress(func(p engine.Progress) int { return p.MaxVUs })),
		info,
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	if run.Servers != nil {
		return reg.Register(newServerGauges(run.Servers))
	}
	return nil
}

// add counts and observes r. Latencies are observed for completed
// requests only, and only those measured (not 0): a failed request's e2e
// would mix errors into the latency of the answers.
func (m *collectors) add(r *llm.Record) {
	scenario, _ := r.Tags.Get(scenarioLabel)
	model, _ := r.Tags.Get(modelLabel)
	s := m.get(scenario, model)
	if !r.OK {
		s.failed.Inc()
		m.errors.WithLabelValues(scenario, model, r.ErrorClass).Inc()
		return
	}
	s.ok.Inc()
	observeMs(s.ttft, r.TTFT)
	observeMs(s.tpot, r.TPOT)
	observeMs(s.itlMean, r.ITLMean)
	observeMs(s.e2e, r.E2E)
	s.inputTokens.Add(float64(r.PromptTokens))
	s.cachedTokens.Add(float64(r.CachedTokens))
}

// observeMs observes ms milliseconds in seconds, unless it is 0 (not
// measured).
func observeMs(o prom.Observer, ms float64) {
	if ms > 0 {
		o.Observe(ms / 1000)
	}
}

// get returns the children of (scenario, model), making them the first
// time.
func (m *collectors) get(scenario, model string) *series {
	k := seriesKey{scenario, model}
	if s := (*m.series.Load())[k]; s != nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := *m.series.Load()
	if s := cur[k]; s != nil {
		return s
	}
	s := &series{
		ttft:         m.ttft.WithLabelValues(scenario, model),
		tpot:         m.tpot.WithLabelValues(scenario, model),
		itlMean:      m.itlMean.WithLabelValues(scenario, model),
		e2e:          m.e2e.WithLabelValues(scenario, model),
		ok:           m.requests.WithLabelValues(scenario, model, "ok"),
		failed:       m.requests.WithLabelValues(scenario, model, "failed"),
		inputTokens:  m.inputTokens.WithLabelValues(scenario, model),
		cachedTokens: m.cachedTokens.WithLabelValues(scenario, model),
	}
	next := maps.Clone(cur)
	next[k] = s
	m.series.Store(&next)
	return s
}

// arrivedTokens is llmrun_output_tokens_total: the output tokens that have
// arrived, by scenario and model, read from the run's progress at each
// scrape. They are counted as they arrive, those of requests in flight
// included, so the counter grows while an answer streams; it never
// decreases.
type arrivedTokens struct {
	desc     *prom.Desc
	progress func() engine.Progress
}

// newArrivedTokens returns the collector of run's arrived output tokens.
func newArrivedTokens(run output.Run) arrivedTokens {
	return arrivedTokens{
		desc: prom.NewDesc("llmrun_output_tokens_total",
			"Output tokens, counted as they arrive: one per streamed token-bearing chunk, then the rest of each completed request's usage.",
			[]string{scenarioLabel, modelLabel}, nil),
		progress: run.Progress,
	}
}

// Describe implements prometheus.Collector.
func (a arrivedTokens) Describe(ch chan<- *prom.Desc) { ch <- a.desc }

// Collect implements prometheus.Collector.
func (a arrivedTokens) Collect(ch chan<- prom.Metric) {
	if a.progress == nil {
		return
	}
	for _, c := range a.progress().Arrived {
		ch <- prom.MustNewConstMetric(a.desc, prom.CounterValue, float64(c.Tokens), c.Scenario, c.Model)
	}
}
