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

const mergeUsage = `Usage: llmrun merge RESULT.json|LOG|-... [-o MERGED.json]
       llmrun merge --influxdb URL --run-id ID [-o MERGED.json]

Merges the result files of several processes that ran one test (the same
script, on several load generators at once, or one after another), as
written by "llmrun run --summary-export", into the result of the whole test:
counts add, the trends' histograms merge exactly (so the percentiles are
those of one run that sent every request), throughputs are over the span
from the earliest start to the latest end, and thresholds are evaluated
again on the merged figures, as is a sweep's capacity verdict.
docs/results.md lists every rule.

With --influxdb and --run-id it merges the results that the instances of
one run (--instances) stored in InfluxDB with --out influxdb=URL (their
llm_result points), read with InfluxQL over the v1 /query API: no shared
storage is needed. URL takes the options of --out influxdb=URL (bucket,
db, rp); the token is read from $LLMRUN_INFLUXDB_TOKEN (on InfluxDB 1.8,
user:password). A result whose points are not all there or fail their
checksum is an error that names its instance; an instance that stored no
result is missing, as with files.

Files whose scripts differ (script_sha256) do not merge. The merged file
has the same schema and can be merged again, compared (llmrun compare) or
read by anything that reads a result file.

An input may also be a log (or - for standard input) holding the result
blocks that "llmrun run --out json=-" prints, such as the "kubectl logs"
of the pods of "llmrun kube": every block in it is a result to merge, its
SHA-256 checked; a block cut short or altered is an error naming its
instance. A log is read as a stream, each block parsed when it ends; the
result files of one merge may unpack to 1 GiB in all.

Exit codes: 0 merged, 1 a file, a log or InfluxDB could not be read or
written, or the results do not merge, 2 bad command line.

Examples:
  llmrun merge gen-1.json gen-2.json gen-3.json -o all.json
  llmrun merge results/*.json > all.json
  llmrun merge --influxdb 'http://127.0.0.1:8086?bucket=llmrun' --run-id 3f9c2a7e51d04b86 -o all.json
  kubectl logs -l job-name=chat --tail=-1 --prefix --max-log-requests 8 | llmrun merge - -o all.json

Flags:
`

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
