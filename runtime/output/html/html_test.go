package html

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// result is a small run's summary.
func result() *summary.Summary {
	return &summary.Summary{
		SchemaVersion: summary.SchemaVersion,
		Meta:          summary.Meta{Tool: "llmrun", Script: "chat.js"},
		Serving:       summary.Serving{DurationSeconds: 10, Requests: 10, OK: 10, SuccessRate: 1, RequestThroughput: 1},
		Latency: []summary.LatencyRow{{Metric: "llm_ttft", Label: "TTFT", Count: 10, Mean: 110, Min: 90, Max: 300,
			P: map[string]float64{"p50": 100, "p90": 150, "p95": 200, "p99": 280}}},
		Timeline: []summary.TimelinePoint{{T: 5, Seconds: 5, Requests: 5, OutputTokens: 500, ActiveVUs: 1, InFlight: 1, TTFTP50: 100, TTFTP99: 200}},
	}
}

func TestOutputWritesTheReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	o, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Describe(), "html "+path; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	if err := o.Start(context.Background(), output.Run{ID: "r1"}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Start left a file behind (%v)", err)
	}
	o.AddRequest(nil)
	rep := o.Finish(context.Background(), result())
	if want := (summary.OutputReport{Output: "html " + path, Written: 1}); rep.Output != want.Output || rep.Written != 1 || rep.Dropped != 0 || rep.Err != "" {
		t.Errorf("Finish reported %+v, want %+v", rep, want)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "llmrun report: chat.js", `data-chart="latency-ttft"`, `data-chart="time-throughput"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestStartKeepsAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte("last run's report"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, _ := New(path)
	if err := o.Start(context.Background(), output.Run{}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "last run's report" {
		t.Errorf("Start changed the file to %q", b)
	}
	if rep := o.Finish(context.Background(), result()); rep.Written != 1 || rep.Err != "" {
		t.Errorf("Finish reported %+v", rep)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("Finish did not replace the file")
	}
}

func TestUnwritableFile(t *testing.T) {
	dir := t.TempDir()
	for name, path := range map[string]string{"missing directory": filepath.Join(dir, "no", "such", "report.html"), "directory": dir} {
		t.Run(name, func(t *testing.T) {
			o, _ := New(path)
			err := o.Start(context.Background(), output.Run{})
			if err == nil || !strings.Contains(err.Error(), "cannot be written") {
				t.Errorf("Start: %v, want the file cannot be written", err)
			}
			rep := o.Finish(context.Background(), result())
			if rep.Written != 0 || !strings.Contains(rep.Err, path) {
				t.Errorf("Finish reported %+v, want an error naming %s", rep, path)
			}
		})
	}
}

func TestNewWantsAPath(t *testing.T) {
	if _, err := New(""); err == nil || !strings.Contains(err.Error(), "--out html=report.html") {
		t.Errorf("New(\"\"): %v, want an error with an example", err)
	}
}
