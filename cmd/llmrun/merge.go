package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/output/logblock"
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

// mergeCommand runs "llmrun merge".
func mergeCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun merge", mergeUsage, stdout, stderr)
	var outPath, influxURL, runID string
	cmd.flags.StringVarP(&outPath, "output", "o", "", "write the merged result to this file (default: standard output)")
	cmd.flags.StringVar(&influxURL, "influxdb", "", "read the results of run --run-id from this InfluxDB, as in --out influxdb=URL, instead of files")
	cmd.flags.StringVar(&runID, "run-id", "", "with --influxdb: the run whose instances' results to merge (its meta.run_id)")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	files := cmd.flags.Args()
	fromInflux := influxURL != "" || runID != ""
	switch {
	case fromInflux && len(files) > 0:
		return cmd.usageError("give result files or --influxdb with --run-id, not both")
	case fromInflux && influxURL == "":
		return cmd.usageError("--run-id needs --influxdb URL")
	case fromInflux && runID == "":
		return cmd.usageError("--influxdb needs --run-id: the run whose results to merge")
	case !fromInflux && len(files) == 0:
		return cmd.usageError("no result file given")
	}
	var cfg influxdb.Config
	if fromInflux {
		var err error
		if cfg, err = influxdb.ParseConfig(influxURL, getenv); err != nil {
			return cmd.usageError("--influxdb: %v", err)
		}
	}
	if outPath != "" {
		if err := output.CheckPath(outPath); err != nil {
			fmt.Fprintf(stderr, "llmrun merge: -o %s: cannot write there: %v\n", outPath, err)
			return exitcode.Error
		}
	}
	var results []*summary.Summary
	var names []string
	var err error
	budget := newMergeBudget()
	if fromInflux {
		results, names, err = influxdb.ReadSummaries(ctx, cfg, runID, budget)
	} else {
		results, names, err = logblock.ReadResults(files, os.Stdin, budget)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmrun merge: %v\n", err)
		return exitcode.Error
	}
	merged, err := mergeResults(results, names)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun merge: %v\n", err)
		return exitcode.Error
	}
	if err := writeMerged(outPath, merged, stdout); err != nil {
		fmt.Fprintf(stderr, "llmrun merge: %v\n", err)
		return exitcode.Error
	}
	sv := merged.Serving
	to := outPath
	if to == "" {
		to = "standard output"
	}
	fmt.Fprintf(stderr, "llmrun merge: %s (%s): %s, %d completed, %d failed over %.1f s, written to %s\n",
		textfmt.Count(len(results), "result"), strings.Join(merged.Meta.Merged, ", "), textfmt.Count(sv.Requests, "request"), sv.OK, sv.Failed, sv.DurationSeconds, to)
	if missing := merged.Meta.MissingInstances; len(missing) > 0 {
		given := "given"
		if fromInflux {
			given = "stored in InfluxDB"
		}
		fmt.Fprintf(stderr, "llmrun merge: warning: run %s had %s; no result of %s was %s, so the merged figures are the others' only (missing_instances in the result)\n",
			merged.Meta.RunID, textfmt.Count(merged.Meta.Instances, "instance"), instanceList(missing), given)
	}
	return exitcode.OK
}

// mergeResults merges results, named in errors by names, into the result
// of the whole test, whose sweep is judged again on the merged scenarios
// as run judges one: what llmrun merge writes, from files or InfluxDB,
// and what trend compares of a run of several instances.
func mergeResults(results []*summary.Summary, names []string) (*summary.Summary, error) {
	merged, err := summary.Merge(results...)
	if err != nil {
		return nil, errors.New(mergeError(err, names))
	}
	merged.Capacity = capacity.Assess(merged, capacity.CriteriaOf(results[0]))
	return merged, nil
}

// instanceList names instance indices: "instance 2", "instances 0, 3".
func instanceList(indices []int) string {
	parts := make([]string, len(indices))
	for i, n := range indices {
		parts[i] = strconv.Itoa(n)
	}
	if len(parts) == 1 {
		return "instance " + parts[0]
	}
	return "instances " + strings.Join(parts, ", ")
}

// mergeError says what Merge found wrong, naming the results (files)
// rather than their positions.
func mergeError(err error, files []string) string {
	var hm *summary.HashMismatchError
	var ie *summary.InputError
	switch {
	case errors.As(err, &hm):
		return fmt.Sprintf("%s ran a script of sha256 %s, %s one of sha256 %s: only results of the same script merge",
			files[hm.Index], hm.Hash, files[0], hm.FirstHash)
	case errors.As(err, &ie):
		return fmt.Sprintf("%s: %v", files[ie.Index], ie.Err)
	}
	return err.Error()
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

// maxMergeUnpacked bounds the result files one merge unpacks from logs or
// InfluxDB, all together: 4 of the largest (summary.MaxResultFileSize),
// thousands of real ones.
var maxMergeUnpacked int64 = 1 << 30

// newMergeBudget is the budget of the result files one merge unpacks.
func newMergeBudget() *capped.Budget {
	return capped.NewBudget(maxMergeUnpacked, "the result files one merge unpacks")
}
