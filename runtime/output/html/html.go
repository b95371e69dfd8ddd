// Package html is the --out html=FILE output: at the end of the run it
// writes the run's HTML report (see runtime/report and docs/report.md) to
// a file, the page "llmrun report" makes from a result file.
package html

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/llmrun/llmrun/modules"
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

// Start checks that the file can be written, so that a run does not end
// without its report; it leaves an existing file as it is and creates
// none.
func (o *Output) Start(context.Context, output.Run) error {
	_, statErr := os.Stat(o.path)
	f, err := os.OpenFile(o.path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("the report file cannot be written: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("the report file cannot be written: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := os.Remove(o.path); err != nil {
			return fmt.Errorf("removing the report file made to check it: %w", err)
		}
	}
	return nil
}

// AddRequest does nothing: the report is made from the summary.
func (o *Output) AddRequest(*modules.RequestRecord) {}

// Finish writes the report of s to the file.
func (o *Output) Finish(_ context.Context, s *summary.Summary) output.Report {
	rep := output.Report{Output: o.Describe()}
	if err := o.write(s); err != nil {
		rep.Err = err.Error()
		return rep
	}
	rep.Written = 1
	return rep
}

// write renders the report into the file, which it replaces.
func (o *Output) write(s *summary.Summary) error {
	f, err := os.Create(o.path)
	if err != nil {
		return fmt.Errorf("creating the report file: %w", err)
	}
	if err := report.Render(f, s); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", o.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the report file: %w", err)
	}
	return nil
}
