package results

import (
	"fmt"
	"slices"
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

// CompareFiles reads the result files baseFile and curFile (ReadResult:
// llmrun's, vLLM's or SGLang's) and judges the current result against the
// baseline by g: the whole runs' figures, or with scenario that
// scenario's.
func CompareFiles(baseFile, curFile, scenario string, g Gate) (Comparison, error) {
	if err := checkScenarioFigures(g.Figures, scenario); err != nil {
		return Comparison{}, err
	}
	base, err := ReadResult(baseFile)
	if err != nil {
		return Comparison{}, err
	}
	cur, err := ReadResult(curFile)
	if err != nil {
		return Comparison{}, err
	}
	var c Comparison
	if scenario == "" {
		c.Report = Compare(baseFile, base, curFile, cur, g)
	} else if c.Report, err = compareScenario(baseFile, base, curFile, cur, scenario, g); err != nil {
		return Comparison{}, err
	}
	switch {
	case foreign(base) || foreign(cur):
		c.Note = fmt.Sprintf("%s was measured by %s, %s by %s: %s", baseFile, toolOf(base), curFile, toolOf(cur), toolsDiffer)
	case base.Meta.ScriptSHA256 != cur.Meta.ScriptSHA256:
		c.Note = fmt.Sprintf("the runs ran different scripts (%s: sha256 %s, %s: sha256 %s)",
			baseFile, base.Meta.ScriptSHA256, curFile, cur.Meta.ScriptSHA256)
	}
	return c, nil
}

// toolsDiffer is why runs measured by different tools may differ.
const toolsDiffer = "their clients count and time requests each in their own way (docs/results.md, \"Reading other tools' result files\")"

// foreign reports whether s was read from another tool's result file.
func foreign(s *summary.Summary) bool {
	return s.Meta.Tool == ToolVLLM || s.Meta.Tool == ToolSGLang
}

// toolOf names the tool that measured s.
func toolOf(s *summary.Summary) string {
	if foreign(s) {
		return s.Meta.Tool
	}
	return "llmrun"
}

// Compare judges cur, read from the file curFile, against base, read from
// baseFile, by g: the client's figures, and the server's when both have a
// server section.
func Compare(baseFile string, base *summary.Summary, curFile string, cur *summary.Summary, g Gate) regression.Report {
	runs := []regression.Run{Run(cur, g.Options.Confidence), Run(base, g.Options.Confidence)}
	rep := g.report(runs, regression.WithServerFigures(g.Figures, g.DefaultFigures, cur, base, runs, g.Options.Confidence))
	rep.Title = "baseline: " + Describe(baseFile, base) + "\ncurrent:  " + Describe(curFile, cur)
	return rep
}

// compareScenario judges scenario of cur against that of base by g: the
// client's figures (a server section is the whole run's).
func compareScenario(baseFile string, base *summary.Summary, curFile string, cur *summary.Summary, scenario string, g Gate) (regression.Report, error) {
	var runs []regression.Run
	var lines []string
	for _, f := range []struct {
		name string
		s    *summary.Summary
	}{{curFile, cur}, {baseFile, base}} {
		block, err := scenarioBlock(f.name, f.s, scenario)
		if err != nil {
			return regression.Report{}, err
		}
		run := Run(f.s, g.Options.Confidence)
		run.Figures = regression.Estimates(block, g.Options.Confidence)
		runs = append(runs, run)
		lines = append(lines, describe(f.name, f.s, block.Serving))
	}
	rep := g.report(runs, g.Figures)
	rep.Title = "scenario " + scenario + "\nbaseline: " + lines[1] + "\ncurrent:  " + lines[0]
	return rep, nil
}

// scenarioBlock is scenario of the result s read from file: its own
// figures, or the whole run's when the run had that one scenario only.
// An error names the scenarios the file has.
func scenarioBlock(file string, s *summary.Summary, scenario string) (regression.Block, error) {
	if b, ok := regression.ScenarioBlock(s, scenario); ok {
		return b, nil
	}
	var names []string
	for _, sh := range s.Meta.LoadShape {
		names = append(names, sh.Name)
	}
	switch {
	case foreign(s):
		return regression.Block{}, fmt.Errorf("--scenario %s: %s is a run of %s, which has no scenarios: drop --scenario to judge the whole runs", scenario, file, s.Meta.Tool)
	case len(names) == 1 && names[0] == scenario:
		return regression.RunBlock(s), nil
	case len(names) == 0:
		return regression.Block{}, fmt.Errorf("--scenario %s: %s records no scenario: drop --scenario to judge the whole runs", scenario, file)
	}
	return regression.Block{}, fmt.Errorf("--scenario %s: %s has no scenario %q: it has %s", scenario, file, scenario, strings.Join(names, ", "))
}

// checkScenarioFigures says what is wrong with judging figures on a
// scenario: a server figure is the whole run's, not a scenario's.
func checkScenarioFigures(figures []regression.Figure, scenario string) error {
	if i := slices.IndexFunc(figures, regression.Figure.Server); i >= 0 && scenario != "" {
		return fmt.Errorf("--metric %s: a server figure is the whole run's, not a scenario's: drop --scenario", figures[i].Name)
	}
	return nil
}

// Describe is one line about a result file: its run, start, version and
// requests.
func Describe(file string, s *summary.Summary) string {
	return describe(file, s, s.Serving)
}

// describe is Describe with the requests of sv: the whole run's, or one
// scenario's.
func describe(file string, s *summary.Summary, sv summary.Serving) string {
	var parts []string
	if foreign(s) {
		parts = append(parts, s.Meta.Tool+"'s result")
	}
	if s.Meta.RunID != "" {
		parts = append(parts, "run "+s.Meta.RunID)
	}
	if n := len(s.Meta.Merged); n > 0 {
		parts = append(parts, fmt.Sprintf("merged from %d", n))
	}
	switch {
	case foreign(s) && !s.Meta.Start.IsZero():
		parts = append(parts, "dated "+s.Meta.Start.Format("2006-01-02 15:04:05"))
	case !foreign(s):
		parts = append(parts, "started "+s.Meta.Start.UTC().Format("2006-01-02 15:04:05")+" UTC")
	}
	if s.Meta.Version != "" {
		parts = append(parts, "llmrun "+s.Meta.Version)
	}
	if foreign(s) && sv.Requests == 0 {
		parts = append(parts, textfmt.Count(sv.OK, "completed request"))
	} else {
		parts = append(parts, textfmt.Count(sv.Requests, "request"))
	}
	return file + " (" + strings.Join(parts, ", ") + ")"
}
