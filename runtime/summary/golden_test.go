package summary_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/summary"
)

// goldenFile is the result file a real run of llmrun wrote when version
// was current (testdata/golden/README.md says which commit and command).
func goldenFile(version int) string {
	return filepath.Join("testdata", "golden", fmt.Sprintf("v%d.json", version))
}

// Every version the reader reads has a golden file, and the reader reads
// each one with its figures: what those runs of 2 VUs for 3 s on the
// built-in simulator measured.
func TestGoldenFilesRead(t *testing.T) {
	type figures struct {
		requests, completed int64
		ttftP50, ttftP99    float64
	}
	want := map[int]figures{
		2: {6, 6, 26.047, 42.876585},
		3: {6, 6, 25.455, 43.097531},
		4: {6, 6, 41.119, 52.208203},
	}
	for v := summary.OldestSchemaVersion; v <= summary.SchemaVersion; v++ {
		w, ok := want[v]
		if !ok {
			t.Errorf("schema version %d has no golden file: write %s with a real run (testdata/golden/README.md)", v, goldenFile(v))
			continue
		}
		s, err := summary.ReadJSON(goldenFile(v))
		if err != nil {
			t.Errorf("version %d: %v", v, err)
			continue
		}
		var ttft *summary.LatencyRow
		for i := range s.Latency {
			if s.Latency[i].Metric == "llm_ttft" {
				ttft = &s.Latency[i]
			}
		}
		switch {
		case s.SchemaVersion != v:
			t.Errorf("%s read as version %d", goldenFile(v), s.SchemaVersion)
		case s.Serving.Requests != w.requests || s.Serving.OK != w.completed:
			t.Errorf("version %d: %d requests, %d completed; want %d, %d", v, s.Serving.Requests, s.Serving.OK, w.requests, w.completed)
		case ttft == nil || ttft.P["p50"] != w.ttftP50 || ttft.P["p99"] != w.ttftP99:
			t.Errorf("version %d: TTFT row %+v, want p50 %g and p99 %g ms", v, ttft, w.ttftP50, w.ttftP99)
		case (s.Server != nil) != (v >= 4):
			t.Errorf("version %d: server section %v; only version 4 on has one", v, s.Server != nil)
		}
		// A trend's histogram reads back with the row's figures.
		st, err := s.Metrics["llm_ttft"].Histogram.Stats()
		if err != nil || st.Count != w.completed {
			t.Errorf("version %d: llm_ttft's histogram %v (%v), want %d values", v, st, err, w.completed)
		}
	}
}

// A result file the current code writes has the golden file of the
// current version's shape: the same field paths with the same kinds of
// value. A field removed or changed, or a field every run writes added,
// fails here until SchemaVersion is bumped and a golden file of the new
// version added; a new optional field keeps the version
// (docs/results.md#versions).
func TestFormatMatchesTheGoldenFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator for 3 s; TestShapeDiff covers the comparison")
	}
	golden, err := os.ReadFile(goldenFile(summary.SchemaVersion))
	if err != nil {
		t.Fatalf("the current schema version %d has no golden file: %v", summary.SchemaVersion, err)
	}
	written := writeRealResult(t)
	diff := shapeDiff(t, golden, written)
	switch {
	case diff == "":
	case !strings.Contains(diff, "removed: ") && !strings.Contains(diff, "changed: "):
		t.Errorf("the result file has fields every run writes that the golden file of version %d lacks:\n%s\n"+
			"make them optional (omitempty: older readers ignore them, docs/results.md#versions), "+
			"or bump SchemaVersion and add testdata/golden/v%d.json written by a real run (testdata/golden/README.md)",
			summary.SchemaVersion, diff, summary.SchemaVersion+1)
	default:
		t.Errorf("the result file's format changed, and SchemaVersion is still %d:\n%s\n"+
			"bump SchemaVersion, keep a reader of version %d, and add testdata/golden/v%d.json written by a real run (testdata/golden/README.md)",
			summary.SchemaVersion, diff, summary.SchemaVersion, summary.SchemaVersion+1)
	}
}

