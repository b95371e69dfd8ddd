package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

const compareUsage = `Usage: llmrun compare BASELINE.json CURRENT.json [flags]

Compares the figures of a run's result file ("llmrun run --summary-export",
or "llmrun merge -o") with those of a baseline's. A figure regressed when
it is worse than the baseline's by more than --threshold (relative) and
credibly so: the change's confidence interval (at --confidence, from the
histograms and counts of both files) lies on the worse side. A change
beyond the threshold within the noise, or a figure too few samples bound
(a p99 of 12 requests), is inconclusive. Throughputs and the success rate
are better higher, latencies lower. Figures have the names of "llmrun
trend": request_throughput, ttft_p99, e2e_p90, ...; vLLM's names
(p99_ttft_ms, median_e2el_ms, ...) are accepted too.

When both files have a server section (the server's own metrics), the
server's figures are compared too: server_queue_time_p99,
server_kv_cache_usage_max, server_prefix_cache_hit_rate, gpu_power_mean,
gpu_energy_per_token, ... Those whose noise the file cannot bound (a
maximum, a quantile without its histogram's buckets) show their change
"not judged", which fails no gate (see docs/results.md).

When either file's client-health section says its client was limited by
its own machine (llmrun's own load, or other processes or the hypervisor
taking the CPU), its latencies and throughputs may be the machine's, not
the server's: they are inconclusive (machine-limited), and the output
names the run and its limit. The success rate is judged as always.

Exit codes: 0 no figure credibly regressed, 109 a figure regressed (or,
with --strict, was inconclusive, machine-limited included), 112 no
verdict (a machine-limited figure moved as a regression would), 1 a file
could not be read, 2 bad command line.

Examples:
  llmrun compare baseline.json current.json
  llmrun compare main.json pr.json --threshold 5% --metric ttft_p99,output_throughput

Flags:
`

// compareCommand runs "llmrun compare".
func compareCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun compare", compareUsage, stdout, stderr)
	fs, usageError := cmd.flags, cmd.usageError
	var f verdictFlags
	f.register(fs, "threshold")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		return usageError("want two result files, the baseline's and the current run's; got %d", fs.NArg())
	}
	opts, figures, err := f.parse()
	if err != nil {
		return usageError("%v", err)
	}
	baseFile, curFile := fs.Arg(0), fs.Arg(1)
	base, err := summary.ReadJSON(baseFile)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun compare: %v\n", err)
		return exitcode.Error
	}
	cur, err := summary.ReadJSON(curFile)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun compare: %v\n", err)
		return exitcode.Error
	}
	if base.Meta.ScriptSHA256 != cur.Meta.ScriptSHA256 {
		fmt.Fprintf(stderr, "llmrun compare: note: the runs ran different scripts (%s: sha256 %s, %s: sha256 %s)\n",
			baseFile, base.Meta.ScriptSHA256, curFile, cur.Meta.ScriptSHA256)
	}

	runs := []regression.Run{regression.FromSummary(cur, opts.Confidence), regression.FromSummary(base, opts.Confidence)}
	figures = regression.WithServerFigures(figures, len(f.metrics) == 0, cur, base, runs, opts.Confidence)
	rep := regression.Report{Title: "baseline: " + describeResult(baseFile, base) + "\ncurrent:  " + describeResult(curFile, cur),
		Runs: runs, Figures: figures, Comparisons: regression.Compare(runs, figures, opts), Options: opts, Strict: f.strict}
	style := textfmt.Style{Color: useColor(f.noColor, stdout, getenv)}
	if err := regression.RenderPair(stdout, rep, style); err != nil {
		fmt.Fprintf(stderr, "llmrun compare: printing the comparison: %v\n", err)
		return exitcode.Error
	}
	switch {
	case rep.Failed():
		return exitcode.Regression
	case rep.Undecided():
		return exitcode.MachineLimited
	}
	return exitcode.OK
}

// describeResult is one line about a result file: its run, start, version
// and requests.
func describeResult(file string, s *summary.Summary) string {
	var parts []string
	if s.Meta.RunID != "" {
		parts = append(parts, "run "+s.Meta.RunID)
	}
	if n := len(s.Meta.Merged); n > 0 {
		parts = append(parts, fmt.Sprintf("merged from %d", n))
	}
	parts = append(parts, "started "+s.Meta.Start.UTC().Format("2006-01-02 15:04:05")+" UTC")
	if s.Meta.Version != "" {
		parts = append(parts, "llmrun "+s.Meta.Version)
	}
	parts = append(parts, textfmt.Count(s.Serving.Requests, "request"))
	return file + " (" + strings.Join(parts, ", ") + ")"
}
