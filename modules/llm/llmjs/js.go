package llmjs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/scriptpath"
)

// Module is the 'llm' JavaScript module of one run. Its clients are shared
// by every VU (a Client is safe for concurrent use), one per distinct
// configuration, so a thousand VUs calling llm.client() with the same
// options share one connection pool.
type Module struct {
	// Paths finds the files a script's llm.client() names (tls.caFile, a
	// tokenizer file); nil: relative paths are the working directory's.
	// Set it before the first instance.
	Paths *scriptpath.Resolver
	// Seed is the run's seed (--seed): llm.sessions() draws its synthetic
	// sessions and their affinity ids from it.
	Seed int64

	defaults llm.Config
	hooks    Hooks

	mu      sync.Mutex // guards what follows
	clients map[string]*llm.Client
	// order holds the clients in the order they were made.
	order []*llm.Client
	// vuMetrics are the module's metrics in vuRegistry, the registry of
	// the VUs last instantiated (all the VUs of a run share one),
	// registered once rather than by every VU.
	vuRegistry *metrics.Registry
	vuMetrics  *llm.Metrics
}

// NewModule returns the module; defaults fill the options a script leaves
// out (the command line's --base-url, API key, --model and --timeout), and
// hooks receive what the scripts' requests measured beyond their samples.
func NewModule(defaults llm.Config, hooks Hooks) (*Module, error) {
	if defaults.Timeout < 0 {
		return nil, fmt.Errorf("negative default timeout %v", defaults.Timeout)
	}
	if defaults.BaseURL != "" {
		if err := llm.CheckBaseURL(defaults.BaseURL); err != nil {
			return nil, err
		}
	}
	if err := llm.CheckHeaders(defaults.Headers); err != nil {
		return nil, fmt.Errorf("headers: %w", err)
	}
	return &Module{defaults: defaults, hooks: hooks, clients: make(map[string]*llm.Client)}, nil
}

// client returns the shared client for cfg, creating it on first use;
// ctx ending (the VU's) stops the download of its tokenizer.
func (m *Module) client(ctx context.Context, cfg llm.Config) (*llm.Client, error) {
	key, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	c, ok := m.clients[string(key)]
	m.mu.Unlock()
	if ok {
		return c, nil
	}
	if cfg.BaseURL == "" {
		return nil, errors.New("no base URL: pass --base-url (or set LLMRUN_BASE_URL), or give baseURL to llm.client()")
	}
	if cfg.Tokenizer != "" {
		// Loaded under ctx, and outside m.mu, so that a stopped VU stops
		// a download and holds up no other VU; NewClient then takes the
		// loaded tokenizer, which every client shares.
		if _, err := tokenizer.LoadEnv(ctx, cfg.Tokenizer, os.Getenv); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[string(key)]; ok {
		return c, nil
	}
	c, err = llm.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	m.clients[string(key)] = c
	m.order = append(m.order, c)
	return c, nil
}

// Targets returns the clients a run is known to send to before it starts:
// the default client (the command line's target and model), when it has a
// base URL, then each client the init code made, in the order they were
// made. The preflight probes them; ctx bounds the loading of the default
// client's tokenizer. The default client is left out when the init code
// made a client of its server: that client says how the script speaks to
// it (a reranker that serves no chat, say), where the default's probe,
// a chat request unless --api says otherwise, would only guess.
func (m *Module) Targets(ctx context.Context) []*llm.Client {
	m.mu.Lock()
	made := slices.Clone(m.order)
	m.mu.Unlock()
	if m.defaults.BaseURL == "" {
		return made
	}
	d, err := m.client(ctx, m.defaults)
	if err != nil {
		return made
	}
	for _, c := range made {
		if c != d && c.Server() == d.Server() {
			return made
		}
	}
	return append([]*llm.Client{d}, slices.DeleteFunc(made, func(c *llm.Client) bool { return c == d })...)
}

// NewInstance implements modules.Module.
func (m *Module) NewInstance(vu modules.VU) (modules.Instance, error) {
	inst := &instance{module: m, vu: vu, metrics: m.metricsIn(vu.Registry())}
	rt := vu.Runtime()
	inst.exports = modules.LazyExports(rt, []string{"client", "stream", "conversation", "sessions"}, func(name string) any {
		switch name {
		case "client":
			return inst.newClient
		case "stream":
			return streamFunction(rt, func(body, opts goja.Value) *goja.Object { return inst.stream(nil, body, opts) })
		case "conversation":
			return inst.newConversation
		default:
			return inst.newSessions
		}
	})
	return inst, nil
}

// metricsIn returns the module's metrics in reg, registering them only
// when reg is not the registry of the VU instantiated before.
func (m *Module) metricsIn(reg *metrics.Registry) *llm.Metrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vuRegistry != reg {
		m.vuRegistry, m.vuMetrics = reg, llm.RegisterMetrics(reg)
	}
	return m.vuMetrics
}

