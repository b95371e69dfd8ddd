package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/results"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
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
		if src.Influx, err = influxdb.ParseConfig(f.influxURL, getenv); err != nil {
			return cmd.usageError("--influxdb: %v", err)
		}
	}
	if f.out != "" {
		if err := output.CheckPath(f.out); err != nil {
			return cmd.fail(fmt.Errorf("-o %s: cannot write there: %w", f.out, err))
		}
	}
	set, err := src.Read(ctx)
	if err != nil {
		return cmd.fail(err)
	}
	merged, err := set.Merge()
	if err == nil {
		err = writeMerged(f.out, merged, stdout)
	}
	if err != nil {
		return cmd.fail(err)
	}
	sv, to := merged.Serving, cmp.Or(f.out, "standard output")
	fmt.Fprintf(stderr, "llmrun merge: %s (%s): %s, %d completed, %d failed over %.1f s, written to %s\n",
		textfmt.Count(len(set.Results), "result"), strings.Join(merged.Meta.Merged, ", "), textfmt.Count(sv.Requests, "request"), sv.OK, sv.Failed, sv.DurationSeconds, to)
	if missing := merged.Meta.MissingInstances; len(missing) > 0 {
		given := "given"
		if src.RunID != "" {
			given = "stored in InfluxDB"
		}
		fmt.Fprintf(stderr, "llmrun merge: warning: run %s had %s; no result of %s was %s, so the merged figures are the others' only (missing_instances in the result)\n",
			merged.Meta.RunID, textfmt.Count(merged.Meta.Instances, "instance"), results.InstanceList(missing), given)
	}
	return exitcode.OK
}

// writeMerged writes the merged result to path, whole or not at all, or
// to stdout when path is "".
func writeMerged(path string, s *summary.Summary, stdout io.Writer) error {
	if path == "" {
		return s.WriteJSON(stdout)
	}
	if err := output.WriteFile(path, s.WriteJSON); err != nil {
		return fmt.Errorf("-o %s: the merged result was not written: %w", path, err)
	}
	return nil
}
