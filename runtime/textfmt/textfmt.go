// Package textfmt holds the look of llmrun's text output, shared by the
// console summary, the regression verdicts and the HTML report: colours
// (Style), tables (Table), figures (Millis, Num), counted words (Count,
// Per) and lines that fit a width (Fit, TerminalWidth).
package textfmt

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Style decides how output looks.
type Style struct {
	// Color enables ANSI colours (green pass, red fail, bold headings).
	Color bool
}

func (st Style) paint(code, s string) string {
	if !st.Color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Bold, Red, Green and Faint paint s when colours are on.
func (st Style) Bold(s string) string  { return st.paint("1", s) }
func (st Style) Red(s string) string   { return st.paint("31", s) }
func (st Style) Green(s string) string { return st.paint("32", s) }
func (st Style) Faint(s string) string { return st.paint("2", s) }

// Table prints rows under header with tablewriter, each column aligned as
// align says: the look of every llmrun table.
func Table(w io.Writer, header []string, align []tw.Align, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}))
	t.Header(toAny(header)...)
	for _, row := range rows {
		if err := t.Append(toAny(row)...); err != nil {
			return err
		}
	}
	return t.Render()
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Millis formats milliseconds with precision that suits their size; a
// value that is not a finite number reads "-".
func Millis(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v == 0:
		return "0"
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// SecondsAsMillis formats seconds (a server's figures) as Millis does
// milliseconds.
func SecondsAsMillis(v float64) string { return Millis(1000 * v) }

// Num formats a throughput or count compactly; a value that is not a
// finite number reads "-".
func Num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v == float64(int64(v)) && v < 1e15:
		return fmt.Sprintf("%d", int64(v))
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// Count is n followed by noun, in the plural unless n is 1: "1 iteration",
// "2 iterations", "0.5 iterations", "1 looping VU". The plural adds an
// "s" to the noun's last word, which suits every noun llmrun counts.
func Count[N int | int64 | uint64 | float64](n N, noun string) string {
	var digits string
	switch v := any(n).(type) {
	case float64:
		digits = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		digits = fmt.Sprint(v)
	}
	if n != 1 {
		noun += "s"
	}
	return digits + " " + noun
}

// Per is "per" and a time unit as a reader says it: "per second", "per
// minute" and "per hour" for one of those, "per 500ms" for any other.
func Per(unit time.Duration) string {
	switch unit {
	case time.Second:
		return "per second"
	case time.Minute:
		return "per minute"
	case time.Hour:
		return "per hour"
	}
	return "per " + unit.String()
}

// Fit joins parts with sep into lines of at most width characters,
// breaking only between parts: a part is never split, and one longer than
// width has a line of its own.
func Fit(parts []string, sep string, width int) []string {
	var lines []string
	var line strings.Builder
	n := 0 // characters in line
	for _, p := range parts {
		size := utf8.RuneCountInString(p)
		if n > 0 && n+utf8.RuneCountInString(sep)+size > width {
			lines = append(lines, line.String())
			line.Reset()
			n = 0
		}
		if n > 0 {
			line.WriteString(sep)
			n += utf8.RuneCountInString(sep)
		}
		line.WriteString(p)
		n += size
	}
	if n > 0 {
		lines = append(lines, line.String())
	}
	return lines
}
