package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm/llmsim"
)

// kneeSim is a simulator whose capacity is its batch slots: prefill and
// decode steps cost the same whatever the batch, so throughput grows with
// concurrency up to slots and not beyond.
func kneeSim(t *testing.T, slots int) string {
	cfg := llmsim.DefaultConfig()
	cfg.MaxNumSeqs = slots
	cfg.PrefillBase, cfg.PrefillPerToken = 5*time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 20*time.Millisecond, 0
	return startSim(t, cfg)
}

// The concurrency sweep finds the knee the simulator was given: its batch
// slots, read from a YAML config file, with -e overriding one key. Below
// the knee each level doubles the throughput, beyond it the gain is a few
// per cent, so a 30 % bar separates them even on a slow machine with 1 s
// levels. It measures throughput, so it runs alone, not in parallel.
func TestStockConcurrencySweepFindsTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("an 8 s sweep that runs alone: TestReportOfARealSweep runs the concurrency sweep in parallel, runtime/capacity's TestAssess finds the knee")
	}
	url := kneeSim(t, 4)
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	if err := os.WriteFile(cfg, []byte("levels: [1, 2, 4, 8, 16]\nstep: 1s\npause: 500ms\ninput_tokens: 16\noutput_tokens: 64\nwarmup: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--base-url", url,
		"-e", "CONFIG="+cfg, "-e", "OUTPUT_TOKENS=8", "-e", "MIN_GAIN=0.3", "--summary-export", export, "stock:concurrency-sweep")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "saturation point: concurrency 4 ") {
		t.Errorf("the sweep did not find the knee at the 4 batch slots:\n%s", stdout)
	}
	s := readSummary(t, export)
	if len(s.Scenarios) != 5 || s.Serving.WarmupRequests != 5 {
		t.Errorf("scenarios %d, warmup requests %d: want 5 levels with one warmup request each", len(s.Scenarios), s.Serving.WarmupRequests)
	}
	if s.Serving.MeanOutputTokens != 8 {
		t.Errorf("mean output tokens %g: -e OUTPUT_TOKENS=8 must win over the file's 64", s.Serving.MeanOutputTokens)
	}
	if !strings.Contains(stdout, "█ serving") {
		t.Errorf("textSummary did not keep the console summary:\n%s", stdout)
	}
}

// The rate sweep names the highest Poisson rate within the TTFT SLO: the
// simulator serves about 12 req/s (2 slots, 165 ms a request), so 24 and
// 48 req/s queue without bound and 3 req/s does not. The rates (a list
// written as a string) and the SLO come from a TOML CONFIG file, and the
// SLO reaches llmrun's capacity verdict: the console's capacity block, the
// sweep's table and the result file state one verdict. It measures TTFT
// against an SLO, so it runs alone, not in parallel.
func TestStockRateSweepFindsTheHighestRateWithinTheSLO(t *testing.T) {
	if testing.Short() {
		t.Skip("a 13 s sweep that runs alone: TestStockRateSweepSLOFlagWins runs the rate sweep to its SLO verdict with two levels")
	}
	url := kneeSim(t, 2)
	dir := t.TempDir()
	config, export := filepath.Join(dir, "sweep.toml"), filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(config, []byte("rates = \"1,3,24,48\"\nslo_ttft_p99 = 400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A fixed seed: Poisson arrivals of another could leave a 2 s level
	// at 1 or 3 req/s without a request.
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--seed", "1", "--base-url", url,
		"-e", "CONFIG="+config, "-e", "STEP=2s", "-e", "PAUSE=1s", "-e", "INPUT_TOKENS=16", "-e", "OUTPUT_TOKENS=8",
		"--summary-export", export, "stock:rate-sweep")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"highest rate within the SLO (TTFT p99 <= 400 ms, success rate >= 99 %): 3 req/s",
		"within SLO ....... rate 3: ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "no SLO given") {
		t.Errorf("the capacity block did not get the sweep's SLO:\n%s", stdout)
	}
	c := readSummary(t, export).Capacity
	if c == nil || c.SLO.TTFTP99 != 400 || c.MaxWithinSLO == nil || c.MaxWithinSLO.Level != 3 {
		t.Errorf("result file's capacity verdict %+v, want SLO TTFT p99 400 ms and rate 3 within it", c)
	}
}

