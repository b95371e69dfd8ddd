package console_test

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

func latencyRow(metric, label string, count int64, mean, p50, p90, p95, p99, max float64) summary.LatencyRow {
	return summary.LatencyRow{Metric: metric, Label: label, Count: count, Mean: mean, Max: max,
		P: map[string]float64{"p50": p50, "p90": p90, "p95": p95, "p99": p99}}
}

// sampleSummary is a two-scenario run with failures, script errors,
// checks and custom metrics.
func sampleSummary() *summary.Summary {
	return &summary.Summary{
		SchemaVersion: summary.SchemaVersion,
		Meta: summary.Meta{Version: "v0.1.0", Script: "chat.js", ScriptSHA256: "0123456789abcdef", Target: "http://127.0.0.1:8000",
			Models: []string{"m-a", "m-b"}, Seed: 42, Host: "box", CPUs: 8,
			LoadShape: []summary.ScenarioShape{{Name: "chat", MaxVUs: 4, PeakVUs: 3}, {Name: "rag", MaxVUs: 2}}},
		Serving: summary.Serving{DurationSeconds: 10, Requests: 14, OK: 10, Failed: 4, Interrupted: 1, SuccessRate: 10.0 / 14,
			RequestThroughput: 1, OutputTokens: 900, PromptTokens: 960, MeanInputTokens: 96, MeanOutputTokens: 90,
			OutputTokenThroughput: 90, TotalTokenThroughput: 186, Iterations: 15, InterruptedIterations: 1},
		Latency: []summary.LatencyRow{
			latencyRow("llm_ttft", "TTFT", 10, 76, 50, 200, 200, 200, 200),
			latencyRow("llm_tpot", "TPOT", 10, 15.43, 10.101, 36.73, 36.73, 36.73, 36.73),
			latencyRow("llm_itl", "ITL", 28, 5.714, 5, 10, 10, 10, 10),
			latencyRow("llm_e2e", "E2E", 10, 1236, 1050, 2000, 2000, 2000, 2000),
		},
		Scenarios: []summary.ScenarioSummary{
			{Name: "chat", Serving: summary.Serving{OK: 8, Failed: 3, RequestThroughput: 0.8, OutputTokenThroughput: 80},
				Latency: []summary.LatencyRow{latencyRow("llm_ttft", "TTFT", 8, 45, 40, 80, 80, 80, 80)}},
			{Name: "rag", Serving: summary.Serving{OK: 2, Failed: 1, RequestThroughput: 0.4, OutputTokenThroughput: 20},
				Latency: []summary.LatencyRow{latencyRow("llm_ttft", "TTFT", 2, 200, 200, 200, 200, 200, 200),
					latencyRow("llm_e2e", "E2E", 2, 2000, 2000, 2000, 2000, 2000, 2000)}},
		},
		Errors: []summary.ErrorClassCount{
			{Class: "http_5xx", Count: 2, Messages: []summary.ErrorCount{{Message: "HTTP 500 Internal Server Error: overloaded", Count: 1}, {Message: "HTTP 503 Service Unavailable", Count: 1}}},
			{Class: "timeout", Count: 1, Messages: []summary.ErrorCount{{Message: "reading the response: request timed out after 1m0s", Count: 1}}},
		},
		Retries:           []summary.ErrorClassCount{{Class: "connect", Count: 2}, {Class: "http_429", Count: 1}},
		ScriptErrors:      []summary.ErrorCount{{Message: "script.js:3:9: Error: boom\n 3 | throw new Error('boom');", Count: 2}},
		OtherScriptErrors: 3,
		Checks: []summary.Check{
			{Name: "a first", Passes: 1},
			{Name: "ok", Passes: 5, Fails: 1},
			{Name: "fast", Group: "::chat", Passes: 1, Fails: 2},
		},
		Client: health.Report{CPU: 0.25, Procs: 2, SchedDelayP99: 0.5, SchedDelayMax: 1.5, Warnings: []string{"the client may have limited the run"}},
		Metrics: map[string]summary.MetricSummary{
			"my_counter": {Custom: true, Type: "counter", Contains: "default", Values: map[string]float64{"count": 12, "rate": 1.2}},
			"my_gauge":   {Custom: true, Type: "gauge", Contains: "default", Values: map[string]float64{"value": 5, "min": 3, "max": 5}},
			"my_rate":    {Custom: true, Type: "rate", Contains: "default", Values: map[string]float64{"rate": 0.75, "passes": 3, "fails": 1}},
			"my_time": {Custom: true, Type: "trend", Contains: "time", Values: map[string]float64{"count": 3, "avg": 2, "min": 1, "med": 2,
				"p(90)": 3, "p(95)": 3, "p(99)": 3, "max": 3}},
			"llm_requests": {Type: "counter", Contains: "default", Values: map[string]float64{"count": 14, "rate": 1.4}},
			"iterations":   {Type: "counter", Contains: "default", Values: map[string]float64{"count": 15, "rate": 1.5}},
		},
	}
}

