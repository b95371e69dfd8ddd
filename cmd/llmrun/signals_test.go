package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// llmrunBinary is the program the tests that send signals run as
// llmrun: this test binary, which TestMain turns into llmrun when
// $LLMRUN_TEST_AS_MAIN is set (see asMainEnv), so that no go build is
// needed.
func llmrunBinary(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	return bin
}

// signaled is a run of llmrun that is sent sig once its stderr
// shows ready.
type signaled struct {
	code           int
	stdout, stderr string
}

// runAndSignal runs bin as llmrun with args, sends it sig once its stderr shows
// ready, and returns how it ended. With brokenStdout, its stdout is a
// pipe nobody reads any more (a closed terminal, a "| tee" gone).
func runAndSignal(t *testing.T, bin string, sig syscall.Signal, ready string, brokenStdout bool, args ...string) signaled {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", asMainEnv+"=1")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if brokenStdout {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = w
		defer w.Close()
		r.Close()
	}
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		stderr strings.Builder
		wg     sync.WaitGroup
	)
	seen := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderrPipe)
		once := sync.Once{}
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), ready) {
				once.Do(func() { close(seen) })
			}
		}
		_, _ = io.Copy(io.Discard, stderrPipe)
	}()
	select {
	case <-seen:
	case <-ctx.Done():
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("sending %v: %v", sig, err)
	}
	wg.Wait()
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("llmrun did not end within 2 minutes of %v:\n%s", sig, stderr.String())
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return signaled{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// The first signal stops llmrun within bounded time, exit 105, with what
// it measured; llmrun (this test binary run as main) receives real
// signals. Each case is a process of its own, so they run in parallel.
func TestFirstSignal(t *testing.T) {
	t.Parallel()
	bin := llmrunBinary(t)
	for _, tc := range []struct {
		name  string
		check func(*testing.T, string)
	}{
		{"stops the run with its results", stopsTheRunWithItsResults},
		{"with a broken stdout still writes the results", brokenStdoutStillWritesTheResults},
		{"stops endless init code", stopsEndlessInitCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t, bin)
		})
	}
}

// The first SIGHUP (a closed terminal), SIGTERM or SIGINT stops a run
// against the simulator: exit 105, with its summary printed and its
// result file written.
func stopsTheRunWithItsResults(t *testing.T, bin string) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			script := writeScript(t, "long.js", `
import llm from 'llm';
export const options = { vus: 2, duration: '10m' };
export default function () {
  console.log('iteration running');
  llm.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 });
}
`)
			export := filepath.Join(t.TempDir(), "result.json")
			r := runAndSignal(t, bin, sig, "iteration running", false, "run", "--no-color", "--summary-export", export, script)
			if r.code != exitcode.Interrupted {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", r.code, exitcode.Interrupted, r.stderr)
			}
			if !strings.Contains(r.stderr, "stopping: ") || !strings.Contains(r.stdout, "requests ...") {
				t.Errorf("want the stop announced on stderr and the summary on stdout\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			data, err := os.ReadFile(export)
			if err != nil {
				t.Fatalf("--summary-export not written: %v", err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Errorf("--summary-export is not JSON: %v", err)
			}
		})
	}
}

// After the first signal, a stdout nobody reads any more does not kill
// llmrun with SIGPIPE when it prints the summary: the result file is
// still written.
func brokenStdoutStillWritesTheResults(t *testing.T, bin string) {
	script := writeScript(t, "long.js", `
import llm from 'llm';
export const options = { vus: 1, duration: '10m' };
export default function () {
  console.log('iteration running');
  llm.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 });
}
`)
	export := filepath.Join(t.TempDir(), "result.json")
	r := runAndSignal(t, bin, syscall.SIGHUP, "iteration running", true, "run", "-q", "--no-color", "--summary-export", export, script)
	if r.code != exitcode.Interrupted {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", r.code, exitcode.Interrupted, r.stderr)
	}
	data, err := os.ReadFile(export)
	if err != nil {
		t.Fatalf("--summary-export not written: %v", err)
	}
	if !json.Valid(data) {
		t.Error("--summary-export is not JSON")
	}
}

// The first SIGTERM stops init code that never ends, before the run.
func stopsEndlessInitCode(t *testing.T, bin string) {
	script := writeScript(t, "spin.js", `
console.log('init spinning');
for (;;) {}
export default function () {}
`)
	r := runAndSignal(t, bin, syscall.SIGTERM, "init spinning", false, "run", "--no-color", script)
	if r.code != exitcode.Interrupted {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", r.code, exitcode.Interrupted, r.stderr)
	}
	if !strings.Contains(r.stderr, "interrupted before the test started") {
		t.Errorf("stderr does not say the run was interrupted before it started:\n%s", r.stderr)
	}
}
