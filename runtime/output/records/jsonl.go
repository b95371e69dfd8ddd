package records

import (
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/llmrun/llmrun/internal/jsonstr"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
)

// The tags a record's line has members or columns of their own; its other
// tags go to "tags".
const (
	scenarioTag = "scenario"
	modelTag    = "model"
)

// jsonlEncoder writes a record as one JSON object per line, appended by
// hand: no allocation. Its members after the tags are the record's
// figures (llm.RecordFields), a failed request's only ones (error_class)
// left out of an ok request's line.
type jsonlEncoder struct {
	figures []llm.RecordField
	// keys are the figures' `,"name":`.
	keys []string
}

// newJSONLEncoder returns a JSONL encoder.
func newJSONLEncoder() *jsonlEncoder {
	e := &jsonlEncoder{figures: llm.RecordFields()}
	for _, f := range e.figures {
		e.keys = append(e.keys, `,"`+f.Name+`":`)
	}
	return e
}

// header is nothing: JSONL has no header.
func (*jsonlEncoder) header(dst []byte) []byte { return dst }

// record appends r's JSON object and a newline to dst.
func (e *jsonlEncoder) record(dst []byte, r *llm.Record) []byte {
	scenario, _ := r.Tags.Get(scenarioTag)
	model, _ := r.Tags.Get(modelTag)
	dst = append(dst, `{"time":"`...)
	dst = r.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","scenario":`...)
	dst = jsonstr.Append(dst, scenario, false)
	dst = append(dst, `,"model":`...)
	dst = jsonstr.Append(dst, model, false)
	dst = append(dst, `,"tags":{`...)
	first := true
	for _, t := range r.Tags.Tags() {
		if otherTag(t) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = jsonstr.Append(dst, t.Key, false)
			dst = append(dst, ':')
			dst = jsonstr.Append(dst, t.Value, false)
		}
	}
	dst = append(dst, '}')
	for i := range e.figures {
		f := &e.figures[i]
		if f.FailedOnly && r.OK {
			continue
		}
		dst = append(dst, e.keys[i]...)
		switch f.Kind {
		case reflect.Bool:
			dst = strconv.AppendBool(dst, f.Bool(r))
		case reflect.Int:
			dst = strconv.AppendInt(dst, f.Int(r), 10)
		case reflect.Float64:
			dst = appendFloat(dst, f.Float64(r))
		default:
			dst = jsonstr.Append(dst, f.String(r), false)
		}
	}
	return append(dst, "}\n"...)
}

// otherTag reports whether t goes to "tags": it is neither the scenario
// nor the model.
func otherTag(t metrics.Tag) bool {
	return t.Key != scenarioTag && t.Key != modelTag
}

// appendFloat appends v as a JSON number in full precision, null when it
// is not finite.
func appendFloat(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// hex are the digits of \u escapes.
