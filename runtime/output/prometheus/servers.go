package prometheus

import (
	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
)

// The labels of the server and GPU gauges: the scrape target's URL (its
// credentials and query values redacted), its kind or engine, and a GPU's
// index.
const (
	targetLabel = "target"
	kindLabel   = "kind"
	engineLabel = "engine"
	gpuLabel    = "gpu"
)

// serverGauges are the run's scrape targets at their last read, read from
// the watch at each scrape: llmrun_server_up for every target, a server's
// running and waiting requests, KV-cache use and preemptions since the
// run's start, each GPU's utilisation, memory and power. A target whose
// last read failed has only its llmrun_server_up, 0: its figures would be
// stale.
type serverGauges struct {
	read                                       func() []serverwatch.Now
	up                                         *prom.Desc
	running, waiting, kvCacheUsage, preemption *prom.Desc
	gpuUtilization, gpuMemoryUsed, gpuPower    *prom.Desc
}

// newServerGauges returns the collector of what read says.
func newServerGauges(read func() []serverwatch.Now) *serverGauges {
	server := []string{targetLabel, engineLabel}
	gpu := []string{targetLabel, gpuLabel}
	return &serverGauges{
		read: read,
		up: prom.NewDesc("llmrun_server_up",
			"1 when the last read of a scrape target (a server's metrics, GPU telemetry) answered, 0 when it failed or none has yet.",
			[]string{targetLabel, kindLabel}, nil),
		running:      prom.NewDesc("llmrun_server_running", "Requests in the server's running batch, at its last read.", server, nil),
		waiting:      prom.NewDesc("llmrun_server_waiting", "Requests queued on the server, not yet scheduled, at its last read.", server, nil),
		kvCacheUsage: prom.NewDesc("llmrun_server_kv_cache_usage", "Fraction (0 to 1) of the server's KV cache in use, at its last read.", server, nil),
		preemption: prom.NewDesc("llmrun_server_preemptions",
			"Requests the server preempted since the run's start mark, at its last read.", server, nil),
		gpuUtilization: prom.NewDesc("llmrun_gpu_utilization", "Fraction (0 to 1) of the last sample period a GPU ran a kernel, at its last read.", gpu, nil),
		gpuMemoryUsed:  prom.NewDesc("llmrun_gpu_memory_used_bytes", "A GPU's framebuffer memory in use, at its last read.", gpu, nil),
		gpuPower:       prom.NewDesc("llmrun_gpu_power_watts", "A GPU's power draw, at its last read.", gpu, nil),
	}
}

// Describe implements prometheus.Collector.
func (g *serverGauges) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{g.up, g.running, g.waiting, g.kvCacheUsage, g.preemption, g.gpuUtilization, g.gpuMemoryUsed, g.gpuPower} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (g *serverGauges) Collect(ch chan<- prom.Metric) {
	gauge := func(d *prom.Desc, v *float64, labels ...string) {
		if v != nil {
			ch <- prom.MustNewConstMetric(d, prom.GaugeValue, *v, labels...)
		}
	}
	for _, t := range g.read() {
		up := 0.0
		if t.Failed == "" && !t.At.IsZero() {
			up = 1
		}
		ch <- prom.MustNewConstMetric(g.up, prom.GaugeValue, up, t.URL, t.Kind)
		if up == 0 {
			continue
		}
		if t.Kind == summary.TargetServer {
			gauge(g.running, t.Running, t.URL, t.Engine)
			gauge(g.waiting, t.Waiting, t.URL, t.Engine)
			gauge(g.kvCacheUsage, t.KVCacheUsage, t.URL, t.Engine)
			gauge(g.preemption, t.Preemptions, t.URL, t.Engine)
			continue
		}
		for _, gpu := range t.GPUs {
			gauge(g.gpuUtilization, gpu.Utilization, t.URL, gpu.ID)
			gauge(g.gpuMemoryUsed, gpu.MemoryUsed, t.URL, gpu.ID)
			gauge(g.gpuPower, gpu.Power, t.URL, gpu.ID)
		}
	}
}
