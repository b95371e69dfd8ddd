package regression

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/llmrun/llmrun/runtime/textfmt"
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
	// Options are the options the comparisons used.
	Options Options
	// Strict says that an inconclusive figure fails the comparison.
	Strict bool
}

// Failed reports whether the comparison fails a gate: a figure regressed,
// or, when Strict, one was inconclusive.
func (r Report) Failed() bool {
	return len(Regressions(r.Comparisons)) > 0 || (r.Strict && len(Inconclusives(r.Comparisons)) > 0)
}

// Undecided reports whether the comparison, though it did not fail, must
// not pass a gate either: a figure that a machine-limited run made
// inconclusive moved beyond the tolerance as a regression would, so the
// comparison cannot tell a slower server from a starved client.
func (r Report) Undecided() bool {
	return !r.Failed() && len(hiddenRegressions(r.Comparisons)) > 0
}

// hiddenRegressions are the machine-limited figures that would have
// been regressions.
func hiddenRegressions(cs []Comparison) []Comparison {
	return matching(cs, func(c Comparison) bool { return c.Doubt == MachineLimited && c.Unlimited == Regression })
}

// shortID is how many characters of a run_id the runs table shows.
const shortID = 8

// Render prints the report: a table of the runs with the figures, then a
// table of each figure's verdict against the previous runs, the reasons
// of the inconclusive ones, and a line saying whether any figure
// regressed.
func Render(w io.Writer, r Report, st textfmt.Style) error {
	plural := "s"
	if len(r.Runs) == 1 {
		plural = ""
	}
	if _, err := fmt.Fprintf(w, "%s: %d run%s, newest first\n\n", r.Title, len(r.Runs), plural); err != nil {
		return err
	}
	var client, server []Figure
	for _, f := range r.Figures {
		if f.Server() {
			server = append(server, f)
		} else {
			client = append(client, f)
		}
	}
	header := []string{"started (UTC)", "run", "version", "client"}
	for _, f := range client {
		header = append(header, f.Name+"\n"+f.Unit)
	}
	var rows [][]string
	for _, run := range r.Runs {
		row := []string{run.started("2006-01-02 15:04"), run.Label(), run.Version, run.Health.String()}
		for _, f := range client {
			e, ok := run.Figures[f.Name]
			row = append(row, f.format(e.Value, ok))
		}
		rows = append(rows, row)
	}
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft}
	for range client {
		align = append(align, tw.AlignRight)
	}
	if err := textfmt.Table(w, header, align, rows); err != nil {
		return err
	}
	if err := serverTable(w, r.Runs, server); err != nil {
		return err
	}
	roles := make([]string, len(r.Runs))
	for i, run := range r.Runs {
		roles[i] = "run " + run.Label() + " (" + run.started("2006-01-02 15:04") + ")"
		if i == 0 {
			roles[i] = "the newest " + roles[i]
		}
	}
	if err := healthNotes(w, r, roles); err != nil {
		return err
	}

	conf := percent(r.Options.confidence(), false)
	var verdicts [][]string
	for _, c := range r.Comparisons {
		change, ci, verdict := verdictCells(c, st)
		verdicts = append(verdicts, []string{c.Figure.label(), c.Figure.format(c.Newest.Value, c.Verdict != NoData), samples(c.Newest.N),
			c.Figure.format(c.Baseline, c.BaselineRuns > 0), spread(c), change, ci, verdict})
	}
	if _, err := fmt.Fprintf(w, "\nnewest run against the median of the previous ones (tolerance %s, %s confidence)\n",
		percent(r.Options.Tolerance, false), conf); err != nil {
		return err
	}
	if err := textfmt.Table(w, []string{"figure", "newest", "n", "baseline median", "spread", "change", conf + " CI", "verdict"},
		[]tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}, verdicts); err != nil {
		return err
	}
	return conclude(w, r, st)
}

// serverTable prints the server figures of the runs, when there are
// any: a row per figure, a column per run, newest first (the server's
// figures are many, and their names long).
func serverTable(w io.Writer, runs []Run, figures []Figure) error {
	if len(figures) == 0 {
		return nil
	}
	header := []string{"server figure"}
	align := []tw.Align{tw.AlignLeft}
	for _, run := range runs {
		header = append(header, run.Label()+"\n"+run.started("01-02 15:04"))
		align = append(align, tw.AlignRight)
	}
	var rows [][]string
	for _, f := range figures {
		row := []string{f.label()}
		for _, run := range runs {
			e, ok := run.Figures[f.Name]
			row = append(row, f.format(e.Value, ok))
		}
		rows = append(rows, row)
	}
	if _, err := fmt.Fprintln(w, "\nthe server's figures, newest run first"); err != nil {
		return err
	}
	return textfmt.Table(w, header, align, rows)
}

