package summarytest

import (
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
)

// ServerTargets are the scrape targets of a run's server section, as the
// runner hands them to summarize.AttachServer: a vLLM server whose series
// has a point at t = 1, 2, ... points seconds (running = t, waiting =
// points - t, KV cache t/points), and a DCGM exporter of two GPUs that
// drew 1000 J (counted) over the window, its series at the same times
// (utilisation t/points, power 100 t W).
func ServerTargets(points int) []summary.ServerTarget {
	var server, gpu []summary.ServerPoint
	for i := 1; i <= points; i++ {
		t, share := float64(i), float64(i)/float64(points)
		server = append(server, summary.ServerPoint{T: t, Running: num(t), Waiting: num(float64(points - i)), KVCacheUsage: num(share)})
		gpu = append(gpu, summary.ServerPoint{T: t, GPUUtilization: num(share), GPUPower: num(100 * t)})
	}
	return []summary.ServerTarget{
		{URL: "http://gpu-1:8000/metrics", Kind: summary.TargetServer, Engine: "vllm", Version: "0.11.0",
			Scrapes: summary.Scrapes{OK: 11, Failed: map[string]int64{"timeout": 2}, Skipped: 1},
			Figures: map[string]summary.WindowFigure{
				string(engines.Running):            gauge("requests", 7.5, 8),
				string(engines.Waiting):            gauge("requests", 0.5, 3),
				string(engines.KVCacheUsage):       gauge("fraction", 0.41, 0.88),
				string(engines.Preemptions):        counter("requests", 2),
				string(engines.PrefixCacheQueries): counter("tokens", 2000),
				string(engines.PrefixCacheHits):    counter("tokens", 500),
				string(engines.QueueTime):          histogram(0.002, 0.01, 0.015, 100, 0.4),
				string(engines.PrefillTime):        histogram(0.02, 0.05, 0.08, 100, 2.5),
				string(engines.TTFT):               histogram(0.025, 0.07, 0.101, 100, 3.1),
			},
			Series: server},
		{URL: "http://gpu-1:9400/metrics", Kind: summary.TargetGPU, Engine: "dcgm", Scrapes: summary.Scrapes{OK: 11},
			GPUs: []summary.GPU{gpuFigures("0", 0.8, 600, 0x4), gpuFigures("1", 0.6, 400, 0)},
			GPUTotal: &summary.GPU{Figures: map[string]summary.WindowFigure{
				string(engines.GPUUtilization): gauge("fraction", 0.7, 1),
				string(engines.GPUPower):       gauge("watts", 100, 190),
				string(engines.GPUEnergy):      counter("joules", 1000),
			}},
			Energy: &summary.Energy{Joules: 1000, Method: summary.EnergyCounter},
			Series: gpu},
	}
}

func num(v float64) *float64 { return &v }

func gauge(unit string, mean, max float64) summary.WindowFigure {
	return summary.WindowFigure{Kind: "gauge", Unit: unit, Mean: num(mean), Max: num(max)}
}

func counter(unit string, delta float64) summary.WindowFigure {
	return summary.WindowFigure{Kind: "counter", Unit: unit, Delta: num(delta)}
}

func histogram(p50, p90, p99, count, sum float64) summary.WindowFigure {
	return summary.WindowFigure{Kind: "histogram", Unit: "seconds", P50: num(p50), P90: num(p90), P99: num(p99), Count: num(count), Sum: num(sum)}
}

// gpuFigures is a GPU of ServerTargets' DCGM exporter, which drew energy
// joules with the clock event reasons given.
func gpuFigures(id string, util, energy float64, reasons uint64) summary.GPU {
	return summary.GPU{ID: id, UUID: "GPU-" + id, Model: "NVIDIA H100", Host: "gpu-1", ClockEventReasons: &reasons,
		Figures: map[string]summary.WindowFigure{
			string(engines.GPUUtilization): gauge("fraction", util, 1),
			string(engines.GPUPower):       gauge("watts", energy/10, energy/10+50),
			string(engines.GPUEnergy):      counter("joules", energy),
		}}
}
