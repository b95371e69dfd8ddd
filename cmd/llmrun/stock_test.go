package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
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
// the knee each level doubles the throughput, beyond it the gain is the
// share of a request that the client's own time between requests takes
// (see TestStockConcurrencySweepStopsAtSaturation), a few per cent with
// 640 ms requests, so a 30 % bar separates them even on a slow machine
// with 2 s levels. Its levels are chained: with a PAUSE of an hour (each level's
// most to drain), the sweep ends when its levels have. It measures
// throughput, so it runs alone, not in parallel.
func TestStockConcurrencySweepFindsTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s sweep that runs alone: TestReportOfARealSweep runs the concurrency sweep in parallel, runtime/capacity's TestAssess finds the knee")
	}
	url := kneeSim(t, 4)
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	if err := os.WriteFile(cfg, []byte("levels: [1, 2, 4, 8]\nstep: 2s\npause: 1h\ninput_tokens: 16\noutput_tokens: 8\nwarmup: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--base-url", url,
		"-e", "CONFIG="+cfg, "-e", "OUTPUT_TOKENS=32", "-e", "MIN_GAIN=0.3", "--summary-export", export, "stock:concurrency-sweep")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "saturation ......... at concurrency 4: ") {
		t.Errorf("the sweep did not find the knee at the 4 batch slots:\n%s", stdout)
	}
	assertSweepLeads(t, stdout, "concurrency")
	s := readSummary(t, export)
	if len(s.Scenarios) != 4 || s.Serving.WarmupRequests != 4 {
		t.Errorf("scenarios %d, warmup requests %d: want 4 levels with one warmup request each", len(s.Scenarios), s.Serving.WarmupRequests)
	}
	if s.Serving.MeanOutputTokens != 32 {
		t.Errorf("mean output tokens %g: -e OUTPUT_TOKENS=32 must win over the file's 8", s.Serving.MeanOutputTokens)
	}
	if d := s.Meta.End.Sub(s.Meta.Start); d >= time.Hour {
		t.Errorf("the sweep lasted %s: a level waited out its PAUSE", d)
	}
	if len(s.ChainStops) != 0 {
		t.Errorf("STOP defaults to never, yet the sweep stopped: %+v", s.ChainStops)
	}
}

// assertSweepLeads checks that a sweep's summary leads with its answer:
// one verdict, then the levels table, then the whole run labelled as
// pooled over the levels, and no pooled latency table.
func assertSweepLeads(t *testing.T, stdout, variable string) {
	t.Helper()
	order := []string{"█ capacity (by " + variable + ")", "saturation ....", "within SLO ....", "│ " + variable + " ", "█ whole run (all levels pooled)", "█ checks"}
	for i := 1; i < len(order); i++ {
		if a, b := strings.Index(stdout, order[i-1]), strings.Index(stdout, order[i]); a < 0 || b < a {
			t.Errorf("%q is not before %q:\n%s", order[i-1], order[i], stdout)
		}
	}
	for _, once := range []string{"saturation ....", "within SLO ....", "█ capacity"} {
		if n := strings.Count(stdout, once); n != 1 {
			t.Errorf("%q appears %d times, want one verdict:\n%s", once, n, stdout)
		}
	}
	for _, absent := range []string{"latency (ms)", "█ by scenario", "█ serving"} {
		if strings.Contains(stdout, absent) {
			t.Errorf("a sweep's summary shows %q:\n%s", absent, stdout)
		}
	}
}

