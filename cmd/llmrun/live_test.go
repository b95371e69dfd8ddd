package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// liveScript runs two scenarios one after the other against the built-in
// simulator: a for 2 s, then b from 1 s for about 3 s, which logs one line
// in its first iteration.
const liveScript = `
import llm from 'llm';
import { sleep } from 'llmrun';
export const options = {
  scenarios: {
    a: { executor: 'constant-vus', vus: 2, duration: '2s', gracefulStop: '5s' },
    b: { executor: 'per-vu-iterations', vus: 1, iterations: 10, startTime: '1s', exec: 'slow' },
  },
};
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  sleep(0.1);
}
export function slow() {
  if (__ITER === 0) console.log('marker-line');
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  sleep(0.3);
}
`

// writeLiveScript writes liveScript to a file of its own.
func writeLiveScript(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "live.js")
	if err := os.WriteFile(path, []byte(liveScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runLive runs llmrun (this test binary as main) with args, its stdout and
// stderr given, and returns its exit code.
func runLive(t *testing.T, stdout, stderr *os.File, args ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, llmrunBinary(t), args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", asMainEnv+"=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatal("llmrun did not end within 2 minutes")
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// tempOutput is a file that takes a process's output, and its text.
func tempOutput(t *testing.T, name string) (*os.File, func() string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, func() string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// Without a terminal (a CI log), the live view prints one plain line per
// running scenario every --progress-interval (its figures over the last
// second at least), and a last line for each
// scenario as it ends; no escape sequence. -q prints none of it.
func TestLiveViewWithoutATerminal(t *testing.T) {
	t.Parallel()
	script := writeLiveScript(t)
	stdout, _ := tempOutput(t, "stdout")
	stderr, readStderr := tempOutput(t, "stderr")
	if code := runLive(t, stdout, stderr, "run", "--progress-interval", "200ms", script); code != 0 {
		t.Fatalf("exit %d:\n%s", code, readStderr())
	}
	out := readStderr()
	for _, want := range []string{"] a: running", "] b: running", "] a: done 100%", "] b: done 100%", "(last 1s)", "(whole run)", "msg=marker-line"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr has no %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "] a: done") != 1 || strings.Count(out, "] b: done") != 1 {
		t.Errorf("want one last line per scenario:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("stderr is not a terminal, yet has escape sequences:\n%q", out)
	}

	quietOut, _ := tempOutput(t, "quiet-stdout")
	quietErr, readQuiet := tempOutput(t, "quiet-stderr")
	if code := runLive(t, quietOut, quietErr, "run", "-q", "--progress-interval", "200ms", script); code != 0 {
		t.Fatalf("-q: exit %d:\n%s", code, readQuiet())
	}
	if q := readQuiet(); strings.Contains(q, "running") || strings.Contains(q, "] a:") {
		t.Errorf("-q printed the live view:\n%s", q)
	}
}

func TestProgressIntervalMustBePositive(t *testing.T) {
	t.Parallel()
	stdout, _ := tempOutput(t, "stdout")
	stderr, readStderr := tempOutput(t, "stderr")
	if code := runLive(t, stdout, stderr, "run", "--progress-interval", "0s", writeLiveScript(t)); code != exitcode.Usage {
		t.Errorf("exit %d, want %d (usage)", code, exitcode.Usage)
	}
	if out := readStderr(); !strings.Contains(out, "--progress-interval must be positive") {
		t.Errorf("stderr does not say what is wrong:\n%s", out)
	}
}
