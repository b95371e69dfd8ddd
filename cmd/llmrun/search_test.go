package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/inspect"
	"github.com/llmrun/llmrun/runtime/summary"
)

// truthSim is a simulator whose sustainable request rate follows exactly
// from its settings, for requests of truthOutputTokens output tokens:
// see sustainableRate.
func truthSim() llmsim.Config {
	cfg := llmsim.DefaultConfig()
	cfg.MaxNumSeqs = 4
	cfg.PrefillBase, cfg.PrefillPerToken = 20*time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 30*time.Millisecond, 0
	cfg.Tokenizer = llmsim.TokenizerBytes
	return cfg
}

const truthOutputTokens = 2

// startSimProcess starts `llmrun sim` with cfg's engine settings in a
// process of its own and returns its base URL. A simulator in the test's
// process shares its threads and its garbage collector with the load
// generator's VUs: on a loaded machine its steps then run late by more
// than a step (a level at 0.85·r* queued for a second), which in its own
// process they do not.
func startSimProcess(t *testing.T, cfg llmsim.Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, os.Args[0], "sim", "--addr", "127.0.0.1:0", "--tokenizer", cfg.Tokenizer,
		"--max-num-seqs", strconv.Itoa(cfg.MaxNumSeqs), "--max-num-batched-tokens", strconv.Itoa(cfg.MaxNumBatchedTokens),
		"--prefill-base", cfg.PrefillBase.String(), "--prefill-per-token", cfg.PrefillPerToken.String(),
		"--decode-base", cfg.DecodeBase.String(), "--decode-per-seq", cfg.DecodePerSeq.String())
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	// Its first line names the URL it serves on; a simulator that fails
	// to start closes its output.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	_, rest, ok := strings.Cut(line, " on ")
	url, _, _ := strings.Cut(rest, " ")
	if err != nil || !ok || !strings.HasPrefix(url, "http://") {
		t.Fatalf("llmrun sim did not say where it serves: %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return url
}

// sustainableRate is the most requests per second the simulator's engine
// (internal/llmsim/engine.go) completes once requests wait for slots, for
// requests of two output tokens. The engine's loop frees finished
// sequences, admits waiting ones into free slots, then runs one step: a
// prefill step when it admitted any (it makes their first token, and
// decoding pauses), else a decode step giving every running sequence one
// token. A request of L output tokens takes one prefill step and L−1
// decode steps; with L = 2, every decode step ends every sequence
// running, so however requests group into steps, a saturated engine
// alternates a prefill step admitting S = MaxNumSeqs sequences with a
// decode step ending them:
//
//	r* = S / (PrefillBase + S·prompt·PrefillPerToken + DecodeBase + S·DecodePerSeq)
//
// = 4 / (20 ms + 30 ms) = 80 per second with no per-token or per-sequence
// cost. (With L > 2 sequences admitted at different steps end at
// different steps, and the rate depends on how they group.) The steps
// are on an absolute timeline: a step whose timer fires late by less
// than the next step is made up by that step, so a loaded machine lowers
// the rate only by stalls longer than 20 ms; a prefill step that costs
// nothing would lose every late timer's delay instead.
func sustainableRate(cfg llmsim.Config, outputTokens int) float64 {
	s := float64(cfg.MaxNumSeqs)
	step := cfg.PrefillBase + time.Duration(outputTokens-1)*cfg.DecodeBase
	return s / step.Seconds()
}

// The capacity search brackets the request rate the simulator's settings
// give (sustainableRate: 80 per second), with evenly spaced arrivals.
// Below r* a request waits at most for the step running and one cycle of
// steps: TTFT is at most about 100 ms. Above it the queue grows at r − r*
// for the whole level of T seconds, so the last requests' TTFT is
// (r/r* − 1)·T: with the SLO S = 600 ms over T = 24 s, a level meets the
// SLO only below r*·(1 + S/T) = 1.025·r*. That SLO capacity is the truth
// the bracket must hold: low ≤ 1.025·r* and high ≥ r*. (T is long enough
// for a quarter of the lowest level, as TestCapacitySearchKeepsTheMix
// runs, to bound its p99 in one step: 0.25 × 68.4/s × 24 s = 410
// requests, of the 368 that 95 % confidence needs.)
//
// The levels START and MAX give are 0.855·r*, 1.042·r* and their
// geometric mean 0.944·r*, whose bracket with 1.042·r* is within ±5 %:
// none within noise of the truth, so the test is decided by the search
// and not by the machine. A loaded machine only makes the simulator and
// the client slower: a level above r* then misses by more. Below r*, a
// stall of s seconds queues the requests that arrive in it, whose TTFT
// grows by about s, so the levels below r* stay within the SLO through
// stalls of up to 500 ms (at a load average of 28 on 2 cores, the
// simulator in its own process stalled up to some 350 ms, and a level
// run 34 s at 0.944·r* missed a 500 ms bound). It measures rates, so it
// runs alone.
func TestCapacitySearchFindsTheSimulatorsRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a 75 s search that runs alone: runtime/capacity's TestSearchBracketsAMonotoneServer searches a synthetic server")
	}
	s, stdout := truthSearch(t, "-e", "VARIABLE=rate", "-e", "INPUT_TOKENS=8", "stock:capacity-search")
	if s.Capacity.Variable != "rate" {
		t.Errorf("a search by %s", s.Capacity.Variable)
	}
	for _, want := range []string{"█ capacity search (by rate)", "  capacity ........... ", " met the SLO, rate ", "█ whole run (all levels pooled)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	if a, b := strings.Index(stdout, "█ capacity search"), strings.Index(stdout, "█ whole run"); a < 0 || b < a {
		t.Errorf("the search does not lead the summary:\n%s", stdout)
	}
}

