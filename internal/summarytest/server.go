package summarytest

import (
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Num points to v, for a window figure's values.
func Num(v float64) *float64 { return &v }

// Gauge is a gauge's window figure.
func Gauge(unit string, mean, max float64) summary.WindowFigure {
	return summary.WindowFigure{Kind: "gauge", Unit: unit, Mean: Num(mean), Max: Num(max)}
}

// Counter is a counter's window figure.
func Counter(unit string, delta float64) summary.WindowFigure {
	return summary.WindowFigure{Kind: "counter", Unit: unit, Delta: Num(delta)}
}

// Histogram is a histogram's window figure of 100 observations, in
// seconds.
func Histogram(p50, p90, p99 float64) summary.WindowFigure {
	return summary.WindowFigure{Kind: "histogram", Unit: "seconds", P50: Num(p50), P90: Num(p90), P99: Num(p99), Count: Num(100), Sum: Num(100 * p50)}
}

// TTFTHistogram is a TTFT histogram of 100 observations with its
// buckets, each quantile's narrow: p50 45 ms in (40, 50] ms, p90 100 ms
// at the top of (80, 100], p99 190 ms in (150, 200]; mean 45 ms.
func TTFTHistogram() summary.WindowFigure {
	f := Histogram(0.045, 0.1, 0.19)
	f.Mean = Num(0.045)
	f.Buckets = []summary.HistogramBucket{{Le: 0.04, Count: 40}, {Le: 0.05, Count: 60}, {Le: 0.08, Count: 80}, {Le: 0.1, Count: 90}, {Le: 0.15, Count: 95}, {Le: 0.2, Count: 100}}
	return f
}

// FirstBucket is vLLM's queue- or prefill-time histogram (buckets 0.3,
// 0.5, 0.8, 1 s, ...) over a window of 100 requests that all took less
// than 0.3 s, summing sum seconds: Prometheus interpolates its p50 as
// 0.15 s and its p99 as 0.297 s whatever they took.
func FirstBucket(sum float64) summary.WindowFigure {
	f := summary.WindowFigure{Kind: "histogram", Unit: "seconds", P50: Num(0.15), P90: Num(0.27), P99: Num(0.297), Count: Num(100), Sum: Num(sum), Mean: Num(sum / 100)}
	for _, le := range []float64{0.3, 0.5, 0.8, 1} {
		f.Buckets = append(f.Buckets, summary.HistogramBucket{Le: le, Count: 100})
	}
	return f
}

// VLLMTarget is a vLLM server's /metrics over a window in which it
// finished requests requests and generated outputTokens tokens: 7.5
// running and 0.5 waiting on average, its KV cache 41 % used (88 % at
// most), no preemption, a quarter of 2000 prompt tokens found in its
// prefix cache, and its queue, prefill and TTFT histograms.
func VLLMTarget(requests, outputTokens float64) summary.ServerTarget {
	return summary.ServerTarget{URL: "http://gpu-1:8000/metrics", Kind: summary.TargetServer, Engine: "vllm", Version: "0.11.0",
		Scrapes: summary.Scrapes{OK: 11},
		Figures: map[string]summary.WindowFigure{
			string(engines.Running):            Gauge("requests", 7.5, 8),
			string(engines.Waiting):            Gauge("requests", 0.5, 3),
			string(engines.KVCacheUsage):       Gauge("fraction", 0.41, 0.88),
			string(engines.Preemptions):        Counter("requests", 0),
			string(engines.PrefixCacheQueries): Counter("tokens", 2000),
			string(engines.PrefixCacheHits):    Counter("tokens", 500),
			string(engines.QueueTime):          Histogram(0.002, 0.01, 0.015),
			string(engines.PrefillTime):        Histogram(0.02, 0.05, 0.08),
			string(engines.TTFT):               TTFTHistogram(),
			string(engines.Requests):           Counter("requests", requests),
			string(engines.GenerationTokens):   Counter("tokens", outputTokens),
		}}
}

// DCGMTarget is a DCGM exporter of two H100s over a window in which they
// drew 600 and 400 J (60 and 40 W on average), their clocks never held
// down.
func DCGMTarget() summary.ServerTarget {
	gpu := func(id string, util, power float64) summary.GPU {
		none := uint64(0)
		return summary.GPU{ID: id, UUID: "GPU-" + id, Model: "NVIDIA H100", Host: "gpu-1", ClockEventReasons: &none,
			Figures: map[string]summary.WindowFigure{
				string(engines.GPUUtilization): Gauge("fraction", util, 1),
				string(engines.GPUMemoryUsed):  Gauge("bytes", 60<<30, 61<<30),
				string(engines.GPUPower):       Gauge("watts", power, power+50),
				string(engines.GPUEnergy):      Counter("joules", power*10),
			}}
	}
	return summary.ServerTarget{URL: "http://gpu-1:9400/metrics", Kind: summary.TargetGPU, Engine: "dcgm", Scrapes: summary.Scrapes{OK: 11},
		GPUs: []summary.GPU{gpu("0", 0.8, 60), gpu("1", 0.6, 40)},
		GPUTotal: &summary.GPU{Figures: map[string]summary.WindowFigure{
			string(engines.GPUUtilization): Gauge("fraction", 0.7, 1),
			string(engines.GPUMemoryUsed):  Gauge("bytes", 120<<30, 122<<30),
			string(engines.GPUPower):       Gauge("watts", 100, 190),
			string(engines.GPUEnergy):      Counter("joules", 1000),
		}},
		Energy: &summary.Energy{Joules: 1000, Method: summary.EnergyCounter}}
}
