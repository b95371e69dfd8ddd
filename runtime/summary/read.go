package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"time"
)

// MaxResultFileSize is the largest result file ReadJSON reads, 256 MiB: a
// run's result file is well under a megabyte (its histograms are
// compressed), a merge of thousands of them under this.
const MaxResultFileSize = 256 << 20

// MaxCount bounds every count a result file holds (requests, tokens,
// histogram counts, ...), 2^50, about 10^15: beyond any run, and low
// enough that MaxMergeInputs results add up without overflowing.
const MaxCount = 1 << 50

// ReadJSON reads a result file that WriteJSON wrote (llmrun run
// --summary-export, llmrun merge -o), of a version from
// OldestSchemaVersion to SchemaVersion; the summary keeps the file's
// version. It fails, naming the file, when the file cannot be read, is not
// a regular file, is larger than MaxResultFileSize, or is not a valid
// result file (see Parse).
func ReadJSON(path string) (*Summary, error) {
	b, err := ReadBytes(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// ReadBytes reads the result file at path whole, as ReadJSON does before
// it parses it: for a reader of other tools' result files to hold them to
// the same checks and bound, and say the same of a file it cannot read.
func ReadBytes(path string) ([]byte, error) {
	return readRegular(path, MaxResultFileSize)
}

// readRegular reads the regular file at path (following links) whole, if
// it holds at most max bytes.
func readRegular(path string, max int64) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read result file %s: %v", path, pathError(err))
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("cannot read result file %s: not a regular file (%s)", path, fileKind(info.Mode()))
	}
	if info.Size() > max {
		return nil, fmt.Errorf("cannot read result file %s: %d bytes, more than the %d MiB a result file may have", path, info.Size(), max>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read result file %s: %v", path, pathError(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read result file %s: %v", path, pathError(err))
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("cannot read result file %s: more than the %d MiB a result file may have", path, max>>20)
	}
	return b, nil
}

// fileKind names a file mode's type in words.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a file"
}

// pathError drops the operation and path of an *fs.PathError, which the
// caller names.
func pathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse reads the result file b, named name in errors. It fails, naming
// the file, the position (line:column) or the field (serving.requests),
// when b is not JSON, not an llmrun result file, of another
// schema_version, lacks the meta or serving section or the run's start or
// end, has its end before its start, has a server target without its URL
// or of an unknown kind, or has a count (any whole number but the seed)
// negative or above MaxCount.
func Parse(name string, b []byte) (*Summary, error) {
	var h head
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, decodeError(name, b, err)
	}
	if err := h.check(name); err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, decodeError(name, b, err)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// head is what Parse checks of a result file before it decodes the rest.
type head struct {
	SchemaVersion *int            `json:"schema_version"`
	Meta          json.RawMessage `json:"meta"`
	Serving       json.RawMessage `json:"serving"`
}

// check checks the file's schema version, that it has its meta and
// serving sections, and meta's times.
func (h *head) check(name string) error {
	switch v := h.SchemaVersion; {
	case v == nil:
		return fmt.Errorf("%s: not an llmrun result file: no schema_version", name)
	case *v < OldestSchemaVersion:
		return fmt.Errorf("%s: schema_version %d, from an older llmrun; this one reads versions %d to %d, whose histograms merge and compare need: export the run again with this llmrun",
			name, *v, OldestSchemaVersion, SchemaVersion)
	case *v > SchemaVersion:
		return fmt.Errorf("%s: schema_version %d, from a newer llmrun; this one reads versions %d to %d", name, *v, OldestSchemaVersion, SchemaVersion)
	}
	for _, sec := range []struct {
		field string
		raw   json.RawMessage
	}{{"meta", h.Meta}, {"serving", h.Serving}} {
		if len(sec.raw) == 0 || bytes.Equal(sec.raw, []byte("null")) {
			return fmt.Errorf("%s: %s: missing; every result file has this section", name, sec.field)
		}
	}
	if err := checkTimes(h.Meta); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// checkTimes checks that meta's start and end, when present, are times
// as WriteJSON writes them, so that a bad one is named.
func checkTimes(meta json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil {
		return nil // the whole file's decoding says where and why
	}
	for _, field := range []string{"start", "end"} {
		raw, ok := m[field]
		if !ok {
			continue
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return fmt.Errorf("meta.%s: want a time (RFC 3339, as 2026-03-04T05:06:07Z), got %.40s", field, raw)
		}
		if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
			return fmt.Errorf("meta.%s: want a time (RFC 3339, as 2026-03-04T05:06:07Z), got %.40q", field, v)
		}
	}
	return nil
}

