package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/results"
)

// mergeFlags are the flags of "llmrun merge".
type mergeFlags struct{ out, influxURL, runID string }

// check says what is wrong with the command line of files, or "".
func (f mergeFlags) check(files []string) string {
	fromInflux := f.influxURL != "" || f.runID != ""
	switch {
	case fromInflux && len(files) > 0:
		return "give result files or --influxdb with --run-id, not both"
	case fromInflux && f.influxURL == "":
		return "--run-id needs --influxdb URL"
	case fromInflux && f.runID == "":
		return "--influxdb needs --run-id: the run whose results to merge"
	case !fromInflux && len(files) == 0:
		return "no result file given"
	}
	return ""
}

// mergeCommand runs "llmrun merge".
func mergeCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun merge", mergeUsage, stdout, stderr)
	var f mergeFlags
	cmd.flags.StringVarP(&f.out, "output", "o", "", "write the merged result to this file (default: standard output)")
	cmd.flags.StringVar(&f.influxURL, "influxdb", "", "read the results of run --run-id from this InfluxDB, as in --out influxdb=URL, instead of files")
	cmd.flags.StringVar(&f.runID, "run-id", "", "with --influxdb: the run whose instances' results to merge (its meta.run_id)")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	if msg := f.check(cmd.flags.Args()); msg != "" {
		return cmd.usageError("%s", msg)
	}
	src := results.Source{Inputs: cmd.flags.Args(), Stdin: os.Stdin, RunID: f.runID}
	var err error
	if f.influxURL != "" {
		if src.Influx, err = results.ParseStore(f.influxURL, getenv); err != nil {
			return cmd.usageError("--influxdb: %v", err)
		}
	}
	if f.out != "" {
		if err := results.CheckOutput(f.out); err != nil {
			return cmd.fail(err)
		}
	}
	set, err := src.Read(ctx)
	if err != nil {
		return cmd.fail(err)
	}
	merged, err := set.Merge()
	if err == nil {
		err = results.WriteMerged(f.out, merged, stdout)
	}
	if err != nil {
		return cmd.fail(err)
	}
	for _, note := range set.MergeNotes(merged, cmp.Or(f.out, "standard output"), src.RunID != "") {
		fmt.Fprintf(stderr, "llmrun merge: %s\n", note)
	}
	return exitcode.OK
}
