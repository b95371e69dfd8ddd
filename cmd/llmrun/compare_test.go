package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// plantedResult writes a result file of n requests over dur whose TTFTs
// are drawn (from seed) around ttft ms, each then streaming 20 tokens
// about 10 ms apart; change, when not nil, alters the summary.
func plantedResult(t *testing.T, dir, name string, seed uint64, n int, ttft float64, dur time.Duration, change func(s *summary.Summary)) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	results := make([]*llm.Result, n)
	for i := range results {
		gaps := make([]float64, 19)
		for k := range gaps {
			gaps[k] = 10 * (0.9 + 0.2*rng.Float64())
		}
		results[i] = summarytest.Streamed(ttft*math.Exp(0.3*rng.NormFloat64()), gaps...)
	}
	s := summarytest.Build(t, dur, results...)
	s.Meta.RunID = name
	if change != nil {
		change(s)
	}
	path := filepath.Join(dir, name+".json")
	if err := writeResult(output.FileFlag{Flag: "--summary-export", Path: path}, s); err != nil {
		t.Fatal(err)
	}
	return path
}

// compareCase is a command line of llmrun compare, its exit code, and
// what its output must and must not hold.
type compareCase struct {
	name      string
	args      []string
	code      int
	want      []string
	forbidden []string
}

// runCompareCases runs each case as a subtest.
func runCompareCases(t *testing.T, tests []compareCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := command(t, "compare", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
			for _, f := range tc.forbidden {
				if strings.Contains(stdout, f) {
					t.Errorf("output has %q:\n%s", f, stdout)
				}
			}
		})
	}
}

// compare judges the current run against the baseline credibly: a
// regression beyond the threshold and the noise fails (exit 109), a run
// like the baseline passes, a change too few samples can bound is
// inconclusive and passes unless --strict.
func TestCompare(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n, dur = 600, 60 * time.Second
	base := plantedResult(t, dir, "base", 1, n, 150, dur, nil)
	same := plantedResult(t, dir, "same", 2, n, 150, dur, nil)
	slower := plantedResult(t, dir, "slower", 3, n, 195, dur, nil)
	lessThroughput := plantedResult(t, dir, "less", 4, n, 150, 75*time.Second, nil)
	better := plantedResult(t, dir, "better", 5, n, 75, 40*time.Second, nil)
	otherScript := plantedResult(t, dir, "other", 6, n, 150, dur, func(s *summary.Summary) { s.Meta.ScriptSHA256 = "def" })
	few := plantedResult(t, dir, "few", 7, 12, 150, time.Second, nil)
	fewSlower := plantedResult(t, dir, "few-slower", 8, 12, 250, time.Second, nil)

	tests := []compareCase{
		{"runs of one server pass", []string{base, same}, exitcode.OK,
			[]string{"baseline: " + base, "current:  " + same, "✓ no", "regression beyond 10 %", "ttft_p99 (ms)", "99 % CI", " 600 "}, []string{"✗", "│ regression"}},
		{"latency up is a regression", []string{base, slower}, exitcode.Regression,
			[]string{"ttft_p50 (ms)", "+30", "✗ regression beyond 10 %: ttft_p50 +"}, nil},
		{"throughput down is a regression", []string{base, lessThroughput}, exitcode.Regression,
			[]string{"output_throughput (tok/s)", "-20.0 %", "✗ regression beyond 10 %: request_throughput -20.0 %, output_throughput -20.0 %"}, nil},
		{"an improvement passes", []string{base, better}, exitcode.OK, []string{"improved", "+50.0 %", "✓ no"}, []string{"│ regression"}},
		{"the other way round, the improvement regresses", []string{better, base}, exitcode.Regression, []string{"request_throughput -33.3 %"}, nil},
		{"--metric selects", []string{base, slower, "--metric", "output_throughput,success_rate"}, exitcode.OK,
			[]string{"output_throughput", "success_rate", "✓ no regression"}, []string{"ttft_p99", "tpot_p99"}},
		{"--metric takes vLLM's names", []string{base, slower, "--metric", "median_ttft_ms"}, exitcode.Regression, []string{"ttft_p50 +"}, nil},
		{"a wider --threshold", []string{base, slower, "--threshold", "40%"}, exitcode.OK, []string{"tolerance 40 %", "regression beyond 40 %"}, nil},
		{"different scripts compare, with a note", []string{base, otherScript}, exitcode.OK, []string{"✓ no"}, nil},
		{"a p99 of 12 requests is inconclusive", []string{few, fewSlower, "--metric", "ttft_p99"}, exitcode.OK,
			[]string{"inconclusive (too few samples)", "12 requests cannot bound a p99 at 99 % confidence: it takes 528", "✓ no credible regression"}, nil},
		{"--strict fails an inconclusive figure", []string{few, fewSlower, "--metric", "ttft_p99", "--strict"}, exitcode.Regression,
			[]string{"--strict fails the inconclusive figures: ttft_p99"}, nil},
		{"a lower --confidence", []string{base, same, "--confidence", "95%"}, exitcode.OK, []string{"95 % confidence", "95 % CI"}, nil},
	}
	runCompareCases(t, tests)
	if _, _, stderr := command(t, "compare", base, otherScript); !strings.Contains(stderr, "different scripts") || !strings.Contains(stderr, "sha256 def") {
		t.Errorf("no note on different scripts: %q", stderr)
	}
}

func TestCompareCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := plantedResult(t, dir, "base", 1, 20, 150, time.Second, nil)
	missing := filepath.Join(dir, "missing.json")
	v1 := filepath.Join(dir, "v1.json")
	if err := os.WriteFile(v1, []byte(`{"schema_version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"one file", []string{base}, exitcode.Usage, "want two result files"},
		{"three files", []string{base, base, base}, exitcode.Usage, "want two result files"},
		{"bad threshold", []string{base, base, "--threshold", "ten"}, exitcode.Usage, "--threshold"},
		{"bad confidence", []string{base, base, "--confidence", "100%"}, exitcode.Usage, "--confidence"},
		{"unknown figure", []string{base, base, "--metric", "latency"}, exitcode.Usage, `unknown figure "latency"`},
		{"an empty scenario", []string{base, base, "--scenario", ""}, exitcode.Usage, "--scenario: want a scenario's name"},
		{"missing baseline", []string{missing, base}, exitcode.Error, missing},
		{"missing current", []string{base, missing}, exitcode.Error, missing},
		{"an old schema", []string{v1, base}, exitcode.Error, v1 + ": schema_version 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := command(t, "compare", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr lacks %q:\n%s\n%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
}

// Two runs of one server, the current one's client limited by its own
// machine (the case of issue 26: "other processes used 99 % of the 2
// CPUs"), a 30 % slower TTFT: not a regression but inconclusive, naming
// the limited run and its limit, exit 0; --strict fails it. The success
// rate is still judged, and a file without a client-health reading is
// judged as measured.
func TestCompareMachineLimited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n, dur = 600, 60 * time.Second
	const limit = "other processes on this machine took the CPU (other processes used 99 % of the 2 CPUs)"
	quiet := &health.Machine{Seconds: 60, CPUs: 2, Busy: 0.3, Others: 0.2, Load1: 0.5, OthersLoad: 0.4, RunQueueWait: 0.05}
	crowded := &health.Machine{Seconds: 60, CPUs: 2, Busy: 1, Others: 0.99, Load1: 4.2, OthersLoad: 4.1, RunQueueWait: 0.5}
	client := func(m *health.Machine, cause string) func(s *summary.Summary) {
		return func(s *summary.Summary) {
			s.Client = health.Report{CPU: 0.05, Procs: 2, SchedDelayP99: 0.4, Machine: m, Cause: cause}
		}
	}
	base := plantedResult(t, dir, "base", 1, n, 150, dur, client(quiet, ""))
	limitedSlower := plantedResult(t, dir, "limited-slower", 3, n, 195, dur, client(crowded, limit))
	limitedBase := plantedResult(t, dir, "limited-base", 1, n, 150, dur, client(crowded, limit))
	slower := plantedResult(t, dir, "slower", 3, n, 195, dur, client(quiet, ""))
	unknownSlower := plantedResult(t, dir, "unknown-slower", 3, n, 195, dur, nil)
	limitedFailing := plantedResult(t, dir, "limited-failing", 3, n, 150, dur, func(s *summary.Summary) {
		client(crowded, limit)(s)
		s.Serving.OK, s.Serving.Failed, s.Serving.SuccessRate = n/2, n/2, 0.5
	})

	tests := []compareCase{
		// A figure that moved as a regression would, in a run whose
		// machine limited it, neither fails nor passes the gate.
		{"a limited current run is inconclusive", []string{base, limitedSlower}, exitcode.MachineLimited, []string{
			"machine-limited: the current run: its client was limited: " + limit + "; its latencies and throughputs are inconclusive",
			"ttft_p50 (ms)", "inconclusive (machine-limited)",
			"inconclusive: machine-limited: run limited-'s client was limited: " + limit + "; the change may be the machine's, not the server's",
			"? machine-limited, no verdict beyond 10 %: ", "ttft_p50 +", "(a regression but for the machine's limit): no verdict, exit 112; rerun on a quieter machine"},
			[]string{"│ regression", "✗", "machine-limited: the baseline"}},
		{"--strict fails it", []string{base, limitedSlower, "--strict"}, exitcode.Regression,
			[]string{"✗ no credible regression beyond 10 %, but --strict fails the inconclusive figures: ", "ttft_p50 +"}, nil},
		{"a limited baseline", []string{limitedBase, slower}, exitcode.MachineLimited, []string{
			"machine-limited: the baseline: its client was limited: " + limit + "; the latencies and throughputs compared with it are inconclusive",
			"inconclusive (machine-limited)", "? machine-limited, no verdict beyond 10 %: "}, []string{"│ regression", "machine-limited: the current run"}},
		{"a limited current run like its baseline", []string{base, limitedBase}, exitcode.OK,
			[]string{"✓ no credible regression beyond 10 % (", "machine-limited; --strict fails them)"}, []string{"│ regression", "?"}},
		{"healthy runs regress", []string{base, slower}, exitcode.Regression, []string{"✗ regression beyond 10 %: ttft_p50 +"}, []string{"machine-limited", "client health unknown"}},
		{"a file without a reading is judged as measured", []string{base, unknownSlower}, exitcode.Regression,
			[]string{"client health unknown (no reading stored: written before llmrun kept it, or not measured), judged as measured: the current run", "✗ regression beyond 10 %: ttft_p50 +"}, nil},
		{"the success rate of a limited run is judged", []string{base, limitedFailing, "--metric", "success_rate,ttft_p50"}, exitcode.Regression,
			[]string{"✗ regression beyond 10 %: success_rate -50.0 %", "inconclusive (machine-limited)"}, nil},
	}
	runCompareCases(t, tests)
}
