package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// Every fault the simulator injects ends as its error class (or as a
// success where the client copes), and the run completes with a summary.
func TestEverySimulatorFaultIsClassified(t *testing.T) {
	t.Parallel()
	url := startSim(t, llmsim.DefaultConfig())
	faults := []struct{ header, class string }{
		{"refuse", "cut"},
		{"reset;after=2", "cut"},
		{"early_close;after=2", "cut"},
		{"http_429;retry_after=3", "http_429"},
		{"http_5xx;status=503", "http_5xx"},
		{"error_event;after=2", "stream_error"},
		{"malformed;after=2", "decode"},
		{"wrong_content_type", "decode"},
		{"stall;after=2;duration=forever", "idle_timeout"},
		{"big_line;after=2", ""},
		{"slow_headers;duration=100ms", ""},
	}
	var list []string
	want := map[string]int64{}
	ok := int64(0)
	for _, f := range faults {
		list = append(list, "'"+f.header+"'")
		if f.class == "" {
			ok++
		} else {
			want[f.class]++
		}
	}
	script := writeScript(t, "faults.js", `
import llm from 'llm';
const faults = [`+strings.Join(list, ", ")+`];
export const options = { iterations: faults.length };
export default function () {
  llm.stream({ prompt: 'hi', max_tokens: 8, ignore_eos: true }, { headers: { 'X-Llmsim-Fault': faults[__ITER] } });
}
`)
	export := filepath.Join(t.TempDir(), "summary.json")
	// The stall lasts until the idle timeout ends it; the other streams
	// never pause that long, not even big_line's 2 MiB event on a busy
	// machine (the llm package's fault tests wait as long).
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--no-color", "--base-url", url, "--idle-timeout", "5s",
		"--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	got := map[string]int64{}
	for _, e := range s.Errors {
		got[e.Class] = e.Count
	}
	for class, n := range want {
		if got[class] != n {
			t.Errorf("class %s: %d, want %d (all: %v)", class, got[class], n, got)
		}
	}
	if s.Serving.OK != ok {
		t.Errorf("completed %d, want %d (big_line and slow_headers succeed)", s.Serving.OK, ok)
	}
	if !strings.Contains(stdout, "Retry-After 3s") {
		t.Errorf("the 429's Retry-After is not in the summary:\n%s", stdout)
	}
}