// The SLO and the level's time of the searches against truthSim.
const (
	truthSLO  = 600.0 // ms
	truthStep = 24.0  // s
)

// truthSearch runs the rate search of TestCapacitySearchFindsTheSimulatorsRate
// (the script and its own parameters in args) against a simulator of
// truthSim's settings, checks that its bracket holds the truth, and
// returns the result file and the summary printed.
func truthSearch(t *testing.T, args ...string) (*summary.Summary, string) {
	t.Helper()
	cfg := truthSim()
	url := startSimProcess(t, cfg)
	rStar := sustainableRate(cfg, truthOutputTokens)
	export := filepath.Join(t.TempDir(), "summary.json")
	level := func(f float64) string { return strconv.FormatFloat(f*rStar, 'f', 2, 64) }
	code, stdout, stderr := cli(t, context.Background(), nil, append([]string{"run", "-q", "--no-color", "--base-url", url,
		"-e", "ARRIVAL=constant", "-e", "START=" + level(0.855), "-e", "MAX=" + level(1.042), "-e", fmt.Sprintf("STEP=%gs", truthStep),
		"-e", "OUTPUT_TOKENS=" + strconv.Itoa(truthOutputTokens), "-e", fmt.Sprintf("SLO_TTFT_P99=%g", truthSLO), "-e", "PAUSE=1h",
		"--summary-export", export}, args...)...)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	if s.Capacity == nil || s.Capacity.Search == nil {
		t.Fatalf("no capacity search in the result:\n%s", stdout)
	}
	logSearchAgainstSweep(t, s.Capacity.Search, rStar)
	checkBracket(t, s.Capacity.Search, rStar, truthSLO/1000/truthStep, stdout)
	return s, stdout
}

// checkBracket checks that a rate search's bracket holds the SLO capacity
// of a server that sustains rStar requests a second, which lies between
// rStar and rStar·(1 + allowance), and is within ±5 %.
func checkBracket(t *testing.T, sr *summary.CapacitySearch, rStar, allowance float64, stdout string) {
	t.Helper()
	switch {
	case sr.Low <= 0 || sr.High <= sr.Low:
		t.Fatalf("the search did not bracket the capacity: %+v\n%s", sr, stdout)
	case sr.Low > rStar*(1+allowance):
		t.Errorf("the search passed rate %g, above the SLO capacity %.2f (r* %.2f + %g %% of queue the SLO allows)\n%s", sr.Low, rStar*(1+allowance), rStar, 100*allowance, stdout)
	case sr.High < rStar:
		t.Errorf("the search did not pass rate %g, below the r* = %.2f the settings give\n%s", sr.High, rStar, stdout)
	case (sr.High-sr.Low)/(sr.High+sr.Low) > 0.05 || !strings.HasPrefix(sr.Stop, "bracketed within ±5 %"):
		t.Errorf("stopped %q with the bracket [%g, %g]; want it bracketed within ±5 %%", sr.Stop, sr.Low, sr.High)
	}
}