// instance is one VU's 'llm' module.
type instance struct {
	module  *Module
	vu      modules.VU
	metrics *llm.Metrics
	exports *goja.Object

	// defaultClient is the module's client of the command line's
	// options, looked up once (the lookup encodes the options as a key).
	defaultClient *llm.Client
	// record and itlScratch are reused for each request's output record.
	record     llm.Record
	itlScratch []float64
	// itl is reused for each request's inter-token gaps (Result.ITL),
	// up to maxKeptITL of them.
	itl []float64
	// results builds the result objects.
	results jsResults
	// arrivals is the VU's counters of arriving tokens in its current
	// scenario.
	arrivals *vuArrivals
	tagBase  *metrics.TagSet // cache of tagBase + model = tagged
	tagModel string
	tagged   *metrics.TagSet
	// sessionSources counts the VU's llm.sessions() sources, each with
	// random streams of its own.
	sessionSources int
}

func (i *instance) Exports() *goja.Object { return i.exports }

// clientOptions are llm.client()'s options.
type clientOptions struct {
	BaseURL     string            `js:"baseURL"`
	APIKey      string            `js:"apiKey"`
	Model       string            `js:"model"`
	API         string            `js:"api"`
	Headers     map[string]string `js:"headers"`
	Timeout     goja.Value        `js:"timeout"`
	IdleTimeout goja.Value        `js:"idleTimeout"`
	Retry       goja.Value        `js:"retry"`
	HTTP2       goja.Value        `js:"http2"`
	TLS         goja.Value        `js:"tls"`
	MaxConns    int               `js:"maxConns"`
	Tokenizer   string            `js:"tokenizer"`
}

