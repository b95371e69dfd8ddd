package summary_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/checks"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fixture is a run's registry and aggregator, fed by hand.
type fixture struct {
	reg  *metrics.Registry
	agg  *metrics.Aggregator
	llm  *llm.Metrics
	next int // the shard the next samples go to
	// keep, when set, says which calls of add (counted from 0) this
	// fixture keeps: one process's share of a test run by several.
	keep  func(call int) bool
	calls int
}

func newFixture() *fixture {
	reg := metrics.NewRegistry()
	f := &fixture{reg: reg, agg: metrics.NewAggregator(3), llm: llm.RegisterMetrics(reg)}
	checks.RegisterMetrics(reg)
	for _, name := range []string{"iterations", "iterations_interrupted", "script_errors"} {
		reg.MustRegister(metrics.Metric{Name: name, Type: metrics.Counter})
	}
	return f
}

func tagSet(kv ...string) *metrics.TagSet {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return metrics.NewTagSet(m)
}

// add sends samples to the shards in turn, as VUs do.
func (f *fixture) add(samples ...metrics.Sample) {
	f.calls++
	if f.keep != nil && !f.keep(f.calls-1) {
		return
	}
	f.agg.Shard(f.next).AddSamples(samples)
	f.next++
}

func (f *fixture) request(tags *metrics.TagSet, r *llm.Result) {
	f.add(f.llm.AppendSamples(nil, tags, r)...)
}

func (f *fixture) value(name string, tags *metrics.TagSet, at time.Time, vals ...float64) {
	m := f.reg.Get(name)
	for _, v := range vals {
		f.add(metrics.Sample{Metric: m, Tags: tags, Time: at, Value: v})
	}
}

func okResult(model string, ttft, e2e float64, out, prompt int, itl ...float64) *llm.Result {
	return &llm.Result{OK: true, Status: 200, API: llm.ChatCompletions, Model: model, Stream: true,
		TTFT: ttft, TTFO: ttft, E2E: e2e, TPOT: (e2e - ttft) / float64(out-1), ITL: itl,
		Chunks: out, OutputTokens: out, PromptTokens: prompt, TokenSource: llm.TokensFromUsage,
		FinishReason: "length", Timings: llm.Timings{TTFB: ttft / 2}, Start: t0}
}

func failed(model string, class llm.ErrorClass) *llm.Result {
	return &llm.Result{Model: model, Class: class, Error: string(class), Stream: true, E2E: 5, Start: t0}
}

