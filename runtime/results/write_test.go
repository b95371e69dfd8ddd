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

// The page of another tool's run is titled by the tool, model and file,
// and shows what that file holds: no seed it never had, vLLM's date as
// its local time (not UTC), and no ITL count SGLang did not save (its
// gaps are not its requests).
func TestReportOfAnotherToolsFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		in         string
		want, lack []string
	}{
		{filepath.Join(foreignDir, "vllm-detailed.json"),
			[]string{"<h1>vLLM bench serve result: sim-model (vllm-detailed.json)</h1>",
				"<dt>start</dt><dd>2026-12-05 14:00:00 (vLLM bench serve&#39;s local time: it saves no zone)</dd>",
				`<tr><td>ITL</td><td class="num">15956</td>`},
			[]string{"<dt>seed</dt>", "UTC", "<dt>script</dt>", "llmrun report: -"}},
		{filepath.Join(foreignDir, "sglang.jsonl#1"),
			[]string{"<h1>SGLang bench_serving result: sglang.jsonl#1</h1>",
				`<tr><td>ITL</td><td class="num">-</td><td class="num">16.0</td>`,
				`<tr><td>TTFT</td><td class="num">160</td>`,
				"160 ok (failures not saved)", "p50 14.7 ms, p99 31.0 ms"},
			[]string{"<dt>seed</dt>", "<dt>start</dt>", "llmrun report: -", "0 (160 ok, 0 failed)", "max - ms"}},
	} {
		out := filepath.Join(dir, filepath.Base(ReportName(tc.in)))
		if _, err := (Report{In: tc.in, Out: out}).Write(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		for _, want := range tc.want {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", tc.in, want)
			}
		}
		for _, lack := range tc.lack {
			if strings.Contains(page, lack) {
				t.Errorf("%s: the page has %q", tc.in, lack)
			}
		}
	}
}
