package main

import (
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// TestCompareServerFigures compares result files with server sections
// through llmrun compare: the server's prefix-cache hit rate falling is a
// regression (exit 109) beside the client's figures; the figures the
// section cannot bound show their change, not judged, and fail no gate,
// --strict's neither; a run without a server section compares as before.
func TestCompareServerFigures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n, dur = 600, 60 * time.Second
	withServer := func(hits, kvMax float64) func(s *summary.Summary) {
		return func(s *summary.Summary) {
			vllm := summarytest.VLLMTarget(1000, 12000)
			vllm.Figures[string(engines.PrefixCacheHits)] = summarytest.Counter("tokens", hits)
			vllm.Figures[string(engines.KVCacheUsage)] = summarytest.Gauge("fraction", 0.5, kvMax)
			summarize.AttachServer(s, []summary.ServerTarget{vllm})
		}
	}
	base := plantedResult(t, dir, "base", 1, n, 150, dur, withServer(500, 0.5))
	colder := plantedResult(t, dir, "colder", 2, n, 150, dur, withServer(100, 0.5))
	fuller := plantedResult(t, dir, "fuller", 3, n, 150, dur, withServer(500, 0.9))
	plain := plantedResult(t, dir, "plain", 4, n, 150, dur, nil)
	runCompareCases(t, []compareCase{
		{"the prefix cache stopped hitting", []string{base, colder}, exitcode.Regression,
			[]string{"server_prefix_cache_hit_rate (%)", "25.00", "5.00", "-80.0 %", "✗ regression beyond 10 %: server_prefix_cache_hit_rate -80.0 %"}, nil},
		{"a fuller KV cache is shown, not judged", []string{base, fuller}, exitcode.OK,
			[]string{"server_kv_cache_usage_max (%)", "+80.0 %", "not judged", "server_kv_cache_usage_max not judged: a maximum has no confidence interval",
				"server_ttft_p99 inconclusive: too few samples: 100 requests cannot bound a p99", "✓ no credible regression beyond 10 %"}, nil},
		{"a figure not judged fails no --strict", []string{base, fuller, "--metric", "server_kv_cache_usage_max", "--strict"}, exitcode.OK,
			[]string{"not judged", "✓ no regression beyond 10 %"}, nil},
		{"--metric names a server figure", []string{base, colder, "--metric", "server_prefix_cache_hit_rate"}, exitcode.Regression,
			[]string{"server_prefix_cache_hit_rate"}, []string{"ttft_p99", "server_kv_cache_usage_max"}},
		{"a run without a server section compares as before", []string{plain, colder}, exitcode.OK,
			[]string{"ttft_p99 (ms)"}, []string{"server_", "gpu_"}},
	})
}
