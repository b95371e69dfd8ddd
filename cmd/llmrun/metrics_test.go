package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// customMetricRows returns the first cells of the rows of the console
// summary's "custom metrics" table, nil when it has none.
func customMetricRows(stdout string) []string {
	_, section, ok := strings.Cut(stdout, "█ custom metrics\n")
	if !ok {
		return nil
	}
	section, _, _ = strings.Cut(section, "█ ")
	var names []string
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "│") {
			continue
		}
		first, _, _ := strings.Cut(strings.Trim(line, "│"), "│")
		names = append(names, strings.TrimSpace(first))
	}
	return names
}

// customScript is an arrival-rate run with warmup, which records the
// engine's warmup, lag and dropped-iteration metrics, and a custom
// metric of its own; %s is the rest of the script.
const customScript = `
import llm from 'llm';
import { sleep, textSummary } from 'llmrun';
import { Counter } from 'metrics';
const answers = new Counter('answers');
export const options = {
  scenarios: {
    paced: { executor: 'constant-arrival-rate', rate: 20, duration: '1s', preAllocatedVUs: 1, maxVUs: 1, warmup: 1 },
  },
};
export default function () {
  llm.stream({ prompt: 'hi', max_tokens: 2 });
  answers.add(1);
  sleep(0.2); // longer than the 50 ms between arrivals: the one VU drops some
}
%s`

// Every metric llmrun registers itself is built-in, whatever its name:
// the console summary lists the script's own metric alone under "custom
// metrics", and so does textSummary in handleSummary, which renders the
// summary from its JSON.
func TestOnlyTheScriptsMetricsAreCustom(t *testing.T) {
	tests := []struct{ name, handleSummary string }{
		{"console", ""},
		{"textSummary", "export function handleSummary(data) { return { stdout: textSummary(data) }; }"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script := writeScript(t, "custom.js", fmt.Sprintf(customScript, tc.handleSummary))
			export := filepath.Join(t.TempDir(), "result.json")
			code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--seed", "7", "--summary-export", export, script)
			if code != exitcode.OK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			s := readSummary(t, export)
			for _, builtin := range []string{"warmup_iterations", "warmup_requests", "iteration_lag", "dropped_iterations", "iterations", "llm_requests"} {
				if _, ok := s.Metrics[builtin]; !ok {
					t.Errorf("the run recorded no %s; the test needs it", builtin)
				}
			}
			if got, want := customMetricRows(stdout), []string{"metric", "answers"}; !slices.Equal(got, want) {
				t.Errorf("custom metrics table rows %q, want %q\n%s", got, want, stdout)
			}
			if got, want := s.CustomMetrics(), []string{"answers"}; !slices.Equal(got, want) {
				t.Errorf("the result file's custom metrics are %q, want %q", got, want)
			}
		})
	}
}
