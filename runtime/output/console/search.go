package console

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// search prints what a capacity search found, first of the summary: the
// capacity with its bracket, why the search stopped, then a row per level
// in the order tried with its verdict and the figure that decided it,
// the levels' figures, and how the levels were judged.
func (r *renderer) search(s *summary.Summary) {
	c := s.Capacity
	sr := c.Search
	r.heading("capacity search (by " + sr.Variable + ")")
	level := func(v float64) string { return sr.Variable + " " + strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case sr.Low > 0 && sr.High > 0:
		r.printf("  capacity ........... %s: %s met the SLO, %s did not (±%.1f %%)\n", r.st.Bold(sr.Variable+" "+textfmt.Num(sr.Estimate)),
			level(sr.Low), level(sr.High), 100*(sr.High-sr.Low)/(sr.High+sr.Low))
	case sr.Low > 0:
		r.printf("  capacity ........... at least %s: no level tried above it missed the SLO\n", r.st.Bold(level(sr.Low)))
	default:
		r.printf("  capacity ........... %s\n", r.st.Red("no level tried met the SLO"))
	}
	r.printf("  stopped ............ %s\n", sr.Stop)
	r.printf("  searched ........... %s in %s s, judged on %g %% confidence intervals\n",
		textfmt.Count(len(sr.Levels), "level"), textfmt.Num(sr.Seconds), 100*sr.Confidence)
	rows := make([][]string, len(sr.Levels))
	for i, l := range sr.Levels {
		interval := "[" + figureBound(l.Figure, l.Lo, "−∞") + ", " + figureBound(l.Figure, l.Hi, "+∞") + "]"
		extended := ""
		if l.Extended {
			extended = "yes"
		}
		verdict := l.Verdict
		switch l.Verdict {
		case "met":
			verdict = r.st.Green(verdict)
		case "missed":
			verdict = r.st.Red(verdict)
		}
		rows[i] = []string{strconv.Itoa(i + 1), strconv.FormatFloat(l.Level, 'f', -1, 64), textfmt.Num(l.Seconds), strconv.FormatInt(l.Requests, 10),
			verdict, l.Figure, figureValue(l.Figure, l.Value), interval, figureValue(l.Figure, l.Bound), extended}
	}
	r.printf("\n")
	r.table([]string{"#", sr.Variable, "seconds", "requests", "verdict", "deciding figure", "value", "interval", "bound", "extended"}, rows, 2)
	for _, l := range sr.Levels {
		if l.Verdict != "met" && l.Why != "" {
			r.printf("  %s\n", r.st.Faint(fmt.Sprintf("%s %s: %s", sr.Variable, strconv.FormatFloat(l.Level, 'f', -1, 64), l.Why)))
		}
	}
	if len(c.Levels) > 0 {
		r.levels(s, true)
	}
	for _, line := range textfmt.Fit(strings.Fields(c.Method), " ", 100) {
		r.printf("  %s\n", r.st.Faint(line))
	}
}

// figureBound is one side of a deciding figure's interval, or open when
// the samples leave it so.
func figureBound(figure string, v *float64, open string) string {
	if v == nil {
		return open
	}
	return figureValue(figure, *v)
}

// figureValue writes a deciding figure's value with its unit, as the
// HTML report writes it: a share of requests (success rate, good
// requests) as a percentage to two decimals, the same at both ends of an
// interval; a latency in ms.
func figureValue(figure string, v float64) string {
	if strings.HasSuffix(figure, "success_rate") || strings.HasSuffix(figure, "goodput_share") {
		return fmt.Sprintf("%.2f %%", 100*v)
	}
	return textfmt.Millis(v) + " ms"
}
