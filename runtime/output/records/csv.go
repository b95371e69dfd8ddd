package records

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
)

// csvColumns are the CSV header, in the order of the JSONL members.
var csvColumns = []string{
	"time", "scenario", "model", "tags", "ok", "status", "error_class",
	"ttft_ms", "ttfo_ms", "tpot_ms", "e2e_ms", "itl_mean_ms", "itl_p99_ms",
	"input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens",
}

// csvEncoder writes a record as one CSV row with encoding/csv, into a
// buffer from which record copies it.
type csvEncoder struct {
	buf  bytes.Buffer
	w    *csv.Writer
	row  []string
	tags strings.Builder
}

// newCSVEncoder returns a CSV encoder.
func newCSVEncoder() *csvEncoder {
	e := &csvEncoder{row: make([]string, len(csvColumns))}
	e.w = csv.NewWriter(&e.buf)
	return e
}

// header appends the header row to dst.
func (e *csvEncoder) header(dst []byte) []byte {
	return e.encode(dst, csvColumns)
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
	errorClass := ""
	if !r.OK {
		errorClass = r.ErrorClass
	}
	row := e.row
	row[0] = r.Time.UTC().Format(time.RFC3339Nano)
	row[1], row[2], row[3] = scenario, model, e.tags.String()
	row[4] = strconv.FormatBool(r.OK)
	row[5] = strconv.Itoa(r.Status)
	row[6] = errorClass
	for i, v := range [...]float64{r.TTFT, r.TTFO, r.TPOT, r.E2E, r.ITLMean, r.ITLP99} {
		row[7+i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	for i, v := range [...]int{r.PromptTokens, r.OutputTokens, r.CachedTokens, r.ReasoningTokens} {
		row[13+i] = strconv.Itoa(v)
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
