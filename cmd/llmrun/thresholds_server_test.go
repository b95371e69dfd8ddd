package main

import (
	"context"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// A run with a threshold on a server figure loads and runs against the
// simulator; the summary shows it with the client's.
func TestServerThresholdLoadsAndShows(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "server.js", `import llm from 'llm';
export const options = { iterations: 2, thresholds: {
  server_kv_cache_usage: [{ threshold: 'max<=1', noSamples: 'pass' }],
  llm_failed: ['rate<0.5'],
} };
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`)
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "--no-color", script)
	if code != exitcode.OK || !strings.Contains(stdout, "server_kv_cache_usage") || !strings.Contains(stdout, "max<=1") {
		t.Errorf("exit %d, want 0 and the threshold in the summary\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
