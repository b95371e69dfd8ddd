package results

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/output/logblock"
	"github.com/llmrun/llmrun/runtime/summary"
)

// block is doc written as the result block of instance of run runID, in
// lines.
func block(t *testing.T, runID, instance string, doc []byte) []string {
	t.Helper()
	var b bytes.Buffer
	if err := logblock.Write(&b, runID, instance, doc); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// logOf writes a log holding doc as the result blocks of instances of
// one run, after a line of another process.
func logOf(t *testing.T, doc []byte, instances ...string) []byte {
	t.Helper()
	log := "level=INFO msg=starting\n"
	for _, inst := range instances {
		log += strings.Join(block(t, "3f9c2a7e51d04b86", inst, doc), "\n") + "\n"
	}
	return []byte(log)
}

// writeFile writes b to a file name in a temporary directory and returns
// its path.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A log that lost the begin line of its block is refused naming the
// block and the line, not as a result file that is not JSON.
func TestMergeLogCutBeforeItsBeginLine(t *testing.T) {
	t.Parallel()
	lines := strings.SplitAfter(string(logOf(t, []byte(`{"schema_version":3}`), "2")), "\n")
	log := writeFile(t, "cut.log", []byte(strings.Join(lines[2:], "")))
	_, err := Source{Inputs: []string{log}}.Read(context.Background())
	want := log + ": run 3f9c2a7e51d04b86 instance 2: line 1: data line 1 without its begin line: the log lost the block's start"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reading a log cut before its begin line: %v, want %q", err, want)
	}
}

// The blocks of the logs one merge reads may not unpack to more than
// maxUnpacked together: the block past it is refused before it is
// unpacked, naming the cap. Not parallel: it lowers the cap.
func TestMergeRefusesBlocksBeyondItsBudget(t *testing.T) {
	doc := resultDoc(t, "3f9c2a7e51d04b86", 10)
	defer func(was int64) { maxUnpacked = was }(maxUnpacked)
	maxUnpacked = int64(len(doc)) * 5 / 2
	log := writeFile(t, "pods.log", logOf(t, doc, "0", "1", "2"))
	// The log's first line, then two blocks of as many lines as doc's.
	begin := 1 + 2*len(block(t, "3f9c2a7e51d04b86", "0", doc)) + 1
	_, err := Source{Inputs: []string{log}}.Read(context.Background())
	want := fmt.Sprintf("%s: run 3f9c2a7e51d04b86 instance 2 (begun at line %d): more than %d bytes in all, the most llmrun takes of the result files one merge unpacks", log, begin, maxUnpacked)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reading blocks beyond the budget: %v, want %q", err, want)
	}
}

// A merge that fails names the result at fault by its name, not its
// position.
func TestMergeNamesTheResults(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	result := func(runID, hash string) *summary.Summary {
		return &summary.Summary{SchemaVersion: summary.SchemaVersion, Meta: summary.Meta{RunID: runID, ScriptSHA256: hash, Start: start, End: start.Add(time.Minute)}}
	}
	for _, tc := range []struct {
		name string
		set  Set
		want string
	}{
		{"another script", Set{[]*summary.Summary{result("a", "abc"), result("c", "def")}, []string{"a.json", "other.json"}},
			"other.json ran a script of sha256 def, a.json one of sha256 abc: only results of the same script merge"},
		{"a run twice", Set{[]*summary.Summary{result("a", "abc"), result("b", "abc"), result("a", "abc")}, []string{"a.json", "b.json", "dup.json"}},
			"dup.json: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.set.Merge(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("merge: %v, want an error starting %q", err, tc.want)
			}
		})
	}
}

func TestInstanceList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{2}, "instance 2"},
		{[]int{0, 3}, "instances 0, 3"},
	} {
		if got := InstanceList(tc.in); got != tc.want {
			t.Errorf("InstanceList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