// validate checks what Parse promises beyond the JSON's shape.
func (s *Summary) validate() error {
	switch m := s.Meta; {
	case m.Start.IsZero():
		return errors.New("meta.start: missing; the run's start is needed for its throughputs")
	case m.End.IsZero():
		return errors.New("meta.end: missing; the run's end is needed for its throughputs")
	case m.End.Before(m.Start):
		return fmt.Errorf("meta.end: %s is before meta.start %s", m.End.Format(time.RFC3339Nano), m.Start.Format(time.RFC3339Nano))
	}
	if err := s.Server.validate(); err != nil {
		return err
	}
	if err := checkCounts(reflect.ValueOf(s).Elem(), ""); err != nil {
		return err
	}
	return nil
}

// countError is a whole number that is no count: n, at the JSON path
// whose parts, innermost first, are in reversed.
type countError struct {
	reversed []string // field names and indices ("[3]", `["llm_ttft"]`)
	n        int64
}

func (e *countError) Error() string {
	var path strings.Builder
	for i := len(e.reversed) - 1; i >= 0; i-- {
		part := e.reversed[i]
		if path.Len() > 0 && !strings.HasPrefix(part, "[") {
			path.WriteByte('.')
		}
		path.WriteString(part)
	}
	return fmt.Sprintf("%s: %d, want a count from 0 to %d", path.String(), e.n, int64(MaxCount))
}

// in puts the error's path inside part.
func (e *countError) in(part string) *countError {
	e.reversed = append(e.reversed, part)
	return e
}

// checkCounts checks every whole number in v but meta.seed: each must be
// from 0 to MaxCount. top is "" for the whole result, the field's name
// for a field of it, "-" deeper. The error's path is built only when
// there is one: a file of many elements is checked without a string made
// for each.
func checkCounts(v reflect.Value, top string) *countError {
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n := v.Int(); n < 0 || n > MaxCount {
			return &countError{n: n}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return checkCounts(v.Elem(), top)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // raw JSON, as meta.options
		}
		for i := range v.Len() {
			if err := checkCounts(v.Index(i), "-"); err != nil {
				return err.in(fmt.Sprintf("[%d]", i))
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := checkCounts(it.Value(), "-"); err != nil {
				return err.in(fmt.Sprintf("[%q]", it.Key().String()))
			}
		}
	case reflect.Struct:
		return checkStructCounts(v, top)
	}
	return nil
}

// checkStructCounts is checkCounts for a struct: its JSON fields.
func checkStructCounts(v reflect.Value, top string) *countError {
	if v.Type() == reflect.TypeFor[time.Time]() {
		return nil
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if (top == "" && name == "schema_version") || (top == "meta" && name == "seed") {
			continue
		}
		inner := "-"
		if top == "" {
			inner = name
		}
		if err := checkCounts(v.Field(i), inner); err != nil {
			return err.in(name)
		}
	}
	return nil
}

// decodeError says in words where and why b is not a result file: the
// line and column of a syntax error, the field of a value of the wrong
// type.
func decodeError(name string, b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return fmt.Errorf("%s: not valid JSON: the file is empty", name)
	case errors.As(err, &syn) && syn.Offset >= int64(len(bytes.TrimRight(b, " \t\r\n"))):
		return fmt.Errorf("%s: not valid JSON: the file ends in the middle of a value (cut short?)", name)
	case errors.As(err, &syn):
		return fmt.Errorf("%s:%s: not valid JSON: %s", name, position(b, syn.Offset-1), strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("%s:%s: not an llmrun result file: want a JSON object, got %s", name, position(b, valueStart(b, typ.Offset)), typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("%s:%s: %s: want %s, got %s", name, position(b, valueStart(b, typ.Offset)), typ.Field, kindWords(typ.Type), typ.Value)
	}
	return fmt.Errorf("%s: invalid result file: %s", name, strings.TrimPrefix(err.Error(), "json: "))
}

// kindWords names what a Go type holds, for a user.
func kindWords(t reflect.Type) string {
	if t == reflect.TypeFor[time.Time]() {
		return "a time (RFC 3339)"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return kindWords(t.Elem())
	}
	return "another kind of value"
}

// valueStart is where the JSON value that the decoder read up to off
// starts: the bracket of an object or list (the decoder stops past it),
// the opening quote of a string, the first character of a number or
// literal.
func valueStart(b []byte, off int64) int64 {
	p := min(off, int64(len(b))) - 1
	if p < 0 {
		return 0
	}
	switch b[p] {
	case '[', '{':
		return p
	case '"':
		q := p - 1
		for q > 0 && (b[q] != '"' || b[q-1] == '\\') {
			q--
		}
		return max(q, 0)
	}
	q := p
	for q >= 0 && !bytes.ContainsRune([]byte(" \t\r\n:,["), rune(b[q])) {
		q--
	}
	return q + 1
}

// position is the line:column (from 1) of the byte offset off in b.
func position(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%d:%d", line, col)
}