func render(t *testing.T, s *summary.Summary, color bool) string {
	t.Helper()
	var buf bytes.Buffer
	if err := console.Render(&buf, s, textfmt.Style{Color: color}); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return buf.String()
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// tableRows returns the cells of every table row in out, by its first cell.
func tableRows(out string) map[string][]string {
	rows := map[string][]string{}
	for line := range strings.SplitSeq(ansi.ReplaceAllString(out, ""), "\n") {
		if !strings.HasPrefix(line, "│") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "│"), "│")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[cells[0]] = cells[1:]
	}
	return rows
}

func TestRenderContent(t *testing.T) {
	out := render(t, sampleSummary(), false)
	lines := []string{
		"█ serving",
		"  requests ........... 10 ok, 4 failed (success rate 71.43 %), 1 interrupted (excluded)\n",
		"  duration ........... 10.0 s\n",
		"  request throughput . 1 req/s\n",
		"  output tokens ...... 900 (90 tok/s; 90 per request)\n",
		"  input tokens ....... 960 (96 per request)\n",
		"  total throughput ... 186 tok/s (input + output)\n",
		"  iterations ......... 15, 1 interrupted\n",
		"  load generator ..... CPU 25 % of 2 CPUs, scheduling delay p99 0.500 ms (max 1.500 ms)\n",
		"  WARNING: the client may have limited the run\n",
		"█ by scenario",
		"█ errors",
		"  http_5xx 1× HTTP 500 Internal Server Error: overloaded\n           1× HTTP 503 Service Unavailable\n",
		"  timeout  1× reading the response: request timed out after 1m0s\n",
		"  retried attempts ... 3 (connect 2, http_429 1); each request counts once above, by its final attempt\n",
		"  2× script.js:3:9: Error: boom\n       3 | throw new Error('boom');\n",
		"  3 more script errors with other messages\n",
		"█ checks",
		"█ custom metrics",
		"llmrun v0.1.0 · script chat.js (sha256 0123456789ab) · target http://127.0.0.1:8000 · model m-a, m-b · seed 42\nhost box (8 CPUs)\n",
	}
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("output lacks %q", l)
		}
	}
	// Sections come in order.
	last := -1
	for _, h := range []string{"█ serving", "latency (ms)", "█ by scenario", "█ errors", "█ checks", "█ custom metrics", "llmrun v0.1.0"} {
		i := strings.Index(out, h)
		if i < last {
			t.Errorf("%q is out of order", h)
		}
		last = i
	}
	if strings.Contains(out, "interrupted before its end") {
		t.Error("a complete run is said to be interrupted")
	}

	rows := tableRows(out)
	want := map[string][]string{
		"latency (ms)":        {"count", "mean", "p50", "p90", "p95", "p99", "max"},
		"TTFT":                {"10", "76.0", "50.0", "200.0", "200.0", "200.0", "200.0"},
		"TPOT":                {"10", "15.4", "10.1", "36.7", "36.7", "36.7", "36.7"},
		"ITL":                 {"28", "5.714", "5.000", "10.0", "10.0", "10.0", "10.0"},
		"E2E":                 {"10", "1236", "1050", "2000", "2000", "2000", "2000"},
		"scenario":            {"VUs used/max", "ok", "failed", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "E2E p99"},
		"chat":                {"3/4", "8", "3", "0.80", "80", "40.0", "80.0", "-", "-", "-"},
		"rag":                 {"-/2", "2", "1", "0.40", "20", "200.0", "200.0", "-", "-", "2000"},
		"request error class": {"count"},
		"http_5xx":            {"2"},
		"timeout":             {"1"},
		"check":               {"passes", "fails", "rate"},
		"✓ a first":           {"1", "0", "100.00 %"},
		"✗ ok":                {"5", "1", "83.33 %"},
		"✗ ::chat › fast":     {"1", "2", "33.33 %"},
		"metric":              {"type", "values"},
		"my_counter":          {"counter", "count=12 rate=1.20/s"},
		"my_gauge":            {"gauge", "value=5 min=3 max=5"},
		"my_rate":             {"rate", "75.00 % (3 of 4)"},
		"my_time":             {"trend", "avg=2.000 ms med=2.000 ms p(90)=3.000 ms p(95)=3.000 ms p(99)=3.000 ms max=3.000 ms (n=3)"},
	}
	for first, cells := range want {
		if got, ok := rows[first]; !ok || !slices.Equal(got, cells) {
			t.Errorf("row %q = %q, want %q", first, got, cells)
		}
	}
	for _, builtin := range []string{"llm_requests", "iterations"} {
		if _, ok := rows[builtin]; ok {
			t.Errorf("built-in metric %s is listed among custom metrics", builtin)
		}
	}
}

