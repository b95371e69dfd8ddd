package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/summary"
)

// plantedResult is a result file's figures: a throughput of 2 req/s and
// 500 tok/s, all requests ok, TTFT p99 400 ms; change alters them.
func plantedResult(t *testing.T, dir, name string, change func(s *summary.Summary)) string {
	t.Helper()
	row := func(metric string, p50, p99 float64) summary.LatencyRow {
		return summary.LatencyRow{Metric: metric, Count: 100, Mean: p50, Min: p50 / 2, Max: p99 * 1.1,
			P: map[string]float64{"p50": p50, "p90": p99 * 0.9, "p95": p99 * 0.95, "p99": p99}}
	}
	s := &summary.Summary{
		SchemaVersion: summary.SchemaVersion,
		Meta:          summary.Meta{RunID: name, Version: "test", ScriptSHA256: "abc", Start: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)},
		Serving: summary.Serving{DurationSeconds: 50, Requests: 100, OK: 100, SuccessRate: 1,
			RequestThroughput: 2, OutputTokenThroughput: 500, TotalTokenThroughput: 1500},
		Latency: []summary.LatencyRow{row("llm_ttft", 150, 400), row("llm_tpot", 20, 30), row("llm_itl", 20, 35), row("llm_e2e", 3000, 5000)},
	}
	if change != nil {
		change(s)
	}
	path := filepath.Join(dir, name+".json")
	if err := writeSummary(path, s); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	base := plantedResult(t, dir, "base", nil)
	same := plantedResult(t, dir, "same", nil)
	slower := plantedResult(t, dir, "slower", func(s *summary.Summary) { s.Latency[0].P["p99"] = 520 })
	lessThroughput := plantedResult(t, dir, "less", func(s *summary.Summary) { s.Serving.OutputTokenThroughput = 400 })
	better := plantedResult(t, dir, "better", func(s *summary.Summary) {
		s.Latency[0].P["p99"] = 200
		s.Serving.RequestThroughput = 3
	})
	otherScript := plantedResult(t, dir, "other", func(s *summary.Summary) { s.Meta.ScriptSHA256 = "def" })

	tests := []struct {
		name      string
		args      []string
		code      int
		want      []string
		forbidden []string
	}{
		{"equal runs pass", []string{base, same}, exitOK, []string{"baseline: " + base, "current:  " + same, "✓ no regression beyond 10 %", "ttft_p99 (ms)"}, []string{"✗", "regression  "}},
		{"latency up is a regression", []string{base, slower}, exitRegression,
			[]string{"ttft_p99 (ms)", "400.0", "520.0", "+30.0 %", "✗ regression beyond 10 %: ttft_p99 +30.0 %"}, nil},
		{"throughput down is a regression", []string{base, lessThroughput}, exitRegression,
			[]string{"output_throughput (tok/s)", "-20.0 %", "✗ regression beyond 10 %: output_throughput -20.0 %"}, nil},
		{"an improvement passes", []string{base, better}, exitOK, []string{"improved", "-50.0 %", "+50.0 %", "✓ no regression"}, nil},
		{"the other way round, the improvement regresses", []string{better, base}, exitRegression, []string{"ttft_p99 +100.0 %", "request_throughput -33.3 %"}, nil},
		{"--metric selects", []string{base, slower, "--metric", "output_throughput,ttft_p50"}, exitOK,
			[]string{"output_throughput", "ttft_p50", "✓ no regression"}, []string{"ttft_p99", "tpot_p99"}},
		{"--metric takes vLLM's names", []string{base, slower, "--metric", "p99_ttft_ms"}, exitRegression, []string{"ttft_p99 +30.0 %"}, nil},
		{"a wider --threshold", []string{base, slower, "--threshold", "40%"}, exitOK, []string{"tolerance 40 %", "✓ no regression beyond 40 %"}, nil},
		{"different scripts compare, with a note", []string{base, otherScript}, exitOK, []string{"✓ no regression"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := command(t, "compare", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
			for _, f := range tc.forbidden {
				if strings.Contains(stdout, f) {
					t.Errorf("output has %q:\n%s", f, stdout)
				}
			}
		})
	}
	if _, _, stderr := command(t, "compare", base, otherScript); !strings.Contains(stderr, "different scripts") || !strings.Contains(stderr, "sha256 def") {
		t.Errorf("no note on different scripts: %q", stderr)
	}
}

func TestCompareCommandLine(t *testing.T) {
	dir := t.TempDir()
	base := plantedResult(t, dir, "base", nil)
	missing := filepath.Join(dir, "missing.json")
	v1 := filepath.Join(dir, "v1.json")
	if err := os.WriteFile(v1, []byte(`{"schema_version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"--help"}, exitOK, "Usage: llmrun compare"},
		{"one file", []string{base}, exitUsage, "want two result files"},
		{"three files", []string{base, base, base}, exitUsage, "want two result files"},
		{"bad threshold", []string{base, base, "--threshold", "ten"}, exitUsage, "--threshold"},
		{"unknown figure", []string{base, base, "--metric", "latency"}, exitUsage, `unknown figure "latency"`},
		{"missing baseline", []string{missing, base}, exitError, missing},
		{"missing current", []string{base, missing}, exitError, missing},
		{"an old schema", []string{v1, base}, exitError, v1 + ": schema_version 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := command(t, "compare", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr lacks %q:\n%s\n%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
}