// STOP=saturation skips the levels after the one that shows saturation:
// with one batch slot, two VUs get the throughput of one while TTFT grows
// by a whole request, so the second level shows saturation at the first,
// and the rest are skipped, recorded as such and not as failures. It
// measures throughput, so it runs alone. One VU leaves the slot idle for
// the client's own time between its requests, which two VUs fill, so the
// first level's throughput falls short of the slot's by that share: with
// 640 ms requests, the 30 % bar holds while an iteration's own cost stays
// under 190 ms (8-token requests failed it under the race detector on a
// machine loaded 4 times over).
func TestStockConcurrencySweepStopsAtSaturation(t *testing.T) {
	stdout, s := runStock(t, kneeSim(t, 1), "stock:concurrency-sweep", "LEVELS=1,2,4,8", "STEP=2s", "INPUT_TOKENS=16", "OUTPUT_TOKENS=32",
		"MIN_GAIN=0.3", "STOP=saturation")
	if want := "stopped early ...... after c2: saturation at concurrency 1: from it to concurrency 2 output throughput grew by less than 30 % while TTFT p50 grew by more; skipped c4, c8 (not run, not failed)"; !strings.Contains(stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, stdout)
	}
	assertSweepLeads(t, stdout, "concurrency")
	if len(s.ChainStops) != 1 || s.ChainStops[0].After != "c2" || strings.Join(s.ChainStops[0].Skipped, ",") != "c4,c8" {
		t.Errorf("result file's chain stops %+v, want c4 and c8 skipped after c2", s.ChainStops)
	}
	if s.Capacity == nil || s.Capacity.Saturation == nil || s.Capacity.Saturation.Level != 1 || len(s.Capacity.Levels) != 2 {
		t.Errorf("result file's verdict %+v, want saturation at 1 over the two levels run", s.Capacity)
	}
	if s.Serving.Failed != 0 || s.Meta.Interrupted {
		t.Errorf("failed %d, interrupted %v: skipped levels are neither", s.Serving.Failed, s.Meta.Interrupted)
	}
	// The result file's options say how the levels were chained.
	var opts struct {
		Scenarios map[string]struct {
			StartAfter string `json:"startAfter"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(s.Meta.Options, &opts); err != nil {
		t.Fatal(err)
	}
	if got := opts.Scenarios["c2"].StartAfter + "," + opts.Scenarios["c8"].StartAfter; got != "c1,c4" || opts.Scenarios["c1"].StartAfter != "" {
		t.Errorf("options' startAfter of c1, c2, c8: %q, %q; want none, then c1,c4", opts.Scenarios["c1"].StartAfter, got)
	}
}

// runStock runs a stock scenario against url with -e params, expects it to
// pass, and returns its output and result file.
func runStock(t *testing.T, url, script string, params ...string) (string, *summary.Summary) {
	t.Helper()
	export := filepath.Join(t.TempDir(), "summary.json")
	args := []string{"run", "-q", "--no-color", "--base-url", url, "--summary-export", export}
	for _, p := range params {
		args = append(args, "-e", p)
	}
	code, stdout, stderr := cli(t, context.Background(), nil, append(args, script)...)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	return stdout, readSummary(t, export)
}

// inspect shows the sweep's chain: each level after the one before, and
// the longest the run can take, each level's graceful stop included.
func TestInspectStockSweepChain(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := cli(t, context.Background(), nil, "inspect", "-e", "LEVELS=1,2,4", "-e", "STEP=10s", "-e", "PAUSE=5s", "stock:concurrency-sweep")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"at most 45s", "│ c2       │ constant-vus │ default() │ after c1 │"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
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
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if want := "within SLO ......... rate 3: "; !strings.Contains(stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, stdout)
	}
	assertSweepLeads(t, stdout, "rate")
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
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "within SLO ......... rate 1: ") || !strings.Contains(stdout, "(SLO 400 ms)") {
		t.Errorf("the verdict does not follow --slo:\n%s", stdout)
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
			if code != exitcode.InvalidConfig || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s %s: exit %d, stderr %q; want %d and %q", cmd, tc.opts, code, stderr, exitcode.InvalidConfig, tc.want)
			}
		}
	}
}

// The serving point prints vLLM's headline block over exactly NUM_PROMPTS
// measured requests, the warmup ones excluded.
func TestStockServingPoint(t *testing.T) {
	t.Parallel()
	stdout, s := runStock(t, kneeSim(t, 8), "stock:serving-point", "NUM_PROMPTS=20", "MAX_CONCURRENCY=4", "WARMUP=4", "INPUT_LEN=32", "OUTPUT_LEN=8", "RANGE_RATIO=0.5")
	for _, want := range []string{"Serving Benchmark Result", "Successful requests:", fmt.Sprintf("%-40s%10d\n", "Maximum request concurrency:", 4),
		"Mean TTFT (ms):", "P99 ITL (ms):", "✓ answer has the asked length"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "Request rate configured") {
		t.Errorf("an infinite rate is not printed, as vLLM does not:\n%s", stdout)
	}
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
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, fmt.Sprintf("%-40s%10s\n", "Request rate configured (RPS):", "20.00")) || strings.Contains(stdout, "Maximum request concurrency") {
		t.Errorf("want the rate and no concurrency cap in vLLM's block:\n%s", stdout)
	}
	s := readSummary(t, export)
	// Poisson arrivals over NUM_PROMPTS/RATE seconds: about 20 requests.
	if s.Serving.OK < 8 || s.Serving.OK > 40 || s.Serving.Failed != 0 {
		t.Errorf("completed %d failed %d", s.Serving.OK, s.Serving.Failed)
	}
	code, _, stderr = cli(t, context.Background(), nil, "run", "-q", "--base-url", url, "-e", "REQUEST_RATE=fast", "stock:serving-point")
	if code != exitcode.ScriptError || !strings.Contains(stderr, "REQUEST_RATE must be a positive number or inf") {
		t.Errorf("bad rate: exit %d, %s", code, stderr)
	}
	code, _, stderr = cli(t, context.Background(), nil, "run", "stock:nope")
	if code != exitcode.Usage || !strings.Contains(stderr, "serving-point") {
		t.Errorf("unknown stock scenario: exit %d, %s", code, stderr)
	}
}

// stock:agentic runs its sessions to the end, tool calls included, and
// shows each turn's TTFT and prefix-cache share.
func TestStockAgentic(t *testing.T) {
	t.Parallel()
	stdout, s := runStock(t, kneeSim(t, 8), "stock:agentic", "SESSIONS=4", "VUS=2", "TURNS=3", "TOOL_CALLS=1", "USER_TOKENS=16", "TOOL_TOKENS=16", "OUTPUT_TOKENS=8")
	for _, want := range []string{"✓ session completed", "agentic sessions by turn", "\n   3             8"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if m := s.Metrics["llm_session_turns"]; m.Values["count"] != 4 {
		t.Errorf("llm_session_turns %+v, want 4 sessions", m)
	}
	for _, name := range []string{"llm_ttft{turn:3}", "llm_session_cache_hit{turn:3}"} {
		if m, ok := s.Metrics[name]; !ok || m.Values["count"] != 8 {
			t.Errorf("%s %+v, want a sample per request of turn 3 of 4 sessions (a tool round and the answer)", name, m)
		}
	}
	if s.Serving.OK != 4*3*2 {
		t.Errorf("%d requests, want 4 sessions × 3 turns × 2", s.Serving.OK)
	}
}

// stock:agentic with fewer SESSIONS than its default VUS runs them, a
// VU each, rather than refusing its own scenario.
func TestStockAgenticFewerSessionsThanVUs(t *testing.T) {
	t.Parallel()
	_, s := runStock(t, kneeSim(t, 8), "stock:agentic", "SESSIONS=2", "TURNS=1", "TOOL_CALLS=0", "USER_TOKENS=8", "OUTPUT_TOKENS=4")
	if m := s.Metrics["llm_session_turns"]; m.Values["count"] != 2 {
		t.Errorf("llm_session_turns %+v, want 2 sessions", m)
	}
}

// stock:agentic refuses a bad parameter before the run, as a script
// error, whichever parameter it is: not in each session's iteration.
func TestStockAgenticRefusesABadParameter(t *testing.T) {
	t.Parallel()
	url := kneeSim(t, 8)
	for _, param := range []string{"TURNS", "OUTPUT_TOKENS"} {
		code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", url, "-e", "SESSIONS=2", "-e", "VUS=2", "-e", param+"=1.5", "stock:agentic")
		if code != exitcode.ScriptError || !strings.Contains(stderr, param+` must be a whole number ≥ 0; got "1.5"`) {
			t.Errorf("%s=1.5: exit %d, want %d (a script error)\nstdout:\n%s\nstderr:\n%s", param, code, exitcode.ScriptError, stdout, stderr)
		}
	}
}