// Every line of a table has the same width, colours or not.
func TestRenderTablesAlign(t *testing.T) {
	for _, color := range []bool{false, true} {
		out := ansi.ReplaceAllString(render(t, sampleSummary(), color), "")
		width := -1
		for line := range strings.SplitSeq(out, "\n") {
			if !strings.ContainsAny(line[:min(len(line), 3)], "┌│├└") {
				width = -1
				continue
			}
			w := utf8.RuneCountInString(line)
			if strings.HasPrefix(line, "┌") {
				width = w
			} else if w != width {
				t.Errorf("color %v: line %q is %d wide, its table %d", color, line, w, width)
			}
		}
	}
}

func TestRenderColor(t *testing.T) {
	plain := render(t, sampleSummary(), false)
	if strings.Contains(plain, "\x1b[") {
		t.Errorf("ANSI codes without colour:\n%q", plain)
	}
	colored := render(t, sampleSummary(), true)
	for _, want := range []string{
		"\x1b[1m█ serving\x1b[0m",        // bold heading
		"10 ok, \x1b[31m4\x1b[0m failed", // failures in red
		"\x1b[32m✓\x1b[0m a first",       // passed check in green
		"\x1b[31m✗\x1b[0m ok",            // failed check in red
		"\x1b[31m2×\x1b[0m script.js",    // script error count in red
		"\x1b[31mWARNING: the client may have limited the run\x1b[0m",
		"\x1b[2mllmrun v0.1.0 · ", // faint footer
	} {
		if !strings.Contains(colored, want) {
			t.Errorf("coloured output lacks %q", want)
		}
	}
	// Colour adds codes and changes nothing else, table padding included.
	if got := ansi.ReplaceAllString(colored, ""); got != plain {
		t.Errorf("without its codes, the coloured output differs:\n%s\nfrom\n%s", got, plain)
	}
}

// The machine's figures follow llmrun's own, on one line; steal only when
// there was some.
func TestRenderMachine(t *testing.T) {
	s := &summary.Summary{Meta: summary.Meta{Version: "v"}, Client: health.Report{CPU: 0.01, Procs: 2, SchedDelayP99: 0.39, SchedDelayMax: 2,
		Machine:  &health.Machine{CPUs: 2, Busy: 0.95, Others: 0.94, Load1: 4.2, OthersLoad: 4.18, RunQueueWait: 3.5},
		Warnings: []string{"other processes on this machine took the CPU"}}}
	want := "  load generator ..... CPU 1 % of 2 CPUs, scheduling delay p99 0.390 ms (max 2.000 ms)\n" +
		"  machine ............ other processes 94 % of 2 CPUs, load average 4.20 on 2 CPUs, run-queue wait 3.500 ms per run\n" +
		"  WARNING: other processes on this machine took the CPU\n"
	if out := render(t, s, false); !strings.Contains(out, want) {
		t.Errorf("output lacks\n%s\nin\n%s", want, out)
	}
	s.Client.Machine.Steal = 0.2
	if out := render(t, s, false); !strings.Contains(out, "run-queue wait 3.500 ms per run, steal 20.0 %\n") {
		t.Errorf("steal is not shown:\n%s", out)
	}
}

