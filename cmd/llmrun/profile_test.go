package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfiles: LLMRUN_CPUPROFILE, LLMRUN_TRACE and LLMRUN_MEMPROFILE
// write a CPU profile and a heap profile (gzip-compressed protocol
// buffers) and an execution trace; a path that
// cannot be created is named on stderr and profiles nothing.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"LLMRUN_CPUPROFILE": filepath.Join(dir, "cpu.pprof"),
		"LLMRUN_TRACE":      filepath.Join(dir, "trace.out"),
		"LLMRUN_MEMPROFILE": filepath.Join(dir, "heap.pprof"),
	}
	var stderr bytes.Buffer
	stop := startProfiles(func(k string) string { return env[k] }, &stderr)
	stop()
	if stderr.Len() > 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	for name, prefix := range map[string]string{"LLMRUN_CPUPROFILE": "\x1f\x8b", "LLMRUN_TRACE": "go 1.", "LLMRUN_MEMPROFILE": "\x1f\x8b"} {
		b, err := os.ReadFile(env[name])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(prefix)) {
			t.Errorf("%s: file starts with %q, want %q", name, b[:min(len(b), 8)], prefix)
		}
	}

	bad := filepath.Join(dir, "missing", "cpu.pprof")
	stderr.Reset()
	startProfiles(func(k string) string {
		if k == "LLMRUN_CPUPROFILE" {
			return bad
		}
		return ""
	}, &stderr)()
	if got := stderr.String(); !strings.Contains(got, "LLMRUN_CPUPROFILE") || !strings.Contains(got, bad) {
		t.Errorf("stderr = %q, want the variable and the path named", got)
	}
}
