package results

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/runtime/output/logblock"
	"github.com/llmrun/llmrun/runtime/summary"
)

// resultDoc is the result file of a run of run id runID whose timeline
// has points points.
func resultDoc(t *testing.T, runID string, points int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := summarytest.LongRun(t, runID, points).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A log's result blocks are parsed straight from their gzip streams: six
// blocks of a long run's result file cost about what they parse to, not
// their unpacked bytes as well. Allocations are counted (TotalAlloc)
// rather than the heap sampled, as they are the same at every run:
// reading the six blocks allocates less than one and a half times the
// result files' bytes, where unpacking each whole allocated its bytes and
// parsing it some three times as many again (4.5 times in all). Not parallel: it
// counts the process's allocations.
func TestReadInputsParsesBlocksFromTheirStreams(t *testing.T) {
	var log bytes.Buffer
	var docBytes int
	for i := range 6 {
		doc := resultDoc(t, fmt.Sprintf("run-%d", i), 20_000)
		docBytes += len(doc)
		if err := logblock.Write(&log, fmt.Sprintf("run-%d", i), logblock.NoInstance, doc); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "pods.log")
	if err := os.WriteFile(path, log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	results, labels, err := readInputs([]string{path}, nil, capped.NewBudget(1<<30, "the result files one merge unpacks"))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 6 || labels[5] != path+" (run run-5)" || len(results[5].Timeline) != 20_000 || results[5].Timeline[19_999].T != 20_000 {
		t.Fatalf("read %d results (%v), want the six blocks' whole", len(results), labels)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("six result files of %d bytes in all: reading them allocated %d bytes (%.2f times), %d bytes in use after", docBytes, allocated, float64(allocated)/float64(docBytes), after.HeapInuse)
	if allocated > uint64(docBytes)*3/2 {
		t.Errorf("reading six result files of %d bytes in all allocated %d bytes: they were unpacked whole", docBytes, allocated)
	}
}

// A result block is read as the result file Parse reads, and a block whose
// checksum fails is refused whatever its parse made of it.
func TestReadInputsChecksEachBlock(t *testing.T) {
	doc := resultDoc(t, "r1", 10)
	want, err := summary.Parse("want", doc)
	if err != nil {
		t.Fatal(err)
	}
	lines := block(t, "r1", "0", doc)
	otherSum := strings.Fields(block(t, "r1", "0", []byte("another result"))[0])[4]
	forged := append([]string{strings.Replace(lines[0], strings.Fields(lines[0])[4], otherSum, 1)}, lines[1:]...)
	tests := []struct {
		name    string
		lines   []string
		wantErr string
	}{
		{"whole", lines, ""},
		{"another file's checksum", forged, "standard input: run r1 instance 0 (begun at line 1): the result's SHA-256 is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.NewReader(strings.Join(tt.lines, "\n") + "\n")
			results, _, err := readInputs([]string{stdinName}, in, nil)
			switch {
			case tt.wantErr == "" && (err != nil || len(results) != 1 || !summarytest.SameFile(t, results[0], want)):
				t.Errorf("got %d results, %v; want the block's result file", len(results), err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || results != nil):
				t.Errorf("got %d results, %v; want none and an error saying %q", len(results), err, tt.wantErr)
			}
		})
	}
}

// merge - reads standard input as a stream: each block is parsed when
// its end line comes, so that a bad second block is an error while the
// log is still being written, and no block waits for the end of the log.
func TestReadInputsStreamsStandardInput(t *testing.T) {
	t.Parallel()
	// Two blocks, the second not a result file; the log goes on.
	var log bytes.Buffer
	if err := logblock.Write(&log, "3f9c2a7e51d04b86", "0", resultDoc(t, "3f9c2a7e51d04b86", 2)); err != nil {
		t.Fatal(err)
	}
	if err := logblock.Write(&log, "3f9c2a7e51d04b86", "1", []byte("not a result")); err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	defer w.Close()
	go w.Write(log.Bytes())
	done := make(chan error, 1)
	go func() {
		_, _, err := readInputs([]string{stdinName}, r, capped.NewBudget(1<<30, "the result files one merge unpacks"))
		done <- err
	}()
	select {
	case err := <-done:
		want := "standard input (run 3f9c2a7e51d04b86 instance 1):1:2: not valid JSON"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	case <-time.After(time.Minute):
		t.Fatal("merge - waited for the end of standard input before parsing its blocks")
	}
}

// The start of an input merge reads is kept as a possible result file
// only while it may be one: a JSON object, up to a result file's bound.
// A log's lines are not kept.
func TestReadInputsKeepsOnlyWhatMayBeAResultFile(t *testing.T) {
	t.Parallel()
	lines := strings.Repeat(strings.Repeat("x", 99)+"\n", 10_000)
	tests := []struct {
		name     string
		input    string
		max      int64
		kept     int
		overflow bool
	}{
		{"a log", "level=INFO msg=start\n" + lines, 1 << 20, notJSONKept, false},
		{"a log after blank lines", "\n\n  " + lines, 1 << 20, notJSONKept, false},
		{"a result file", "\n {\"schema_version\":3}\n", 1 << 20, 23, false},
		{"a JSON object beyond a result file's bound", "{" + lines, 1 << 10, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHeadKeeper(strings.NewReader(tt.input), 0, tt.max)
			if _, err := io.Copy(io.Discard, h); err != nil {
				t.Fatal(err)
			}
			if len(h.buf) != tt.kept || h.overflow != tt.overflow || (tt.kept > 0 && !strings.HasPrefix(tt.input, string(h.buf))) {
				t.Errorf("kept %d bytes (overflow %v), want the input's first %d (overflow %v)", len(h.buf), h.overflow, tt.kept, tt.overflow)
			}
		})
	}
}
