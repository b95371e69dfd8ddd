package main

import (
	"context"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/results"
	"github.com/llmrun/llmrun/runtime/runner"
)

// reportCommand runs "llmrun report": it reads a result file and writes its
// HTML report, or several and writes the page that draws them together.
func reportCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := newSubcommand("llmrun report", reportUsage, stdout, stderr)
	fs, usageError := cmd.flags, cmd.usageError
	out := fs.StringP("output", "o", "", "the HTML file to write (default: the result file's name with .html, FILE-N.html for FILE#N)")
	sloFlag := fs.String("slo", "", "the SLO to draw, and to judge a sweep against, instead of the run's: ttft_p99=MS,tpot_p99=MS")
	labels := fs.StringArray("label", nil, "with several result files: the name of each run on the page, repeated in the order of the files (default: its label tag, test id or file name)")
	baseline := fs.String("baseline", "", "with several result files: the one the others are judged against (default: the first)")
	gpus := fs.IntSlice("gpus", nil, "with several result files: the GPUs the runs served on, which divide output throughput: one count for every run, or repeated once per file in their order (default: the GPU telemetry's count)")
	if code, ok := cmd.parse(args); !ok {
		return code
	}
	switch {
	case fs.NArg() == 0:
		return usageError("a result file is required")
	case fs.NArg() > 1:
		return crossReport(cmd, fs.Args(), *out, *sloFlag, *labels, *baseline, *gpus, stdout)
	case fs.Changed("label") || fs.Changed("baseline") || fs.Changed("gpus"):
		return usageError("--label, --baseline and --gpus are for a report of two result files or more")
	case fs.Changed("output") && *out == "":
		return usageError("-o: want a file name")
	case *out == "":
		*out = results.ReportName(fs.Arg(0))
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

// crossReport writes the cross-run page of several result files.
func crossReport(cmd *subcommand, files []string, out, sloFlag string, labels []string, baseline string, gpus []int, stdout io.Writer) int {
	fs, usageError := cmd.flags, cmd.usageError
	if out == "" {
		return usageError("-o: with several result files, name the page to write")
	}
	rep := results.CrossReport{In: files, Labels: labels, Baseline: baseline, GPUs: gpus, Out: out}
	if err := rep.Check(); err != nil {
		return usageError("%v", err)
	}
	if fs.Changed("slo") {
		slo, err := runner.ParseSLO(sloFlag)
		if err != nil {
			return usageError("--slo: %v", err)
		}
		rep.SLO = &slo
	}
	if err := rep.Write(); err != nil {
		return cmd.fail(err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return exitcode.OK
}