// logSearchAgainstSweep logs what the search ran beside what the stock
// rate sweep would need for the same resolution: a level per ×1.1 from
// the search's first level up to the bracket's top, each run for the
// search's shortest level (the drains of the levels above capacity left
// out).
func logSearchAgainstSweep(t *testing.T, sr *summary.CapacitySearch, rStar float64) {
	t.Helper()
	var rows []string
	for _, l := range sr.Levels {
		rows = append(rows, fmt.Sprintf("%g (%.3f·r*, %s, %d requests, %.1f s)", l.Level, l.Level/rStar, l.Verdict, l.Requests, l.Seconds))
	}
	step := math.Inf(1) // a level not extended
	for _, l := range sr.Levels {
		step = min(step, l.Seconds)
	}
	sweep := 0
	for r := sr.Levels[0].Level; r < sr.High*1.1; r *= 1.1 {
		sweep++
	}
	t.Logf("r* %.2f; search: %d levels in %.1f s, bracket [%g, %g], stop %q; levels %s; a ×1.1 sweep from %g past %g: %d levels, at least %.0f s",
		rStar, len(sr.Levels), sr.Seconds, sr.Low, sr.High, sr.Stop, strings.Join(rows, "; "), sr.Levels[0].Level, sr.High, sweep, float64(sweep)*step)
}