func TestRenderMinimal(t *testing.T) {
	s := &summary.Summary{Meta: summary.Meta{Version: "v", Interrupted: true}, Client: health.Report{CPU: -1}}
	out := render(t, s, false)
	for _, want := range []string{
		"  requests ........... 0 ok, 0 failed (success rate 0.00 %)\n",
		"  load generator ..... not measured\n",
		"model - ·",
		"the run was interrupted before its end",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, absent := range []string{"latency (ms)", "█ by scenario", "█ errors", "█ checks", "█ custom metrics", "interrupted (excluded)", "WARNING", "machine ...."} {
		if strings.Contains(out, absent) {
			t.Errorf("an empty summary shows %q:\n%s", absent, out)
		}
	}
}

// A scenario the run's stop ended before its plan did is named with
// where it stopped under the by-scenario table; one that ran to its end
// is not.
func TestRenderInterruptedScenario(t *testing.T) {
	s := sampleSummary()
	s.Meta.Interrupted = true
	at := 0.3
	s.Meta.LoadShape[0].InterruptedAt = &at
	out := render(t, s, false)
	want := "  interrupted before the end of its plan: chat at 30%; figures cover the part that ran\n"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "rag at") {
		t.Errorf("rag, which ran to its end, is said to be interrupted:\n%s", out)
	}
}

// A run whose setup failed says its load generator was not measured,
// and why, instead of "0 % of 0 CPUs".
func TestRenderClientNotMeasured(t *testing.T) {
	s := &summary.Summary{Meta: summary.Meta{Version: "v"}, Client: health.NotMeasured("setup() did not complete, so no scenario ran")}
	out := render(t, s, false)
	if !strings.Contains(out, "  load generator ..... not measured: setup() did not complete, so no scenario ran\n") || strings.Contains(out, "% of 0 CPUs") {
		t.Errorf("output does not say the load generator was not measured:\n%s", out)
	}
}

