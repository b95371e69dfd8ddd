package trend

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/llmrun/llmrun/runtime/output/console"
)

// Report is what Render prints: the runs read and their comparison.
type Report struct {
	// Title says which runs these are, e.g. "testid nightly-chat, model
	// llama, whole run".
	Title string
	// Runs are the runs, newest first.
	Runs []Run
	// Figures are the figures shown, in order.
	Figures []Figure
	// Comparisons are Compare's results for Runs and Figures.
	Comparisons []Comparison
	// Tolerance is the relative tolerance the comparisons used.
	Tolerance float64
}

// shortID is how many characters of a run_id the runs table shows.
const shortID = 8

// Render prints the report: a table of the runs with the figures, then a
// table of each figure's verdict, then a line saying whether any figure
// regressed.
func Render(w io.Writer, r Report, st console.Style) error {
	plural := "s"
	if len(r.Runs) == 1 {
		plural = ""
	}
	if _, err := fmt.Fprintf(w, "%s: %d run%s, newest first\n\n", r.Title, len(r.Runs), plural); err != nil {
		return err
	}
	header := []string{"started (UTC)", "run", "version"}
	for _, f := range r.Figures {
		header = append(header, f.Name+"\n"+f.Unit)
	}
	var rows [][]string
	for _, run := range r.Runs {
		id := run.ID
		if len(id) > shortID {
			id = id[:shortID]
		}
		row := []string{run.Time.UTC().Format("2006-01-02 15:04"), id, run.Version}
		for _, f := range r.Figures {
			v, ok := run.Figures[f.Name]
			row = append(row, f.format(v, ok))
		}
		rows = append(rows, row)
	}
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft}
	for range r.Figures {
		align = append(align, tw.AlignRight)
	}
	if err := console.Table(w, header, align, rows); err != nil {
		return err
	}

	var verdicts [][]string
	for _, c := range r.Comparisons {
		change, verdict := verdictCells(c, st)
		verdicts = append(verdicts, []string{c.Figure.label(), c.Figure.format(c.Newest, c.Verdict != NoData),
			c.Figure.format(c.Baseline, c.BaselineRuns > 0), change, verdict})
	}
	if _, err := fmt.Fprintf(w, "\nnewest run against the median of the previous ones (tolerance %s)\n", percent(r.Tolerance, false)); err != nil {
		return err
	}
	if err := console.Table(w, []string{"figure", "newest", "baseline median", "change", "verdict"},
		[]tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}, verdicts); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, conclusion(r, st))
	return err
}

// verdictCells are a comparison's change and verdict as the tables show
// them: coloured when regressed or improved.
func verdictCells(c Comparison, st console.Style) (change, verdict string) {
	change, verdict = "–", string(c.Verdict)
	if c.Verdict == OK || c.Verdict == Regression || c.Verdict == Improved {
		change = percent(c.Change, true)
	}
	switch c.Verdict {
	case Regression:
		change, verdict = st.Red(change), st.Bold(st.Red(verdict))
	case Improved:
		change, verdict = st.Green(change), st.Green(verdict)
	}
	return change, verdict
}

// RenderPair prints the comparison of two runs, as llmrun compare does:
// r.Runs[0] is the current run, r.Runs[1] the baseline, and r.Title says
// which they are. It prints the title, a table of each figure's baseline,
// current value, change and verdict (a figure the baseline lacks has "no
// history"), then a line saying whether any figure regressed.
func RenderPair(w io.Writer, r Report, st console.Style) error {
	if len(r.Runs) != 2 {
		return fmt.Errorf("comparing a pair of runs: got %d", len(r.Runs))
	}
	if _, err := fmt.Fprintf(w, "%s\n\ncurrent run against the baseline (tolerance %s)\n", r.Title, percent(r.Tolerance, false)); err != nil {
		return err
	}
	var rows [][]string
	for _, c := range r.Comparisons {
		change, verdict := verdictCells(c, st)
		rows = append(rows, []string{c.Figure.label(), c.Figure.format(c.Baseline, c.BaselineRuns > 0),
			c.Figure.format(c.Newest, c.Verdict != NoData), change, verdict})
	}
	if err := console.Table(w, []string{"figure", "baseline", "current", "change", "verdict"},
		[]tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, conclusion(r, st))
	return err
}

// conclusion is the last line: the regressions, or that there is none.
func conclusion(r Report, st console.Style) string {
	if len(r.Runs) < 2 {
		return "no history: a single run, nothing to compare it with"
	}
	if reg := Regressions(r.Comparisons); len(reg) > 0 {
		var names []string
		for _, c := range reg {
			names = append(names, c.Figure.Name+" "+percent(c.Change, true))
		}
		return st.Bold(st.Red(fmt.Sprintf("✗ regression beyond %s: %s", percent(r.Tolerance, false), strings.Join(names, ", "))))
	}
	return st.Green(fmt.Sprintf("✓ no regression beyond %s", percent(r.Tolerance, false)))
}

// label is a figure's column heading: its name and unit.
func (f Figure) label() string {
	return f.Name + " (" + f.Unit + ")"
}

// format shows a value of the figure, or a dash when there is none.
func (f Figure) format(v float64, ok bool) string {
	switch {
	case !ok || math.IsNaN(v):
		return "–"
	case f.Unit == "%":
		return fmt.Sprintf("%.2f", v*100)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// percent shows a ratio as a percentage, with its sign when signed.
func percent(v float64, signed bool) string {
	if signed {
		return fmt.Sprintf("%+.1f %%", v*100)
	}
	return fmt.Sprintf("%.4g %%", v*100)
}
