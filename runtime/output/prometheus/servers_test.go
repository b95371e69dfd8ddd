package prometheus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/promtest"
	"github.com/llmrun/llmrun/internal/refused"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/serverwatch"
)

// A run that reads scrape targets serves their last reads as gauges: a
// vLLM server's running and waiting requests, KV-cache use and
// preemptions since the start, labelled by target and engine; each GPU of
// a DCGM exporter, by target and GPU; llmrun_server_up for each target,
// 0 for one that does not answer, which has no other gauge. A run that
// reads none serves none of them.
func TestServerGauges(t *testing.T) {
	vllm := promtest.Serve(t, promtest.Recording("vllm.prom"))
	dcgm := promtest.Serve(t, promtest.Recording("dcgm.prom"))
	down := refused.URL(t) + "/metrics"
	ctx := t.Context()
	w, err := serverwatch.Start(ctx, serverwatch.Config{
		Servers:  []serverwatch.Server{{URL: vllm.URL}, {URL: down, Preset: "vllm"}},
		GPUs:     []string{dcgm.URL},
		Interval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w.Mark(ctx, serverwatch.MarkStart)

	o := New(Config{Addr: "127.0.0.1:0"})
	if err := o.Start(ctx, output.Run{ID: "r", Progress: func() engine.Progress { return engine.Progress{} }, Servers: w.Now}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Finish(context.Background(), nil) })
	mfs := scrape(t, o)
	for _, c := range []struct {
		name string
		kv   []string
		want float64
	}{
		{"llmrun_server_up", []string{"kind", "server", "target", vllm.URL}, 1},
		{"llmrun_server_up", []string{"kind", "server", "target", down}, 0},
		{"llmrun_server_up", []string{"kind", "gpu", "target", dcgm.URL}, 1},
		{"llmrun_server_running", []string{"engine", "vllm", "target", vllm.URL}, 7},
		{"llmrun_server_waiting", []string{"engine", "vllm", "target", vllm.URL}, 2},
		{"llmrun_server_kv_cache_usage", []string{"engine", "vllm", "target", vllm.URL}, 0.4375},
		{"llmrun_server_preemptions", []string{"engine", "vllm", "target", vllm.URL}, 0},
		{"llmrun_gpu_power_watts", []string{"gpu", "1", "target", dcgm.URL}, 648.027},
		{"llmrun_gpu_utilization", []string{"gpu", "0", "target", dcgm.URL}, 0.91},
		{"llmrun_gpu_memory_used_bytes", []string{"gpu", "0", "target", dcgm.URL}, 75970 << 20},
	} {
		if got := find(t, mfs, c.name, c.kv...).GetGauge().GetValue(); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.kv, got, c.want)
		}
	}
	if n := len(mfs["llmrun_server_running"].GetMetric()); n != 1 {
		t.Errorf("%d llmrun_server_running series, want only the server that answered", n)
	}

	bare := start(t, Config{}, engine.Progress{})
	for name := range scrape(t, bare) {
		if strings.HasPrefix(name, "llmrun_server_") || strings.HasPrefix(name, "llmrun_gpu_") {
			t.Errorf("a run without targets serves %s", name)
		}
	}
}
