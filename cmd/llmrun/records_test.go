package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// A run with --out jsonl and --out csv writes one line per request that
// ended, as many as the summary counts, and reports them all written.
func TestRunWritesRecordsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonlPath, csvPath, export := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.csv"), filepath.Join(dir, "summary.json")
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 8))
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-d", "2s", "-u", "2",
		"--out", "jsonl="+jsonlPath, "--out", "csv="+csvPath, "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	want := s.Serving.OK + s.Serving.Failed
	if want == 0 {
		t.Fatalf("no request ended: %+v", s.Serving)
	}

	b, err := os.ReadFile(jsonlPath)
	if err != nil {
		t.Fatal(err)
	}
	var lines int64
	for l := range bytes.Lines(b) {
		var rec struct {
			Scenario string `json:"scenario"`
			OK       bool   `json:"ok"`
		}
		if err := json.Unmarshal(l, &rec); err != nil || rec.Scenario == "" {
			t.Fatalf("line %d %s: %v", lines+1, l, err)
		}
		lines++
	}
	if lines != want {
		t.Errorf("%d JSONL lines, want %d (%d completed + %d failed)", lines, want, s.Serving.OK, s.Serving.Failed)
	}

	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) != want+1 || rows[0][0] != "time" {
		t.Errorf("%d CSV rows, want a header and %d", len(rows), want)
	}

	if len(s.Outputs) != 2 {
		t.Fatalf("outputs %+v", s.Outputs)
	}
	for i, name := range []string{"jsonl " + jsonlPath, "csv " + csvPath} {
		if o := s.Outputs[i]; o.Output != name || o.Written != want || o.Dropped != 0 || o.Err != "" {
			t.Errorf("output report %+v, want %s with %d written", o, name, want)
		}
	}
}