// A search's bad options are refused before the run, naming the field.
func TestCapacitySearchBadOptions(t *testing.T) {
	script := func(t *testing.T, src string) string {
		path := filepath.Join(t.TempDir(), "search.js")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		args func(t *testing.T) []string
		code int
		want string
	}{
		{"a width of 200 %", func(*testing.T) []string { return []string{"-e", "WIDTH=2", "stock:capacity-search"} },
			exitcode.InvalidConfig, "options.capacity.search.width: 2: want a relative half-width from 0.001 to below 1"},
		{"max below start", func(*testing.T) []string { return []string{"-e", "START=8", "-e", "MAX=4", "stock:capacity-search"} },
			exitcode.InvalidConfig, "options.capacity.search.max: 4 is below start 8"},
		{"a variable the stock search does not know", func(*testing.T) []string { return []string{"-e", "VARIABLE=users", "stock:capacity-search"} },
			exitcode.ScriptError, `VARIABLE must be rate or concurrency; got "users"`},
		{"an unknown field", func(t *testing.T) []string {
			return []string{script(t, `export const options = { vus: 1, duration: '1s', slo: { ttft_p99: 100 }, capacity: { search: { widht: 0.1 } } };
export default function () {}`)}
		}, exitcode.InvalidConfig, `options.capacity.search: want {`},
		{"no SLO", func(t *testing.T) []string {
			return []string{script(t, `export const options = { vus: 1, duration: '1s', capacity: { search: {} } };
export default function () {}`)}
		}, exitcode.InvalidConfig, "options.capacity.search: a search finds the most load within an SLO, and none is given"},
		{"a start of NaN", func(t *testing.T) []string {
			return []string{script(t, `export const options = { vus: 1, duration: '1s', slo: { ttft_p99: 100 }, capacity: { search: { start: NaN } } };
export default function () {}`)}
		}, exitcode.InvalidConfig, "options.capacity.search.start: null: want a number"},
		{"a width finer than the levels' rounding", func(*testing.T) []string {
			return []string{"-e", "WIDTH=0.00001", "stock:capacity-search"}
		}, exitcode.InvalidConfig, "options.capacity.search.width: 1e-05: want a relative half-width from 0.001"},
		{"a start above the executor's rate limit", func(t *testing.T) []string {
			return []string{script(t, `export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 1, duration: '1s', preAllocatedVUs: 1 } },
  slo: { ttft_p99: 100 }, capacity: { search: { start: 1e9 } } };
export default function () {}`)}
		}, exitcode.InvalidConfig, "options.capacity.search.start: 1e+09 would run scenario s beyond its limits: rate"},
		{"a max above the executor's rate limit", func(*testing.T) []string {
			return []string{"-e", "MAX=2e6", "stock:capacity-search"}
		}, exitcode.InvalidConfig, "options.capacity.search.max: 2e+06 would run scenario search beyond its limits: rate"},
		{"a concurrency that overflows an int", func(t *testing.T) []string {
			return []string{script(t, `export const options = { scenarios: { c: { executor: 'constant-vus', vus: 1, duration: '1s' } },
  slo: { ttft_p99: 100 }, capacity: { search: { max: 2 ** 63 } } };
export default function () {}`)}
		}, exitcode.InvalidConfig, "options.capacity.search.max: 9.223372036854776e+18 would run scenario c beyond its limits: vus"},
		{"a concurrency max of part of a VU", func(t *testing.T) []string {
			return []string{script(t, `export const options = { scenarios: { c: { executor: 'constant-vus', vus: 1, duration: '1s' } },
  slo: { ttft_p99: 100 }, capacity: { search: { max: 10.5 } } };
export default function () {}`)}
		}, exitcode.InvalidConfig, "options.capacity.search.max: 10.5: a concurrency search counts whole VUs: want a whole number"},
		{"a part of the run", func(*testing.T) []string {
			return []string{"--execution-segment", "0:1/2", "--seed", "1", "stock:capacity-search"}
		}, exitcode.InvalidConfig, "options.capacity.search: this process runs only the execution segment 0:1/2 of the load"},
		{"a scenario it cannot scale", func(t *testing.T) []string {
			return []string{script(t, `export const options = { scenarios: { ramp: { executor: 'ramping-vus', stages: [{ duration: '1s', target: 2 }] } },
  slo: { ttft_p99: 100 }, capacity: { search: { variable: 'concurrency' } } };
export default function () {}`)}
		}, exitcode.InvalidConfig, `options.scenarios.ramp.executor: "ramping-vus": a concurrency search scales constant-vus scenarios only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, context.Background(), nil, append([]string{"run", "-q", "--no-preflight"}, tt.args(t)...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q\n%s", code, stderr, tt.code, tt.want, stdout)
			}
		})
	}
}

// A search over two scenarios at a 3:1 mix finds the same total rate as
// one scenario of the same requests (see
// TestCapacitySearchFindsTheSimulatorsRate, whose levels and SLO it
// uses); every level runs both at their shares, and each scenario is
// judged on its own figures: the result file has each scenario's row at
// every level, and a missed level names the scenario whose figure
// decided.
func TestCapacitySearchKeepsTheMix(t *testing.T) {
	if testing.Short() {
		t.Skip("a 75 s search that runs alone: runtime/engine's TestSearchRunsRoundsKeepingTheMix runs a mix's rounds at their shares")
	}
	s, _ := truthSearch(t, writeScript(t, "mix.js", mixSearch))
	sr := s.Capacity.Search
	requests := map[string]int64{}
	for _, sc := range s.Scenarios {
		requests[sc.Name] = sc.Serving.Requests
	}
	rows := map[string]summary.CapacityLevel{}
	for _, row := range s.Capacity.Levels {
		rows[row.Scenario] = row
	}
	for _, l := range sr.Levels {
		chat, rag := engine.RoundName("chat", l.Level), engine.RoundName("rag", l.Level)
		// Evenly spaced arrivals at 3/4 and 1/4 of the level: the counts
		// are 3:1 but for the one arrival each may start or not at the
		// level's end.
		if c, r := requests[chat], requests[rag]; c+r != l.Requests || c < 3*r-4 || c > 3*r+4 {
			t.Errorf("level %g: %s sent %d requests and %s %d of the level's %d: want 3:1", l.Level, chat, c, rag, r, l.Requests)
		}
		for _, name := range []string{chat, rag} {
			if row, ok := rows[name]; !ok || row.Level != l.Level || row.TTFTP99 <= 0 || row.MeetsSLO != (l.Verdict == capacity.Met) {
				t.Errorf("level %g: the result's row of %s is %+v (found %v), want its own TTFT p99 and the level's verdict %s", l.Level, name, row, ok, l.Verdict)
			}
		}
		if l.Verdict == capacity.Missed && !strings.HasPrefix(l.Figure, "chat: ") && !strings.HasPrefix(l.Figure, "rag: ") {
			t.Errorf("level %g missed on %q: want the figure of the scenario that missed", l.Level, l.Figure)
		}
	}
}

// mixSearch is a rate search over two scenarios declared at a 3:1 mix.
const mixSearch = `
import llm from 'llm';
import { check } from 'llmrun';
import { prompts } from 'data';
function request(outputTokens) {
  const r = llm.stream({ messages: [{ role: 'user', content: prompts.synthetic(8) }], max_tokens: outputTokens, ignore_eos: true,
    temperature: 0 }, { promptTokens: 8, uniquePrompt: true });
  check(r, { 'request succeeded': (r) => r.ok });
}
export const options = {
  scenarios: {
    chat: { executor: 'constant-arrival-rate', arrival: __ENV.ARRIVAL || 'poisson', rate: 3, duration: '30s',
            preAllocatedVUs: 8, maxVUs: 400, exec: 'chat', gracefulStop: __ENV.PAUSE || '30s' },
    rag:  { executor: 'constant-arrival-rate', arrival: __ENV.ARRIVAL || 'poisson', rate: 1, duration: '30s',
            preAllocatedVUs: 8, maxVUs: 400, exec: 'rag', gracefulStop: __ENV.PAUSE || '30s' },
  },
  slo: { ttft_p99: Number(__ENV.SLO_TTFT_P99 || 2000) },
  capacity: { search: { start: Number(__ENV.START || 4), max: Number(__ENV.MAX || 64), step: __ENV.STEP || '30s', budget: '15m' } },
};
export function chat() { request(Number(__ENV.OUTPUT_TOKENS || 2)); }
export function rag() { request(Number(__ENV.OUTPUT_TOKENS || 2)); }
`

// llmrun inspect describes a search, not the scenarios' declared load:
// the levels it tries, when it stops, and each scenario's share of a
// level.
func TestInspectCapacitySearch(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "mix.js", mixSearch)
	code, stdout, stderr := cli(t, context.Background(), nil, "inspect", script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"2 scenarios, up to 800 VUs, levels of a capacity search for at most 15m0s in all\n",
		"capacity search by rate, from 4 to at most 64 requests/s; it stops once the capacity is bracketed within ±5 %, or after 15m0s of levels\n",
		"each level runs 30s, one that is inconclusive up to 1m30s, and is judged against the SLO on 95 % confidence intervals\n",
		"mix: chat 75 %, rag 25 % of each level; the scenarios' rates below give the mix, not the load\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = cli(t, context.Background(), nil, "inspect", "--json", "-e", "VARIABLE=concurrency", "-e", "START=3", "stock:capacity-search")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var in inspect.Inspection
	if err := json.Unmarshal([]byte(stdout), &in); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if p := in.Search; p == nil || p.Variable != "concurrency" || p.Start != 3 || p.Max != 3072 || p.Step != "30s" || p.MaxStep != "1m30s" ||
		p.Budget != "10m0s" || p.Width != 0.05 || p.Confidence != 0.95 || len(p.Mix) != 1 || p.Mix[0].Scenario != "search" || p.Mix[0].Share != 1 {
		t.Errorf("search = %+v\n%s", p, stdout)
	}
	code, stdout, stderr = cli(t, context.Background(), nil, "inspect", "--json", "stock:rate-sweep")
	if code != exitcode.OK || strings.Contains(stdout, `"search"`) {
		t.Errorf("a sweep's inspection, exit %d, has a search:\n%s\n%s", code, stdout, stderr)
	}
}

// The banner of a search's run describes the search, and says that the
// scenarios' rates are its mix.
func TestCapacitySearchBanner(t *testing.T) {
	t.Parallel()
	url := startSim(t, truthSim())
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", "--base-url", url,
		"-e", "START=20", "-e", "MAX=20", "-e", "STEP=1s", "-e", "INPUT_TOKENS=8", "-e", "OUTPUT_TOKENS=2", "-e", "BUDGET=1m",
		"stock:capacity-search")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	banner, _, _ := strings.Cut(stdout, "█")
	for _, want := range []string{
		"  search:    capacity search by rate, from 20 to at most 20 requests/s; it stops once the capacity is bracketed within ±5 %, or after 1m0s of levels\n",
		"             each level runs 1s, one that is inconclusive up to 3s, and is judged against the SLO on 95 % confidence intervals\n",
		"             mix: search 100 % of each level; the scenarios' rates below give the mix, not the load\n",
		"  scenarios: 1, up to 512 VUs\n",
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner)
		}
	}
}
