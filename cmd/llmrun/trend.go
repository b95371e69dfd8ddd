package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
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
	fs, usageError := cmd.flags, cmd.usageError
	var f trendFlags
	f.register(fs)
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return usageError("unexpected argument %q", fs.Arg(0))
	case f.influxURL == "":
		return usageError("--influxdb URL is required")
	case f.testid == "":
		return usageError("--testid is required")
	case f.runs < 1:
		return usageError("--runs %d: want at least 1", f.runs)
	}
	cfg, err := influxdb.ParseConfig(f.influxURL, getenv)
	if err != nil {
		return usageError("--influxdb: %v", err)
	}
	opts, figures, err := f.verdict.parse()
	if err != nil {
		return usageError("%v", err)
	}
	if i := slices.IndexFunc(figures, regression.Figure.Server); i >= 0 && f.scenario != "" {
		return usageError("--metric %s: a server figure is the whole run's, not a scenario's: drop --scenario", figures[i].Name)
	}
	since, err := parseSince(f.since)
	if err != nil {
		return usageError("--since: %v", err)
	}
	tags, err := trendTags(f.tags)
	if err != nil {
		return usageError("%v", err)
	}

	filter := influxdb.Filter{TestID: f.testid, Model: f.model, Scenario: f.scenario, Tags: tags, Runs: f.runs, Since: since}
	records, err := influxdb.History(ctx, cfg, filter)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun trend: %v\n", err)
		return exitcode.Error
	}
	title := trendTitle(f)
	if len(records) == 0 {
		fmt.Fprintf(stderr, "llmrun trend: no run of %s in the last %s in %s\n", title, f.since, cfg)
		lines, err := influxdb.MissReport(ctx, cfg, filter)
		if err != nil {
			lines = []string{fmt.Sprintf("what the server holds could not be listed: %v", err)}
		}
		for _, l := range lines {
			fmt.Fprintf(stderr, "  %s\n", l)
		}
		return exitcode.Error
	}
	var runs []regression.Run
	var sides []regression.ServerSide
	var notes []string
	stored, err := storedServers(ctx, cfg, f, figures, records)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun trend: %v\n", err)
		return exitcode.Error
	}
	for _, r := range records {
		side := regression.ServerSide{Targets: stored[r.RunID]}
		if r.Distributed() {
			var note string
			if r, side.Targets, note, err = gatherRun(ctx, cfg, r, f.scenario); err != nil {
				fmt.Fprintf(stderr, "llmrun trend: warning: run %s left out: %v\n", r.RunID, err)
				continue
			}
			if note != "" {
				notes = append(notes, note)
			}
		}
		side.OutputTokens = int64(r.Fields["output_tokens"])
		run := regression.Run{ID: r.RunID, Time: r.Time, Version: r.Version, Health: r.Health}
		run.Figures, run.Confidence = regression.FromFields(r.Fields)
		runs, sides = append(runs, run), append(sides, side)
	}
	if len(runs) == 0 {
		fmt.Fprintf(stderr, "llmrun trend: no run of %s in the last %s in %s could be read\n", title, f.since, cfg)
		return exitcode.Error
	}
	if f.scenario == "" {
		// At the level the llm_run points store their intervals at, which
		// Compare rescales to --confidence as it does theirs.
		figures = regression.AddServerFigures(figures, len(f.verdict.metrics) == 0, sides, runs, regression.DefaultConfidence)
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(stdout)
	}
	style := textfmt.Style{Color: useColor(f.verdict.noColor, stdout, getenv)}
	rep := regression.Report{Title: title, Runs: runs, Figures: figures, Comparisons: regression.Compare(runs, figures, opts),
		Options: opts, Strict: f.verdict.strict}
	if err := regression.Render(stdout, rep, style); err != nil {
		fmt.Fprintf(stderr, "llmrun trend: printing the report: %v\n", err)
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

// gatherRun rebuilds the record of a run of several instances from their
// results stored in InfluxDB, merged as llmrun merge merges them: its
// figures are those one process running the whole plan would have
// stored. The note says how many instances the run had and which are
// missing.
func gatherRun(ctx context.Context, cfg influxdb.Config, r influxdb.RunRecord, scenario string) (influxdb.RunRecord, []summary.ServerTarget, string, error) {
	results, names, err := influxdb.ReadSummaries(ctx, cfg, r.RunID, newMergeBudget())
	if err != nil {
		return r, nil, "", err
	}
	merged, err := mergeResults(results, names)
	if err != nil {
		return r, nil, "", err
	}
	fields, ok := influxdb.RunFields(merged, scenario)
	if !ok {
		return r, nil, "", fmt.Errorf("its merged result has no scenario %q", scenario)
	}
	r.Fields, r.Version, r.Health = fields, merged.Meta.Version, regression.HealthOf(merged.Client)
	m := merged.Meta
	note := fmt.Sprintf("run %s: %s, figures of their results merged", r.RunID, textfmt.Count(m.Instances, "instance"))
	if len(m.MissingInstances) > 0 {
		note += fmt.Sprintf(" (%s missing: no result stored)", instanceList(m.MissingInstances))
	}
	return r, regression.SideOf(merged).Targets, note, nil
}

// storedServers reads back the server sections of the runs of records
// (their llm_server points) by run_id, when trend judges server figures:
// of the whole runs (a server section is the whole run's, not a
// scenario's), by default or when --metric names one.
func storedServers(ctx context.Context, cfg influxdb.Config, f trendFlags, figures []regression.Figure, records []influxdb.RunRecord) (map[string][]summary.ServerTarget, error) {
	if f.scenario != "" || len(f.verdict.metrics) > 0 && !slices.ContainsFunc(figures, regression.Figure.Server) {
		return nil, nil
	}
	return influxdb.ServerHistory(ctx, cfg, f.testid, records)
}

// trendReservedTags are the tags --tag may not name: trend selects by
// them with flags of their own, or reads them together.
var trendReservedTags = map[string]string{
	"testid": "select it with --testid", "model": "select it with --model", "scenario": "select it with --scenario",
	"run_id": "trend compares runs, which --testid selects", "instance": "trend reads the instances of a run together",
}

// trendTags reads the --tag KEY=VALUE flags as run's --tag does, and
// refuses the tags trend selects by otherwise.
func trendTags(kvs []string) (map[string]string, error) {
	tags, err := parseTags(kvs)
	if err != nil {
		return nil, err
	}
	for k := range tags {
		if instead, ok := trendReservedTags[k]; ok {
			return nil, fmt.Errorf("--tag %s=%s: %s is not a tag --tag selects by: %s", k, tags[k], k, instead)
		}
	}
	return tags, nil
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

// maxSinceDays bounds --since to a century.
const maxSinceDays = 36500

// parseSince parses --since: a number of days ("365d") or weeks ("12w"),
// or a Go duration ("48h").
func parseSince(s string) (time.Duration, error) {
	day := 24 * time.Hour
	var d time.Duration
	switch unit := strings.TrimLeft(s, "0123456789"); unit {
	case "d", "w":
		n, err := strconv.Atoi(strings.TrimSuffix(s, unit))
		if err != nil || n > maxSinceDays {
			return 0, fmt.Errorf("%q: want a number of days or weeks up to %d days", s, maxSinceDays)
		}
		d = time.Duration(n) * day
		if unit == "w" {
			d *= 7
		}
	default:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q: want days (90d), weeks (12w) or a duration (48h)", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: want a positive period", s)
	}
	return d, nil
}
