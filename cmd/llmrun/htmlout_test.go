package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// --out html=FILE writes the report at the end of the run, with its charts
// and the run's figures; --out json=FILE writes the result file as
// --summary-export does.
func TestRunWritesHTMLAndJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	page, result := filepath.Join(dir, "report.html"), filepath.Join(dir, "result.json")
	script := writeScript(t, "chat.js", fmt.Sprintf(chatScript, 4))
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-u", "2", "-i", "10",
		"--out", "html="+page, "--out", "json="+result, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-chart="latency-ttft"`, `data-chart="time-throughput"`, "chat.js"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report has no %s", want)
		}
	}
	// The distributions are drawn from the result's histograms: many
	// percentiles, not only the summary's four.
	ttft := string(b)[strings.Index(string(b), `data-chart="latency-ttft"`):]
	ttft = ttft[:strings.Index(ttft, "</svg>")]
	if n := strings.Count(ttft, "<circle"); n < 20 {
		t.Errorf("the TTFT distribution has %d points, want one per percentile drawn (20 or more)", n)
	}
	if s := readSummary(t, result); s.Serving.OK != 10 || len(s.Timeline) == 0 || len(s.Outputs) != 1 || s.Outputs[0].Written != 1 {
		t.Errorf("result: ok %d, %d timeline points, outputs %+v", s.Serving.OK, len(s.Timeline), s.Outputs)
	}
	if code, _, stderr := cli(t, context.Background(), nil, "run", "-q", "-i", "1", "--out", "json="+filepath.Join(dir, "no", "such", "dir.json"), script); code != exitcode.Error || !strings.Contains(stderr, "cannot write there") {
		t.Errorf("an unwritable result file: exit %d, %s", code, stderr)
	}
}
