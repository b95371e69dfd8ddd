package runner

import (
	"math"
	"net"
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
		if err := (resultFile{FileFlag: output.FileFlag{Flag: "--summary-export", Path: path}}).WriteSummary(t.Context(), s); err == nil ||
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

// An output that cannot start stops the run before it begins, and those
// already started are finished: the listener of the first --out
// prometheus closes when the second cannot listen.
func TestFailedStartFinishesTheStartedOutputs(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	outs, err := newOutputs([]string{"prometheus=127.0.0.1:0", "prometheus=" + busy.Addr().String()}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := outs.start(t.Context(), output.Run{}); err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Fatalf("start: %v, want the busy address named", err)
	}
	first := strings.TrimSuffix(strings.TrimPrefix(outs[0].Describe(), "prometheus http://"), "/metrics")
	if c, err := net.Dial("tcp", first); err == nil {
		c.Close()
		t.Errorf("the first output still listens on %s after the second failed to start", first)
	}
}

func TestWritesFile(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"json", "r.json", true},
		{"json", StdoutResult, false},
		{"jsonl", "r.jsonl", true},
		{"csv", "r.csv", true},
		{"html", "r.html", true},
		{"influxdb", "http://127.0.0.1:8086", false},
		{"prometheus", "127.0.0.1:9090", false},
	} {
		if got := WritesFile(tc.name, tc.value); got != tc.want {
			t.Errorf("WritesFile(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}
