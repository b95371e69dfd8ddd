package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// TestFirstSignalStopsAWaitForAFIFOWriter loads a dataset from a named
// pipe nobody writes to, from a script's init code (run) and from
// --dataset-path (bench): the first SIGINT ends the wait at once, exit 105
// with the interruption named, not the backstop a minute later.
func TestFirstSignalStopsAWaitForAFIFOWriter(t *testing.T) {
	t.Parallel()
	bin := llmrunBinary(t)
	for _, tc := range []struct {
		name string
		args func(fifo string) []string
		want string
	}{
		{"run", func(fifo string) []string {
			return []string{"run", "--no-color", writeScript(t, "fifo.js", `
import { dataset } from 'data';
const prompts = dataset(`+"`"+fifo+"`"+`, { format: 'jsonl' });
export default function () {}
`)}
		}, "interrupted before the test started"},
		{"bench", func(fifo string) []string {
			return []string{"bench", "--dataset-name", "sharegpt", "--dataset-path", fifo, "--num-prompts", "1"}
		}, "interrupted while waiting for a writer on the named pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fifo := filepath.Join(t.TempDir(), "prompts")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args(fifo)...)
			cmd.Env = append(os.Environ(), "NO_COLOR=1", asMainEnv+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for !waitsOnFIFO(cmd.Process.Pid, fifo) {
				if !wait.Sleep(ctx, 10*time.Millisecond) {
					t.Fatalf("llmrun never opened %s:\n%s", fifo, stderr.String())
				}
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitcode.Interrupted {
				t.Fatalf("%v, want exit %d\nstderr:\n%s", err, exitcode.Interrupted, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "after the signal: exiting at once") {
				t.Errorf("stderr does not say the wait was interrupted (%q), or the backstop ended it:\n%s", tc.want, stderr.String())
			}
		})
	}
}

// waitsOnFIFO tells whether the process pid has reached the named pipe
// fifo: a thread of it waits in open(2) for a writer, or it holds the
// pipe open.
func waitsOnFIFO(pid int, fifo string) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	tasks, _ := filepath.Glob(proc + "/task/*/wchan")
	for _, task := range tasks {
		if b, err := os.ReadFile(task); err == nil && string(b) == "wait_for_partner" {
			return true
		}
	}
	fds, _ := filepath.Glob(proc + "/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == fifo {
			return true
		}
	}
	return false
}