// writeRealResult runs the golden files' command (llmrun run -d 3s -u 2
// --seed 1 --summary-export FILE examples/quickstart.js, on the built-in
// simulator) through the runner and returns the file it wrote.
func writeRealResult(t *testing.T) []byte {
	t.Helper()
	source, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart.js"))
	if err != nil {
		t.Fatal(err)
	}
	vus, dur := 2, 3*time.Second
	path := filepath.Join(t.TempDir(), "result.json")
	var stderr bytes.Buffer
	out := runner.Run(context.Background(), runner.Config{
		Engine: engine.Config{ScriptPath: "examples/quickstart.js", Source: source, Seed: 1,
			Overrides: engine.Overrides{VUs: &vus, Duration: &dur}},
		SummaryExport: path,
		Quiet:         true,
		Stdout:        io.Discard,
		Stderr:        &stderr,
	})
	if out.Verdict != runner.Passed || out.Lost {
		t.Fatalf("run: %s (lost %v), as the golden file's run did not\n%s", out.Verdict, out.Lost, stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A shape is a document's field paths (meta.models[], metrics{}.values{})
// with what each holds: the kinds of value found there, whether the
// Summary type has the path, and whether a run may leave it out (a field
// under omitempty, an array's elements, a map's values).
type shape map[string]*pathShape

type pathShape struct {
	kinds    []string
	known    bool
	optional bool
}

// shapeDiff lists how document got differs in shape from want, "" when
// not at all: a path of want the Summary type no longer has is removed, a
// path got always writes that want lacks is added, a path whose kinds
// disagree is changed. A path a run may leave out is no difference by its
// absence, so the verdict does not depend on what one run happened to
// write (a warning of a loaded machine, an empty list). json.RawMessage
// fields (meta.options) are opaque; null is the kind of no value,
// compatible with any.
func shapeDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	shapes := [2]shape{}
	for i, doc := range [][]byte{want, got} {
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		shapes[i] = shape{}
		collectShape(v, reflect.TypeFor[summary.Summary](), "", false, shapes[i])
	}
	var lines []string
	for path, w := range shapes[0] {
		g, ok := shapes[1][path]
		switch {
		case !ok && !w.known:
			lines = append(lines, "removed: "+path)
		case ok && !compatible(w.kinds, g.kinds):
			lines = append(lines, fmt.Sprintf("changed: %s from %s to %s", path, strings.Join(w.kinds, "|"), strings.Join(g.kinds, "|")))
		}
	}
	for path, g := range shapes[1] {
		if _, ok := shapes[0][path]; !ok && !g.optional {
			lines = append(lines, "added: "+path)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// compatible says whether two paths' kinds agree, null aside.
func compatible(a, b []string) bool {
	notNull := func(kinds []string) []string {
		return slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return k == "null" })
	}
	x, y := notNull(a), notNull(b)
	return len(x) == 0 || len(y) == 0 || slices.Equal(x, y)
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// collectShape adds the paths and kinds of v, a value decoded from JSON at
// path, to out; typ is the Go type the Summary has there (nil where it
// has none), which tells a map, whose keys are data, from a struct;
// optional says that a run may leave path out.
func collectShape(v any, typ reflect.Type, path string, optional bool, out shape) {
	for typ != nil && typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	kind := "null"
	switch v := v.(type) {
	case map[string]any:
		kind = "object"
		if typ == rawMessage {
			kind = "raw"
			break
		}
		for key, val := range v {
			if typ != nil && typ.Kind() == reflect.Map {
				collectShape(val, typ.Elem(), path+"{}", true, out)
			} else {
				field, omitted := fieldType(typ, key)
				collectShape(val, field, path+"."+key, optional || omitted, out)
			}
		}
	case []any:
		kind = "array"
		var elem reflect.Type
		if typ != nil && (typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array) {
			elem = typ.Elem()
		}
		for _, val := range v {
			collectShape(val, elem, path+"[]", true, out)
		}
	case string:
		kind = "string"
	case float64:
		kind = "number"
	case bool:
		kind = "bool"
	}
	if path == "" {
		return
	}
	p := out[path]
	if p == nil {
		p = &pathShape{known: typ != nil, optional: optional}
		out[path] = p
	}
	if !slices.Contains(p.kinds, kind) {
		p.kinds = append(p.kinds, kind)
		slices.Sort(p.kinds)
	}
}

// fieldType is the type of typ's field named name in JSON, nil when typ
// is no struct or has no such field, and whether the field is left out
// when empty (omitempty, omitzero).
func fieldType(typ reflect.Type, name string) (reflect.Type, bool) {
	if typ == nil || typ.Kind() != reflect.Struct {
		return nil, false
	}
	for f := range typ.Fields() {
		tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name {
			return f.Type, strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		}
	}
	return nil, false
}

// shapeDiff says which paths a format change added, removed or changed
// the kind of: a field renamed, a field added, a number made a string;
// and not a path a run may leave out that one run did.
func TestShapeDiff(t *testing.T) {
	base := `{"schema_version": 4, "serving": {"requests": 3}, "metrics": {"llm_ttft": {"values": {"p(99)": 1}}}, "errors": [{"class": "x"}], "client": {"warnings": ["loaded"]}}`
	for _, tc := range []struct{ name, want, got, diff string }{
		{"same shape, other values and map keys", base,
			`{"schema_version": 9, "serving": {"requests": 0}, "metrics": {"llm_e2e": {"values": {"avg": 2, "max": 3}}}, "errors": [], "client": {}}`, ""},
		{"a field the type no longer has", `{"schema_version": 4, "serving": {"requests": 3, "request_count": 3}}`,
			`{"schema_version": 4, "serving": {"requests": 3}}`, "removed: .serving.request_count"},
		{"a field every run writes, new", `{"schema_version": 4, "serving": {"requests": 3}}`,
			`{"schema_version": 4, "serving": {"requests": 3}, "meta": {"script": "s.js"}}`, "added: .meta\nadded: .meta.script"},
		{"a field of no type, new", `{"schema_version": 4, "serving": {"requests": 3}}`,
			`{"schema_version": 4, "serving": {"requests": 3, "request_count": 3}}`, "added: .serving.request_count"},
		{"an optional field, new", `{"schema_version": 4, "serving": {"requests": 3}, "client": {}}`,
			`{"schema_version": 4, "serving": {"requests": 3}, "client": {"warnings": ["loaded"]}}`, ""},
		{"kind changed", base,
			`{"schema_version": "4", "serving": {"requests": 3}, "metrics": {"llm_ttft": {"values": {"p(99)": 1}}}, "errors": [{"class": "x"}]}`,
			"changed: .schema_version from number to string"},
		{"null is no value", base,
			`{"schema_version": 4, "serving": {"requests": 3}, "metrics": {"llm_ttft": {"values": {"p(99)": null}}}, "errors": [{"class": "x"}]}`, ""},
	} {
		if got := shapeDiff(t, []byte(tc.want), []byte(tc.got)); got != tc.diff {
			t.Errorf("%s: diff\n%s\nwant\n%s", tc.name, got, tc.diff)
		}
	}
}
