package summarize_test

import (
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// TestJudgeServerThresholds judges thresholds on server and GPU figures
// against summaries with server sections, as the runner does once the
// section is attached: the values, the verdicts, what a missing figure or
// section gives, and that the summary's thresholds and the engine's
// results (the run's verdict) agree.
func TestJudgeServerThresholds(t *testing.T) {
	busy := summarytest.VLLMTarget(100, 5000)
	busy.URL = "http://gpu-2:8000/metrics"
	busy.Figures = map[string]summary.WindowFigure{
		string(engines.KVCacheUsage): summarytest.Gauge("fraction", 0.61, 0.97),
		string(engines.Preemptions):  summarytest.Counter("requests", 3),
		string(engines.QueueTime):    summarytest.Histogram(0.1, 0.3, 0.4),
	}
	quickstart := summarytest.VLLMTarget(100, 5000)
	quickstart.Figures[string(engines.QueueTime)] = summarytest.FirstBucket(0.01)
	tests := []struct {
		name       string
		targets    []summary.ServerTarget
		thresholds string
		want       []summary.ThresholdResult
	}{
		{"one vLLM target and a DCGM exporter", []summary.ServerTarget{summarytest.VLLMTarget(100, 5000), summarytest.DCGMTarget()},
			`{"server_kv_cache_usage": ["max<0.95", "avg<0.4"], "server_preemptions": ["count==0"], "server_queue_time": ["p(99)<0.5"],
			  "server_ttft": ["avg<0.05"], "server_prefix_cache_hit_rate": ["rate>0.5"], "gpu_power": ["max<600"],
			  "gpu_energy": ["count<2000"], "gpu_energy_per_token": ["avg<0.5"]}`,
			[]summary.ThresholdResult{
				{Metric: "server_kv_cache_usage", Threshold: "max<0.95", Value: 0.88, Passed: true},
				{Metric: "server_kv_cache_usage", Threshold: "avg<0.4", Value: 0.41, Passed: false},
				{Metric: "server_preemptions", Threshold: "count==0", Value: 0, Passed: true},
				{Metric: "server_queue_time", Threshold: "p(99)<0.5", Value: 0.015, Passed: true},
				{Metric: "server_ttft", Threshold: "avg<0.05", Value: 0.045, Passed: true},
				{Metric: "server_prefix_cache_hit_rate", Threshold: "rate>0.5", Value: 0.25, Passed: false},
				{Metric: "gpu_power", Threshold: "max<600", Value: 190, Passed: true},
				{Metric: "gpu_energy", Threshold: "count<2000", Value: 1000, Passed: true},
				// 1000 J over the run's 4 output tokens.
				{Metric: "gpu_energy_per_token", Threshold: "avg<0.5", Value: 250, Passed: false},
			}},
		{"two vLLM targets combine", []summary.ServerTarget{summarytest.VLLMTarget(100, 5000), busy},
			`{"server_kv_cache_usage": ["max<0.95", "avg<0.6"], "server_preemptions": ["count==0"], "server_queue_time": ["p(99)<0.5"]}`,
			[]summary.ThresholdResult{
				{Metric: "server_kv_cache_usage", Threshold: "max<0.95", Value: 0.97, Passed: false},
				{Metric: "server_kv_cache_usage", Threshold: "avg<0.6", Value: 0.51, Passed: true},
				{Metric: "server_preemptions", Threshold: "count==0", Value: 3, Passed: false},
				{Metric: "server_queue_time", Threshold: "p(99)<0.5", Value: 0.4, Passed: true},
			}},
		{"a quantile known only to its bucket: judged by the bucket and the mean, not the interpolation within it", []summary.ServerTarget{quickstart},
			`{"server_queue_time": ["p(99)<0.1", "p(50)>0.001", "p(99)<0.005"], "server_ttft": ["p(99)<0.2"]}`,
			[]summary.ThresholdResult{
				// Interpolated as 0.297 s; the mean of 0.1 ms bounds it to 10 ms.
				{Metric: "server_queue_time", Threshold: "p(99)<0.1", Value: 0.01, Passed: true,
					Note: "p(99) is known only to lie in (0, 0.01], the server's histogram bucket and the bound its mean gives: all of it passes"},
				{Metric: "server_queue_time", Threshold: "p(50)>0.001", Value: 0.0002, Passed: false,
					Note: "p(50) is known only to lie in (0, 0.0002], the server's histogram bucket and the bound its mean gives: all of it fails"},
				{Metric: "server_queue_time", Threshold: "p(99)<0.005", Value: 0.01, Passed: false,
					Note: "p(99) is known only to lie in (0, 0.01], the server's histogram bucket and the bound its mean gives: the bound falls inside it, so the verdict rests on the interpolation within the bucket (kept within the interval), 0.01"},
				{Metric: "server_ttft", Threshold: "p(99)<0.2", Value: 0.19, Passed: true},
			}},
		{"a figure no target gives", []summary.ServerTarget{summarytest.VLLMTarget(100, 5000)},
			`{"gpu_power": ["max<600"], "server_decode_time": [{"threshold": "p(99)<1", "noSamples": "pass"}]}`,
			[]summary.ThresholdResult{
				{Metric: "gpu_power", Threshold: "max<600", Passed: false, Note: "no samples: no target gave gpu_power's max (noSamples: 'pass' accepts that)"},
				{Metric: "server_decode_time", Threshold: "p(99)<1", Passed: true, Note: "no samples: no target gave decode_time's p99 (accepted: noSamples is 'pass')"},
			}},
		{"no server section", nil,
			`{"server_preemptions": ["count==0"], "gpu_energy_per_token": [{"threshold": "avg<0.5", "noSamples": "pass"}]}`,
			[]summary.ThresholdResult{
				{Metric: "server_preemptions", Threshold: "count==0", Passed: false, Note: "no samples: the run has no server section (noSamples: 'pass' accepts that)"},
				{Metric: "gpu_energy_per_token", Threshold: "avg<0.5", Passed: true, Note: "no samples: the run has no server section (accepted: noSamples is 'pass')"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := threshold.Parse([]byte(tt.thresholds))
			if err != nil {
				t.Fatal(err)
			}
			if err := set.Validate(nil); err != nil {
				t.Fatal(err)
			}
			s := summarytest.Build(t, 10*time.Second, summarytest.Streamed(50, 10), summarytest.Streamed(60, 10))
			summarize.AttachServer(s, tt.targets)
			results := set.EvaluateEnd(nil, 10*time.Second, threshold.End{})
			summarize.JudgeServerThresholds(s, results)
			if len(s.Thresholds) != len(tt.want) {
				t.Fatalf("%d thresholds, want %d: %+v", len(s.Thresholds), len(tt.want), s.Thresholds)
			}
			failed := false
			for i, w := range tt.want {
				got := s.Thresholds[i]
				if got.Metric != w.Metric || got.Threshold != w.Threshold || got.Passed != w.Passed || got.Note != w.Note ||
					!summarytest.Near(got.Value, w.Value) {
					t.Errorf("threshold %d:\n got %+v\nwant %+v", i, got, w)
				}
				failed = failed || !w.Passed
			}
			if threshold.AnyFailed(results) != failed {
				t.Errorf("the engine's results: AnyFailed %v, want %v", threshold.AnyFailed(results), failed)
			}
		})
	}
}
