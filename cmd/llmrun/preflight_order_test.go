package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// A run whose preflight fails says so first: the note that no model could
// be found for requests naming none (the same dead server) comes after
// the failure and its fix, marked as secondary. Without the preflight,
// the note is said before the run.
func TestPreflightFailureComesFirst(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "down.js", fmt.Sprintf(chatScript, 8))
	// Port 1 on loopback has no listener: the connection is refused.
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", "http://127.0.0.1:1", "-i", "1", script)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != exitcode.Preflight || !strings.HasPrefix(lines[0], "llmrun run: preflight: http://127.0.0.1:1") {
		t.Fatalf("exit %d, stderr's first line %q; want %d and the preflight's failure\n%s\n%s", code, lines[0], exitcode.Preflight, stdout, stderr)
	}
	note := strings.Index(stderr, "llmrun run: also: no --model given, and the server's model could not be found")
	if note < strings.Index(stderr, "  fix: ") || note > strings.Index(stderr, "no load was sent") {
		t.Errorf("the model note is not between the fix and the last line:\n%s", stderr)
	}

	code, stdout, stderr = cli(t, context.Background(), nil, "run", "-q", "--no-preflight", "--base-url", "http://127.0.0.1:1", "-i", "1", script)
	if code != exitcode.NoSuccess || !strings.HasPrefix(stderr, "llmrun run: no --model given, and the server's model could not be found") {
		t.Errorf("--no-preflight: exit %d, want %d with the model note first\n%s\n%s", code, exitcode.NoSuccess, stdout, stderr)
	}
}