// newClient is llm.client(options): a client whose options default to the
// command line's.
func (i *instance) newClient(opts goja.Value) *goja.Object {
	rt := i.vu.Runtime()
	cfg := i.module.defaults
	if given(opts) {
		var o clientOptions
		if err := rt.ExportTo(opts, &o); err != nil {
			panic(rt.NewTypeError("llm.client(options): %v", err))
		}
		cfg.BaseURL = firstNonEmpty(o.BaseURL, cfg.BaseURL)
		cfg.APIKey = firstNonEmpty(o.APIKey, cfg.APIKey)
		cfg.Model = firstNonEmpty(o.Model, cfg.Model)
		cfg.API = llm.API(firstNonEmpty(o.API, string(cfg.API)))
		if o.Headers != nil {
			cfg.Headers = o.Headers
		}
		if o.MaxConns != 0 {
			cfg.MaxConns = o.MaxConns
		}
		if o.Tokenizer != "" {
			spec, err := i.module.Paths.FormerlyWorkDir().ResolveTokenizer(fmt.Sprintf("tokenizer %q", o.Tokenizer), o.Tokenizer)
			if err != nil {
				panic(rt.NewGoError(fmt.Errorf("llm.client(options): %w", err)))
			}
			cfg.Tokenizer = spec
		}
		if d, set, err := jsDuration(o.Timeout); err != nil {
			panic(rt.NewTypeError("llm.client(options): timeout: %v", err))
		} else if set {
			cfg.Timeout = d
		}
		if d, set, err := jsIdleTimeout(o.IdleTimeout); err != nil {
			panic(rt.NewTypeError("llm.client(options): idleTimeout: %v", err))
		} else if set {
			cfg.IdleTimeout = d
		}
		if given(o.Retry) {
			p, err := jsRetry(rt, cfg.Retry, o.Retry)
			if err != nil {
				panic(rt.NewTypeError("llm.client(options): %v", err))
			}
			cfg.Retry = p
		}
		if given(o.HTTP2) {
			cfg.HTTP2 = o.HTTP2.ToBoolean()
		}
		if given(o.TLS) {
			i.readTLS(&cfg.TLS, o.TLS)
		}
	}
	c, err := i.module.client(i.vu.Context(), cfg)
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("llm.client(): %w", err)))
	}
	obj := rt.NewObject()
	must(obj.DefineDataProperty(clientHandle, rt.ToValue(clientRef{c}), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	must(obj.Set("stream", streamFunction(rt, func(body, opts goja.Value) *goja.Object { return i.stream(c, body, opts) })))
	must(obj.Set("model", cfg.Model))
	must(obj.Set("baseURL", cfg.BaseURL))
	return obj
}

// readTLS reads llm.client's tls option, { insecureSkipVerify, caFile },
// over cfg: the fields it leaves out keep cfg's. caFile resolves as the
// script's paths do.
func (i *instance) readTLS(cfg *llm.TLSConfig, v goja.Value) {
	rt := i.vu.Runtime()
	var t struct {
		InsecureSkipVerify goja.Value `js:"insecureSkipVerify"`
		CAFile             goja.Value `js:"caFile"`
	}
	if err := rt.ExportTo(v, &t); err != nil {
		panic(rt.NewTypeError("llm.client(options): tls: %v", err))
	}
	if given(t.InsecureSkipVerify) {
		cfg.InsecureSkipVerify = t.InsecureSkipVerify.ToBoolean()
	}
	if given(t.CAFile) {
		path, err := i.module.Paths.FormerlyWorkDir().Resolve(fmt.Sprintf("tls.caFile %q", t.CAFile), t.CAFile.String())
		if err != nil {
			panic(rt.NewGoError(fmt.Errorf("llm.client(options): %w", err)))
		}
		cfg.CAFile = path
	}
}

// jsRetry reads a retry option, { attempts, on, backoff: { base, max,
// retryAfter } }, over base: the fields it leaves out keep base's. The
// policy is checked, not normalized.
func jsRetry(rt *goja.Runtime, base llm.RetryPolicy, v goja.Value) (llm.RetryPolicy, error) {
	var o struct {
		Attempts goja.Value `js:"attempts"`
		On       goja.Value `js:"on"`
		Backoff  goja.Value `js:"backoff"`
	}
	if _, ok := v.(*goja.Object); !ok {
		return base, fmt.Errorf("retry: want an object such as { attempts: 3 }, got %s", v)
	}
	if err := rt.ExportTo(v, &o); err != nil {
		return base, fmt.Errorf("retry: %v", err)
	}
	p := base
	if given(o.Attempts) {
		n, ok := o.Attempts.Export().(int64)
		if !ok {
			return base, fmt.Errorf("retry: attempts must be a whole number, got %s", o.Attempts)
		}
		p.Attempts = int(n)
	}
	if given(o.On) {
		var on []string
		if err := rt.ExportTo(o.On, &on); err != nil {
			return base, fmt.Errorf("retry: on must be a list of error classes: %v", err)
		}
		p.On = make([]llm.ErrorClass, len(on))
		for k, c := range on {
			p.On[k] = llm.ErrorClass(c)
		}
	}
	if given(o.Backoff) {
		var b struct {
			Base       goja.Value `js:"base"`
			Max        goja.Value `js:"max"`
			RetryAfter goja.Value `js:"retryAfter"`
		}
		if err := rt.ExportTo(o.Backoff, &b); err != nil {
			return base, fmt.Errorf("retry: backoff: %v", err)
		}
		for _, f := range []struct {
			name string
			v    goja.Value
			dst  *time.Duration
		}{{"base", b.Base, &p.Backoff.Base}, {"max", b.Max, &p.Backoff.Max}} {
			d, set, err := jsDuration(f.v)
			if err != nil {
				return base, fmt.Errorf("retry: backoff: %s: %v", f.name, err)
			}
			if set {
				*f.dst = d
			}
		}
		if given(b.RetryAfter) {
			p.Backoff.IgnoreRetryAfter = !b.RetryAfter.ToBoolean()
		}
	}
	if err := p.Check(); err != nil {
		return base, err
	}
	return p, nil
}

// streamOptions are the second argument of stream(): llmrun's own settings
// for one request, kept apart from the body sent to the server.
type streamOptions struct {
	Tags        map[string]string `js:"tags"`
	Headers     map[string]string `js:"headers"`
	Timeout     goja.Value        `js:"timeout"`
	IdleTimeout goja.Value        `js:"idleTimeout"`
	Retry       goja.Value        `js:"retry"`
	API         string            `js:"api"`
	// Text keeps the generated text in result.text (up to maxKeptText);
	// ITL keeps the gaps in result.itl (the first maxExactITL, with
	// result.itlFolded counting the others). Both are off by default to
	// keep results small.
	Text bool `js:"text"`
	ITL  bool `js:"itl"`
	// Throw makes a failed request throw instead of returning a result
	// with ok false; the failure is recorded either way.
	Throw bool `js:"throw"`
	// PromptTokens is the prompt's length in tokens as the script made it
	// (prompts.synthetic(n)), compared with the server's count.
	PromptTokens goja.Value `js:"promptTokens"`
	// UniquePrompt declares the whole prompt unique: no earlier request
	// of this run or another sent it.
	UniquePrompt bool `js:"uniquePrompt"`
}

// streamFunction binds send, a stream(body, options), for scripts: of
// length 2 as before, without the reflection goja spends on each call of
// a Go function of another signature.
func streamFunction(rt *goja.Runtime, send func(body, opts goja.Value) *goja.Object) *goja.Object {
	return modules.Function(rt, 2, func(call goja.FunctionCall) goja.Value {
		return send(call.Argument(0), call.Argument(1))
	})
}

// stream sends one request with c (nil: the default client), records its
// metrics and returns its result as a JavaScript object.
func (i *instance) stream(c *llm.Client, body, opts goja.Value) *goja.Object {
	var req llm.Request
	call := i.streamRequest(&c, body, opts, &req)
	res := c.StreamInto(i.vu.Context(), &req, spareResults.Get().(*llm.Result), i.itl)
	return i.streamResult(res, call)
}

// streamCall is what llm.stream() reads from its arguments before the
// request for after it.
type streamCall struct {
	opts *streamOptions
	// requested is the prompt's length in tokens the script declared.
	requested int
	// measured is false in a warmup iteration.
	measured bool
}

// streamRequest checks stream()'s arguments and makes its request into
// req, and *c the module's default client when nil. It and streamResult
// are functions of their own, so that the frame of stream, on the VU's
// stack while the response streams, stays small.
//
//go:noinline
func (i *instance) streamRequest(c **llm.Client, body, opts goja.Value, req *llm.Request) streamCall {
	rt := i.vu.Runtime()
	st := i.vu.State()
	if st == nil {
		panic(rt.NewTypeError("llm.stream() cannot be called in the init context; call it from the default function or a scenario's exec function"))
	}
	if *c == nil {
		if i.defaultClient == nil {
			var err error
			if i.defaultClient, err = i.module.client(i.vu.Context(), i.module.defaults); err != nil {
				panic(rt.NewGoError(fmt.Errorf("llm.stream(): %w", err)))
			}
		}
		*c = i.defaultClient
	}
	obj, ok := body.(*goja.Object)
	if !ok || goja.IsNull(body) {
		panic(rt.NewTypeError("llm.stream(body): body must be an object such as { messages: [...], max_tokens: 128 }"))
	}
	*req = llm.Request{Body: exportBody(rt, obj)}
	o := exportStreamOptions(rt, opts)
	if given(opts) {
		d, _, err := jsDuration(o.Timeout)
		if err != nil {
			panic(rt.NewTypeError("llm.stream(body, options): timeout: %v", err))
		}
		req.Timeout, req.Headers, req.API, req.KeepText = d, o.Headers, llm.API(o.API), o.Text
		if req.IdleTimeout, _, err = jsIdleTimeout(o.IdleTimeout); err != nil {
			panic(rt.NewTypeError("llm.stream(body, options): idleTimeout: %v", err))
		}
		if given(o.Retry) {
			p, err := jsRetry(rt, (*c).Retry(), o.Retry)
			if err != nil {
				panic(rt.NewTypeError("llm.stream(body, options): %v", err))
			}
			req.Retry = &p
		}
	}
	call := streamCall{opts: o}
	if given(o.PromptTokens) {
		n, ok := o.PromptTokens.Export().(int64)
		if !ok || n < 0 {
			panic(rt.NewTypeError("llm.stream(body, options): promptTokens must be a whole number of tokens, got %s", o.PromptTokens))
		}
		call.requested = int(n)
	}

	// A warmup iteration's requests count in no result: only the early
	// stop sees them.
	call.measured = !st.Warmup
	if call.measured && i.module.hooks.Arrivals != nil {
		req.Arrivals = i.scenarioArrivals(st.Scenario)
	}
	return call
}

// streamResult hands res, the result of call's request, to the hooks and
// the samples, and returns its object for the script; then res serves
// another request.
//
//go:noinline
func (i *instance) streamResult(res *llm.Result, call streamCall) *goja.Object {
	defer i.release(res)
	rt, st, o, hooks := i.vu.Runtime(), i.vu.State(), call.opts, i.module.hooks
	res.RequestedPromptTokens, res.UniquePrompt = call.requested, o.UniquePrompt
	ended := res.Class != llm.ErrCanceled
	if call.measured && ended && !res.OK && hooks.Errors != nil {
		hooks.Errors.Record(string(res.Class), res.Error)
	}
	if ended && hooks.Observer != nil {
		hooks.Observer.ObserveRequest(i.vu, res.OK, string(res.Class), res.Error)
	}

	tags := i.tags(st.Tags, res.Model)
	if len(o.Tags) > 0 {
		tags = tags.Merge(metrics.NewTagSet(o.Tags))
	}
	i.addSamples(st.Samples, tags, res)
	if call.measured && ended && hooks.Requests != nil {
		i.itlScratch = res.Record(&i.record, tags, i.itlScratch)
		hooks.Requests.AddRequest(&i.record)
	}
	if call.measured && ended && hooks.Results != nil {
		hooks.Results.AddResult(res)
	}

	if o.Throw && ended && !res.OK {
		panic(rt.NewGoError(fmt.Errorf("llm request failed (%s): %s", res.Class, res.Error)))
	}
	return i.results.object(rt, res, o.ITL)
}

// sampleBuffers holds the buffers a request's samples are gathered in on
// their way to the run's sink (*[]metrics.Sample). The VUs share them: a
// buffer is needed only for that moment, where one kept by each VU would
// hold some 4 KB in every idle VU.
var sampleBuffers = sync.Pool{New: func() any { return new([]metrics.Sample) }}

// maxPooledSamples bounds the buffers sampleBuffers keeps: a longer
// stream's (one sample per inter-token gap) is left to the collector.
const maxPooledSamples = 4096

// addSamples sends res's samples, tagged tags, to sink.
func (i *instance) addSamples(sink metrics.Sink, tags *metrics.TagSet, res *llm.Result) {
	buf := sampleBuffers.Get().(*[]metrics.Sample)
	*buf = i.metrics.AppendSamples((*buf)[:0], tags, res)
	sink.AddSamples(*buf)
	if cap(*buf) <= maxPooledSamples {
		sampleBuffers.Put(buf)
	}
}

// bodyType is the type a script's plain object exports to.
var bodyType = reflect.TypeFor[map[string]any]()

// exportBody is the request body obj exports to, as rt.ExportTo(obj,
// &body) makes it, but without ExportTo's reflection when obj exports to
// a map[string]any as it is (a plain object: the usual body); a body of
// another kind goes through ExportTo, and its TypeError.
func exportBody(rt *goja.Runtime, obj *goja.Object) map[string]any {
	if obj.ExportType() == bodyType {
		if body, ok := obj.Export().(map[string]any); ok {
			return body
		}
	}
	body := new(map[string]any)
	if err := rt.ExportTo(obj, body); err != nil {
		panic(rt.NewTypeError("llm.stream(body): %v", err))
	}
	return *body
}

// noStreamOptions are the options of a stream() given none; never
// written.
var noStreamOptions streamOptions

// exportStreamOptions exports stream()'s options; their zero value when
// none were given.
func exportStreamOptions(rt *goja.Runtime, opts goja.Value) *streamOptions {
	if !given(opts) {
		return &noStreamOptions
	}
	o := new(streamOptions)
	if err := rt.ExportTo(opts, o); err != nil {
		panic(rt.NewTypeError("llm.stream(body, options): %v", err))
	}
	return o
}

// spareResults are the Results of requests whose script objects are made,
// for other requests: the JS module needs a Result only until its object
// copied it.
var spareResults = sync.Pool{New: func() any { return new(llm.Result) }}

// release gives back res, once nothing reads it any more: its gaps'
// array for the VU's next request, itself for any other.
func (i *instance) release(res *llm.Result) {
	i.keepITL(res.ITL)
	*res = llm.Result{}
	spareResults.Put(res)
}

// maxKeptITL bounds the gaps' array a VU keeps between requests (8 KiB):
// a longer stream's is left to the collector, not held by an idle VU.
const maxKeptITL = 1024

// keepITL keeps the array of a request's gaps for the next request, once
// nothing reads them any more (the result object copies them).
func (i *instance) keepITL(itl []float64) {
	if cap(itl) > cap(i.itl) && cap(itl) <= maxKeptITL {
		i.itl = itl[:0]
	}
}

// scenarioArrivals returns the VU's counters of arriving tokens in
// scenario, made again only when the VU changes scenario.
func (i *instance) scenarioArrivals(scenario string) *vuArrivals {
	if i.arrivals == nil || i.arrivals.scenario != scenario {
		i.arrivals = &vuArrivals{all: i.module.hooks.Arrivals, scenario: scenario, shard: int(i.vu.ID())}
	}
	return i.arrivals
}

// tags returns base with the model tag, cached while both stay the same.
func (i *instance) tags(base *metrics.TagSet, model string) *metrics.TagSet {
	if i.tagged == nil || i.tagBase != base || i.tagModel != model {
		i.tagBase, i.tagModel = base, model
		i.tagged = base.With("model", model)
	}
	return i.tagged
}

// maxTimeout is the longest timeout accepted: llmrun's limit on any
// duration (docs/limits.md).
const maxTimeout = 365 * 24 * time.Hour

// jsDuration reads a timeout given as milliseconds (number) or a duration
// string ("30s"); set is false when v is absent.
func jsDuration(v goja.Value) (d time.Duration, set bool, err error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0, false, nil
	}
	switch x := v.Export().(type) {
	case int64:
		if d, err = msTimeout(float64(x), v); err != nil {
			return 0, false, err
		}
	case float64:
		if d, err = msTimeout(x, v); err != nil {
			return 0, false, err
		}
	case string:
		if d, err = time.ParseDuration(strings.TrimSpace(x)); err != nil {
			return 0, false, fmt.Errorf("%q is not a duration like \"30s\"", x)
		}
	default:
		return 0, false, fmt.Errorf("want milliseconds or a duration string, got %s", v)
	}
	if d <= 0 {
		return 0, false, fmt.Errorf("must be positive, got %s", v)
	}
	if d > maxTimeout {
		return 0, false, fmt.Errorf("%s exceeds llmrun's limit of %s (365 days) for a duration (see docs/limits.md)", v, maxTimeout)
	}
	return d, true, nil
}

// msTimeout converts a timeout of ms milliseconds (v, as given) to a
// duration, refusing NaN, Infinity and more than maxTimeout.
func msTimeout(ms float64, v goja.Value) (time.Duration, error) {
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return 0, fmt.Errorf("must be a finite duration, got %s", v)
	case ms > float64(maxTimeout/time.Millisecond):
		return 0, fmt.Errorf("%s milliseconds exceeds llmrun's limit of %s (365 days) for a duration (see docs/limits.md)", v, maxTimeout)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// jsIdleTimeout reads an idle timeout as jsDuration does, but 0 means
// none (NoIdleTimeout); set is false when v is absent.
func jsIdleTimeout(v goja.Value) (d time.Duration, set bool, err error) {
	if given(v) {
		if n, ok := v.Export().(int64); ok && n == 0 {
			return llm.NoIdleTimeout, true, nil
		}
	}
	return jsDuration(v)
}

// given reports whether an option was given: not missing, undefined nor
// null.
func given(v goja.Value) bool {
	return v != nil && !goja.IsUndefined(v) && !goja.IsNull(v)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
