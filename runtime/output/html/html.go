// Package html is the --out html=FILE output: at the end of the run it
// writes the run's HTML report (see runtime/report and docs/report.md) to
// a file, the page "llmrun report" makes from a result file.
package html

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/report"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Output writes a run's report to a file. New makes one; Start, then
// Finish.
type Output struct {
	path string
}

var _ output.Output = (*Output)(nil)

// New returns an output that writes the report to the file at path.
func New(path string) (*Output, error) {
	if path == "" {
		return nil, errors.New("html: want a file name, as in --out html=report.html")
	}
	return &Output{path: path}, nil
}

// Describe names the output: "html report.html".
func (o *Output) Describe() string { return "html " + o.path }

// Start checks that the file can be written (output.CheckPath), so that
// a run does not end without its report; it creates no file.
func (o *Output) Start(context.Context, output.Run) error {
	if err := output.CheckPath(o.path); err != nil {
		return fmt.Errorf("the report file cannot be written: %w", err)
	}
	return nil
}

// AddRequest does nothing: the report is made from the summary.
func (o *Output) AddRequest(*llm.Record) {}

// Finish writes the report of s to the file, whole or not at all: a
// failure counts the report as dropped and leaves any file already there
// as it was.
func (o *Output) Finish(_ context.Context, s *summary.Summary) summary.OutputReport {
	rep := summary.OutputReport{Output: o.Describe()}
	err := output.WriteFile(o.path, func(w io.Writer) error { return report.Render(w, s) })
	if err != nil {
		rep.Dropped, rep.Err = 1, err.Error()
		return rep
	}
	rep.Written = 1
	return rep
}
