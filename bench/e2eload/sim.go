package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/bench/internal/simproc"
)

// startSimulator starts "llmrun sim" on addr (pinned by pin) and returns
// once it has printed the address it serves on; a simulator that cannot
// bind addr exits, and startSimulator returns its error with what it
// printed on stderr.
func startSimulator(bin, addr string, pin []string, args []string) (*simproc.Proc, error) {
	argv := append(append(append([]string{}, pin...), bin, "sim", "--addr", addr), args...)
	var stderr bytes.Buffer
	sim, err := simproc.Start(argv, io.Discard, &stderr)
	if err != nil {
		return nil, fmt.Errorf("%w, on %s: %s", err, addr, strings.TrimSpace(stderr.String()))
	}
	return sim, nil
}

// processCPU reads a process's user+system CPU time so far from /proc (0
// where there is no /proc).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which ends with ')': utime and
	// stime are the 12th and 13th of them, in clock ticks (100 Hz).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}
