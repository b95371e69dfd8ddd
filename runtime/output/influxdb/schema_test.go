package influxdb

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/influxtest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Every point of a run lands with the documented schema and reads back
// as written: llm_run_start, each llm_request (ok and failed, from a
// record the caller reuses), the llm_interval points and the llm_run
// points of a two-scenario summary.
func testSchema(t *testing.T, s *influxtest.Server) {
	run := testRun(t)
	// As many output tokens arrived as the records count.
	run.Progress = func() engine.Progress {
		return engine.Progress{ActiveVUs: 3, MaxVUs: 8, Arrived: []engine.TokenCount{
			{Scenario: "batch", Model: "m2", Tokens: 20}, {Scenario: "chat", Model: "m1", Tokens: 150}}}
	}
	o := New(testConfig(s))
	if err := o.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	base := run.Start.Add(time.Second)
	records := testRecords(base)
	var r llm.Record // reused, as a VU may
	for _, rec := range records {
		r = rec
		o.AddRequest(&r)
		r.TTFT, r.OK, r.Tags = -1, !r.OK, nil
	}

	sum := testSummary(run.Start)
	rep := o.Finish(context.Background(), sum)
	if want := int64(1 + len(records) + 3 + 3 + 1); rep.Written != want || rep.Dropped != 0 || rep.Err != "" || len(rep.Reasons) != 0 {
		t.Errorf("report %+v, want %d written and nothing else", rep, want)
	}
	if rep.Output != "influxdb "+s.URL+" (bucket llmrun/autogen)" {
		t.Errorf("report's output %q", rep.Output)
	}
	if n := totalPoints(t, s, run.ID); n != rep.Written {
		t.Errorf("%d points stored, %d reported written", n, rep.Written)
	}
	where := fmt.Sprintf(" WHERE run_id='%s'", run.ID)
	runTags := row{"run_id": run.ID, "testid": "chat", "env": "ci"}

	t.Run("llm_run_start", func(t *testing.T) {
		want := []row{with(runTags, row{"time": run.Start.UTC().Format(time.RFC3339Nano), "max_vus": 8.0})}
		if got := selectRows(t, s, "SELECT * FROM llm_run_start"+where); !reflect.DeepEqual(got, want) {
			t.Errorf("got  %v\nwant %v", got, want)
		}
	})

	t.Run("llm_request", func(t *testing.T) {
		want := []row{
			with(runTags, row{"time": base, "scenario": "chat", "model": "m1", "workload": "short", "turn": "1",
				"ttft": 120.5, "ttfo": 130.0, "tpot": 12.25, "e2e": 1500.0, "itl_mean": 12.0, "itl_p99": 30.0,
				"output_tokens": 100.0, "input_tokens": 500.0, "cached_tokens": 64.0, "reasoning_tokens": 10.0, "image_count": 0.0, "image_bytes": 0.0, "image_pixels": 0.0, "ok": true, "status": 200.0}),
			with(runTags, row{"time": base, "scenario": "batch", "model": "m2", "ttft": 300.0, "tpot": 5.0, "e2e": 800.0,
				"output_tokens": 20.0, "input_tokens": 10.0, "cached_tokens": 0.0, "reasoning_tokens": 0.0, "image_count": 0.0, "image_bytes": 0.0, "image_pixels": 0.0, "ok": true, "status": 200.0}),
			with(runTags, row{"time": base.Add(time.Second), "scenario": "chat", "model": "m1", "workload": "long", "turn": "2",
				"ttft": 200.0, "tpot": 20.0, "e2e": 2500.0, "output_tokens": 50.0, "input_tokens": 1000.0, "cached_tokens": 0.0, "reasoning_tokens": 0.0, "image_count": 0.0, "image_bytes": 0.0, "image_pixels": 0.0, "ok": true, "status": 200.0}),
			with(runTags, row{"time": base.Add(2 * time.Second), "scenario": "chat", "model": "m1", "workload": "short", "turn": "1",
				"e2e": 80.0, "output_tokens": 0.0, "input_tokens": 0.0, "cached_tokens": 0.0, "reasoning_tokens": 0.0, "image_count": 0.0, "image_bytes": 0.0, "image_pixels": 0.0, "ok": false, "status": 503.0, "error_class": "http_5xx"}),
			with(runTags, row{"time": base.Add(3 * time.Second), "scenario": "batch", "model": "m2",
				"e2e": 30000.0, "output_tokens": 0.0, "input_tokens": 0.0, "cached_tokens": 0.0, "reasoning_tokens": 0.0, "image_count": 0.0, "image_bytes": 0.0, "image_pixels": 0.0, "ok": false, "status": 0.0, "error_class": "timeout"}),
		}
		for _, w := range want {
			w["time"] = w["time"].(time.Time).UTC().Format(time.RFC3339Nano)
		}
		got := selectRows(t, s, "SELECT * FROM llm_request"+where)
		key := func(r row) string { return fmt.Sprint(r["time"], r["scenario"]) }
		slices.SortFunc(got, func(a, b row) int { return strings.Compare(key(a), key(b)) })
		slices.SortFunc(want, func(a, b row) int { return strings.Compare(key(a), key(b)) })
		if len(got) != len(want) {
			t.Fatalf("%d points, want %d: %v", len(got), len(want), got)
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("point %d:\ngot  %v\nwant %v", i, got[i], want[i])
			}
		}
	})

	t.Run("llm_interval", func(t *testing.T) {
		got := map[string]row{}
		for _, r := range selectRows(t, s, "SELECT * FROM llm_interval"+where) {
			got[r["scenario"].(string)] = r
		}
		tests := []struct {
			scenario         string
			exact            row
			near             map[string]float64
			outTok, totalTok float64 // per request
			activeVUs        bool
		}{
			{"chat", row{"requests": 3.0, "failed": 1.0, "errors_http_5xx": 1.0},
				map[string]float64{"ttft_p50": 120.5, "ttft_p90": 200, "ttft_p99": 200, "tpot_p50": 12.25, "tpot_p99": 20, "e2e_p50": 1500, "e2e_p99": 2500}, 50, 550, false},
			{"batch", row{"requests": 2.0, "failed": 1.0, "errors_timeout": 1.0},
				map[string]float64{"ttft_p50": 300, "ttft_p90": 300, "ttft_p99": 300, "tpot_p50": 5, "tpot_p99": 5, "e2e_p50": 800, "e2e_p99": 800}, 10, 15, false},
			{"_all", row{"requests": 5.0, "failed": 2.0, "errors_http_5xx": 1.0, "errors_timeout": 1.0, "active_vus": 3.0},
				map[string]float64{"ttft_p50": 200, "ttft_p90": 300, "ttft_p99": 300, "tpot_p50": 12.25, "tpot_p99": 20, "e2e_p50": 1500, "e2e_p99": 2500}, 34, 336, true},
		}
		if len(got) != len(tests) {
			t.Errorf("points of scenarios %v, want chat, batch and _all", slices.Sorted(maps.Keys(got)))
		}
		for _, tt := range tests {
			g := got[tt.scenario]
			if g == nil {
				t.Errorf("no llm_interval point of %s", tt.scenario)
				continue
			}
			if !tt.activeVUs && g["active_vus"] != nil {
				t.Errorf("%s: active_vus on a scenario's point", tt.scenario)
			}
			for k, v := range with(runTags, tt.exact) {
				if !reflect.DeepEqual(g[k], v) {
					t.Errorf("%s: %s = %v, want %v", tt.scenario, k, g[k], v)
				}
			}
			for k, v := range tt.near {
				if f, ok := g[k].(float64); !ok || math.Abs(f-v) > v/1000 {
					t.Errorf("%s: %s = %v, want %v within 0.1 %%", tt.scenario, k, g[k], v)
				}
			}
			rps, _ := g["req_per_s"].(float64)
			out, _ := g["output_tok_per_s"].(float64)
			total, _ := g["total_tok_per_s"].(float64)
			if rps <= 0 || math.Abs(out/rps-tt.outTok) > 1e-6 || math.Abs(total/rps-tt.totalTok) > 1e-6 {
				t.Errorf("%s: %v req/s, %v output tok/s and %v total tok/s, want %v and %v tokens per request", tt.scenario, rps, out, total, tt.outTok, tt.totalTok)
			}
		}
	})

	t.Run("llm_run", func(t *testing.T) {
		at := run.Start.UTC().Format(time.RFC3339Nano)
		latency := func(prefix string, mean, p50, p90, p95, p99, max float64) row {
			return row{prefix + "_mean": mean, prefix + "_p50": p50, prefix + "_p90": p90, prefix + "_p95": p95, prefix + "_p99": p99, prefix + "_max": max}
		}
		whole := with(runTags, row{"time": at, "model": "m1,m2",
			"duration_s": 60.5, "requests": 5.0, "completed": 3.0, "failed": 2.0, "interrupted": 1.0, "success_rate": 0.6,
			"request_throughput": 0.05, "output_throughput": 2.5, "total_token_throughput": 27.5, "input_tokens": 1510.0, "output_tokens": 170.0,
			"cached_tokens": 64.0, "mean_input_tokens": 503.3, "mean_output_tokens": 56.7,
			"iterations": 7.0, "dropped_iterations": 2.0, "thresholds_passed": 2.0, "thresholds_failed": 1.0, "aborted": true, "interrupted_run": false,
			"client_warnings": 2.0, "version": "1.2.3", "script": "chat.js", "script_sha256": "abc123", "target": "vllm", "base_url": "http://127.0.0.1:8000/v1",
			"host": "runner-1", "load_shape": "2 VUs for 60s; 1 VU for 30s", "seed": 42.0, "client_limited": true, "client_limit": machineLimit},
			latency("ttft", 200, 190, 280, 290, 299, 300), latency("e2e", 1600, 1500, 2400, 2450, 2490, 2500))
		chat := with(runTags, row{"time": at, "model": "m1", "scenario": "chat",
			"duration_s": 60.0, "requests": 3.0, "completed": 2.0, "failed": 1.0, "interrupted": 1.0, "success_rate": 2.0 / 3,
			"request_throughput": 0.04, "output_throughput": 2.25, "total_token_throughput": 27.25, "input_tokens": 1500.0, "output_tokens": 150.0,
			"cached_tokens": 64.0, "mean_input_tokens": 750.0, "mean_output_tokens": 75.0, "client_limited": true, "client_limit": machineLimit},
			latency("ttft", 160, 120, 190, 195, 199, 200))
		batch := with(runTags, row{"time": at, "model": "m2", "scenario": "batch",
			"duration_s": 30.0, "requests": 2.0, "completed": 1.0, "failed": 1.0, "interrupted": 0.0, "success_rate": 0.5,
			"request_throughput": 0.03, "output_throughput": 0.75, "total_token_throughput": 1.25, "input_tokens": 10.0, "output_tokens": 20.0,
			"cached_tokens": 0.0, "mean_input_tokens": 10.0, "mean_output_tokens": 20.0, "client_limited": true, "client_limit": machineLimit},
			latency("e2e", 800, 800, 800, 800, 800, 800))
		got := map[any]row{}
		for _, r := range selectRows(t, s, "SELECT * FROM llm_run"+where) {
			checkIntervals(t, r)
			got[r["scenario"]] = r
		}
		for name, want := range map[any]row{nil: whole, "chat": chat, "batch": batch} {
			if !reflect.DeepEqual(got[name], want) {
				t.Errorf("llm_run point of %v:\ngot  %v\nwant %v", name, got[name], want)
			}
		}
		if len(got) != 3 {
			t.Errorf("%d llm_run points, want 3", len(got))
		}
	})

	t.Run("History", func(t *testing.T) {
		cfg := testConfig(s)
		for _, sc := range []string{"", "chat"} {
			got, err := History(context.Background(), cfg, Filter{TestID: "chat", Scenario: sc, Runs: 10, Since: 24 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, r := range got {
				if r.RunID == run.ID {
					found = true
					if want := map[string]float64{"": 0.05, "chat": 0.04}[sc]; r.Fields["request_throughput"] != want || r.Scenario != sc || !r.Time.Equal(run.Start) ||
						r.Health != (regression.Health{Known: true, Limit: machineLimit}) {
						t.Errorf("History of scenario %q read %+v", sc, r)
					}
				}
			}
			if !found {
				t.Errorf("History of scenario %q did not find the run in %+v", sc, got)
			}
		}
	})

	t.Run("field types", func(t *testing.T) {
		ints := func(ks ...string) map[string]string {
			m := map[string]string{}
			for _, k := range ks {
				m[k] = "integer"
			}
			return m
		}
		floats := func(m map[string]string, ks ...string) map[string]string {
			for _, k := range ks {
				m[k] = "float"
			}
			return m
		}
		request := floats(ints("output_tokens", "input_tokens", "cached_tokens", "reasoning_tokens", "image_count", "image_bytes", "image_pixels", "status"), "ttft", "ttfo", "tpot", "e2e", "itl_mean", "itl_p99")
		request["ok"], request["error_class"] = "boolean", "string"
		interval := floats(ints("requests", "failed", "active_vus", "errors_http_5xx", "errors_timeout"),
			"req_per_s", "output_tok_per_s", "total_tok_per_s", "ttft_p50", "ttft_p90", "ttft_p99", "tpot_p50", "tpot_p99", "e2e_p50", "e2e_p99")
		runFields := floats(ints("requests", "completed", "failed", "interrupted", "input_tokens", "output_tokens", "cached_tokens",
			"iterations", "dropped_iterations", "thresholds_passed", "thresholds_failed", "client_warnings", "seed"),
			"duration_s", "success_rate", "request_throughput", "output_throughput", "total_token_throughput", "mean_input_tokens", "mean_output_tokens",
			"ttft_mean", "ttft_p50", "ttft_p90", "ttft_p95", "ttft_p99", "ttft_max", "e2e_mean", "e2e_p50", "e2e_p90", "e2e_p95", "e2e_p99", "e2e_max")
		floats(runFields, "ci_level")
		for _, f := range []string{"success_rate", "request_throughput", "output_throughput", "total_token_throughput"} {
			floats(runFields, f+"_ci_lo", f+"_ci_hi")
		}
		runFields["aborted"], runFields["interrupted_run"], runFields["client_limited"] = "boolean", "boolean", "boolean"
		for _, k := range []string{"version", "script", "script_sha256", "target", "base_url", "host", "load_shape", "client_limit"} {
			runFields[k] = "string"
		}
		for m, want := range map[string]map[string]string{"llm_request": request, "llm_interval": interval, "llm_run": runFields, "llm_run_start": ints("max_vus")} {
			got := map[string]string{}
			for _, r := range selectRows(t, s, "SHOW FIELD KEYS FROM "+m) {
				got[r["fieldKey"].(string)] = r["fieldType"].(string)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s's fields:\ngot  %v\nwant %v", m, got, want)
			}
		}
	})
}

// checkIntervals checks the confidence intervals of an llm_run row — its
// level is 0.99, each figure's bounds hold it — and takes them out of the
// row, whose other fields the test compares exactly.
func checkIntervals(t *testing.T, r row) {
	t.Helper()
	if r["ci_level"] != 0.99 {
		t.Errorf("llm_run of %v: ci_level %v, want 0.99", r["scenario"], r["ci_level"])
	}
	delete(r, "ci_level")
	for k, v := range r {
		name, ok := strings.CutSuffix(k, "_ci_lo")
		if !ok {
			continue
		}
		lo, hi, val := v.(float64), r[name+"_ci_hi"].(float64), r[name].(float64)
		if !(lo <= val && val <= hi && lo < hi) {
			t.Errorf("llm_run of %v: %s %v outside its interval %v … %v", r["scenario"], name, val, lo, hi)
		}
		delete(r, k)
		delete(r, name+"_ci_hi")
	}
}

// testRecords are the records of testSummary's run, from base on: three
// requests of scenario chat (model m1; one failed) and two of batch (m2;
// one failed).
func testRecords(base time.Time) []llm.Record {
	tags := func(kv ...string) *metrics.TagSet {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return metrics.NewTagSet(m)
	}
	return []llm.Record{
		{Time: base, Tags: tags("scenario", "chat", "model", "m1", "workload", "short", "turn", "1"), OK: true, Status: 200,
			TTFT: 120.5, TTFO: 130, TPOT: 12.25, E2E: 1500, ITLMean: 12, ITLP99: 30, OutputTokens: 100, PromptTokens: 500, CachedTokens: 64, ReasoningTokens: 10},
		{Time: base.Add(time.Second), Tags: tags("scenario", "chat", "model", "m1", "workload", "long", "turn", "2"), OK: true, Status: 200,
			TTFT: 200, TPOT: 20, E2E: 2500, OutputTokens: 50, PromptTokens: 1000},
		{Time: base.Add(2 * time.Second), Tags: tags("scenario", "chat", "model", "m1", "workload", "short", "turn", "1"), ErrorClass: "http_5xx", Status: 503, E2E: 80},
		{Time: base, Tags: tags("scenario", "batch", "model", "m2"), OK: true, Status: 200, TTFT: 300, TPOT: 5, E2E: 800, OutputTokens: 20, PromptTokens: 10},
		{Time: base.Add(3 * time.Second), Tags: tags("scenario", "batch", "model", "m2"), ErrorClass: "timeout", E2E: 30000},
	}
}

// machineLimit is what limited the client of testSummary's run.
const machineLimit = "other processes on this machine took the CPU (other processes used 99 % of the 2 CPUs)"

// testSummary is the summary of a two-scenario run that started at start,
// whose client was machine-limited.
func testSummary(start time.Time) *summary.Summary {
	row := func(metric string, mean, p50, p90, p95, p99, max float64) summary.LatencyRow {
		return summary.LatencyRow{Metric: metric, Count: 3, Mean: mean, Min: 1, Max: max, P: map[string]float64{"p50": p50, "p90": p90, "p95": p95, "p99": p99}}
	}
	return &summary.Summary{
		Meta: summary.Meta{Version: "1.2.3", Script: "chat.js", ScriptSHA256: "abc123", Target: "vllm", BaseURL: "http://127.0.0.1:8000/v1",
			Models: []string{"m2", "m1"}, Seed: 42, Host: "runner-1", Start: start, End: start.Add(time.Minute),
			LoadShape: []summary.ScenarioShape{{Name: "chat", Description: "2 VUs for 60s"}, {Name: "batch", Description: "1 VU for 30s"}}},
		Serving: summary.Serving{DurationSeconds: 60.5, Requests: 5, OK: 3, Failed: 2, Interrupted: 1, SuccessRate: 0.6, RequestThroughput: 0.05,
			OutputTokens: 170, PromptTokens: 1510, CachedTokens: 64, MeanInputTokens: 503.3, MeanOutputTokens: 56.7, OutputTokenThroughput: 2.5,
			TotalTokenThroughput: 27.5, Iterations: 7, DroppedIterations: 2},
		Latency: []summary.LatencyRow{row("llm_ttft", 200, 190, 280, 290, 299, 300), row("llm_e2e", 1600, 1500, 2400, 2450, 2490, 2500), {Metric: "llm_queue", Mean: 1}},
		Scenarios: []summary.ScenarioSummary{
			{Name: "chat", Serving: summary.Serving{DurationSeconds: 60, Requests: 3, OK: 2, Failed: 1, Interrupted: 1, SuccessRate: 2.0 / 3, RequestThroughput: 0.04,
				OutputTokens: 150, PromptTokens: 1500, CachedTokens: 64, MeanInputTokens: 750, MeanOutputTokens: 75, OutputTokenThroughput: 2.25, TotalTokenThroughput: 27.25},
				Latency: []summary.LatencyRow{row("llm_ttft", 160, 120, 190, 195, 199, 200)}},
			{Name: "batch", Serving: summary.Serving{DurationSeconds: 30, Requests: 2, OK: 1, Failed: 1, SuccessRate: 0.5, RequestThroughput: 0.03,
				OutputTokens: 20, PromptTokens: 10, MeanInputTokens: 10, MeanOutputTokens: 20, OutputTokenThroughput: 0.75, TotalTokenThroughput: 1.25},
				Latency: []summary.LatencyRow{row("llm_e2e", 800, 800, 800, 800, 800, 800)}},
		},
		Thresholds: []summary.ThresholdResult{{Metric: "llm_ttft", Threshold: "p(99)<2000", Passed: true}, {Metric: "llm_failed", Threshold: "rate<0.1"},
			{Metric: "llm_e2e", Threshold: "p(50)<5000", Passed: true, Note: "no samples"}},
		AbortedBy: "llm_failed rate<0.1",
		Client:    health.Report{CPU: 0.1, Procs: 2, Cause: machineLimit, Warnings: []string{"CPU", "lag"}},
	}
}

// with returns a new row with the columns of all rows, later ones winning.
func with(rows ...row) row {
	out := row{}
	for _, r := range rows {
		maps.Copy(out, r)
	}
	return out
}
