package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/summary"
)

// Report.Write writes a result file's HTML page, made with the SLO given
// when there is one; an -o that cannot be written is refused before the
// result file is read, and a result file that cannot be read names it.
func TestReportWrite(t *testing.T) {
	dir := t.TempDir()
	in := writeResult(t, dir, "run-a", "h", 100)
	out := filepath.Join(dir, "a.html")
	slo := summary.SLO{TTFTP99: 1234}
	ignored, err := Report{In: in, Out: out, SLO: &slo}.Write()
	if err != nil || ignored {
		t.Fatalf("report of a run with an SLO: ignored %v, %v", ignored, err)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<html")) || !bytes.Contains(page, []byte("run-a")) || !bytes.Contains(page, []byte("1234")) {
		t.Errorf("page of %d bytes: want an HTML page naming run-a and the SLO's 1234 ms", len(page))
	}

	missing := filepath.Join(dir, "none.json")
	for _, tt := range []struct {
		name    string
		r       Report
		wantErr string
	}{
		{"unwritable -o", Report{In: missing, Out: filepath.Join(dir, "no", "dir", "a.html")}, "-o " + filepath.Join(dir, "no", "dir", "a.html") + ": cannot write there"},
		{"unreadable result", Report{In: missing, Out: out}, "none.json"},
	} {
		if _, err := tt.r.Write(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

// MergeNotes say what was merged and where it went, and warn of the
// missing instances of a run, as given or as stored.
func TestMergeNotes(t *testing.T) {
	merged := &summary.Summary{Meta: summary.Meta{RunID: "r1", Merged: []string{"a.json", "b.json"}, Instances: 3, MissingInstances: []int{2}},
		Serving: summary.Serving{Requests: 10, OK: 9, Failed: 1, DurationSeconds: 12.34}}
	set := Set{Results: []*summary.Summary{{}, {}}}
	got := strings.Join(set.MergeNotes(merged, "all.json", true), "\n")
	want := "2 results (a.json, b.json): 10 requests, 9 completed, 1 failed over 12.3 s, written to all.json\n" +
		"warning: run r1 had 3 instances; no result of instance 2 was stored in InfluxDB, so the merged figures are the others' only (missing_instances in the result)"
	if got != want {
		t.Errorf("notes:\n%s\nwant:\n%s", got, want)
	}
}
