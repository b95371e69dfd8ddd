package summary_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// resultJSON is a valid result file of the two-scenario run, as a JSON
// object to edit.
func resultJSON(t *testing.T) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := summarize.Build(summarytest.TwoScenarioReport(t), summarytest.Meta).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A result file whose sections, times or counts are missing or absurd is
// refused, naming the file and the field, never read as figures that
// would be wrong (a serving: null that merges as no request, a count
// that overflows a sum).
func TestParseRefusesWhatCannotBeRight(t *testing.T) {
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"serving null", func(m map[string]any) { m["serving"] = nil }, "r.json: serving: missing"},
		{"no serving", func(m map[string]any) { delete(m, "serving") }, "r.json: serving: missing"},
		{"no meta", func(m map[string]any) { delete(m, "meta") }, "r.json: meta: missing"},
		{"no start", func(m map[string]any) { delete(m["meta"].(map[string]any), "start") }, "r.json: meta.start: missing"},
		{"no end", func(m map[string]any) { delete(m["meta"].(map[string]any), "end") }, "r.json: meta.end: missing"},
		{"end before start", func(m map[string]any) { m["meta"].(map[string]any)["end"] = "2000-01-01T00:00:00Z" }, "r.json: meta.end: 2000-01-01T00:00:00Z is before meta.start"},
		{"huge count", func(m map[string]any) { m["serving"].(map[string]any)["requests"] = json.Number("9223372036854775807") },
			"r.json: serving.requests: 9223372036854775807, want a count from 0 to 1125899906842624"},
		{"negative count", func(m map[string]any) {
			m["scenarios"].([]any)[1].(map[string]any)["serving"].(map[string]any)["total_output_tokens"] = -1
		}, "r.json: scenarios[1].serving.total_output_tokens: -1, want a count"},
		{"negative count in a map", func(m map[string]any) {
			m["metrics"].(map[string]any)["llm_ttft"].(map[string]any)["histogram"].(map[string]any)["count"] = -2
		}, `r.json: metrics["llm_ttft"].histogram.count: -2, want a count`},
		{"histogram count beyond a whole number", func(m map[string]any) {
			m["metrics"].(map[string]any)["llm_ttft"].(map[string]any)["histogram"].(map[string]any)["count"] = json.Number("1e300")
		}, `r.json:1:`},
		{"start not a time", func(m map[string]any) { m["meta"].(map[string]any)["start"] = 5 }, "r.json: meta.start: want a time (RFC 3339, as 2026-03-04T05:06:07Z), got 5"},
		{"end not RFC 3339", func(m map[string]any) { m["meta"].(map[string]any)["end"] = "yesterday" }, `r.json: meta.end: want a time (RFC 3339, as 2026-03-04T05:06:07Z), got "yesterday"`},
		{"wrong type", func(m map[string]any) { m["serving"].(map[string]any)["requests"] = []any{} }, "serving.requests: want a whole number, got array"},
		{"top-level list", nil, "r.json:1:1: not an llmrun result file: want a JSON object, got array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte("[1]")
			if tc.edit != nil {
				m := resultJSON(t)
				tc.edit(m)
				var err error
				if b, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
			}
			s, err := summary.Parse("r.json", b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("summary %v, error %v; want an error saying %q", s != nil, err, tc.want)
			}
			if strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "int64") || strings.Contains(err.Error(), "struct") {
				t.Errorf("error %q names Go types", err)
			}
			// Read as a stream, the file is refused with Parse's error.
			streamed, streamErr := summary.ParseStream("r.json", bytes.NewReader(b), func() ([]byte, error) { return b, nil })
			if streamed != nil || streamErr == nil || streamErr.Error() != err.Error() {
				t.Errorf("ParseStream: summary %v, error %v; want Parse's error %q", streamed != nil, streamErr, err)
			}
		})
	}
}

// The position of a syntax error is its line and column.
func TestParseSyntaxErrorPosition(t *testing.T) {
	_, err := summary.Parse("r.json", []byte("{\n  \"schema_version\": 3,\n  \"meta\": {,\n}"))
	if err == nil || !strings.HasPrefix(err.Error(), "r.json:3:12: not valid JSON: invalid character ','") {
		t.Errorf("error %v, want one at r.json:3:12", err)
	}
	_, err = summary.Parse("r.json", []byte(`{"schema_version": 3, "meta": {`))
	if err == nil || !strings.Contains(err.Error(), "r.json: not valid JSON: the file ends in the middle of a value") {
		t.Errorf("a file cut short: error %v", err)
	}
}

// Only regular files of at most MaxResultFileSize are read: a link to
// /dev/zero, a directory or a huge file fails at once, naming the file.
func TestReadJSONRefusesWhatItCannotHold(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size is all that is looked at.
	if err := f.Truncate(summary.MaxResultFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		zero:                          "zero.json: not a regular file (a device)",
		dir:                           "not a regular file (a directory)",
		huge:                          "huge.json: 268435457 bytes, more than the 256 MiB a result file may have",
		filepath.Join(dir, "no.json"): "cannot read result file " + filepath.Join(dir, "no.json") + ": no such file or directory",
	} {
		if _, err := summary.ReadJSON(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", path, err, want)
		}
	}
}

// A sum of counters beyond any count shows as the bound, never as an
// overflowed or negative figure.
func TestBuildClampsAbsurdCounts(t *testing.T) {
	f := summarytest.NewFixture()
	r := summarytest.Completed("m", 10, 20, 5, 5)
	r.OutputTokens = math.MaxInt64
	f.Request(summarytest.Tags("scenario", "a"), r)
	f.Request(summarytest.Tags("scenario", "a"), r)
	rep := &engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Start: summarytest.T0, End: summarytest.T0.Add(time.Second)}
	s := summarize.Build(rep, summarytest.Meta)
	if got := s.Serving.OutputTokens; got != summary.MaxCount {
		t.Errorf("total output tokens %d, want the bound %d", got, int64(summary.MaxCount))
	}
}

// FuzzParse: whatever a result file holds, Parse returns a summary whose
// counts are within bounds and whose end is not before its start, or an
// error; it never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"schema_version": 3, "meta": {"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:01Z"}, "serving": {}}`))
	f.Add([]byte(`{"schema_version": 2, "meta": {}, "serving": null}`))
	f.Add([]byte(`{"schema_version": 4, "meta": {"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:01Z"}, "serving": {}, "server": {"targets": [null, {"url": "u", "kind": "gpu", "gpus": [{"figures": {"gpu_power": {"mean": 1}}}]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := summary.Parse("fuzz.json", b)
		if err != nil {
			if s != nil || !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("summary %v with error %v (want nil, and the file named)", s, err)
			}
			return
		}
		if s.Meta.End.Before(s.Meta.Start) || s.Serving.Requests < 0 || s.Serving.Requests > summary.MaxCount {
			t.Fatalf("invalid summary accepted: %+v", s.Meta)
		}
		for name, m := range s.Metrics {
			if m.Histogram != nil {
				// Decoding the histograms must fail cleanly too.
				if _, err := m.Histogram.Stats(); err != nil {
					t.Logf("%s: %v", name, err)
				}
			}
		}
	})
}

// Merge takes at most MaxMergeInputs results, so that sums of counts
// within MaxCount cannot overflow.
func TestMergeBoundsItsInputs(t *testing.T) {
	_, err := summary.Merge(make([]*summary.Summary, summary.MaxMergeInputs+1)...)
	if err == nil || !strings.Contains(err.Error(), "4097 results: at most 4096 merge at once") {
		t.Errorf("error %v", err)
	}
}
