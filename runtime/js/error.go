package js

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// ScriptError is an error in a script, positioned in its original source
// (not in the code esbuild produced): a syntax error found by Compile, or an
// exception thrown while the script runs.
type ScriptError struct {
	// File is the path of the file at fault: the script's filename as
	// given to Compile, or an imported file's path joined to its directory.
	File string
	// Line and Column are 1-based; Line is 0 when the position is unknown.
	Line, Column int
	// Message is what went wrong, without the position: the thrown value
	// as a string ("Error: boom", "TypeError: ...") or
	// "SyntaxError: Expected \";\" but found \"x\"".
	Message string
	// SourceLine is the text of the line at fault, "" when unknown.
	SourceLine string
	// Stack is the JavaScript call stack, innermost frame first, one
	// "at function (file:line:column)" per line; "" when there is none.
	Stack string

	err error
}

// maxExcerpt is how many characters of a long source line an error shows.
const maxExcerpt = 120

// Error renders the error as position, message, the source line with a
// caret under the column, and the stack.
func (e *ScriptError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column))
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.SourceLine != "" {
		line, col := excerpt(e.SourceLine, e.Column)
		gutter := strconv.Itoa(e.Line)
		b.WriteString("\n " + gutter + " | " + line)
		b.WriteString("\n " + strings.Repeat(" ", len(gutter)) + " | " + caret(line, col))
	}
	if e.Stack != "" {
		for frame := range strings.SplitSeq(e.Stack, "\n") {
			b.WriteString("\n\t" + frame)
		}
	}
	return b.String()
}

// Unwrap returns the goja error the ScriptError was made from, if any, so
// that errors.As finds a *goja.InterruptedError or a Go error thrown
// through JavaScript.
func (e *ScriptError) Unwrap() error {
	return e.err
}

// excerpt cuts a long line down to a window around col (1-based, in
// characters) and returns the window with col within it.
func excerpt(line string, col int) (string, int) {
	if utf8.RuneCountInString(line) <= maxExcerpt {
		return line, col
	}
	r := []rune(line)
	start := max(0, min(col-1-maxExcerpt/2, len(r)-maxExcerpt))
	out := string(r[start : start+maxExcerpt])
	if start > 0 {
		out = "..." + out
		col += 3 - start
	}
	if start+maxExcerpt < len(r) {
		out += "..."
	}
	return out, col
}

// caret returns a line with a '^' under column col (1-based) of line,
// keeping the line's tabs so that it lines up.
func caret(line string, col int) string {
	var b strings.Builder
	n := 1
	for _, r := range line {
		if n >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		n++
	}
	b.WriteByte('^')
	return b.String()
}
