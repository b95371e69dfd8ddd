package vllmbench

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/summary"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// detailedGolden is the result llmrun wrote before the per-request texts
// were spilled to a file (commit 1d759b7), for detailedRun: a file
// written now must be the same, byte for byte.
const detailedGolden = "testdata/detailed.golden.json"

// detailedOptions and detailedRun are a small --save-detailed benchmark:
// texts with every character JSON escapes (quotes, backslashes, control
// characters, <>&, U+2028, non-ASCII, invalid UTF-8), an empty one, a
// failed request, in an order their starts sort.
func detailedOptions() Options {
	o := Defaults()
	o.SaveDetailed = true
	o.NumPrompts = 4
	o.RequestRate = 20
	o.PercentileMetrics = PercentileMetrics
	o.MetricPercentiles = []float64{50, 99}
	return o
}

func detailedRequests() []Request {
	t0 := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	return []Request{
		{Start: t0, OK: true, TTFT: 12.5, TPOT: 3.25, E2E: 40, InputTokens: 8, OutputTokens: 4, ITL: []float64{3, 3.5, 3.25},
			Text: "plain \"quoted\" \\ back\nslash\ttab <b>&amp;</b> \u2028 é 漢字 \x01 \xff end", RequestedLen: 8},
		{Start: t0.Add(10 * time.Millisecond), OK: true, TTFT: 9, E2E: 9, InputTokens: 7, OutputTokens: 1, ITL: []float64{}, Text: ""},
		{Start: t0.Add(20 * time.Millisecond), OK: false, E2E: 5, InputTokens: 6, Error: "HTTP 503: <overloaded> \"retry\""},
		{Start: t0.Add(30 * time.Millisecond), OK: true, TTFT: 11, TPOT: 2, E2E: 17, InputTokens: 9, OutputTokens: 4, ITL: []float64{2, 2, 2},
			Text: string(bytes.Repeat([]byte("lorem ipsum "), 300))},
	}
}

func detailedRun(requests []Request) Run {
	return Run{Summary: &summary.Summary{Serving: summary.Serving{DurationSeconds: 0.05}}, Requests: requests,
		ModelID: "org/model", Date: time.Date(2026, 12, 5, 6, 0, 1, 0, time.UTC)}
}

// The --save-detailed result of detailedRun, its texts held in memory, is
// the golden file.
func TestDetailedResultIsTheGolden(t *testing.T) {
	b, err := NewResult(detailedOptions(), detailedRun(detailedRequests())).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(filepath.FromSlash(detailedGolden), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(filepath.FromSlash(detailedGolden))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("result differs from %s:\n%s\nwant\n%s", detailedGolden, b, want)
	}
}

// The same run with its texts spilled to a file, recorded in another
// order than their starts, writes the golden file byte for byte; the
// spill's file is gone from its directory from the start.
func TestSpilledTextsWriteTheGolden(t *testing.T) {
	dir := t.TempDir()
	spill, err := NewTextSpill(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer spill.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the spill left %v in its directory", entries)
	}
	c := NewCollector(detailedOptions())
	c.SpillTexts(spill)
	requests := detailedRequests()
	for _, i := range []int{2, 0, 3, 1} {
		c.add(requests[i])
	}
	kept := c.Requests()
	for _, r := range kept {
		if r.Text != "" {
			t.Fatalf("a request kept its text in memory: %.20q…", r.Text)
		}
	}
	run := detailedRun(kept)
	run.Texts = spill
	var b bytes.Buffer
	if err := NewResult(detailedOptions(), run).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.FromSlash(detailedGolden))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("result differs from %s:\n%s\nwant\n%s", detailedGolden, b.Bytes(), want)
	}
}

// A text that could not be written to the spill (a full disk) fails the
// result that needs it, saying so, rather than writing a wrong list.
func TestSpillWriteErrorFailsTheResult(t *testing.T) {
	spill, err := NewTextSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spill.Close() // every write now fails
	c := NewCollector(detailedOptions())
	c.SpillTexts(spill)
	for _, r := range detailedRequests() {
		c.add(r)
	}
	run := detailedRun(c.Requests())
	run.Texts = spill
	err = NewResult(detailedOptions(), run).WriteJSON(io.Discard)
	if err == nil || !strings.Contains(err.Error(), "generated_texts: --save-detailed: writing the generated texts beside the result") {
		t.Errorf("WriteJSON: %v, want the spill's write error", err)
	}
}

// A result whose texts are spilled is written as a stream: writing 16
// texts of 1 MiB allocates far less than one of them, where the whole
// document in memory would be 16 MiB.
func TestSpilledResultIsStreamed(t *testing.T) {
	spill, err := NewTextSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spill.Close()
	c := NewCollector(detailedOptions())
	c.SpillTexts(spill)
	start := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	text := strings.Repeat("a", 1<<20)
	for i := range 16 {
		c.add(Request{Start: start.Add(time.Duration(i) * time.Millisecond), OK: true, E2E: 1, OutputTokens: 1, Text: text})
	}
	run := detailedRun(c.Requests())
	run.Texts = spill
	result := NewResult(detailedOptions(), run)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var n countingWriter
	err = result.WriteJSON(&n)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n < 16<<20 {
		t.Fatalf("wrote %d bytes, want the 16 texts of 1 MiB", n)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("writing %d MiB allocated %d KiB", n>>20, allocated>>10)
	if allocated > 512<<10 {
		t.Errorf("writing the result allocated %d KiB, want at most 512 KiB (a stream, not the document)", allocated>>10)
	}
}

// countingWriter counts the bytes written to it, and keeps none.
type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}
