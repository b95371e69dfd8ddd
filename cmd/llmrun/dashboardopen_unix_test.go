//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/browsertest"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// --dashboard-open runs $BROWSER with the page's address once it is
// served (the test's browser writes it to a pipe the test reads, then
// loads the page); a browser that cannot be run is a warning, and the run
// passes.
func TestDashboardOpenRunsTheBrowser(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "opened")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s\\n' \"$1\" > "+fifo+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, "short.js", shortRunScript)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type ended struct {
		code           int
		stdout, stderr string
	}
	done := make(chan ended, 1)
	go func() {
		code, stdout, stderr := cli(t, ctx, map[string]string{"BROWSER": browser}, "run", "--no-preflight", "--no-color", "-q",
			"--dashboard=127.0.0.1:0", "--dashboard-open", "--dashboard-linger=10m", script)
		done <- ended{code, stdout, stderr}
	}()
	opened := make(chan string, 1)
	go func() {
		// Opening the pipe waits for the browser to write to it.
		b, _ := os.ReadFile(fifo)
		opened <- strings.TrimSpace(string(b))
	}()
	var url string
	select {
	case url = <-opened:
	case e := <-done:
		t.Fatalf("the run ended (exit %d) before the browser was run:\n%s\n%s", e.code, e.stdout, e.stderr)
	case <-ctx.Done():
		t.Fatal("the browser was not run within 2 minutes")
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(url) {
		t.Errorf("the browser was given %q, want the page's address", url)
	}
	bin := browsertest.Chromium(t)
	if dom := string(browsertest.Run(t, bin, url, "--dump-dom")); !strings.Contains(dom, `<span id="status">`) {
		t.Errorf("the address given to the browser does not serve the dashboard:\n%s", dom)
	}
	cancel()
	if e := <-done; e.code != exitcode.OK || strings.Contains(e.stderr, "warning") {
		t.Errorf("the run that opened its page: exit %d, stderr %q; want 0, no warning", e.code, e.stderr)
	}

	code, stdout, stderr := cli(t, context.Background(), map[string]string{"BROWSER": filepath.Join(dir, "none-such")}, "run", "--no-preflight", "--no-color", "-q",
		"--dashboard=127.0.0.1:0", "--dashboard-open", script)
	if code != exitcode.OK || !strings.Contains(stderr, "llmrun run: warning: --dashboard-open: opening http://127.0.0.1:") || !strings.Contains(stderr, "none-such") {
		t.Errorf("a browser that cannot run: exit %d\n%s\n%s\nwant 0 and a warning naming it", code, stdout, stderr)
	}
}
