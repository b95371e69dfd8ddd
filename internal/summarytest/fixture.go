package summarytest

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/checks"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summary"
)

// T0 is when the runs of the fixture start.
var T0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// Fixture is a run's registry and aggregator, fed by hand: the samples
// of a report a test builds (TwoScenarioReport).
type Fixture struct {
	Reg  *metrics.Registry
	Agg  *metrics.Aggregator
	LLM  *llm.Metrics
	next int // the shard the next samples go to
	// Keep, when set, says which calls of add (counted from 0) this
	// fixture keeps: one process's share of a test run by several.
	Keep  func(call int) bool
	calls int
}

// NewFixture returns a fixture with llmrun's metrics registered.
func NewFixture() *Fixture {
	reg := metrics.NewRegistry()
	f := &Fixture{Reg: reg, Agg: metrics.NewAggregator(3), LLM: llm.RegisterMetrics(reg)}
	checks.RegisterMetrics(reg)
	for _, name := range []string{"iterations", "iterations_interrupted", "script_errors"} {
		reg.MustRegister(metrics.Metric{Name: name, Type: metrics.Counter})
	}
	return f
}

// Tags is the tag set of the key and value pairs kv.
func Tags(kv ...string) *metrics.TagSet {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return metrics.NewTagSet(m)
}

// Add sends samples to the shards in turn, as VUs do.
func (f *Fixture) Add(samples ...metrics.Sample) {
	f.calls++
	if f.Keep != nil && !f.Keep(f.calls-1) {
		return
	}
	f.Agg.Shard(f.next).AddSamples(samples)
	f.next++
}

// Request adds the samples of a request's result.
func (f *Fixture) Request(tags *metrics.TagSet, r *llm.Result) {
	f.Add(f.LLM.AppendSamples(nil, tags, r)...)
}

// Value adds samples of the metric name.
func (f *Fixture) Value(name string, tags *metrics.TagSet, at time.Time, vals ...float64) {
	m := f.Reg.Get(name)
	for _, v := range vals {
		f.Add(metrics.Sample{Metric: m, Tags: tags, Time: at, Value: v})
	}
}

// Completed is the result of a streamed request of model that completed.
func Completed(model string, ttft, e2e float64, out, prompt int, itl ...float64) *llm.Result {
	return &llm.Result{OK: true, Status: 200, API: llm.ChatCompletions, Model: model, Stream: true,
		TTFT: ttft, TTFO: ttft, E2E: e2e, TPOT: (e2e - ttft) / float64(out-1), ITL: itl,
		Chunks: out, OutputTokens: out, PromptTokens: prompt, TokenSource: llm.TokensFromUsage,
		FinishReason: "length", Timings: llm.Timings{TTFB: ttft / 2}, Start: T0}
}

// FailedWith is the result of a request of model that failed with class.
func FailedWith(model string, class llm.ErrorClass) *llm.Result {
	return &llm.Result{Model: model, Class: class, Error: string(class), Stream: true, E2E: 5, Start: T0}
}

