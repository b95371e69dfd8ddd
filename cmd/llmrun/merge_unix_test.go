//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// merge reads a log from a named pipe, as <(kubectl logs ...) gives it.
func TestMergeReadsANamedPipe(t *testing.T) {
	t.Parallel()
	script := writeScript(t, "piped.js", fmt.Sprintf(chatScript, 4))
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "-i", "3", "--out", "json=-", script)
	if code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	pipe := filepath.Join(t.TempDir(), "logs")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(pipe, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(stdout)
			f.Close()
		}
		written <- err
	}()
	merged, err := readMerged(t, pipe)
	if err != nil {
		t.Fatalf("merging from a named pipe: %v", err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if got := readSummary(t, merged); got.Serving.Requests != 3 {
		t.Errorf("merged from a named pipe: %d requests, want 3", got.Serving.Requests)
	}
}
