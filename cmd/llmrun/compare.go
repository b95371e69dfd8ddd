package main

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/results"
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
	var f verdictFlags
	f.register(cmd.flags, "threshold")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	if cmd.flags.NArg() != 2 {
		return cmd.usageError("want two result files, the baseline's and the current run's; got %d", cmd.flags.NArg())
	}
	gate, err := f.gate()
	if err != nil {
		return cmd.usageError("%v", err)
	}
	c, err := results.CompareFiles(cmd.flags.Arg(0), cmd.flags.Arg(1), gate)
	if err != nil {
		return cmd.fail(err)
	}
	if c.Note != "" {
		fmt.Fprintf(stderr, "llmrun compare: note: %s\n", c.Note)
	}
	return f.print(cmd, stdout, getenv, "printing the comparison", regression.RenderPair, c.Report)
}