func scenarios(t *testing.T, options string) []engine.Scenario {
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

// twoScenarioReport is a 10 s run of two scenarios:
//   - chat (0–10 s, model m-a): 8 ok requests (100 output and 20 prompt
//     tokens each, TTFT 10..80 ms, E2E 1010..1080 ms, 3 gaps of 5 ms), the
//     first after retries of an http_429 and a connect failure, 2
//     http_5xx (after a retried http_5xx), 1 http_429, 1 interrupted; 12
//     iterations, 1 interrupted.
//   - rag (2–7 s, model m-b): 2 ok requests (50 output, 400 prompt tokens,
//     TTFT 200, E2E 2000, 2 gaps of 10 ms), 1 timeout; 3 iterations.
func twoScenarioReport(t *testing.T) *engine.Report { return twoScenarioPart(t, nil) }

// twoScenarioPart is the share of twoScenarioReport's samples that keep
// keeps (nil: all of them), in a run of the same window; the other fields
// of the report are the whole's.
func twoScenarioPart(t *testing.T, keep func(call int) bool) *engine.Report {
	f := newFixture()
	f.keep = keep
	chat := tagSet("scenario", "chat", "workload", "chat", "model", "m-a")
	rag := tagSet("scenario", "rag", "model", "m-b")
	for i := 1; i <= 8; i++ {
		r := okResult("m-a", float64(10*i), float64(1000+10*i), 100, 20, 5, 5, 5)
		if i == 1 {
			r.Attempts, r.Retried = 3, []llm.ErrorClass{llm.ErrHTTP429, llm.ErrConnect}
		}
		f.request(chat, r)
	}
	f.request(chat, failed("m-a", llm.ErrHTTP5xx))
	retried := failed("m-a", llm.ErrHTTP5xx)
	retried.Attempts, retried.Retried = 2, []llm.ErrorClass{llm.ErrHTTP5xx}
	f.request(chat, retried)
	f.request(chat, failed("m-a", llm.ErrHTTP429))
	f.request(chat, failed("m-a", llm.ErrCanceled))
	for range 2 {
		f.request(rag, okResult("m-b", 200, 2000, 50, 400, 10, 10))
	}
	f.request(rag, failed("m-b", llm.ErrTimeout))

	f.value("iterations", tagSet("scenario", "chat", "workload", "chat"), t0, slices.Repeat([]float64{1}, 12)...)
	f.value("iterations_interrupted", tagSet("scenario", "chat", "workload", "chat"), t0, 1)
	f.value("iterations", tagSet("scenario", "rag"), t0, 1, 1, 1)

	// checks: "ok" in both scenarios, "a first" outside groups, "fast" in
	// group ::chat.
	f.value("checks", tagSet("scenario", "chat", "check", "ok"), t0, 1, 1, 1, 0)
	f.value("checks", tagSet("scenario", "rag", "check", "ok"), t0, 1, 1)
	f.value("checks", tagSet("scenario", "chat", "check", "a first"), t0, 1)
	f.value("checks", tagSet("scenario", "chat", "check", "fast", "group", "::chat"), t0, 1, 0, 0)

	// the script's own metrics
	f.reg.MustRegister(metrics.Metric{Name: "my_counter", Type: metrics.Counter, Custom: true})
	f.reg.MustRegister(metrics.Metric{Name: "my_gauge", Type: metrics.Gauge, Custom: true})
	f.reg.MustRegister(metrics.Metric{Name: "my_rate", Type: metrics.Rate, Custom: true})
	f.reg.MustRegister(metrics.Metric{Name: "my_time", Type: metrics.Trend, Contains: metrics.Time, Custom: true})
	f.reg.MustRegister(metrics.Metric{Name: "my_unused", Type: metrics.Counter, Custom: true})
	f.value("my_counter", tagSet("scenario", "chat"), t0, 5, 7)
	// The gauge's value is its latest sample, though its series sort the
	// other way.
	f.value("my_gauge", tagSet("scenario", "chat"), t0.Add(time.Second), 5)
	f.value("my_gauge", tagSet("scenario", "rag"), t0, 3)
	f.value("my_rate", tagSet("scenario", "chat"), t0, 1, 1, 0, 1)
	f.value("my_time", tagSet("scenario", "rag"), t0, 1, 2, 3)

	return &engine.Report{
		Snapshot: f.agg.Snapshot(),
		Registry: f.reg,
		Scenarios: scenarios(t, `{"scenarios": {
			"chat": {"executor": "constant-vus", "vus": 4, "duration": "10s", "tags": {"workload": "chat"}},
			"rag": {"executor": "per-vu-iterations", "vus": 2, "iterations": 3, "startTime": "2s"}}}`),
		Start: t0,
		End:   t0.Add(10 * time.Second),
		Windows: map[string]engine.Window{
			"chat": {Start: t0, End: t0.Add(10 * time.Second)},
			"rag":  {Start: t0.Add(2 * time.Second), End: t0.Add(7 * time.Second)},
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

var testMeta = summary.Meta{Tool: "llmrun", Version: "test", Script: "script.js", ScriptSHA256: "abc", Target: "http://x", Seed: 42}

func near(got, want float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want)/math.Abs(want) < 1e-9
}

// nearHDR allows the 0.1 % error of an HDR percentile.
func nearHDR(got, want float64) bool { return math.Abs(got-want) <= 0.002*math.Abs(want) }

func TestBuildServing(t *testing.T) {
	s := summarize.Build(twoScenarioReport(t), testMeta)
	if len(s.Scenarios) != 2 || s.Scenarios[0].Name != "chat" || s.Scenarios[1].Name != "rag" {
		t.Fatalf("scenario summaries %+v, want chat then rag", s.Scenarios)
	}
	type servingCase struct {
		name      string
		got, want summary.Serving
	}
	tests := []servingCase{
		{"whole run", s.Serving, summary.Serving{
			DurationSeconds: 10, Requests: 14, OK: 10, Failed: 4, Interrupted: 1, SuccessRate: 10.0 / 14,
			RequestThroughput: 1, OutputTokens: 900, PromptTokens: 960, MeanOutputTokens: 90, MeanInputTokens: 96,
			OutputTokenThroughput: 90, TotalTokenThroughput: 186, Iterations: 15, InterruptedIterations: 1,
		}},
		{"chat over its 10 s", s.Scenarios[0].Serving, summary.Serving{
			DurationSeconds: 10, Requests: 11, OK: 8, Failed: 3, Interrupted: 1, SuccessRate: 8.0 / 11,
			RequestThroughput: 0.8, OutputTokens: 800, PromptTokens: 160, MeanOutputTokens: 100, MeanInputTokens: 20,
			OutputTokenThroughput: 80, TotalTokenThroughput: 96, Iterations: 12, InterruptedIterations: 1,
		}},
		{"rag over its own 5 s", s.Scenarios[1].Serving, summary.Serving{
			DurationSeconds: 5, Requests: 3, OK: 2, Failed: 1, SuccessRate: 2.0 / 3,
			RequestThroughput: 0.4, OutputTokens: 100, PromptTokens: 800, MeanOutputTokens: 50, MeanInputTokens: 400,
			OutputTokenThroughput: 20, TotalTokenThroughput: 180, Iterations: 3,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, w := tc.got, tc.want
			ints := [][2]int64{{g.Requests, w.Requests}, {g.OK, w.OK}, {g.Failed, w.Failed}, {g.Interrupted, w.Interrupted},
				{g.OutputTokens, w.OutputTokens}, {g.PromptTokens, w.PromptTokens}, {g.Iterations, w.Iterations},
				{g.InterruptedIterations, w.InterruptedIterations}}
			floats := [][2]float64{{g.DurationSeconds, w.DurationSeconds}, {g.SuccessRate, w.SuccessRate},
				{g.RequestThroughput, w.RequestThroughput}, {g.MeanOutputTokens, w.MeanOutputTokens},
				{g.MeanInputTokens, w.MeanInputTokens}, {g.OutputTokenThroughput, w.OutputTokenThroughput},
				{g.TotalTokenThroughput, w.TotalTokenThroughput}}
			bad := false
			for _, p := range ints {
				bad = bad || p[0] != p[1]
			}
			for _, p := range floats {
				bad = bad || !near(p[0], p[1])
			}
			if bad {
				t.Errorf("serving\n got %+v\nwant %+v", g, w)
			}
		})
	}
}

func TestBuildLatency(t *testing.T) {
	s := summarize.Build(twoScenarioReport(t), testMeta)
	type row struct {
		label              string
		count              int64
		mean, min, max     float64
		p50, p90, p95, p99 float64
	}
	// TTFT: 10, 20, ..., 80, 200, 200; E2E: 1010..1080, 2000, 2000; TPOT
	// (E2E-TTFT)/99 = 1000/99 for chat, 1800/49 for rag; ITL 24×5, 4×10;
	// TTFB is half the TTFT.
	tpotChat, tpotRag := 1000.0/99, 1800.0/49
	want := []row{
		{"TTFT", 10, 76, 10, 200, 50, 200, 200, 200},
		{"TPOT", 10, (8*tpotChat + 2*tpotRag) / 10, tpotChat, tpotRag, tpotChat, tpotRag, tpotRag, tpotRag},
		{"ITL", 28, (24*5 + 4*10) / 28.0, 5, 10, 5, 10, 10, 10},
		{"E2E", 10, (8*1045 + 2*2000) / 10.0, 1010, 2000, 1050, 2000, 2000, 2000},
		{"TTFB", 10, 38, 5, 100, 25, 100, 100, 100},
	}
	if len(s.Latency) != len(want) {
		t.Fatalf("%d latency rows, want %d: %+v", len(s.Latency), len(want), s.Latency)
	}
	for i, w := range want {
		g := s.Latency[i]
		ok := g.Label == w.label && g.Count == w.count && near(g.Mean, w.mean) && g.Min == w.min && g.Max == w.max &&
			nearHDR(g.P["p50"], w.p50) && nearHDR(g.P["p90"], w.p90) && nearHDR(g.P["p95"], w.p95) && nearHDR(g.P["p99"], w.p99)
		if !ok {
			t.Errorf("row %d\n got %+v\nwant %+v", i, g, w)
		}
	}
	// The per-scenario rows hold the scenario's requests only.
	for _, sc := range s.Scenarios {
		n := map[string]int64{"chat": 8, "rag": 2}[sc.Name]
		if len(sc.Latency) != 5 || sc.Latency[0].Count != n {
			t.Errorf("scenario %s: latency rows %+v, want 5 with TTFT count %d", sc.Name, sc.Latency, n)
		}
	}
}

func TestBuildErrorsChecksMetricsAndMeta(t *testing.T) {
	rep := twoScenarioReport(t)
	s := summarize.Build(rep, testMeta)

	wantErrors := []summary.ErrorClassCount{
		{Class: "http_5xx", Count: 2, Messages: []summary.ErrorCount{{Message: "HTTP 500 Internal Server Error: overloaded", Count: 1}, {Message: "HTTP 503 Service Unavailable", Count: 1}}},
		{Class: "http_429", Count: 1},
		{Class: "timeout", Count: 1, Messages: []summary.ErrorCount{{Message: "reading the response: request timed out after 1m0s", Count: 1}}},
	}
	if !reflect.DeepEqual(s.Errors, wantErrors) {
		t.Errorf("errors %+v, want %+v (most frequent first, then by name, with their messages)", s.Errors, wantErrors)
	}
	wantRetries := []summary.ErrorClassCount{{Class: "connect", Count: 1}, {Class: "http_429", Count: 1}, {Class: "http_5xx", Count: 1}}
	if !reflect.DeepEqual(s.Retries, wantRetries) {
		t.Errorf("retries %+v, want %+v", s.Retries, wantRetries)
	}
	if !reflect.DeepEqual(s.ScriptErrors, []summary.ErrorCount{{Message: "script.js:3:9: Error: boom", Count: 2}}) || s.OtherScriptErrors != 3 {
		t.Errorf("script errors %+v (other %d), want the report's", s.ScriptErrors, s.OtherScriptErrors)
	}
	wantChecks := []summary.Check{
		{Name: "a first", Passes: 1},
		{Name: "ok", Passes: 5, Fails: 1},
		{Name: "fast", Group: "::chat", Passes: 1, Fails: 2},
	}
	if !reflect.DeepEqual(s.Checks, wantChecks) {
		t.Errorf("checks %+v, want %+v", s.Checks, wantChecks)
	}

	if got, want := s.CustomMetrics(), []string{"my_counter", "my_gauge", "my_rate", "my_time"}; !slices.Equal(got, want) {
		t.Errorf("custom metrics %v, want %v", got, want)
	}
	values := []struct {
		metric, typ, contains string
		values                map[string]float64
	}{
		{"my_counter", "counter", "default", map[string]float64{"count": 12, "rate": 1.2}},
		{"my_gauge", "gauge", "default", map[string]float64{"value": 5, "min": 3, "max": 5}},
		{"my_rate", "rate", "default", map[string]float64{"rate": 0.75, "passes": 3, "fails": 1}},
		{"my_time", "trend", "time", map[string]float64{"count": 3, "avg": 2, "min": 1, "max": 3, "med": 2}},
		{"llm_requests", "counter", "default", map[string]float64{"count": 14, "rate": 1.4}},
		{"llm_failed", "rate", "default", map[string]float64{"rate": 4.0 / 14, "passes": 4, "fails": 10}},
		{"llm_retries", "counter", "default", map[string]float64{"count": 3, "rate": 0.3}},
		{"checks", "rate", "default", map[string]float64{"passes": 7, "fails": 3}},
	}
	for _, v := range values {
		m, ok := s.Metrics[v.metric]
		if !ok {
			t.Errorf("no %s in metrics", v.metric)
			continue
		}
		if m.Type != v.typ || m.Contains != v.contains {
			t.Errorf("%s: type %s contains %s, want %s %s", v.metric, m.Type, m.Contains, v.typ, v.contains)
		}
		for k, want := range v.values {
			if got, ok := m.Values[k]; !ok || !nearHDR(got, want) {
				t.Errorf("%s %s = %v, want %v (values %v)", v.metric, k, got, want, m.Values)
			}
		}
	}
	for _, absent := range []string{"my_unused", "group_duration"} {
		if _, ok := s.Metrics[absent]; ok {
			t.Errorf("%s has no samples but is in metrics", absent)
		}
	}

	m := s.Meta
	if m.Tool != "llmrun" || m.Seed != 42 || m.ScriptSHA256 != "abc" || !m.Start.Equal(t0) || !m.End.Equal(t0.Add(10*time.Second)) || m.Interrupted {
		t.Errorf("meta %+v", m)
	}
	if !slices.Equal(m.Models, []string{"m-a", "m-b"}) {
		t.Errorf("models %v, want m-a, m-b", m.Models)
	}
	wantShape := []summary.ScenarioShape{
		{Name: "chat", Executor: "constant-vus", Exec: "default", StartTime: "0s", MaxVUs: 4, Tags: map[string]string{"workload": "chat"},
			Description: rep.Scenarios[0].Config.Describe()},
		{Name: "rag", Executor: "per-vu-iterations", Exec: "default", StartTime: "2s", MaxVUs: 2,
			Description: rep.Scenarios[1].Config.Describe()},
	}
	if !reflect.DeepEqual(m.LoadShape, wantShape) {
		t.Errorf("load shape\n got %+v\nwant %+v", m.LoadShape, wantShape)
	}
	if !reflect.DeepEqual(s.Client, rep.Client) {
		t.Errorf("client %+v, want the report's %+v", s.Client, rep.Client)
	}
}

func TestBuildEdgeCases(t *testing.T) {
	t.Run("one scenario: no split", func(t *testing.T) {
		f := newFixture()
		f.request(tagSet("scenario", "default"), okResult("m", 10, 100, 10, 5))
		rep := &engine.Report{Snapshot: f.agg.Snapshot(), Registry: f.reg, Scenarios: scenarios(t, `{"vus": 1, "duration": "1s"}`),
			Start: t0, End: t0.Add(time.Second)}
		s := summarize.Build(rep, testMeta)
		if s.Scenarios != nil {
			t.Errorf("scenarios %+v, want none for a single scenario", s.Scenarios)
		}
		if s.Serving.OK != 1 || s.Serving.RequestThroughput != 1 {
			t.Errorf("serving %+v", s.Serving)
		}
	})
	t.Run("empty run of zero length", func(t *testing.T) {
		// As when setup() fails: nothing measured, no window, a scenario
		// that never ran.
		f := newFixture()
		scs := scenarios(t, `{"scenarios": {"a": {"executor": "shared-iterations"}, "b": {"executor": "shared-iterations"}}}`)
		rep := &engine.Report{Snapshot: f.agg.Snapshot(), Registry: f.reg, Scenarios: scs, Start: t0, End: t0}
		s := summarize.Build(rep, testMeta)
		// The headline has its counts and throughputs, all 0, and no
		// latency keys.
		zero := func(sv summary.Serving) bool {
			for k, v := range sv.Headline {
				if v != 0 || strings.HasSuffix(k, "_ms") {
					return false
				}
			}
			sv.Headline = nil
			return reflect.DeepEqual(sv, summary.Serving{})
		}
		if !zero(s.Serving) {
			t.Errorf("serving %+v, want zeros", s.Serving)
		}
		if len(s.Latency) != 0 || len(s.Errors) != 0 || len(s.Retries) != 0 || len(s.Checks) != 0 || len(s.Metrics) != 0 {
			t.Errorf("summary of nothing: %+v", s)
		}
		for _, sc := range s.Scenarios {
			if !zero(sc.Serving) || len(sc.Metrics) != 0 {
				t.Errorf("scenario %s serving %+v metrics %v, want zeros", sc.Name, sc.Serving, sc.Metrics)
			}
		}
		var buf bytes.Buffer
		if err := s.WriteJSON(&buf); err != nil {
			t.Fatalf("WriteJSON: %v", err)
		}
	})
}

func TestWriteJSONRoundTrip(t *testing.T) {
	s := summarize.Build(twoScenarioReport(t), testMeta)
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back summary.Summary
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("the export is not valid JSON: %v", err)
	}
	if !reflect.DeepEqual(&back, s) {
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(&back)
		t.Errorf("round trip changed the summary:\nbefore %s\nafter  %s", a, b)
	}

	// The field names are the export's contract.
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	paths := []struct {
		path []any
		want any
	}{
		{[]any{"schema_version"}, float64(summary.SchemaVersion)},
		{[]any{"serving", "completed"}, 10.0},
		{[]any{"serving", "failed"}, 4.0},
		{[]any{"serving", "request_throughput"}, 1.0},
		{[]any{"serving", "total_output_tokens"}, 900.0},
		{[]any{"latency", 0, "metric"}, "llm_ttft"},
		{[]any{"latency", 0, "percentiles_ms", "p50"}, s.Latency[0].P["p50"]},
		{[]any{"scenarios", 1, "name"}, "rag"},
		{[]any{"errors", 0, "class"}, "http_5xx"},
		{[]any{"checks", 2, "group"}, "::chat"},
		{[]any{"metrics", "my_counter", "values", "count"}, 12.0},
		{[]any{"meta", "seed"}, 42.0},
		{[]any{"meta", "start"}, "2026-03-04T05:06:07Z"},
		{[]any{"serving", "headline", "completed"}, 10.0},
		{[]any{"serving", "headline", "p99_ttft_ms"}, s.Latency[0].P["p99"]},
		{[]any{"metrics", "llm_ttft", "histogram", "scale"}, 1000.0},
		{[]any{"metrics", "llm_ttft", "histogram", "count"}, 10.0},
		{[]any{"scenarios", 1, "metrics", "llm_ttft", "histogram", "count"}, 2.0},
		{[]any{"scenarios", 1, "serving", "headline", "completed"}, 2.0},
	}
	for _, p := range paths {
		var v any = raw
		for _, k := range p.path {
			switch k := k.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[k]
			case int:
				a, _ := v.([]any)
				if k < len(a) {
					v = a[k]
				} else {
					v = nil
				}
			}
		}
		if v != p.want {
			t.Errorf("%v = %v, want %v", p.path, v, p.want)
		}
	}
}

// A run that tried and measured no successful request says why; a run
// with a success, or one that sent no LLM request and ran cleanly, does
// not.
func TestNoSuccess(t *testing.T) {
	threw := func(n float64) map[string]summary.MetricSummary {
		return map[string]summary.MetricSummary{"script_errors": {Values: map[string]float64{"count": n}}}
	}
	for _, tc := range []struct {
		name string
		s    summary.Summary
		want string
	}{
		{"a success", summary.Summary{Serving: summary.Serving{Requests: 9, OK: 1, Failed: 8}}, ""},
		{"all failed", summary.Summary{Serving: summary.Serving{Requests: 9, Failed: 9}}, "no request succeeded: all 9 failed"},
		{"all cut", summary.Summary{Serving: summary.Serving{Interrupted: 3}}, "no request completed: all 3 were cut"},
		{"all warmup", summary.Summary{Serving: summary.Serving{WarmupRequests: 5}}, "the 5 requests sent were all warmup"},
		{"every iteration threw", summary.Summary{Serving: summary.Serving{Iterations: 4}, Metrics: threw(4)}, "all 4 iterations threw"},
		{"the one iteration threw", summary.Summary{Serving: summary.Serving{Iterations: 1}, Metrics: threw(1)}, "all 1 iteration threw"},
		{"some iterations threw", summary.Summary{Serving: summary.Serving{Iterations: 4}, Metrics: threw(3)}, ""},
		{"no LLM request, clean", summary.Summary{Serving: summary.Serving{Iterations: 4}}, ""},
	} {
		got := tc.s.NoSuccess()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The load shape keeps the VUs each scenario used beside its maxVUs, and
// where the run's stop ended one before its plan did; a merge of two
// processes sums the VUs and keeps the earlier stop.
func TestLoadShapeKeepsVUsUsedAndWhereAScenarioStopped(t *testing.T) {
	scs := scenarios(t, `{"scenarios": {
		"chat": {"executor": "constant-arrival-rate", "rate": 2, "duration": "10s", "preAllocatedVUs": 1, "maxVUs": 8},
		"warm": {"executor": "constant-vus", "vus": 4, "duration": "1s"}}}`)
	build := func(chatPeak int64, chatAt time.Duration) *summary.Summary {
		f := newFixture()
		rep := &engine.Report{Snapshot: f.agg.Snapshot(), Registry: f.reg, Scenarios: scs, Start: t0, End: t0.Add(3 * time.Second), Interrupted: true,
			Final: []engine.ScenarioProgress{
				{Name: "chat", Phase: engine.PhaseDone, Interrupted: true, Elapsed: chatAt, Duration: 10 * time.Second, PeakVUs: chatPeak, MaxVUs: 8},
				{Name: "warm", Phase: engine.PhaseDone, Interrupted: true, Elapsed: time.Second, Duration: time.Second, PeakVUs: 4, MaxVUs: 4},
			}}
		return summarize.Build(rep, testMeta)
	}
	a := build(3, 3*time.Second)
	var buf bytes.Buffer
	if err := a.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	a, err := summary.Parse("a.json", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	chat, warm := a.Meta.LoadShape[0], a.Meta.LoadShape[1]
	if chat.VUs() != "3/8" || chat.InterruptedAt == nil || *chat.InterruptedAt != 0.3 {
		t.Errorf("chat: VUs %s, interrupted at %v; want 3/8 at 0.3", chat.VUs(), chat.InterruptedAt)
	}
	if warm.VUs() != "4/4" || warm.InterruptedAt != nil {
		t.Errorf("warm, which ran to its end: VUs %s, interrupted at %v; want 4/4, not interrupted", warm.VUs(), warm.InterruptedAt)
	}
	m, err := summary.Merge(a, build(2, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if chat := m.Meta.LoadShape[0]; chat.VUs() != "5/16" || chat.InterruptedAt == nil || *chat.InterruptedAt != 0.2 {
		t.Errorf("merged chat: VUs %s, interrupted at %v; want 5/16 at 0.2", chat.VUs(), chat.InterruptedAt)
	}
}