// Scenarios are the scenarios of the options.
func Scenarios(t testing.TB, options string) []engine.Scenario {
	t.Helper()
	o, err := engine.ParseOptions([]byte(options))
	if err != nil {
		t.Fatal(err)
	}
	scs, err := engine.ResolveScenarios(o, engine.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return scs
}

// TwoScenarioReport is a 10 s run of two scenarios:
//   - chat (0–10 s, model m-a): 8 ok requests (100 output and 20 prompt
//     tokens each, TTFT 10..80 ms, E2E 1010..1080 ms, 3 gaps of 5 ms), the
//     first after retries of an http_429 and a connect failure, 2
//     http_5xx (after a retried http_5xx), 1 http_429, 1 interrupted; 12
//     iterations, 1 interrupted.
//   - rag (2–7 s, model m-b): 2 ok requests (50 output, 400 prompt tokens,
//     TTFT 200, E2E 2000, 2 gaps of 10 ms), 1 timeout; 3 iterations.
func TwoScenarioReport(t testing.TB) *engine.Report { return TwoScenarioPart(t, nil) }

// TwoScenarioPart is the share of TwoScenarioReport's samples that keep
// keeps (nil: all of them), in a run of the same window; the other fields
// of the report are the whole's.
func TwoScenarioPart(t testing.TB, keep func(call int) bool) *engine.Report {
	f := NewFixture()
	f.Keep = keep
	chat := Tags("scenario", "chat", "workload", "chat", "model", "m-a")
	rag := Tags("scenario", "rag", "model", "m-b")
	for i := 1; i <= 8; i++ {
		r := Completed("m-a", float64(10*i), float64(1000+10*i), 100, 20, 5, 5, 5)
		if i == 1 {
			r.Attempts, r.Retried = 3, []llm.ErrorClass{llm.ErrHTTP429, llm.ErrConnect}
		}
		f.Request(chat, r)
	}
	f.Request(chat, FailedWith("m-a", llm.ErrHTTP5xx))
	retried := FailedWith("m-a", llm.ErrHTTP5xx)
	retried.Attempts, retried.Retried = 2, []llm.ErrorClass{llm.ErrHTTP5xx}
	f.Request(chat, retried)
	f.Request(chat, FailedWith("m-a", llm.ErrHTTP429))
	f.Request(chat, FailedWith("m-a", llm.ErrCanceled))
	for range 2 {
		f.Request(rag, Completed("m-b", 200, 2000, 50, 400, 10, 10))
	}
	f.Request(rag, FailedWith("m-b", llm.ErrTimeout))

	f.Value("iterations", Tags("scenario", "chat", "workload", "chat"), T0, slices.Repeat([]float64{1}, 12)...)
	f.Value("iterations_interrupted", Tags("scenario", "chat", "workload", "chat"), T0, 1)
	f.Value("iterations", Tags("scenario", "rag"), T0, 1, 1, 1)

	// checks: "ok" in both scenarios, "a first" outside groups, "fast" in
	// group ::chat.
	f.Value("checks", Tags("scenario", "chat", "check", "ok"), T0, 1, 1, 1, 0)
	f.Value("checks", Tags("scenario", "rag", "check", "ok"), T0, 1, 1)
	f.Value("checks", Tags("scenario", "chat", "check", "a first"), T0, 1)
	f.Value("checks", Tags("scenario", "chat", "check", "fast", "group", "::chat"), T0, 1, 0, 0)

	// the script's own metrics
	f.Reg.MustRegister(metrics.Metric{Name: "my_counter", Type: metrics.Counter, Custom: true})
	f.Reg.MustRegister(metrics.Metric{Name: "my_gauge", Type: metrics.Gauge, Custom: true})
	f.Reg.MustRegister(metrics.Metric{Name: "my_rate", Type: metrics.Rate, Custom: true})
	f.Reg.MustRegister(metrics.Metric{Name: "my_time", Type: metrics.Trend, Contains: metrics.Time, Custom: true})
	f.Reg.MustRegister(metrics.Metric{Name: "my_unused", Type: metrics.Counter, Custom: true})
	f.Value("my_counter", Tags("scenario", "chat"), T0, 5, 7)
	// The gauge's value is its latest sample, though its series sort the
	// other way.
	f.Value("my_gauge", Tags("scenario", "chat"), T0.Add(time.Second), 5)
	f.Value("my_gauge", Tags("scenario", "rag"), T0, 3)
	f.Value("my_rate", Tags("scenario", "chat"), T0, 1, 1, 0, 1)
	f.Value("my_time", Tags("scenario", "rag"), T0, 1, 2, 3)

	return &engine.Report{
		Snapshot: f.Agg.Snapshot(),
		Registry: f.Reg,
		Scenarios: Scenarios(t, `{"scenarios": {
			"chat": {"executor": "constant-vus", "vus": 4, "duration": "10s", "tags": {"workload": "chat"}},
			"rag": {"executor": "per-vu-iterations", "vus": 2, "iterations": 3, "startTime": "2s"}}}`),
		Start: T0,
		End:   T0.Add(10 * time.Second),
		Windows: map[string]engine.Window{
			"chat": {Start: T0, End: T0.Add(10 * time.Second)},
			"rag":  {Start: T0.Add(2 * time.Second), End: T0.Add(7 * time.Second)},
		},
		ScriptErrors:      []engine.ErrorCount{{Message: "script.js:3:9: Error: boom", Count: 2}},
		OtherScriptErrors: 3,
		RequestErrors: map[string][]engine.ErrorCount{
			"http_5xx": {{Message: "HTTP 500 Internal Server Error: overloaded", Count: 1}, {Message: "HTTP 503 Service Unavailable", Count: 1}},
			"timeout":  {{Message: "reading the response: request timed out after 1m0s", Count: 1}},
		},
		Client: health.Report{CPU: 0.25, Procs: 2, SchedDelayP99: 0.5, SchedDelayMax: 1},
	}
}

// Meta is the metadata of the fixture's runs.
var Meta = summary.Meta{Tool: "llmrun", Version: "test", Script: "script.js", ScriptSHA256: "abc", Target: "http://x", Seed: 42}

// Near says whether got is want within float64 rounding.
func Near(got, want float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want)/math.Abs(want) < 1e-9
}

// NearHDR allows the 0.1 % error of an HDR percentile.
func NearHDR(got, want float64) bool { return math.Abs(got-want) <= 0.002*math.Abs(want) }
