package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/regression"
)

// verdictFlags are the flags trend and compare share: the change tolerated
// before a figure counts as regressed (under the name tolerance, which
// differs between the two), the figures to judge, and colour.
type verdictFlags struct {
	toleranceName string
	tolerance     string
	confidence    string
	strict        bool
	metrics       []string
	noColor       bool
}

func (f *verdictFlags) register(fs *pflag.FlagSet, toleranceName string) {
	f.toleranceName = toleranceName
	fs.StringVar(&f.tolerance, toleranceName, "10%", "relative change allowed before a figure counts as regressed: 10% or 0.1")
	fs.StringVar(&f.confidence, "confidence", "99%", "confidence level a change must clear to count: 99% (or 0.99); lower finds smaller changes in fewer samples, and more that are noise")
	fs.BoolVar(&f.strict, "strict", false, "an inconclusive figure (too few samples, a change within the noise, or a machine-limited run) fails too (exit 109)")
	fs.StringSliceVar(&f.metrics, "metric", nil, "figures to compare, comma-separated or repeated (default: request_throughput, output_throughput, success_rate, ttft_p50, ttft_p99, tpot_p50, tpot_p99, itl_p99, e2e_p99)")
	fs.BoolVar(&f.noColor, "no-color", false, "no ANSI colours in the output")
}

// parse reads the options and the figures; an error names the flag.
func (f *verdictFlags) parse() (opts regression.Options, figures []regression.Figure, err error) {
	if opts.Tolerance, err = regression.ParseTolerance(f.tolerance); err != nil {
		return opts, nil, fmt.Errorf("--%s: %w", f.toleranceName, err)
	}
	if opts.Confidence, err = regression.ParseConfidence(f.confidence); err != nil {
		return opts, nil, fmt.Errorf("--confidence: %w", err)
	}
	if figures, err = regression.ParseFigures(strings.Join(f.metrics, ",")); err != nil {
		return opts, nil, fmt.Errorf("--metric: %w", err)
	}
	return opts, figures, nil
}

// useColor says whether output to stdout gets ANSI colours: not with
// --no-color, NO_COLOR or when stdout is not a terminal.
func useColor(noColor bool, stdout io.Writer, getenv func(string) string) bool {
	return !noColor && console.IsTerminal(stdout) && getenv("NO_COLOR") == ""
}
