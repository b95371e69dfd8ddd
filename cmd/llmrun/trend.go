package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/results"
)

const trendUsage = `Usage: llmrun trend --influxdb URL --testid ID [flags]

Reads the runs of a test that "llmrun run --out influxdb=URL --testid ID"
stored in InfluxDB (their llm_run points), prints the last ones with their
headline figures, and compares the newest run with the median of the runs
before it. --model, --scenario and --tag KEY=VALUE (the --tag pairs of the
runs) narrow the runs read; when no run matches, trend lists the test ids,
scenarios, models or tag values that exist, and the nearest.

A figure regressed when it is worse than the median by more than
--tolerance (relative) and credibly so: beyond the noise of both the
runs' own samples (the confidence intervals each run stored) and, with
three previous runs or more, of their spread from run to run (their
median absolute deviation). A change beyond the tolerance within that
noise, or a figure too few samples bound, is inconclusive. Throughputs and
the success rate are better higher, latency percentiles lower.

A run whose client was limited by its own machine (its client-health
reading: llmrun's own load, or other processes or the hypervisor taking
the CPU) measured latencies and throughputs that may be the machine's:
the newest run's are inconclusive (machine-limited), a previous run's are
left out of the baseline; the output names each such run and its limit.
Runs stored before llmrun kept the reading are judged as measured, their
health shown as unknown.

When the runs read their servers' metrics (their llm_server points), the
server's figures are judged beside the client's as llmrun compare judges
them: the prefix-cache hit rate gets a verdict, the figures the stored
window cannot bound show their change, not judged. They are the whole
run's: with --scenario none is judged, and --metric may not name one.

The runs are read with InfluxQL over the v1 /query API, which InfluxDB
1.x, 2.x (through a DBRP mapping) and 3.x answer; Flux is not needed. URL
takes the options of --out influxdb=URL: the database read is the bucket's
part before "/" and the retention policy the part after it, or those the
db= and rp= options name (on 2.x, the DBRP mapping's). The token is read
from $LLMRUN_INFLUXDB_TOKEN (on InfluxDB 1.8, user:password).

The instances of one run (--instances) share its run id: trend reads them
as one run, whose figures are those of their results merged (as llmrun
merge --influxdb merges them), and says how many instances it had and
which are missing.

Exit codes: 0 no figure credibly regressed (or there is no history yet),
109 a figure regressed (or, with --strict, was inconclusive, machine-limited
included), 112 no verdict (a machine-limited figure moved as a regression
would), 1 InfluxDB
could not be read or holds no run of the test, 2 bad command line.

Examples:
  llmrun trend --influxdb 'http://127.0.0.1:8086?org=perf&bucket=llmrun' --testid nightly-chat
  llmrun trend --influxdb http://127.0.0.1:8086 --testid nightly-chat --model llama-3-8b \
      --metric ttft_p99,output_throughput --tolerance 5%
  llmrun trend --influxdb http://127.0.0.1:8086 --testid nightly-chat --tag env=staging --scenario rag

Flags:
`

// trendFlags are the flags of "llmrun trend".
type trendFlags struct {
	influxURL, testid, model, scenario string
	tags                               []string
	runs                               int
	since                              string
	verdict                            verdictFlags
}

func (f *trendFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.influxURL, "influxdb", "", "InfluxDB to read, as in --out influxdb=URL, e.g. http://127.0.0.1:8086?org=perf&bucket=llmrun (required)")
	fs.StringVar(&f.testid, "testid", "", "the test whose runs to compare: run's --testid (required)")
	fs.StringVar(&f.model, "model", "", "only the runs whose model tag is this (a run of several models has them sorted, joined with \",\")")
	fs.StringVar(&f.scenario, "scenario", "", "compare this scenario's figures (default: the whole runs')")
	fs.StringArrayVar(&f.tags, "tag", nil, "only the runs stored with run's --tag KEY=VALUE (repeatable: all must match)")
	fs.IntVar(&f.runs, "runs", 10, "runs to read: the newest and up to RUNS-1 before it, whose median is the baseline")
	f.verdict.register(fs, "tolerance")
	fs.StringVar(&f.since, "since", "365d", "how far back to look for runs: days (90d), weeks (12w) or a duration (48h)")
}

func trendCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun trend", trendUsage, stdout, stderr)
	var f trendFlags
	f.register(cmd.flags)
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	cfg, q, err := f.query(cmd.flags, getenv)
	if err != nil {
		return cmd.usageError("%v", err)
	}
	t, err := results.Trend(ctx, cfg, q)
	for _, e := range t.LeftOut {
		fmt.Fprintf(stderr, "llmrun trend: warning: %v\n", e)
	}
	var none *results.NoRunsError
	if errors.As(err, &none) {
		return cmd.fail(noRuns(none, trendTitle(f), f.since, cfg))
	} else if err != nil {
		return cmd.fail(err)
	}
	for _, n := range t.Notes {
		fmt.Fprintln(stdout, n)
	}
	if len(t.Notes) > 0 {
		fmt.Fprintln(stdout)
	}
	t.Title = trendTitle(f)
	return f.verdict.print(cmd, stdout, getenv, "printing the report", regression.Render, t.Report)
}

// query reads the flags into the InfluxDB to read and the query of its
// runs; an error names the flag.
func (f *trendFlags) query(fs *pflag.FlagSet, getenv func(string) string) (influxdb.Config, results.Query, error) {
	var q results.Query
	switch {
	case fs.NArg() > 0:
		return influxdb.Config{}, q, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case f.influxURL == "":
		return influxdb.Config{}, q, errors.New("--influxdb URL is required")
	case f.testid == "":
		return influxdb.Config{}, q, errors.New("--testid is required")
	case f.runs < 1:
		return influxdb.Config{}, q, fmt.Errorf("--runs %d: want at least 1", f.runs)
	}
	cfg, err := influxdb.ParseConfig(f.influxURL, getenv)
	if err != nil {
		return cfg, q, fmt.Errorf("--influxdb: %w", err)
	}
	q.Filter = influxdb.Filter{TestID: f.testid, Model: f.model, Scenario: f.scenario, Runs: f.runs}
	if q.Gate, err = f.verdict.gate(); err != nil {
		return cfg, q, err
	}
	if q.Since, err = results.ParseSince(f.since); err != nil {
		return cfg, q, fmt.Errorf("--since: %w", err)
	}
	if q.Tags, err = parseTags(f.tags); err != nil {
		return cfg, q, err
	}
	return cfg, q, q.Check()
}

// noRuns says that InfluxDB at cfg holds no run of title in the last
// since, or none that could be read, and what it holds.
func noRuns(none *results.NoRunsError, title, since string, cfg influxdb.Config) error {
	msg := fmt.Sprintf("no run of %s in the last %s in %s", title, since, cfg)
	if none.Unreadable {
		msg += " could be read"
	}
	for _, h := range none.Hints {
		msg += "\n  " + h
	}
	return errors.New(msg)
}

// trendTitle names the runs compared: the testid, model, tags and
// scenario.
func trendTitle(f trendFlags) string {
	title := "testid " + f.testid
	if f.model != "" {
		title += ", model " + f.model
	}
	for _, kv := range f.tags {
		title += ", tag " + kv
	}
	if f.scenario != "" {
		return title + ", scenario " + f.scenario
	}
	return title + ", whole runs"
}
