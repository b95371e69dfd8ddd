package console

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
)

func ptr(v float64) *float64 { return &v }

// Each scrape target is a line of the live view: a server's running and
// waiting requests, KV-cache use and preemptions since the run's start;
// a GPU target's GPUs, mean utilisation and power summed; a target whose
// last read failed says how; one not yet read, or of no known engine,
// says that.
func TestServerLines(t *testing.T) {
	at := time.Unix(1000, 0)
	tests := []struct {
		name string
		now  serverwatch.Now
		want string
	}{
		{"a vLLM server", serverwatch.Now{Kind: summary.TargetServer, URL: "http://127.0.0.1:8000/metrics", Engine: "vllm", EngineTitle: "vLLM", At: at,
			Running: ptr(14), Waiting: ptr(3), KVCacheUsage: ptr(0.4243), Preemptions: ptr(2)},
			"server vLLM 127.0.0.1:8000: running 14, waiting 3, KV 42 %, preemptions +2"},
		{"a server without a KV-cache gauge", serverwatch.Now{Kind: summary.TargetServer, URL: "http://10.0.0.5:3000/metrics", Engine: "tgi", EngineTitle: "Text Generation Inference", At: at,
			Running: ptr(2), Waiting: ptr(0)},
			"server Text Generation Inference 10.0.0.5:3000: running 2, waiting 0"},
		{"a DCGM exporter", serverwatch.Now{Kind: summary.TargetGPU, URL: "http://127.0.0.1:9400/metrics", Engine: "dcgm", EngineTitle: "DCGM exporter", At: at,
			GPUs: make([]serverwatch.GPUNow, 2), Utilization: ptr(0.87), Power: ptr(612.4)},
			"gpu DCGM exporter 127.0.0.1:9400: 2 GPUs, util 87 %, 612 W"},
		{"nvidia-smi", serverwatch.Now{Kind: summary.TargetGPU, URL: serverwatch.NvidiaSMI, Engine: serverwatch.NvidiaSMI, EngineTitle: serverwatch.NvidiaSMI, At: at,
			GPUs: make([]serverwatch.GPUNow, 1), Utilization: ptr(0.5), Power: ptr(300)},
			"gpu nvidia-smi: 1 GPU, util 50 %, 300 W"},
		{"a last read that timed out", serverwatch.Now{Kind: summary.TargetServer, URL: "http://127.0.0.1:8000/metrics", Engine: "vllm", EngineTitle: "vLLM", At: at,
			Running: ptr(14), Failed: "timeout"},
			"server vLLM 127.0.0.1:8000: last scrape failed (timeout)"},
		{"not read yet", serverwatch.Now{Kind: summary.TargetServer, URL: "http://127.0.0.1:8000/metrics"},
			"server 127.0.0.1:8000: no answer yet"},
		{"no known engine", serverwatch.Now{Kind: summary.TargetServer, URL: "http://127.0.0.1:8000/metrics", At: at},
			"server 127.0.0.1:8000: no known engine"},
	}
	for _, tc := range tests {
		if got := serverLines([]serverwatch.Now{tc.now}); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The live view shows the targets' lines under the scenarios, on a
// terminal and in the plain lines alike, these only beside a scenario's.
func TestLiveShowsTheServers(t *testing.T) {
	start := time.Unix(1000, 0)
	l := NewLive(start, 5*time.Second)
	l.now = func() time.Time { return start.Add(3 * time.Second) }
	l.servers = func() []serverwatch.Now {
		return []serverwatch.Now{{Kind: summary.TargetServer, URL: "http://127.0.0.1:8000/metrics", Engine: "vllm", EngineTitle: "vLLM", At: start,
			Running: ptr(1), Waiting: ptr(1), KVCacheUsage: ptr(0), Preemptions: ptr(0)}}
	}
	p := engine.Progress{Elapsed: 3 * time.Second, MaxVUs: 2, ActiveVUs: 2, Scenarios: []engine.ScenarioProgress{
		{Name: "chat", Phase: engine.PhaseRunning, Elapsed: 3 * time.Second, Measured: 3 * time.Second, Duration: time.Minute, ActiveVUs: 2, MaxVUs: 2},
	}}
	const server = "server vLLM 127.0.0.1:8000: running 1, waiting 1, KV 0 %, preemptions +0"
	var meter ProgressMeter
	block := l.Block(p, &meter, 0)
	if len(block) != 5 || block[3] != server || !strings.HasPrefix(block[4], "figures of the last") {
		t.Errorf("Block:\n%s\nwant the server's line between the table and its note", strings.Join(block, "\n"))
	}
	lines := l.Lines(p, map[string]bool{})
	if len(lines) != 2 || lines[1] != "[3s] "+server {
		t.Errorf("Lines:\n%s\nwant the scenario's line, then [3s] %s", strings.Join(lines, "\n"), server)
	}
	// Without a scenario's line (none runs yet), no target's either.
	p.Scenarios[0].Phase = engine.PhaseWaiting
	if lines := l.Lines(p, map[string]bool{}); len(lines) != 0 {
		t.Errorf("Lines while no scenario runs: %q, want none", lines)
	}
}
