package results

import (
	"fmt"
	"io"
	"strings"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// ParseGate reads the flags trend and compare share into a Gate: the
// change tolerated (given with toleranceFlag, which differs between the
// two), --confidence, --metric (none: the default figures) and --strict;
// an error names the flag.
func ParseGate(toleranceFlag, tolerance, confidence string, metrics []string, strict bool) (g Gate, err error) {
	g.Strict, g.DefaultFigures = strict, len(metrics) == 0
	if g.Options.Tolerance, err = regression.ParseTolerance(tolerance); err != nil {
		return g, fmt.Errorf("--%s: %w", toleranceFlag, err)
	}
	if g.Options.Confidence, err = regression.ParseConfidence(confidence); err != nil {
		return g, fmt.Errorf("--confidence: %w", err)
	}
	if g.Figures, err = regression.ParseFigures(strings.Join(metrics, ",")); err != nil {
		return g, fmt.Errorf("--metric: %w", err)
	}
	return g, nil
}

// Render prints the trend's judgement, in ANSI colours when color is set.
func (t TrendReport) Render(w io.Writer, color bool) error {
	return regression.Render(w, t.Report, textfmt.Style{Color: color})
}

// ExitCode is the exit code of the trend's verdict (verdictCode).
func (t TrendReport) ExitCode() int { return verdictCode(t.Report) }

// Render prints the comparison, in ANSI colours when color is set.
func (c Comparison) Render(w io.Writer, color bool) error {
	return regression.RenderPair(w, c.Report, textfmt.Style{Color: color})
}

// ExitCode is the exit code of the comparison's verdict (verdictCode).
func (c Comparison) ExitCode() int { return verdictCode(c.Report) }

// verdictCode is the exit code of a judgement: 109 a figure regressed (or,
// strict, was inconclusive), 112 no verdict (a machine-limited run), else
// 0.
func verdictCode(rep regression.Report) int {
	switch {
	case rep.Failed():
		return exitcode.Regression
	case rep.Undecided():
		return exitcode.MachineLimited
	}
	return exitcode.OK
}
