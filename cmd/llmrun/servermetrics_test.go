package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/promtest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
)

// `llmrun run --server-metrics URL` against the built-in simulator reads
// the server's metrics into the result file, as the preset given reads
// them; --gpu-metrics reads a DCGM exporter beside it.
func TestRunReadsServerMetrics(t *testing.T) {
	t.Parallel()
	tgi := promtest.Serve(t, promtest.Recording("tgi.prom"))
	// Reads: the marks before the first VU and after the last request
	// (the preset spares the read that finds the engine).
	tgi.At(2, func(f promtest.Families) { f.Add("tgi_request_success", 3) })
	dcgm := promtest.Serve(t, promtest.Recording("dcgm.prom"))
	script := writeScript(t, "s.js", "import llm from 'llm';\nexport default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }\n")
	out := filepath.Join(t.TempDir(), "result.json")
	code, stdout, stderr := command(t, "run", "-i", "3", "--seed", "1", "--server-metrics", tgi.URL, "--server-metrics-preset", "tgi",
		"--gpu-metrics", dcgm.URL, "--server-metrics-interval", "1h", "--summary-export", out, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, line := range []string{"server metrics: Text Generation Inference (preset) at " + tgi.URL + ", every 1h0m0s", "gpu metrics: DCGM exporter at " + dcgm.URL} {
		if !strings.Contains(stdout, line) {
			t.Errorf("the banner lacks %q:\n%s", line, stdout)
		}
	}
	s := readSummary(t, out)
	if s.Server == nil || len(s.Server.Targets) != 2 {
		t.Fatalf("server section %+v, want the server and the GPUs", s.Server)
	}
	server, gpu := s.Server.Targets[0], s.Server.Targets[1]
	if server.Engine != "tgi" || !server.EngineForced {
		t.Errorf("server engine %q (forced %v), want tgi as the preset says", server.Engine, server.EngineForced)
	}
	if d := server.Figures[string(engines.Requests)].Delta; d == nil || *d != 3 {
		t.Errorf("requests over the window %v, want 3", d)
	}
	if len(gpu.GPUs) != 2 || gpu.Engine != "dcgm" {
		t.Errorf("GPU target %+v, want the exporter's 2 GPUs", gpu)
	}
}

// The server-metrics flags' mistakes are usage errors that name the flag.
func TestServerMetricsFlagErrors(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "s.js", "export default function () {}\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--server-metrics", "localhost:8000/metrics"}, "--server-metrics: server metrics localhost:8000/metrics: the scheme must be http or https"},
		{[]string{"--server-metrics", "http://h/metrics", "--server-metrics-preset", "vlm"}, `--server-metrics: server metrics http://h/metrics: unknown server-metrics preset "vlm": did you mean "vllm"?`},
		{[]string{"--server-metrics-preset", "vllm"}, "--server-metrics-preset reads the --server-metrics URLs, and none is given"},
		{[]string{"--gpu-metrics", "nvidia_smi"}, `--gpu-metrics: gpu metrics nvidia_smi: the scheme must be http or https, not ""`},
		{[]string{"--server-metrics-interval", "0s"}, "--server-metrics-interval must be positive"},
		{[]string{"--no-server-metrics", "--gpu-metrics", "nvidia-smi"}, "--no-server-metrics reads nothing"},
	} {
		code, _, stderr := cli(t, context.Background(), nil, append(append([]string{"run"}, c.args...), script)...)
		if code != exitcode.Usage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", c.args, code, stderr, exitcode.Usage, c.want)
		}
	}
}
