package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/results"
	"github.com/llmrun/llmrun/runtime/runner"
)

// reportCommand runs "llmrun report": it reads a result file and writes its
// HTML report.
func reportCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun report", reportUsage, stdout, stderr)
	fs, usageError := cmd.flags, cmd.usageError
	out := fs.StringP("output", "o", "", "the HTML file to write (default: the result file's name with .html)")
	sloFlag := fs.String("slo", "", "the SLO to draw, and to judge a sweep against, instead of the run's: ttft_p99=MS,tpot_p99=MS")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	switch {
	case fs.NArg() == 0:
		return usageError("a result file is required")
	case fs.NArg() > 1:
		return usageError("unexpected argument %q: one result file at a time", fs.Arg(1))
	case fs.Changed("output") && *out == "":
		return usageError("-o: want a file name")
	case *out == "":
		*out = strings.TrimSuffix(fs.Arg(0), filepath.Ext(fs.Arg(0))) + ".html"
	}
	rep := results.Report{In: fs.Arg(0), Out: *out}
	if fs.Changed("slo") {
		slo, err := runner.ParseSLO(*sloFlag)
		if err != nil {
			return usageError("--slo: %v", err)
		}
		rep.SLO = &slo
	}
	sloIgnored, err := rep.Write()
	if sloIgnored {
		fmt.Fprintln(stderr, "llmrun report: warning: the sweep's levels cannot be judged again from the result file; --slo ignored, the report shows the SLO the sweep was run with")
	}
	if err != nil {
		return cmd.fail(err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return exitcode.OK
}
