package results

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/report"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// ParseStore reads the --influxdb URL of trend and merge, the InfluxDB
// whose stored results they read, as run's --out influxdb=URL reads it.
func ParseStore(url string, getenv func(string) string) (influxdb.Config, error) {
	return influxdb.ParseConfig(url, getenv)
}

// CheckOutput says, before anything is read, that path (-o) cannot be
// written.
func CheckOutput(path string) error {
	if err := output.CheckPath(path); err != nil {
		return fmt.Errorf("-o %s: cannot write there: %w", path, err)
	}
	return nil
}

// WriteMerged writes the merged result s to path, or to stdout when path
// is "".
func WriteMerged(path string, s *summary.Summary, stdout io.Writer) error {
	if path == "" {
		return s.WriteJSON(stdout)
	}
	if err := output.WriteFile(path, s.WriteJSON); err != nil {
		return fmt.Errorf("-o %s: the merged result was not written: %w", path, err)
	}
	return nil
}

// MergeNotes are what llmrun merge says of the merge of s into merged,
// written to to: what it merged, and a warning when instances of the run
// are missing (fromStore: the results were read from InfluxDB, not
// given).
func (s Set) MergeNotes(merged *summary.Summary, to string, fromStore bool) []string {
	sv := merged.Serving
	notes := []string{fmt.Sprintf("%s (%s): %s, %d completed, %d failed over %.1f s, written to %s",
		textfmt.Count(len(s.Results), "result"), strings.Join(merged.Meta.Merged, ", "), textfmt.Count(sv.Requests, "request"), sv.OK, sv.Failed, sv.DurationSeconds, to)}
	if missing := merged.Meta.MissingInstances; len(missing) > 0 {
		given := "given"
		if fromStore {
			given = "stored in InfluxDB"
		}
		notes = append(notes, fmt.Sprintf("warning: run %s had %s; no result of %s was %s, so the merged figures are the others' only (missing_instances in the result)",
			merged.Meta.RunID, textfmt.Count(merged.Meta.Instances, "instance"), InstanceList(missing), given))
	}
	return notes
}

// Report is the HTML report of a result file: In the result file, Out
// the page, and SLO, when not nil, the objective to draw and to judge a
// sweep against instead of the run's.
type Report struct {
	In, Out string
	SLO     *summary.SLO
}

// Write writes the report; the page is made in memory first, so that a
// failure leaves no partial file. sloIgnored says that SLO was given for a sweep
// whose levels cannot be judged again from the result file: the report
// shows the SLO the sweep was run with.
func (r Report) Write() (sloIgnored bool, err error) {
	if err := CheckOutput(r.Out); err != nil {
		return false, err
	}
	s, err := ReadResult(r.In)
	if err != nil {
		return false, err
	}
	sloIgnored = r.SLO != nil && !ApplySLO(s, *r.SLO)
	var page bytes.Buffer
	if err := report.RenderSource(&page, s, source(r.In, s)); err != nil {
		return sloIgnored, err
	}
	if err := output.WriteFile(r.Out, func(w io.Writer) error { _, err := w.Write(page.Bytes()); return err }); err != nil {
		return sloIgnored, fmt.Errorf("-o %s: the report was not written: %w", r.Out, err)
	}
	return sloIgnored, nil
}
