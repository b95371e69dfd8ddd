package js

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
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

// scriptError turns an error from goja into a *ScriptError positioned in
// the original source, which wraps it. Other errors are returned as they
// are.
func (s *Script) scriptError(err error) error {
	var (
		interrupted *goja.InterruptedError
		overflow    *goja.StackOverflowError
		exception   *goja.Exception
		syntax      *goja.CompilerSyntaxError
	)
	switch {
	case errors.As(err, &interrupted):
		return s.atFrames(fmt.Sprint(interrupted.Value()), gojaFrames(interrupted.Stack()), err)
	case errors.As(err, &overflow):
		return s.atFrames(valueString(overflow.Value()), gojaFrames(overflow.Stack()), err)
	case errors.As(err, &exception):
		return s.atFrames(valueString(exception.Value()), gojaFrames(exception.Stack()), err)
	case errors.As(err, &syntax):
		e := &ScriptError{File: s.filename, Message: "SyntaxError: " + syntax.Message, err: err}
		if syntax.File != nil {
			pos := syntax.File.Position(syntax.Offset)
			s.place(e, pos.Filename, pos.Line, pos.Column)
		}
		return e
	default:
		return err
	}
}

// rejectionError turns the reason a promise was rejected with into a
// *ScriptError, positioned by the reason's stack when it is an Error.
func (s *Script) rejectionError(reason goja.Value) *ScriptError {
	var frames []frame
	if obj, ok := reason.(*goja.Object); ok {
		if stack := obj.Get("stack"); stack != nil {
			frames = parseStack(stack.String())
		}
	}
	return s.atFrames(valueString(reason), frames, nil)
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

// valueString is a thrown value as a message: "Error: boom" for an Error.
func valueString(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	return v.String()
}
