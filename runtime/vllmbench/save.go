package vllmbench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/runner"
)

// ResultFile is where vLLM's result is saved: --result-dir and
// --result-filename, appended to with --append-result.
type ResultFile struct {
	Dir, Filename string
	Append        bool
}

// path is the result file's path for the run's model and date, as vLLM
// names it (FileName).
func (f *ResultFile) path(o Options, modelID string, date time.Time) string {
	return FileName(o, modelID, date, f.Dir, f.Filename)
}

// provisionalPath is the result file's path before the run: without
// --result-filename, a name of the same directory stands for the one the
// model and the date will give.
func (f *ResultFile) provisionalPath(o Options) string {
	return f.path(o, "model", time.Now())
}

// dir is the directory the result file is written in.
func (f *ResultFile) dir(o Options) string {
	return filepath.Dir(f.provisionalPath(o))
}

// check makes --result-dir, and checks before the run that the result
// file can be written where it is to be and that no other output (others:
// runner.FilesWritten) writes it, as --summary-export's is checked: not
// after the whole benchmark. A destination that cannot be written is a
// *stopError; the command line's faults are plain errors.
func (f *ResultFile) check(o Options, others []output.FileFlag) error {
	if f.Dir != "" {
		if err := os.MkdirAll(f.Dir, 0o755); err != nil {
			return fmt.Errorf("--result-dir: %v", output.WithoutPath(err))
		}
	}
	path := f.provisionalPath(o)
	if err := output.SamePaths(append(others, output.FileFlag{Flag: "--save-result", Path: path})); err != nil {
		return err
	}
	if err := output.CheckPath(path); err != nil {
		return &stopError{runner.Errored, fmt.Errorf("--save-result %s: cannot write there: %w; no load was sent", path, err)}
	}
	return nil
}

// write writes result to path as vLLM's json.dump does (its separators,
// no newline after), or with --append-result adds it to the file's end,
// after a newline when the file is not empty.
func (f *ResultFile) write(path string, result *Result) error {
	if !f.Append {
		return output.WriteFile(path, result.WriteJSON)
	}
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if st, serr := file.Stat(); serr == nil && st.Size() > 0 {
		_, err = file.WriteString("\n")
	}
	if err == nil {
		err = result.WriteJSON(file)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}
