package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/results"
)

// gateFlags are the flags trend and compare share: the change tolerated
// before a figure counts as regressed (under the name tolerance, which
// differs between the two), the figures to judge, and colour.
type gateFlags struct {
	toleranceName string
	tolerance     string
	confidence    string
	strict        bool
	metrics       []string
	noColor       bool
}

func (f *gateFlags) register(fs *pflag.FlagSet, toleranceName string) {
	f.toleranceName = toleranceName
	fs.StringVar(&f.tolerance, toleranceName, "10%", "relative change allowed before a figure counts as regressed: 10% or 0.1")
	fs.StringVar(&f.confidence, "confidence", "99%", "confidence level a change must clear to count: 99% (or 0.99); lower finds smaller changes in fewer samples, and more that are noise")
	fs.BoolVar(&f.strict, "strict", false, "an inconclusive figure (too few samples, a change within the noise, or a machine-limited run) fails too (exit 109)")
	fs.StringSliceVar(&f.metrics, "metric", nil, "figures to compare, comma-separated or repeated (default: request_throughput, output_throughput, success_rate, ttft_p50, ttft_p99, tpot_p50, tpot_p99, itl_p99, e2e_p99)")
	fs.BoolVar(&f.noColor, "no-color", false, "no ANSI colours in the output")
}

// gate reads the flags into what a comparison judges and how; an error
// names the flag.
func (f *gateFlags) gate() (results.Gate, error) {
	return results.ParseGate(f.toleranceName, f.tolerance, f.confidence, f.metrics, f.strict)
}

// judgement is a trend's or a comparison's: it prints itself and says the
// exit code of its verdict.
type judgement interface {
	Render(w io.Writer, color bool) error
	ExitCode() int
}

// print prints j to stdout (failing says what it was doing) and returns
// the exit code of its verdict: 109 a figure regressed (or, strict, was
// inconclusive), 112 no verdict, else 0.
func (f *gateFlags) print(cmd *subcommand, stdout io.Writer, getenv func(string) string, failing string, j judgement) int {
	if err := j.Render(stdout, useColor(f.noColor, stdout, getenv)); err != nil {
		return cmd.fail(fmt.Errorf("%s: %w", failing, err))
	}
	return j.ExitCode()
}

// fail prints err as the command's error and returns exitcode.Error.
func (c *subcommand) fail(err error) int {
	fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
	return exitcode.Error
}

// useColor says whether output to stdout gets ANSI colours: not with
// --no-color, NO_COLOR or when stdout is not a terminal.
func useColor(noColor bool, stdout io.Writer, getenv func(string) string) bool {
	return !noColor && console.IsTerminal(stdout) && getenv("NO_COLOR") == ""
}
