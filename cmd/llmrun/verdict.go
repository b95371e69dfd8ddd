package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/trend"
)

// verdictFlags are the flags trend and compare share: the change tolerated
// before a figure counts as regressed (under the name tolerance, which
// differs between the two), the figures to judge, and colour.
type verdictFlags struct {
	toleranceName string
	tolerance     string
	metrics       []string
	noColor       bool
}

func (f *verdictFlags) register(fs *pflag.FlagSet, toleranceName string) {
	f.toleranceName = toleranceName
	fs.StringVar(&f.tolerance, toleranceName, "10%", "relative change allowed before a figure counts as regressed: 10% or 0.1")
	fs.StringSliceVar(&f.metrics, "metric", nil, "figures to compare, comma-separated or repeated (default: request_throughput, output_throughput, success_rate, ttft_p50, ttft_p99, tpot_p50, tpot_p99, itl_p99, e2e_p99)")
	fs.BoolVar(&f.noColor, "no-color", false, "no ANSI colours in the output")
}

// parse reads the tolerance and the figures; an error names the flag.
func (f *verdictFlags) parse() (tolerance float64, figures []trend.Figure, err error) {
	if tolerance, err = trend.ParseTolerance(f.tolerance); err != nil {
		return 0, nil, fmt.Errorf("--%s: %w", f.toleranceName, err)
	}
	if figures, err = trend.ParseFigures(strings.Join(f.metrics, ",")); err != nil {
		return 0, nil, fmt.Errorf("--metric: %w", err)
	}
	return tolerance, figures, nil
}

// useColor says whether output to stdout gets ANSI colours: not with
// --no-color, NO_COLOR or when stdout is not a terminal.
func useColor(noColor bool, stdout io.Writer, getenv func(string) string) bool {
	return !noColor && isTerminal(stdout) && getenv("NO_COLOR") == ""
}
