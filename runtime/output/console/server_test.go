package console_test

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

func ptr(f summary.WindowFigure) *summary.WindowFigure { return &f }

func serverTargets() []summary.ServerTarget {
	return []summary.ServerTarget{summarytest.VLLMTarget(10, 900), summarytest.DCGMTarget()}
}

// The server and gpu blocks show what the server section holds, and
// nothing of what it lacks.
func TestRenderServer(t *testing.T) {
	fig := func(ts []summary.ServerTarget, name engines.Figure, f *summary.WindowFigure) {
		if f == nil {
			delete(ts[0].Figures, string(name))
			return
		}
		ts[0].Figures[string(name)] = *f
	}
	tests := []struct {
		name      string
		edit      func(s *summary.Summary, ts []summary.ServerTarget)
		want, not []string
	}{
		{"the server and its GPUs", nil, []string{
			"█ server · vLLM 0.11.0 · http://gpu-1:8000/metrics\n  scrapes ............ 11 ok\n",
			"  running ............ mean 7.50, max 8\n",
			"  waiting ............ mean 0.50, max 3\n",
			"  KV cache ........... mean 41.0 %, max 88.0 %\n",
			"  preemptions ........ 0\n",
			"  prefix cache ....... 25.0 % of prompt tokens hit, as the server counts; llmrun: 10.0 % of input tokens served cached, as the responses' usage says\n",
			"  server counted ..... 10 requests, 900 output tokens (llmrun: 10 completed, 900 output tokens)\n",
			"│ where TTFT went (ms)         │  mean │   p50 │   p99 │",
			"│ server queue                 │ 2.000 │ 2.000 │  15.0 │",
			"│ server prefill               │  20.0 │  20.0 │  80.0 │",
			"│ server TTFT                  │  45.0 │  45.0 │ 190.0 │",
			"│ llmrun TTFT                  │  76.0 │  50.0 │ 200.0 │",
			"│ network, HTTP and the client │  31.0 │ 5.000 │  10.0 │",
			"█ gpu · DCGM exporter · http://gpu-1:9400/metrics\n  scrapes ............ 11 ok\n",
			"│ 0   │ NVIDIA H100 │       80.0 % / 100.0 % │   60.0 GiB / 61.0 GiB │     60 W / 110 W │   600 J │",
			"│ all │             │       70.0 % / 100.0 % │ 120.0 GiB / 122.0 GiB │    100 W / 190 W │ 1,000 J │",
			"  energy ............. 1,000 J over the measured window (from the energy counter)\n",
			// In the serving block, beside the throughput it was spent on.
			"(input + output)\n  energy per token ... 1.11 J per output token, 0.90 output tokens per J (1,000 J for 900 output tokens)\n",
		}, []string{"WARNING: http", "known only to the bucket", "— :"}},
		{"the quickstart: queue and prefill all in their first bucket (0.3 s) print as bounds, not 150 and 297 ms", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, engines.QueueTime, ptr(summarytest.FirstBucket(0.01)))
			fig(ts, engines.PrefillTime, ptr(summarytest.FirstBucket(2)))
		}, []string{
			"│ server queue                 │ 0.100 │ ≤ 0.200 │ ≤ 10.000 │",
			"│ server prefill               │  20.0 │  ≤ 40.0 │  ≤ 300.0 │",
			"│ server TTFT                  │  45.0 │    45.0 │    190.0 │",
			"│ network, HTTP and the client │  31.0 │   5.000 │     10.0 │",
			"a server quantile is known only to the bucket it falls in",
		}, []string{"150.0", "297.0", "— :"}},
		{"a server TTFT quantile in a wide bucket: an interval, and no difference", func(s *summary.Summary, ts []summary.ServerTarget) {
			f := summarytest.TTFTHistogram()
			f.P99 = summarytest.Num(0.235)
			f.Buckets = []summary.HistogramBucket{{Le: 0.04, Count: 40}, {Le: 0.05, Count: 60}, {Le: 0.1, Count: 90}, {Le: 0.25, Count: 100}}
			fig(ts, engines.TTFT, &f)
		}, []string{
			"│ server TTFT                  │  45.0 │  45.0 │ 100.0–250.0 │",
			"│ network, HTTP and the client │  31.0 │ 5.000 │           — │",
			"— : the server's TTFT quantile is known only to an interval",
		}, []string{"235.0"}},
		{"a forced preset, the instance that scraped it, failed and skipped scrapes", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[0].EngineForced, ts[0].Instance = true, "1"
			ts[0].Scrapes.Failed, ts[0].Scrapes.Skipped = map[string]int64{"timeout": 2, "refused": 1}, 2
		}, []string{
			"█ server · vLLM 0.11.0 (preset) · http://gpu-1:8000/metrics (scraped by instance 1)\n",
			"  scrapes ............ 11 ok, 3 failed (refused 1, timeout 2), 2 skipped (the previous one still running)\n",
			"  WARNING: 3 of 14 scrapes of http://gpu-1:8000/metrics failed (refused 1, timeout 2)",
		}, nil},
		{"warnings after the blocks", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, engines.Preemptions, &summary.WindowFigure{Kind: "counter", Delta: summarytest.Num(3)})
		}, []string{"  preemptions ........ 3\n", "(from the energy counter)\n  WARNING: http://gpu-1:8000/metrics preempted 3 requests"}, nil},
		{"no histograms, no TTFT table; no counts, no prefix cache, no such lines", func(s *summary.Summary, ts []summary.ServerTarget) {
			for _, f := range []engines.Figure{engines.QueueTime, engines.PrefillTime, engines.TTFT, engines.Requests, engines.GenerationTokens, engines.PrefixCacheHits, engines.Preemptions} {
				fig(ts, f, nil)
			}
		}, []string{"  KV cache ........... mean 41.0 %, max 88.0 %\n\n█ gpu"}, []string{"where TTFT went", "server counted", "prefix cache ...", "preemptions ..."}},
		{"no server TTFT: the rest of the table, no difference", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, engines.TTFT, nil)
		}, []string{"│ server prefill       │  20.0 │  20.0 │  80.0 │\n│ llmrun TTFT          │  76.0 │  50.0 │ 200.0 │\n└"}, []string{"server TTFT", "network, HTTP"}},
		{"an empty histogram: dashes", func(s *summary.Summary, ts []summary.ServerTarget) {
			fig(ts, engines.QueueTime, &summary.WindowFigure{Kind: "histogram", Count: summarytest.Num(0)})
		}, []string{"│ server queue                 │    - │     - │     - │"}, nil},
		{"no cached tokens in the responses", func(s *summary.Summary, ts []summary.ServerTarget) {
			s.Serving.CachedTokens = 0
		}, []string{"as the server counts; llmrun: no response reported cached tokens\n"}, nil},
		{"prompts built from a trace's hash_ids: the hit rate they imply beside the server's", func(s *summary.Summary, ts []summary.ServerTarget) {
			s.Metrics["trace_input_tokens"] = summary.MetricSummary{Type: "counter", Values: map[string]float64{"count": 1000}}
			s.Metrics["trace_expected_cached_tokens"] = summary.MetricSummary{Type: "counter", Values: map[string]float64{"count": 260}}
		}, []string{"as the responses' usage says; the trace's hash_ids imply 26.0 %\n"}, nil},
		{"energy integrated from power", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[1].Energy.Method = summary.EnergyIntegrated
		}, []string{"1,000 J over the measured window (power integrated over the samples)"}, nil},
		{"no output tokens, no energy per token", func(s *summary.Summary, ts []summary.ServerTarget) {
			s.Serving.OutputTokens = 0
		}, []string{"  energy ............. 1,000 J"}, []string{"energy per token"}},
		{"a server that has GPU figures has both blocks", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[0].Engine, ts[0].Version, ts[0].GPUs = "triton", "", ts[1].GPUs[:1]
			ts[1] = ts[0]
			ts[1].URL = "http://gpu-2:8002/metrics"
		}, []string{
			"█ server · Triton Inference Server · http://gpu-2:8002/metrics\n",
			"█ gpu · Triton Inference Server · http://gpu-2:8002/metrics\n┌─────┬",
		}, []string{"DCGM"}},
		{"the local GPUs sampled with nvidia-smi", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[1].URL, ts[1].Engine, ts[1].Energy.Method = "nvidia-smi", "nvidia-smi", summary.EnergyIntegrated
		}, []string{"█ gpu · nvidia-smi\n  scrapes ............ 11 ok\n"}, nil},
		{"an engine not found", func(s *summary.Summary, ts []summary.ServerTarget) {
			ts[0].Engine, ts[0].Version = "", ""
		}, []string{"█ server · unknown engine · http://gpu-1:8000/metrics\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sampleSummary()
			s.Serving.CachedTokens = 96
			ts := serverTargets()
			if tt.edit != nil {
				tt.edit(s, ts)
			}
			summarize.AttachServer(s, ts)
			out := render(t, s, false)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("want %q in\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("want no %q in\n%s", n, out)
				}
			}
		})
	}
}

// A summary without a server section prints no block of it: runs against
// servers without /metrics look as they did.
func TestRenderWithoutServer(t *testing.T) {
	out := render(t, sampleSummary(), false)
	for _, n := range []string{"█ server", "█ gpu", "where TTFT went", "energy", "scrapes"} {
		if strings.Contains(out, n) {
			t.Errorf("a summary without a server section prints %q:\n%s", n, out)
		}
	}
}
