package runner

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// A result file that fails to be written leaves the file that was there
// as it was, and no file where there was none.
func TestFailedResultFileLeavesNoPartialFile(t *testing.T) {
	dir := t.TempDir()
	s := &summary.Summary{SchemaVersion: summary.SchemaVersion, Metrics: map[string]summary.MetricSummary{
		"bad": {Type: "gauge", Values: map[string]float64{"value": math.NaN()}}}}
	fresh, old := filepath.Join(dir, "new.json"), filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte("good"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, old} {
		if err := (resultFile{output.FileFlag{Flag: "--summary-export", Path: path}}).WriteSummary(t.Context(), s); err == nil ||
			!strings.Contains(err.Error(), "--summary-export "+path+": the result file was not written") {
			t.Errorf("%s: error %v", path, err)
		}
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a failed write left %s: %v", fresh, err)
	}
	if b, err := os.ReadFile(old); err != nil || string(b) != "good" {
		t.Errorf("a failed write changed %s: %q, %v", old, b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}