// RenderPair prints the comparison of two runs, as llmrun compare does:
// r.Runs[0] is the current run, r.Runs[1] the baseline, and r.Title says
// which they are. It prints the title, a table of each figure's baseline
// and current value with their samples, change, the change's confidence
// interval and verdict (a figure the baseline lacks has "no history"),
// the reasons of the inconclusive ones, then a line saying whether any
// figure regressed.
func RenderPair(w io.Writer, r Report, st textfmt.Style) error {
	if len(r.Runs) != 2 {
		return fmt.Errorf("comparing a pair of runs: got %d", len(r.Runs))
	}
	conf := percent(r.Options.confidence(), false)
	if _, err := fmt.Fprintf(w, "%s\n", r.Title); err != nil {
		return err
	}
	if err := healthNotes(w, r, []string{"the current run", "the baseline"}); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\ncurrent run against the baseline (tolerance %s, %s confidence)\n",
		percent(r.Options.Tolerance, false), conf); err != nil {
		return err
	}
	var rows [][]string
	for _, c := range r.Comparisons {
		change, ci, verdict := verdictCells(c, st)
		rows = append(rows, []string{c.Figure.label(), c.Figure.format(c.Baseline, c.BaselineRuns > 0), samples(c.BaselineN),
			c.Figure.format(c.Newest.Value, c.Verdict != NoData), samples(c.Newest.N), change, ci, verdict})
	}
	if err := textfmt.Table(w, []string{"figure", "baseline", "n", "current", "n", "change", conf + " CI", "verdict"},
		[]tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}, rows); err != nil {
		return err
	}
	return conclude(w, r, st)
}

// verdictCells are a comparison's change, the change's interval and the
// verdict as the tables show them: coloured when regressed or improved;
// an inconclusive verdict with the first words of its reason.
func verdictCells(c Comparison, st textfmt.Style) (change, ci, verdict string) {
	change, ci, verdict = "–", "–", string(c.Verdict)
	if c.Verdict != NoHistory && c.Verdict != NoData && !math.IsNaN(c.Change) {
		change = percent(c.Change, true)
		ci = interval(c.ChangeLo, c.ChangeHi)
	}
	switch {
	case c.Doubt == TooFewSamples:
		ci = "unbounded"
	case c.Verdict == NotJudged:
		ci = "–"
	}
	switch c.Verdict {
	case Regression:
		change, verdict = st.Red(change), st.Bold(st.Red(verdict))
	case Improved:
		change, verdict = st.Green(change), st.Green(verdict)
	case Inconclusive:
		verdict = st.Faint(verdict + " (" + c.Doubt + ")")
	}
	return change, ci, verdict
}

// interval shows a change's interval: "+3.1 % … +9.0 %", with "∞" for
// an unbounded side.
func interval(lo, hi float64) string {
	side := func(v float64) string {
		switch {
		case math.IsInf(v, -1):
			return "-∞"
		case math.IsInf(v, 1) || math.IsNaN(v):
			return "+∞"
		}
		return percent(v, true)
	}
	return side(lo) + " … " + side(hi)
}

// samples shows a figure's sample count, "–" when unknown.
func samples(n int64) string {
	if n <= 0 {
		return "–"
	}
	return textfmt.Num(float64(n))
}

// spread shows the previous runs' spread, "–" with too few of them.
func spread(c Comparison) string {
	if math.IsNaN(c.Spread) {
		return "–"
	}
	if c.Figure.Unit == "%" {
		return fmt.Sprintf("±%.2f pp", 100*c.Spread) // percentage points
	}
	return fmt.Sprintf("±%.1f %%", 100*c.Spread)
}