func TestThresholdValuesCarryTheirUnit(t *testing.T) {
	s := &summary.Summary{
		Metrics: map[string]summary.MetricSummary{
			"llm_ttft{scenario:chat}": {Type: "trend", Unit: "ms"},
			"llm_requests":            {Type: "counter", Unit: "requests"},
			"llm_failed":              {Type: "rate", Unit: "ratio"},
		},
		Thresholds: []summary.ThresholdResult{
			{Metric: "llm_ttft{scenario:chat}", Threshold: "p(99)<2000", Value: 812.5, Passed: true},
			{Metric: "llm_requests", Threshold: "rate>10", Value: 12, Passed: true},
			{Metric: "llm_requests", Threshold: "count>100", Value: 120, Passed: true},
			{Metric: "llm_failed", Threshold: "rate<0.01", Value: 0, Passed: true},
		},
	}
	var b strings.Builder
	if err := console.Render(&b, s, textfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"812.5 ms", "12 requests/s", "120 requests"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("thresholds lack %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "0 ratio") {
		t.Errorf("a rate's ratio got a unit:\n%s", b.String())
	}
}

// The workload figures: the prompt check, the prefix cache's share of the
// input, and a column for it by scenario.
func TestRenderPromptCheckAndCache(t *testing.T) {
	s := sampleSummary()
	s.Serving.CachedTokens = 480
	s.Scenarios[0].Serving.PromptTokens, s.Scenarios[0].Serving.CachedTokens = 800, 480
	s.Scenarios[1].Serving.PromptTokens = 160
	s.PromptCheck = &summary.PromptCheck{Requests: 10, RequestedTokens: 900, UsageTokens: 960, PerRequest: 6, DiffPercent: 6.7}
	out := ansi.ReplaceAllString(render(t, s, false), "")
	for _, want := range []string{
		"input tokens ....... 960 (96 per request), 50.0 % served from the prefix cache",
		"prompt check ....... asked 90 input tokens per request, the server counts 96 (+6.0 per request: a chat template's tokens)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	rows := tableRows(out)
	if got := rows["chat"]; len(got) == 0 || got[len(got)-1] != "60.0 %" {
		t.Errorf("chat row %q: want the cached share last", got)
	}
	if got := rows["rag"]; len(got) == 0 || got[len(got)-1] != "0.0 %" {
		t.Errorf("rag row %q", got)
	}

	s.PromptCheck.Warning = "prompts were asked to have 90 tokens on average, the server counts 140"
	if out := render(t, s, false); !strings.Contains(out, "WARNING: prompts were asked to have 90 tokens") || strings.Contains(out, "prompt check ......") {
		t.Errorf("a disagreeing prompt check is not a warning:\n%s", out)
	}
	s.Metrics["trace_input_tokens"] = summary.MetricSummary{Type: "counter", Values: map[string]float64{"count": 900}}
	s.Metrics["trace_expected_cached_tokens"] = summary.MetricSummary{Type: "counter", Values: map[string]float64{"count": 450}}
	if out := render(t, s, false); !strings.Contains(out, "50.0 % served from the prefix cache, the trace's hash_ids imply 50.0 %\n") {
		t.Errorf("no hit rate implied by the trace beside the served share:\n%s", out)
	}
	if out := render(t, sampleSummary(), false); strings.Contains(out, "prompt check") || strings.Contains(out, "input cached") || strings.Contains(out, "hash_ids imply") {
		t.Errorf("a run without prompt lengths or cache figures shows them:\n%s", out)
	}
}

// A rerank run prints the documents per second that docs/bench.md and
// docs/metrics.md promise; a run without rerank prints no such line.
func TestRenderDocumentThroughput(t *testing.T) {
	s := sampleSummary()
	s.Serving.Documents, s.Serving.DocumentThroughput = 600, 940.4
	if out := render(t, s, false); !strings.Contains(out, "documents .......... 600 reranked (940.4 documents/s)\n") {
		t.Errorf("no documents per second in\n%s", out)
	}
	if out := render(t, sampleSummary(), false); strings.Contains(out, "documents ....") {
		t.Errorf("a run without rerank requests prints documents:\n%s", out)
	}
}

// Outputs report what they stored; losses are a warning with their reasons.
func TestRenderOutputs(t *testing.T) {
	s := sampleSummary()
	s.Meta.RunID, s.Meta.TestID = "0123abcd", "nightly"
	s.Outputs = []summary.OutputReport{
		{Output: "influxdb http://127.0.0.1:8086 (bucket llmrun)", Written: 1200},
		{Output: "influxdb http://127.0.0.1:9999 (bucket b)", Written: 50, Dropped: 150,
			Reasons: map[string]int64{"buffer full (50 points) while InfluxDB was failing: connection refused": 150}, Err: "connection refused"},
	}
	out := render(t, s, false)
	for _, want := range []string{
		"  influxdb http://127.0.0.1:8086 (bucket llmrun): 1200 points written, 0 dropped\n",
		"WARNING: influxdb http://127.0.0.1:9999 (bucket b): 50 points written, 150 dropped\n    150× buffer full (50 points) while InfluxDB was failing: connection refused\n    last error: connection refused",
		"· run 0123abcd of test nightly",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// A sweep's summary leads with its answer: the verdict (saturation, the
// level within the SLO, an early stop), the levels table and the method,
// then the whole run labelled as pooled over the levels; the pooled
// latency table is left out, and the scenarios table keeps only the
// scenarios that are not levels.
func TestRenderCapacity(t *testing.T) {
	sat := summary.CapacityLevel{Scenario: "c32", Level: 32, OutputThroughput: 5120, TTFTP50: 420, TTFTP99: 2900, SuccessRate: 1}
	best := summary.CapacityLevel{Scenario: "c16", Level: 16, OutputThroughput: 4800, TTFTP50: 300, TTFTP99: 1234.4, TPOTP99: 42.25, MeetsSLO: true, SuccessRate: 1}
	top := summary.CapacityLevel{Scenario: "c64", Level: 64, OutputThroughput: 5200, SuccessRate: 0.5}
	sweep := func(slo summary.SLO, saturation, within *summary.CapacityLevel) *summary.Summary {
		s := sampleSummary()
		s.Scenarios = append(s.Scenarios[:1],
			summary.ScenarioSummary{Name: "c16", Serving: summary.Serving{OK: 160, RequestThroughput: 37.5, OutputTokenThroughput: 4800},
				Latency: []summary.LatencyRow{latencyRow("llm_ttft", "TTFT", 160, 300, 300, 1234.4, 1234.4, 1234.4, 1234.4)}},
			summary.ScenarioSummary{Name: "c32", Serving: summary.Serving{OK: 320, OutputTokenThroughput: 5120}},
			summary.ScenarioSummary{Name: "c64", Serving: summary.Serving{OK: 64, Failed: 64, OutputTokenThroughput: 5200}},
			summary.ScenarioSummary{Name: "c128"})
		s.ChainStops = []summary.ChainStop{{After: "c64", Reason: "saturation at concurrency 32: …", Skipped: []string{"c128"}}}
		s.Capacity = &summary.Capacity{Variable: "concurrency", Levels: []summary.CapacityLevel{best, sat, top}, SLO: slo,
			Saturation: saturation, MaxWithinSLO: within, Method: "Saturation is the first level after which ..."}
		return s
	}
	tests := []struct {
		name string
		s    *summary.Summary
		want string
	}{
		{"knee and SLO", sweep(summary.SLO{TTFTP99: 2000}, &sat, &best), "█ capacity (by concurrency)\n" +
			"  saturation ......... at concurrency 32: output 5,120 tok/s; beyond it throughput grows < 10 % while TTFT p50 grows > 10 %\n" +
			"  within SLO ......... concurrency 16: 4,800 tok/s at TTFT p99 1,234 ms (SLO 2,000 ms)\n" +
			"  stopped early ...... after c64: saturation at concurrency 32: …; skipped c128 (not run, not failed)\n"},
		{"TPOT SLO too", sweep(summary.SLO{TTFTP99: 2000, TPOTP99: 50}, &sat, &best),
			"  within SLO ......... concurrency 16: 4,800 tok/s at TTFT p99 1,234 ms (SLO 2,000 ms), TPOT p99 42.2 ms (SLO 50 ms)\n"},
		{"no knee, no level within the SLO", sweep(summary.SLO{TTFTP99: 1000, TPOTP99: 40}, nil, nil),
			"  saturation ......... not reached within the levels swept (up to concurrency 64)\n" +
				"  within SLO ......... no level meets the SLO (TTFT p99 ≤ 1,000 ms, TPOT p99 ≤ 40 ms, success rate ≥ 99 %)\n"},
		{"no SLO", sweep(summary.SLO{}, &sat, nil), "  within SLO ......... no SLO given: pass --slo ttft_p99=MS (and tpot_p99=MS), or set options.slo\n"},
	}
	for _, tc := range tests {
		out := render(t, tc.s, false)
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: no\n%s\nin\n%s", tc.name, tc.want, out)
		}
		order := []string{"█ capacity", "concurrency │ scenario", "Saturation is the first level", "█ whole run (all levels pooled)", "█ by scenario", "█ errors"}
		for i := 1; i < len(order); i++ {
			if a, b := strings.Index(out, order[i-1]), strings.Index(out, order[i]); a < 0 || b < a {
				t.Errorf("%s: %q is not before %q:\n%s", tc.name, order[i-1], order[i], out)
			}
		}
		if strings.Contains(out, "latency (ms)") || strings.Contains(out, "█ serving") {
			t.Errorf("%s: a sweep shows the pooled latency table or an unlabelled serving block:\n%s", tc.name, out)
		}
		rows := tableRows(out)
		if _, ok := rows["chat"]; !ok {
			t.Errorf("%s: the scenario that is no level lost its row:\n%s", tc.name, out)
		}
		for _, level := range []string{"c16", "c32", "c64", "c128"} {
			if strings.Count(out, "│ "+level+" ") > 1 {
				t.Errorf("%s: level %s has a row in two tables:\n%s", tc.name, level, out)
			}
		}
		if got := rows["16"]; len(got) < 2 || got[0] != "c16" || got[1] != "160" {
			t.Errorf("%s: level 16's row %q, want its scenario and its 160 requests", tc.name, got)
		}
		if strings.Count(out, "saturation ...") != 1 {
			t.Errorf("%s: more than one verdict:\n%s", tc.name, out)
		}
	}
	if rows := tableRows(render(t, sweep(summary.SLO{TTFTP99: 2000}, &sat, &best), false)); rows["16"][len(rows["16"])-1] != "met" || rows["64"][len(rows["64"])-1] != "missed" || rows["64"][len(rows["64"])-2] != "50.0 %" {
		t.Errorf("levels' SLO and success cells: 16 %q, 64 %q", rows["16"], rows["64"])
	}
	if out := render(t, sweep(summary.SLO{TTFTP99: 2000}, &sat, &best), true); !strings.Contains(out, "\x1b[2mSaturation is the first level") {
		t.Errorf("the method is not faint:\n%q", out)
	}
	// A long method wraps.
	s := sweep(summary.SLO{}, nil, nil)
	s.Capacity.Method = strings.Repeat("word ", 30) + "end."
	if want := "  " + strings.Repeat("word ", 19) + "word\n  " + strings.Repeat("word ", 10) + "end.\n"; !strings.Contains(render(t, s, false), want) {
		t.Errorf("the method is not wrapped at 100 columns:\n%s", render(t, s, false))
	}
	if out := render(t, sampleSummary(), false); strings.Contains(out, "capacity") || !strings.Contains(out, "█ serving") || !strings.Contains(out, "latency (ms)") {
		t.Errorf("a run that is no sweep shows a capacity section, or lacks its serving block or latency table:\n%s", out)
	}
	// A chain stopped without a sweep verdict says so under the serving
	// block.
	s = sampleSummary()
	s.ChainStops = []summary.ChainStop{{After: "chat", Reason: "chat missed the SLO (…)", Skipped: []string{"rag"}}}
	if out := render(t, s, false); !strings.Contains(out, "  stopped early ...... after chat: chat missed the SLO (…); skipped rag (not run, not failed)\n") {
		t.Errorf("no stopped chain in\n%s", out)
	}
}

// One of a thing is said in the singular: the warmup of one request in
// one iteration, a load generator of one CPU.
func TestRenderSingulars(t *testing.T) {
	s := &summary.Summary{Meta: summary.Meta{Version: "v"}, Serving: summary.Serving{WarmupRequests: 1, WarmupIterations: 1},
		Client: health.Report{CPU: 0.5, Procs: 1, SchedDelayP99: 0.39, SchedDelayMax: 2}}
	out := render(t, s, false)
	for _, want := range []string{"  warmup ............. 1 request in 1 iteration, excluded from every figure\n", "CPU 50 % of 1 CPU, "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The early stop's reason, and a low success rate, show under the
// serving block, in red.
func TestRenderEarlyStopAndLowSuccess(t *testing.T) {
	s := sampleSummary()
	s.EarlyStop = "the server stopped answering: from 7.0 s into the run, …"
	s.LowSuccess = "only 123 of 55950 requests succeeded (…)"
	out := render(t, s, true)
	for _, want := range []string{"\x1b[31mstopped early: the server stopped answering: from 7.0 s into the run, …",
		"\x1b[31mWARNING: only 123 of 55950 requests succeeded (…)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if out := render(t, sampleSummary(), false); strings.Contains(out, "WARNING: only") {
		t.Errorf("a run whose requests succeeded warns:\n%s", out)
	}
}
