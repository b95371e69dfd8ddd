package js

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/llmrun/llmrun/runtime/js/jsvalue"
)

// buildError turns esbuild's errors into a ScriptError at the first one.
func buildError(filename string, msgs []api.Message) *ScriptError {
	m := msgs[0]
	e := &ScriptError{File: filename, Message: "SyntaxError: " + m.Text}
	if len(msgs) > 1 {
		e.Message += fmt.Sprintf(" (and %d more errors)", len(msgs)-1)
	}
	if loc := m.Location; loc != nil {
		e.File = displayName(filename, loc.File)
		e.Line = loc.Line
		// esbuild counts columns in bytes, from 0.
		e.Column = utf8.RuneCountInString(loc.LineText[:min(loc.Column, len(loc.LineText))]) + 1
		e.SourceLine = loc.LineText
	}
	return e
}

// syntaxError turns goja's error compiling esbuild's output into a
// *ScriptError positioned in the original source; other errors are
// returned as they are.
func (s *Script) syntaxError(err error) error {
	syntax, ok := err.(*goja.CompilerSyntaxError)
	if !ok {
		return err
	}
	e := &ScriptError{File: s.filename, Message: "SyntaxError: " + syntax.Message, err: err}
	if syntax.File != nil {
		pos := syntax.File.Position(syntax.Offset)
		s.place(e, pos.Filename, pos.Line, pos.Column)
	}
	return e
}

// scriptError turns an error from a call into rt into a *ScriptError
// positioned in the original source. The thrown value is read safely
// (jsvalue): whatever it is, this never panics. The ScriptError wraps the
// *goja.InterruptedError of an interrupt, or the Go error a Go function
// threw, never the thrown value itself. goja's errors are told apart by
// their type alone, never with errors.As: unwrapping a *goja.Exception
// runs script code (a Proxy's getPrototypeOf trap), outside any guard.
// A *ScriptError is returned as it is, other errors too.
func (s *Script) scriptError(rt *goja.Runtime, err error) error {
	switch e := err.(type) {
	case *goja.InterruptedError:
		return s.atFrames(fmt.Sprint(e.Value()), gojaFrames(e.Stack()), e)
	case *goja.StackOverflowError:
		msg := fmt.Sprintf("RangeError: Maximum call stack size exceeded (more than %d nested calls)", MaxCallStackSize)
		return s.atFrames(msg, gojaFrames(e.Stack()), nil)
	case *goja.Exception:
		var cause error
		_ = jsvalue.Guard(rt, func() { cause = e.Unwrap() })
		return s.atFrames(messageText(rt, e.Value()), gojaFrames(e.Stack()), cause)
	default:
		return s.syntaxError(err)
	}
}

// rejectionError turns the reason a promise was rejected with into a
// *ScriptError, positioned by the reason's stack when it is an Error.
func (s *Script) rejectionError(rt *goja.Runtime, reason goja.Value) *ScriptError {
	var frames []frame
	if obj, ok := reason.(*goja.Object); ok && obj.ClassName() == "Error" {
		if stack, err := jsvalue.Get(rt, obj, "stack"); err == nil && !goja.IsUndefined(stack) {
			frames = parseStack(jsvalue.Text(rt, stack))
		}
	}
	return s.atFrames(messageText(rt, reason), frames, nil)
}

// atFrames makes a ScriptError positioned at the innermost frame that is in
// one of the script's files, with the stack rendered with the files' names.
func (s *Script) atFrames(message string, frames []frame, cause error) *ScriptError {
	e := &ScriptError{File: s.filename, Message: message, err: cause}
	for _, f := range frames {
		if _, ok := s.sources[f.file]; ok {
			s.place(e, f.file, f.line, f.column)
			break
		}
	}
	e.Stack = renderStack(frames, func(file string) string {
		if src, ok := s.sources[file]; ok {
			return src.name
		}
		return file
	})
	return e
}

// place positions e at a position goja reported.
func (s *Script) place(e *ScriptError, file string, line, column int) {
	e.File, e.Line, e.Column = file, line, column
	if src, ok := s.sources[file]; ok {
		e.File, e.SourceLine = src.name, src.line(line)
	}
}

// maxMessage is how many bytes of a thrown value's text a ScriptError
// keeps: the run keeps the messages of distinct errors, which a script
// could otherwise make as large as it likes.
const maxMessage = 8 << 10

// messageText is a thrown value as a message: "Error: boom" for an Error,
// and for an error a Go function threw its message alone, without goja's
// "GoError: " prefix, which tells users nothing. A longer text than
// maxMessage is cut, saying how much was left out.
func messageText(rt *goja.Runtime, v goja.Value) string {
	text := jsvalue.Text(rt, v)
	if msg, ok := strings.CutPrefix(text, "GoError: "); ok {
		text = msg
	}
	if len(text) <= maxMessage {
		return text
	}
	cut := strings.ToValidUTF8(text[:maxMessage], "")
	return cut + fmt.Sprintf("... (%d more bytes)", len(text)-len(cut))
}