// healthNotes prints a line for each run, named by its role (roles[i]
// names r.Runs[i]), whose client was machine-limited, saying by what and
// what becomes of its latencies and throughputs, and one for the runs
// without a client-health reading; nothing when every run has one and none
// was limited.
func healthNotes(w io.Writer, r Report, roles []string) error {
	healthyPrev := 0
	for _, run := range r.Runs[min(1, len(r.Runs)):] {
		if !run.Health.Limited() {
			healthyPrev++
		}
	}
	var unknown []string
	for i, run := range r.Runs {
		var effect string
		switch {
		case !run.Health.Known:
			unknown = append(unknown, roles[i])
			continue
		case !run.Health.Limited():
			continue
		case i == 0:
			effect = "its latencies and throughputs are inconclusive"
		case healthyPrev > 0:
			effect = "left out of the baseline of latencies and throughputs"
		default:
			effect = "the latencies and throughputs compared with it are inconclusive"
		}
		if _, err := fmt.Fprintf(w, "machine-limited: %s: its client was limited: %s; %s\n", roles[i], run.Health.Limit, effect); err != nil {
			return err
		}
	}
	if len(unknown) > 0 {
		_, err := fmt.Fprintf(w, "client health unknown (no reading stored: written before llmrun kept it, or not measured), judged as measured: %s\n", strings.Join(unknown, ", "))
		return err
	}
	return nil
}

// conclude prints why each inconclusive figure is, the machine-limited
// figures of one reason on one line, then the last line: the
// regressions, or that there is none.
func conclude(w io.Writer, r Report, st textfmt.Style) error {
	type line struct {
		figures []string
		reason  string
	}
	var lines []line
	limited := map[string]int{} // a machine-limited reason's line
	for _, c := range Inconclusives(r.Comparisons) {
		i, seen := limited[c.Reason]
		if !seen || c.Doubt != MachineLimited {
			i = len(lines)
			lines = append(lines, line{reason: c.Reason})
			if c.Doubt == MachineLimited {
				limited[c.Reason] = i
			}
		}
		lines[i].figures = append(lines[i].figures, c.Figure.Name)
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "  %s inconclusive: %s\n", strings.Join(l.figures, ", "), l.reason); err != nil {
			return err
		}
	}
	for _, c := range matching(r.Comparisons, func(c Comparison) bool { return c.Verdict == NotJudged }) {
		if _, err := fmt.Fprintf(w, "  %s not judged: %s\n", c.Figure.Name, c.Reason); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, conclusion(r, st))
	return err
}

// conclusion is the last line: the regressions, or that there is none.
func conclusion(r Report, st textfmt.Style) string {
	if len(r.Runs) < 2 {
		return "no history: a single run, nothing to compare it with"
	}
	tol := percent(r.Options.Tolerance, false)
	names := func(cs []Comparison) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Figure.Name+" "+percent(c.Change, true))
		}
		return strings.Join(out, ", ")
	}
	reg, inc := Regressions(r.Comparisons), Inconclusives(r.Comparisons)
	hidden := hiddenRegressions(inc)
	switch {
	case len(reg) > 0:
		return st.Bold(st.Red(fmt.Sprintf("✗ regression beyond %s: %s", tol, names(reg))))
	case r.Strict && len(inc) > 0:
		return st.Bold(st.Red(fmt.Sprintf("✗ no credible regression beyond %s, but --strict fails the inconclusive figures: %s", tol, names(inc))))
	case len(hidden) > 0:
		return st.Bold(fmt.Sprintf("? machine-limited, no verdict beyond %s: %s (a regression but for the machine's limit): no verdict, exit 112; rerun on a quieter machine", tol, names(hidden)))
	case len(inc) > 0:
		limited := ""
		if n := len(withDoubt(inc, MachineLimited)); n > 0 {
			limited = fmt.Sprintf(", %d of them machine-limited", n)
		}
		return st.Green(fmt.Sprintf("✓ no credible regression beyond %s (%s inconclusive%s; --strict fails them)", tol, textfmt.Count(len(inc), "figure"), limited))
	}
	return st.Green(fmt.Sprintf("✓ no regression beyond %s", tol))
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

// Cells are a comparison's change, the change's interval and its verdict
// as the tables show them, without colour: for pages that lay the
// comparison out themselves (llmrun report's cross-run table).
func Cells(c Comparison) (change, ci, verdict string) { return verdictCells(c, textfmt.Style{}) }

// Label is the figure's name with its unit: "ttft_p99 (ms)".
func (f Figure) Label() string { return f.label() }

// Format shows a value of the figure as the tables do (a ratio as a
// percentage), a dash when ok is false.
func (f Figure) Format(v float64, ok bool) string { return f.format(v, ok) }
