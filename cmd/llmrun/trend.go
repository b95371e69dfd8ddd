package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/results"
	"github.com/llmrun/llmrun/runtime/runflags"
)

// trendFlags are the flags of "llmrun trend".
type trendFlags struct {
	influxURL, testid, model, scenario string
	tags                               []string
	runs                               int
	since                              string
	verdict                            gateFlags
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
	if err := f.check(cmd.flags); err != nil {
		return cmd.usageError("%v", err)
	}
	if cmd.flags.NArg() > 0 {
		return trendFiles(cmd, f, stdout, getenv)
	}
	cfg, err := results.ParseStore(f.influxURL, getenv)
	if err != nil {
		return cmd.usageError("--influxdb: %v", err)
	}
	q, err := f.query()
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
	return f.verdict.print(cmd, stdout, getenv, "printing the report", t)
}

// check says what is missing from the command line, or wrong with it,
// before the flags are read.
func (f *trendFlags) check(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		// Result files: what selects runs in InfluxDB has no use.
		for _, name := range []string{"influxdb", "testid", "model", "tag", "runs", "since"} {
			if fs.Changed(name) {
				return fmt.Errorf("unexpected argument %q: --%s selects runs stored in InfluxDB, not result files", fs.Arg(0), name)
			}
		}
		return nil
	}
	switch {
	case f.influxURL == "":
		return errors.New("--influxdb URL is required")
	case f.testid == "":
		return errors.New("--testid is required")
	case f.runs < 1:
		return fmt.Errorf("--runs %d: want at least 1", f.runs)
	}
	return nil
}

// query reads the flags into the query of the stored runs; an error names
// the flag.
func (f *trendFlags) query() (q results.Query, err error) {
	q.TestID, q.Model, q.Scenario, q.Runs = f.testid, f.model, f.scenario, f.runs
	if q.Gate, err = f.verdict.gate(); err != nil {
		return q, err
	}
	if q.Since, err = results.ParseSince(f.since); err != nil {
		return q, fmt.Errorf("--since: %w", err)
	}
	if q.Tags, err = runflags.ParseTags(f.tags); err != nil {
		return q, err
	}
	return q, q.Check()
}

// noRuns says that InfluxDB at cfg holds no run of title in the last
// since, or none that could be read, and what it holds.
func noRuns(none *results.NoRunsError, title, since string, cfg fmt.Stringer) error {
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

// trendFiles judges the last of the result files named on the command
// line against the median of those before it.
func trendFiles(cmd *subcommand, f trendFlags, stdout io.Writer, getenv func(string) string) int {
	gate, err := f.verdict.gate()
	if err != nil {
		return cmd.usageError("%v", err)
	}
	t, err := results.TrendFiles(cmd.flags.Args(), f.scenario, gate)
	if err != nil {
		return cmd.fail(err)
	}
	named := make([]string, cmd.flags.NArg())
	for i, file := range cmd.flags.Args() {
		named[i] = results.FileRunID(i) + " " + file
	}
	t.Title = "result files, oldest first: " + strings.Join(named, ", ")
	if f.scenario != "" {
		t.Title += ", scenario " + f.scenario
	}
	return f.verdict.print(cmd, stdout, getenv, "printing the report", t)
}
