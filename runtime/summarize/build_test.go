package summarize_test

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

func TestBuildServing(t *testing.T) {
	s := summarize.Build(summarytest.TwoScenarioReport(t), summarytest.Meta)
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
				bad = bad || !summarytest.Near(p[0], p[1])
			}
			if bad {
				t.Errorf("serving\n got %+v\nwant %+v", g, w)
			}
		})
	}
}

func TestBuildLatency(t *testing.T) {
	s := summarize.Build(summarytest.TwoScenarioReport(t), summarytest.Meta)
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
		ok := g.Label == w.label && g.Count == w.count && summarytest.Near(g.Mean, w.mean) && g.Min == w.min && g.Max == w.max &&
			summarytest.NearHDR(g.P["p50"], w.p50) && summarytest.NearHDR(g.P["p90"], w.p90) && summarytest.NearHDR(g.P["p95"], w.p95) && summarytest.NearHDR(g.P["p99"], w.p99)
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
	rep := summarytest.TwoScenarioReport(t)
	s := summarize.Build(rep, summarytest.Meta)

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
			if got, ok := m.Values[k]; !ok || !summarytest.NearHDR(got, want) {
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
	if m.Tool != "llmrun" || m.Seed != 42 || m.ScriptSHA256 != "abc" || !m.Start.Equal(summarytest.T0) || !m.End.Equal(summarytest.T0.Add(10*time.Second)) || m.Interrupted {
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
		f := summarytest.NewFixture()
		f.Request(summarytest.Tags("scenario", "default"), summarytest.Completed("m", 10, 100, 10, 5))
		rep := &engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Scenarios: summarytest.Scenarios(t, `{"vus": 1, "duration": "1s"}`),
			Start: summarytest.T0, End: summarytest.T0.Add(time.Second)}
		s := summarize.Build(rep, summarytest.Meta)
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
		f := summarytest.NewFixture()
		scs := summarytest.Scenarios(t, `{"scenarios": {"a": {"executor": "shared-iterations"}, "b": {"executor": "shared-iterations"}}}`)
		rep := &engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Scenarios: scs, Start: summarytest.T0, End: summarytest.T0}
		s := summarize.Build(rep, summarytest.Meta)
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

// The load shape keeps the VUs each scenario used beside its maxVUs, and
// where the run's stop ended one before its plan did; a merge of two
// processes sums the VUs and keeps the earlier stop.
func TestLoadShapeKeepsVUsUsedAndWhereAScenarioStopped(t *testing.T) {
	scs := summarytest.Scenarios(t, `{"scenarios": {
		"chat": {"executor": "constant-arrival-rate", "rate": 2, "duration": "10s", "preAllocatedVUs": 1, "maxVUs": 8},
		"warm": {"executor": "constant-vus", "vus": 4, "duration": "1s"}}}`)
	build := func(chatPeak int64, chatAt time.Duration) *summary.Summary {
		f := summarytest.NewFixture()
		rep := &engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Scenarios: scs, Start: summarytest.T0, End: summarytest.T0.Add(3 * time.Second), Interrupted: true,
			Final: []engine.ScenarioProgress{
				{Name: "chat", Phase: engine.PhaseDone, Interrupted: true, Elapsed: chatAt, Duration: 10 * time.Second, PeakVUs: chatPeak, MaxVUs: 8},
				{Name: "warm", Phase: engine.PhaseDone, Interrupted: true, Elapsed: time.Second, Duration: time.Second, PeakVUs: 4, MaxVUs: 4},
			}}
		return summarize.Build(rep, summarytest.Meta)
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
