package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// The capacity search finds the request rate a simulator sustains, which
// its settings give: 16 batch slots, each request 5 decode steps of 40 ms
// after a prefill that costs nothing, so r* = 16 / 0.2 s = 80 requests per
// second. Arrivals are evenly spaced: below the simulator's capacity no
// request waits for a slot and TTFT is at most a step (40 ms); above it
// the queue grows for the whole level, so that over a level of T = 6 s
// TTFT p99 passes the 1 s SLO once the rate exceeds the capacity by
// S/T = 17 %: an SLO wide enough that a stall of the shared machine (a few
// hundred ms) does not move a level across it. The simulator's steps run late, never early, when the
// machine is short of CPU (by up to a tenth of r* on a loaded 2-core
// machine), so the capacity C it has during the test is read where it
// shows: the highest request throughput of any level (an overloaded
// level's window includes draining its queue, so it serves at C), which
// must be at most r*. The search must bracket C·(1 + S/T): the highest
// level it passed at most that, the lowest it did not pass at least C,
// each within 5 % for the machine's load changing during the test. It measures rates, so it
// runs alone.
func TestCapacitySearchFindsTheSimulatorsRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40 s search that runs alone: runtime/capacity's TestSearchBracketsAMonotoneServer searches a synthetic server")
	}
	cfg := llmsim.DefaultConfig()
	cfg.MaxNumSeqs = 16
	cfg.PrefillBase, cfg.PrefillPerToken = 0, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 40*time.Millisecond, 0
	cfg.Tokenizer = llmsim.TokenizerBytes
	url := startSim(t, cfg)
	const (
		rStar = 16 / (5 * 0.040) // requests per second
		slo   = 1000.0           // ms
		step  = 6.0              // s
	)
	export := filepath.Join(t.TempDir(), "summary.json")
	started := time.Now()
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--base-url", url,
		"-e", "VARIABLE=rate", "-e", "ARRIVAL=constant", "-e", "START=64", "-e", "MAX=100", "-e", "STEP=6s",
		"-e", "INPUT_TOKENS=8", "-e", "OUTPUT_TOKENS=6", "-e", "SLO_TTFT_P99=1000", "-e", "PAUSE=1h",
		"--summary-export", export, "stock:capacity-search")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	if s.Capacity == nil || s.Capacity.Search == nil {
		t.Fatalf("no capacity search in the result:\n%s", stdout)
	}
	sr := s.Capacity.Search
	served := 0.0
	for _, l := range s.Capacity.Levels {
		served = max(served, l.RequestRate)
	}
	t.Logf("search: %d levels, %.1f s of levels, %.1f s in all; bracket [%g, %g]; the sim served up to %.1f req/s (r* %g); stop: %s",
		len(sr.Levels), sr.Seconds, time.Since(started).Seconds(), sr.Low, sr.High, served, rStar, sr.Stop)
	allowance := 1 + slo/1000/step
	switch {
	case sr.Low <= 0 || sr.High <= 0:
		t.Fatalf("the search did not bracket the capacity: %+v\n%s", sr, stdout)
	case served > rStar*1.01 || served < rStar*0.8:
		t.Errorf("the sim served up to %.1f req/s, want at most the %g its settings allow, and at least 80 %% of it", served, rStar)
	case sr.Low > served*allowance*1.05:
		t.Errorf("the search passed rate %g, above the %.1f req/s the sim serves (+%.1f %% of queue the SLO allows)\n%s", sr.Low, served, 100*(allowance-1), stdout)
	case sr.High < served*0.95:
		t.Errorf("the search did not pass rate %g, below the %.1f req/s the sim served\n%s", sr.High, served, stdout)
	}
	if (sr.High-sr.Low)/(sr.High+sr.Low) > 0.05 && !strings.HasPrefix(sr.Stop, "the time budget") {
		t.Errorf("stopped %q with the bracket [%g, %g] wider than ±5 %%", sr.Stop, sr.Low, sr.High)
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
			exitcode.InvalidConfig, "options.capacity.search.width: 2: want a relative half-width below 1"},
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
