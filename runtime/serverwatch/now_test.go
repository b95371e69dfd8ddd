package serverwatch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/promtest"
	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/runtime/gpumetrics"
	"github.com/llmrun/llmrun/runtime/summary"
)

// While the run goes, Now reads each target's last read: a server's
// gauges as they were, its preemptions since the start mark; a DCGM
// exporter's GPUs, their utilisation averaged and power summed; before
// any read, nothing; once a read fails, its kind.
func TestNowIsTheLastRead(t *testing.T) {
	vllm := promtest.Serve(t, promtest.Recording("vllm.prom"))
	vllm.At(startScrape, func(f promtest.Families) { f.Set("vllm:num_requests_running", 5) })
	vllm.At(endScrape, func(f promtest.Families) {
		f.Set("vllm:num_requests_running", 14)
		f.Set("vllm:num_requests_waiting", 3)
		f.Set("vllm:kv_cache_usage_perc", 0.42)
		f.Add("vllm:num_preemptions_total", 2)
	})
	dcgm := promtest.Serve(t, promtest.Recording("dcgm.prom"))
	var failing atomic.Bool
	flaky := promtest.New(t, promtest.Recording("vllm.prom"))
	flakySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "engine crashed", http.StatusInternalServerError)
			return
		}
		flaky.ServeHTTP(w, r)
	}))
	t.Cleanup(flakySrv.Close)

	ctx := t.Context()
	w, err := Start(ctx, Config{
		Servers:  []Server{{URL: vllm.URL}, {URL: flakySrv.URL + "/metrics", Preset: "vllm"}},
		GPUs:     []string{dcgm.URL},
		Interval: noTicks,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, n := range w.Now() {
		if !n.At.IsZero() || n.Failed != "" || n.Running != nil || len(n.GPUs) != 0 {
			t.Errorf("before any mark: %+v, want nothing read", n)
		}
	}
	w.Mark(ctx, MarkStart)
	if got := w.Now()[0]; num(got.Running) != 5 || num(got.Preemptions) != 0 {
		t.Errorf("at the start mark: running %v, preemptions %v; want 5, +0", num(got.Running), num(got.Preemptions))
	}
	failing.Store(true)
	w.Mark(ctx, MarkEnd)

	now := w.Now()
	if len(now) != 3 {
		t.Fatalf("%d targets, want 3", len(now))
	}
	server := now[0]
	if server.Kind != summary.TargetServer || server.Engine != "vllm" || server.EngineTitle != "vLLM" || server.At.IsZero() || server.Failed != "" {
		t.Errorf("server %+v, want vLLM read", server)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"running", num(server.Running), 14},
		{"waiting", num(server.Waiting), 3},
		{"kv cache usage", num(server.KVCacheUsage), 0.42},
		{"preemptions since the start mark", num(server.Preemptions), 2},
	} {
		if !near(c.got, c.want) {
			t.Errorf("server %s %v, want %v", c.name, c.got, c.want)
		}
	}
	if flakyNow := now[1]; flakyNow.Failed != "status" || flakyNow.Engine != "vllm" {
		t.Errorf("a target whose last read answered 500: %+v, want failed as status", flakyNow)
	}
	gpu := now[2]
	if gpu.Kind != summary.TargetGPU || gpu.Engine != "dcgm" || len(gpu.GPUs) != 2 {
		t.Fatalf("gpu target %+v, want the exporter's 2 GPUs", gpu)
	}
	if !near(num(gpu.Power), 512.394+648.027) || !near(num(gpu.Utilization), (0.91+0.97)/2) {
		t.Errorf("gpu power %v W, utilisation %v; want the sum 1160.421 W, the mean 0.94", num(gpu.Power), num(gpu.Utilization))
	}
	if g := gpu.GPUs[1]; g.ID != "1" || !near(num(g.Power), 648.027) || !near(num(g.MemoryUsed), 75992*(1<<20)) || !near(num(g.Utilization), 0.97) {
		t.Errorf("GPU 1 %+v: power %v, memory %v, utilisation %v", g, num(g.Power), num(g.MemoryUsed), num(g.Utilization))
	}
}

// nvidia-smi's last run is its target's Now: its GPUs while it answers,
// the kind of its failure once a run fails, not found when it is not
// there.
func TestNowOfNvidiaSMI(t *testing.T) {
	dir := t.TempDir()
	smi, broken := filepath.Join(dir, "nvidia-smi"), filepath.Join(dir, "broken")
	script := "#!/bin/sh\nif [ -e " + broken + " ]; then echo 'NVIDIA-SMI has failed' >&2; exit 9; fi\n" +
		"echo '0, GPU-11111111-2222-3333-4444-555555555555, NVIDIA H100 80GB HBM3, 90, 70000, 81559, 300.00, 60, 1980, 0x0000000000000000'\n"
	if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w, err := Start(ctx, Config{GPUs: []string{NvidiaSMI}, SMICommand: smi, Interval: noTicks})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w.Mark(ctx, MarkStart) // waits for a reading taken after it
	got := w.Now()[0]
	if got.URL != NvidiaSMI || got.Kind != summary.TargetGPU || got.Failed != "" || len(got.GPUs) != 1 || !near(num(got.Power), 300) || !near(num(got.Utilization), 0.9) {
		t.Errorf("nvidia-smi answering: %+v, want its one GPU at 300 W, 90 %%", got)
	}

	if err := os.WriteFile(broken, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w.smi.sampler.Poke()
	for w.Now()[0].Failed == "" && wait.Sleep(ctx, 20*time.Millisecond) {
	}
	if got := w.Now()[0]; got.Failed != gpumetrics.FailExit {
		t.Errorf("nvidia-smi failing: %+v, want its failure's kind %q", got, gpumetrics.FailExit)
	}

	missing, err := Start(ctx, Config{GPUs: []string{NvidiaSMI}, SMICommand: filepath.Join(dir, "missing"), Interval: noTicks})
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Stop()
	if got := missing.Now()[0]; got.Failed != gpumetrics.FailNotFound || len(got.GPUs) != 0 {
		t.Errorf("a missing nvidia-smi: %+v, want it not found", got)
	}
}
