package results

import (
	"fmt"
	"strings"

	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// Gate is what a comparison judges and how: the figures, the change
// tolerated and the confidence a change must clear, and whether an
// inconclusive figure fails.
type Gate struct {
	Options regression.Options
	Figures []regression.Figure
	// DefaultFigures says that Figures are the default ones, which the
	// server's figures join when the results have them.
	DefaultFigures bool
	Strict         bool
}

// report compares runs (newest first) on figures by the gate.
func (g Gate) report(runs []regression.Run, figures []regression.Figure) regression.Report {
	return regression.Report{Runs: runs, Figures: figures, Comparisons: regression.Compare(runs, figures, g.Options),
		Options: g.Options, Strict: g.Strict}
}

// Comparison is a current result judged against a baseline's.
type Comparison struct {
	regression.Report
	// Note is what the caller should know of the pair, or "": that the
	// runs ran different scripts.
	Note string
}

// CompareFiles reads the result files baseFile and curFile and judges the
// current result against the baseline by g.
func CompareFiles(baseFile, curFile string, g Gate) (Comparison, error) {
	base, err := summary.ReadJSON(baseFile)
	if err != nil {
		return Comparison{}, err
	}
	cur, err := summary.ReadJSON(curFile)
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{Report: Compare(baseFile, base, curFile, cur, g)}
	if base.Meta.ScriptSHA256 != cur.Meta.ScriptSHA256 {
		c.Note = fmt.Sprintf("the runs ran different scripts (%s: sha256 %s, %s: sha256 %s)",
			baseFile, base.Meta.ScriptSHA256, curFile, cur.Meta.ScriptSHA256)
	}
	return c, nil
}

// Compare judges cur, read from the file curFile, against base, read from
// baseFile, by g: the client's figures, and the server's when both have a
// server section.
func Compare(baseFile string, base *summary.Summary, curFile string, cur *summary.Summary, g Gate) regression.Report {
	runs := []regression.Run{regression.FromSummary(cur, g.Options.Confidence), regression.FromSummary(base, g.Options.Confidence)}
	rep := g.report(runs, regression.WithServerFigures(g.Figures, g.DefaultFigures, cur, base, runs, g.Options.Confidence))
	rep.Title = "baseline: " + Describe(baseFile, base) + "\ncurrent:  " + Describe(curFile, cur)
	return rep
}

// Describe is one line about a result file: its run, start, version and
// requests.
func Describe(file string, s *summary.Summary) string {
	var parts []string
	if s.Meta.RunID != "" {
		parts = append(parts, "run "+s.Meta.RunID)
	}
	if n := len(s.Meta.Merged); n > 0 {
		parts = append(parts, fmt.Sprintf("merged from %d", n))
	}
	parts = append(parts, "started "+s.Meta.Start.UTC().Format("2006-01-02 15:04:05")+" UTC")
	if s.Meta.Version != "" {
		parts = append(parts, "llmrun "+s.Meta.Version)
	}
	parts = append(parts, textfmt.Count(s.Serving.Requests, "request"))
	return file + " (" + strings.Join(parts, ", ") + ")"
}
