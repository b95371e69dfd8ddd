package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

const mergeUsage = `Usage: llmrun merge RESULT.json... [-o MERGED.json]

Merges the result files of several processes that ran one test (the same
script, on several load generators at once, or one after another), as
written by "llmrun run --summary-export", into the result of the whole test:
counts add, the trends' histograms merge exactly (so the percentiles are
those of one run that sent every request), throughputs are over the span
from the earliest start to the latest end, and thresholds are evaluated
again on the merged figures, as is a sweep's capacity verdict.
docs/results.md lists every rule.

Files whose scripts differ (script_sha256) do not merge. The merged file
has the same schema and can be merged again, compared (llmrun compare) or
read by anything that reads a result file.

Exit codes: 0 merged, 1 a file could not be read or written, or the files
do not merge, 2 bad command line.

Examples:
  llmrun merge gen-1.json gen-2.json gen-3.json -o all.json
  llmrun merge results/*.json > all.json

Flags:
`

// mergeCommand runs "llmrun merge".
func mergeCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun merge", mergeUsage, stdout, stderr)
	var outPath string
	cmd.flags.StringVarP(&outPath, "output", "o", "", "write the merged result to this file (default: standard output)")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	files := cmd.flags.Args()
	if len(files) == 0 {
		return cmd.usageError("no result file given")
	}
	if outPath != "" {
		if err := output.CheckPath(outPath); err != nil {
			fmt.Fprintf(stderr, "llmrun merge: -o %s: cannot write there: %v\n", outPath, err)
			return exitError
		}
	}
	results := make([]*summary.Summary, len(files))
	for i, f := range files {
		s, err := summary.ReadJSON(f)
		if err != nil {
			fmt.Fprintf(stderr, "llmrun merge: %v\n", err)
			return exitError
		}
		results[i] = s
	}
	merged, err := summary.Merge(results...)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun merge: %s\n", mergeError(err, files))
		return exitError
	}
	// A sweep is judged again on the merged scenarios, as run judges one.
	merged.Capacity = capacity.Assess(merged, capacity.CriteriaOf(results[0]))
	if err := writeMerged(outPath, merged, stdout); err != nil {
		fmt.Fprintf(stderr, "llmrun merge: %v\n", err)
		return exitError
	}
	sv := merged.Serving
	to := outPath
	if to == "" {
		to = "standard output"
	}
	fmt.Fprintf(stderr, "llmrun merge: %s (%s): %s, %d completed, %d failed over %.1f s, written to %s\n",
		textfmt.Count(len(files), "result"), strings.Join(merged.Meta.Merged, ", "), textfmt.Count(sv.Requests, "request"), sv.OK, sv.Failed, sv.DurationSeconds, to)
	if missing := merged.Meta.MissingInstances; len(missing) > 0 {
		fmt.Fprintf(stderr, "llmrun merge: warning: run %s had %s; no result of %s was given, so the merged figures are the others' only (missing_instances in the result)\n",
			merged.Meta.RunID, textfmt.Count(merged.Meta.Instances, "instance"), instanceList(missing))
	}
	return exitOK
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

// mergeError says what Merge found wrong, naming files rather than the
// results' positions.
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
