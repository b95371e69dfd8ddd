package main

import (
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// TestSimHelpListsEveryEndpoint checks that `llmrun sim --help` names
// every endpoint the simulator serves (internal/llmsim's routes), and
// HTTP/2 cleartext.
func TestSimHelpListsEveryEndpoint(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := command(t, "sim", "--help")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	help := stdout + stderr // whichever stream help goes to
	for _, want := range []string{"/v1/chat/completions", "/v1/completions", "/v1/messages", "/api/chat", "/api/generate",
		"/generate_stream", "/v2/models/{model}[/versions/{v}]/generate_stream, .../generate", "/v1/embeddings",
		"/v1/rerank, /v2/rerank, /rerank", "/v1/models", "/health", "/stats", "h2c",
		"/v1/responses"} {
		if !strings.Contains(help, want) {
			t.Errorf("sim --help lacks %q:\n%s", want, help)
		}
	}
}

// TestOutHelpListsEveryOutput checks that run's --out help names every
// output, not only influxdb.
func TestOutHelpListsEveryOutput(t *testing.T) {
	t.Parallel()
	_, stdout, stderr := command(t, "run", "--help")
	help := stdout + stderr
	for _, want := range []string{"json=FILE", "jsonl=FILE", "csv=FILE", "html=FILE", "prometheus=HOST:PORT", "influxdb=URL"} {
		if !strings.Contains(help, want) {
			t.Errorf("run --help lacks %q in --out", want)
		}
	}
}