// --slo wins over the sweep's own SLO, in the table as in the verdict. It
// measures TTFT against an SLO, so it runs alone, not in parallel.
func TestStockRateSweepSLOFlagWins(t *testing.T) {
	url := kneeSim(t, 2)
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--seed", "1", "--base-url", url,
		"-e", "RATES=1,24", "-e", "STEP=2s", "-e", "PAUSE=1s", "-e", "INPUT_TOKENS=16", "-e", "OUTPUT_TOKENS=8",
		"-e", "SLO_TTFT_P99=1", "--slo", "ttft_p99=400", "stock:rate-sweep")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "highest rate within the SLO (TTFT p99 <= 400 ms, success rate >= 99 %): 1 req/s") {
		t.Errorf("the table does not follow --slo:\n%s", stdout)
	}
}

// A bad options.slo or options.capacity (its stop rule included) is invalid options, naming the
// field, to run and to inspect alike.
func TestScriptSLOOptionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ opts, want string }{
		{`slo: { ttft_p50: 100 }`, "options.slo: ttft_p50: unknown objective"},
		{`slo: { ttft_p99: -5 }`, "options.slo: ttft_p99: \"-5\": want a positive latency"},
		{`slo: 'ttft_p99=abc'`, "options.slo: ttft_p99: \"abc\""},
		{`capacity: { minGain: 0 }`, "options.capacity.minGain: 0: want a relative growth"},
		{`capacity: { gain: 0.2 }`, "options.capacity: want { minGain: 0.1, stop: 'saturation' }"},
		{`capacity: { stop: 'soon' }`, `options.capacity.stop: "soon": want one of 'never', 'saturation', 'slo'`},
		{`capacity: { stop: 'slo' }`, "options.capacity.stop: 'slo' stops at the first level that misses the SLO, and none is given"},
		{`capacity: { stop: 'saturation' }`, `options.capacity.stop: "saturation" stops a sweep whose levels are chained with startAfter, and no scenario has startAfter`},
	} {
		script := writeScript(t, "slo.js", `export const options = { vus: 1, iterations: 1, `+tc.opts+` };
export default function () {}`)
		for _, cmd := range []string{"run", "inspect"} {
			code, _, stderr := cli(t, context.Background(), nil, cmd, "-q", script)
			if code != exitInvalidConfig || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s %s: exit %d, stderr %q; want %d and %q", cmd, tc.opts, code, stderr, exitInvalidConfig, tc.want)
			}
		}
	}
}

// The serving point prints vLLM's headline block over exactly NUM_PROMPTS
// measured requests, the warmup ones excluded.
func TestStockServingPoint(t *testing.T) {
	t.Parallel()
	url := kneeSim(t, 8)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--base-url", url,
		"-e", "NUM_PROMPTS=20", "-e", "MAX_CONCURRENCY=4", "-e", "WARMUP=4", "-e", "INPUT_LEN=32", "-e", "OUTPUT_LEN=8",
		"-e", "RANGE_RATIO=0.5", "--summary-export", export, "stock:serving-point")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Serving Benchmark Result", "Successful requests:", "Mean TTFT (ms):", "P99 ITL (ms):", "✓ answer has the asked length"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	s := readSummary(t, export)
	if s.Serving.OK != 20 || s.Serving.WarmupRequests != 4 {
		t.Errorf("completed %d warmup %d, want 20 and 4", s.Serving.OK, s.Serving.WarmupRequests)
	}
	if s.Serving.MeanOutputTokens < 4 || s.Serving.MeanOutputTokens > 12 {
		t.Errorf("mean output tokens %g, want within 8·[0.5, 1.5]", s.Serving.MeanOutputTokens)
	}
}

func TestStockServingPointAtARate(t *testing.T) {
	t.Parallel()
	url := kneeSim(t, 8)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--seed", "1", "--base-url", url,
		"-e", "NUM_PROMPTS=20", "-e", "REQUEST_RATE=20", "-e", "OUTPUT_LEN=4", "--summary-export", export, "stock:serving-point")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	// Poisson arrivals over NUM_PROMPTS/RATE seconds: about 20 requests.
	if s.Serving.OK < 8 || s.Serving.OK > 40 || s.Serving.Failed != 0 {
		t.Errorf("completed %d failed %d", s.Serving.OK, s.Serving.Failed)
	}
	code, _, stderr = cli(t, context.Background(), nil, "run", "-q", "--base-url", url, "-e", "REQUEST_RATE=fast", "stock:serving-point")
	if code != exitScriptError || !strings.Contains(stderr, "REQUEST_RATE must be a positive number or inf") {
		t.Errorf("bad rate: exit %d, %s", code, stderr)
	}
	code, _, stderr = cli(t, context.Background(), nil, "run", "stock:nope")
	if code != exitUsage || !strings.Contains(stderr, "serving-point") {
		t.Errorf("unknown stock scenario: exit %d, %s", code, stderr)
	}
}
