package js

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// frame is one JavaScript call frame, at a position as goja reports it.
type frame struct {
	function     string // "" when anonymous
	file         string
	line, column int
}

// maxFrames is how many frames a ScriptError's stack keeps.
const maxFrames = 16

// gojaFrames keeps the JavaScript frames of a goja stack, innermost first,
// leaving out the Go functions'.
func gojaFrames(stack []goja.StackFrame) []frame {
	frames := make([]frame, 0, len(stack))
	for i := range stack {
		pos := stack[i].Position()
		if pos.Line == 0 {
			continue
		}
		fn := stack[i].FuncName()
		if fn == "<anonymous>" {
			fn = ""
		}
		frames = append(frames, frame{function: fn, file: pos.Filename, line: pos.Line, column: pos.Column})
	}
	return frames
}

// stackLine matches a JavaScript frame of an Error's stack property as goja
// writes it: "\tat fn (file:line:column(pc))" or "\tat file:line:column(pc)".
var stackLine = regexp.MustCompile(`^\tat (?:(.+) \()?(.+):(\d+):(\d+)\(\d+\)\)?$`)

// parseStack reads the JavaScript frames of an Error's stack property.
func parseStack(stack string) []frame {
	var frames []frame
	for line := range strings.SplitSeq(stack, "\n") {
		m := stackLine.FindStringSubmatch(line)
		if m == nil {
			continue // the message, or a Go function
		}
		l, _ := strconv.Atoi(m[3])
		c, _ := strconv.Atoi(m[4])
		frames = append(frames, frame{function: m[1], file: m[2], line: l, column: c})
	}
	return frames
}

// renderStack writes frames one per line, "at fn (file:line:column)",
// naming files with name.
func renderStack(frames []frame, name func(file string) string) string {
	var b strings.Builder
	for i, f := range frames {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i == maxFrames {
			b.WriteString("... " + strconv.Itoa(len(frames)-i) + " more frames")
			break
		}
		loc := name(f.file) + ":" + strconv.Itoa(f.line) + ":" + strconv.Itoa(f.column)
		if f.function != "" {
			b.WriteString("at " + f.function + " (" + loc + ")")
		} else {
			b.WriteString("at " + loc)
		}
	}
	return b.String()
}
