package summary_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// A result file read as a stream is the summary Parse reads: one as
// WriteJSON writes it, compact or indented, with a field this llmrun does
// not know, or lists and maps null or empty, is decoded from the stream
// alone; one in another form (a field named in another case, or twice,
// more after the object) is read again whole for Parse.
func TestParseStreamIsParse(t *testing.T) {
	var indented bytes.Buffer
	if err := summarize.Build(summarytest.TwoScenarioReport(t), summarytest.Meta).WriteJSON(&indented); err != nil {
		t.Fatal(err)
	}
	edited := func(edit func(m map[string]any)) []byte {
		m := resultJSON(t)
		edit(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	renamed := func(from, to string) []byte {
		return bytes.Replace(indented.Bytes(), []byte(`"`+from+`":`), []byte(`"`+to+`":`), 1)
	}
	tests := []struct {
		name      string
		doc       []byte
		wantWhole bool // read again whole
	}{
		{"as WriteJSON writes it", indented.Bytes(), false},
		{"compact", edited(func(map[string]any) {}), false},
		{"a field this llmrun does not know", edited(func(m map[string]any) { m["from_the_future"] = map[string]any{"x": []any{1, 2}} }), false},
		{"lists and maps null", edited(func(m map[string]any) { m["timeline"], m["metrics"], m["errors"] = nil, nil, nil }), false},
		{"lists and maps empty", edited(func(m map[string]any) { m["timeline"], m["metrics"], m["errors"] = []any{}, map[string]any{}, []any{} }), false},
		{"a field in another case", renamed("scenarios", "Scenarios"), true},
		{"a field twice", append([]byte(`{"checks": [], `), indented.Bytes()[1:]...), true},
		{"more after the object", append(bytes.Clone(indented.Bytes()), "{}"...), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := summary.Parse("r.json", tt.doc)
			readWhole := false
			got, err := summary.ParseStream("r.json", bytes.NewReader(tt.doc), func() ([]byte, error) {
				readWhole = true
				return tt.doc, nil
			})
			if readWhole != tt.wantWhole {
				t.Errorf("read again whole: %v, want %v", readWhole, tt.wantWhole)
			}
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, want Parse's %v", err, wantErr)
			}
			if err == nil && !summarytest.SameFile(t, got, want) {
				t.Error("the summary read as a stream differs from Parse's")
			}
		})
	}
}

// A stream cut short is read again whole, and the error of the whole
// (the gzip stream's, its checksum's) is ParseStream's; a stream that
// fails is its error, without reading the whole again.
func TestParseStreamFailingStream(t *testing.T) {
	damaged := errors.New("the result does not unpack: unexpected EOF")
	tooLarge := errors.New("the result is too large: it unpacks to more than 100 bytes")
	tests := []struct {
		name      string
		stream    io.Reader
		wantErr   error
		wantWhole bool
	}{
		{"cut short", strings.NewReader(`{"schema_version": 3, "meta": {`), damaged, true},
		{"failing", &failingReader{strings.NewReader(`{"schema_version": 3, "meta": {`), tooLarge}, tooLarge, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readWhole := false
			_, err := summary.ParseStream("r.json", tt.stream, func() ([]byte, error) {
				readWhole = true
				return nil, damaged
			})
			if !errors.Is(err, tt.wantErr) || readWhole != tt.wantWhole {
				t.Errorf("error %v, read again whole %v; want %v, %v", err, readWhole, tt.wantErr, tt.wantWhole)
			}
		})
	}
}

// failingReader gives its text, then fails with err.
type failingReader struct {
	text *strings.Reader
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.text.Len() == 0 {
		return 0, f.err
	}
	return f.text.Read(p)
}
