package records

import (
	"bytes"
	"encoding/csv"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
)

// csvEncoder writes a record as one CSV row with encoding/csv, into a
// buffer from which record copies it. Its columns are those of the JSONL
// members, in their order: after the tags, the record's figures
// (llm.RecordFields), empty where a failed request's only ones
// (error_class) are of an ok request.
type csvEncoder struct {
	figures []llm.RecordField
	buf     bytes.Buffer
	w       *csv.Writer
	row     []string
	tags    strings.Builder
}

// csvTagColumns are the columns before the figures.
const csvTagColumns = 4

// newCSVEncoder returns a CSV encoder.
func newCSVEncoder() *csvEncoder {
	e := &csvEncoder{figures: llm.RecordFields()}
	e.row = make([]string, csvTagColumns+len(e.figures))
	e.w = csv.NewWriter(&e.buf)
	return e
}

// header appends the header row to dst.
func (e *csvEncoder) header(dst []byte) []byte {
	columns := append(make([]string, 0, len(e.row)), "time", "scenario", "model", "tags")
	for _, f := range e.figures {
		columns = append(columns, f.Name)
	}
	return e.encode(dst, columns)
}

// record appends r's row to dst.
func (e *csvEncoder) record(dst []byte, r *llm.Record) []byte {
	scenario, _ := r.Tags.Get(scenarioTag)
	model, _ := r.Tags.Get(modelTag)
	e.tags.Reset()
	for _, t := range r.Tags.Tags() {
		if otherTag(t) {
			if e.tags.Len() > 0 {
				e.tags.WriteByte(';')
			}
			e.tags.WriteString(t.Key)
			e.tags.WriteByte('=')
			e.tags.WriteString(t.Value)
		}
	}
	row := e.row
	row[0] = r.Time.UTC().Format(time.RFC3339Nano)
	row[1], row[2], row[3] = scenario, model, e.tags.String()
	for i := range e.figures {
		f, cell := &e.figures[i], &row[csvTagColumns+i]
		switch {
		case f.FailedOnly && r.OK:
			*cell = ""
		case f.Kind == reflect.Bool:
			*cell = strconv.FormatBool(f.Bool(r))
		case f.Kind == reflect.Int:
			*cell = strconv.FormatInt(f.Int(r), 10)
		case f.Kind == reflect.Float64:
			*cell = strconv.FormatFloat(f.Float64(r), 'f', -1, 64)
		default:
			*cell = f.String(r)
		}
	}
	return e.encode(dst, row)
}

// encode appends row, as encoding/csv writes it, to dst. Writing to a
// bytes.Buffer cannot fail, so the csv.Writer has no error to report.
func (e *csvEncoder) encode(dst []byte, row []string) []byte {
	e.buf.Reset()
	_ = e.w.Write(row)
	e.w.Flush()
	return append(dst, e.buf.Bytes()...)
}
