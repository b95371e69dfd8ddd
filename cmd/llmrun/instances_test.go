package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// instanceScript records when its first iteration started, in Unix ms:
// 9 iterations of 3 VUs in all, shared among the instances.
const instanceScript = `
import llm from 'llm';
import { Gauge } from 'metrics';
const first = new Gauge('first_iteration_unix_ms');
let started = false;
export const options = { vus: 3, iterations: 9 };
export default function () {
  if (!started) { started = true; first.add(Date.now()); }
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
}
`

// instanceProcess is llmrun run as one instance, in a process of its own.
type instanceProcess struct {
	cmd    *exec.Cmd
	stderr strings.Builder
	mu     sync.Mutex
	done   chan struct{}
}

// startInstance starts this test binary as llmrun run with args; listening,
// when not nil, gets the address instance 0 says it listens at.
func startInstance(t *testing.T, ctx context.Context, listening chan<- string, args ...string) *instanceProcess {
	t.Helper()
	cmd := exec.CommandContext(ctx, llmrunBinary(t), append([]string{"run", "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", asMainEnv+"=1")
	return startProcess(t, cmd, listening)
}

// startProcess starts cmd, this test binary as llmrun, and reads its
// stderr; listening, when not nil, gets the address instance 0 says it
// listens at.
func startProcess(t *testing.T, cmd *exec.Cmd, listening chan<- string) *instanceProcess {
	t.Helper()
	p := &instanceProcess{cmd: cmd, done: make(chan struct{})}
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	at := regexp.MustCompile(`waiting for the others at (\S+)`)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := at.FindStringSubmatch(sc.Text()); m != nil && listening != nil {
				listening <- m[1]
			}
		}
	}()
	return p
}

// listeningAt is the address instance 0, p, says it listens at on
// listening; the test fails if p ends first.
func listeningAt(t *testing.T, p *instanceProcess, listening <-chan string) string {
	t.Helper()
	select {
	case addr := <-listening:
		return addr
	case <-p.done:
		_, stderr := p.wait()
		t.Fatalf("instance 0 ended before it listened:\n%s", stderr)
		return ""
	}
}

// wait returns the process's exit code and stderr.
func (p *instanceProcess) wait() (int, string) {
	<-p.done
	p.cmd.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.ProcessState.ExitCode(), p.stderr.String()
}

// Three processes given --instances 3 start together: one run id, one
// start, and their first iterations within a few milliseconds; with no
// --execution-segment each runs its equal share of the plan, 3 of its 9
// iterations.
func TestInstancesStartTogether(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	script := writeScript(t, "instance.js", instanceScript)
	result := func(i int) string { return filepath.Join(dir, fmt.Sprintf("instance%d.json", i)) }
	records := func(i int) string { return filepath.Join(dir, fmt.Sprintf("instance%d.jsonl", i)) }
	args := func(i int, addr string) []string {
		return []string{"--instances", "3", "--instance", strconv.Itoa(i), "--rendezvous", addr, "--seed", "7", "--summary-export", result(i),
			"--out", "jsonl=" + records(i), script}
	}
	listening := make(chan string, 1)
	procs := []*instanceProcess{startInstance(t, ctx, listening, args(0, "127.0.0.1:0")...)}
	addr := listeningAt(t, procs[0], listening)
	// Instance 2 first: the order they arrive in does not matter.
	procs = append(procs, startInstance(t, ctx, nil, args(2, addr)...), startInstance(t, ctx, nil, args(1, addr)...))
	for i, p := range procs {
		if code, stderr := p.wait(); code != 0 {
			t.Fatalf("process %d exited %d:\n%s", i, code, stderr)
		}
	}
	first := readSummary(t, result(0))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range 3 {
		s := readSummary(t, result(i))
		if s.Meta.RunID != first.Meta.RunID || !s.Meta.Start.Equal(first.Meta.Start) {
			t.Errorf("instance %d: run %q started %v, instance 0: run %q started %v", i, s.Meta.RunID, s.Meta.Start, first.Meta.RunID, first.Meta.Start)
		}
		if got := s.Meta.Tags["instance"]; got != strconv.Itoa(i) {
			t.Errorf("instance %d: meta tag instance %q", i, got)
		}
		b, err := os.ReadFile(records(i))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if tag := fmt.Sprintf(`"instance":"%d"`, i); len(lines) != 3 || strings.Count(string(b), tag) != 3 {
			t.Errorf("instance %d: records %s, want 3 tagged %s", i, b, tag)
		}
		at := s.Metrics["first_iteration_unix_ms"].Values["value"]
		if at == 0 {
			t.Fatalf("instance %d recorded no first iteration: %v", i, s.Metrics["first_iteration_unix_ms"])
		}
		lo, hi = min(lo, at), max(hi, at)
	}
	start := float64(first.Meta.Start.UnixMilli())
	t.Logf("first iterations %.0f to %.0f ms after the shared start: a skew of %.0f ms", lo-start, hi-start, hi-lo)
	// A loose bound: on a loaded machine a process may wait for a CPU; the
	// figure itself is logged above.
	if hi-lo > 2000 || lo < start-1 {
		t.Errorf("first iterations %.0f to %.0f ms after the shared start, want all at it", lo-start, hi-start)
	}
	all, err := readMerged(t, result(0), result(1), result(2))
	if err != nil {
		t.Fatalf("the instances' results do not merge: %v", err)
	}
	if m := readSummary(t, all); m.Meta.Instances != 3 || m.Meta.MissingInstances != nil || m.Serving.Requests != 9 {
		t.Errorf("merged: %d instances, missing %v, %d requests; want 3, none, the plan's 9", m.Meta.Instances, m.Meta.MissingInstances, m.Serving.Requests)
	}
	// Without instance 1's result, the merge says so.
	out := filepath.Join(t.TempDir(), "partial.json")
	code, _, stderr := command(t, "merge", "-o", out, result(0), result(2))
	if code != 0 || !strings.Contains(stderr, "no result of instance 1 was given") {
		t.Errorf("merging instances 0 and 2: exit %d, stderr %q; want a warning naming instance 1", code, stderr)
	}
	if m := readSummary(t, out); !slices.Equal(m.Meta.MissingInstances, []int{1}) {
		t.Errorf("partial merge: missing_instances %v, want [1]", m.Meta.MissingInstances)
	}
}

// readMerged merges result files with llmrun merge and returns its output.
func readMerged(t *testing.T, files ...string) (string, error) {
	out := filepath.Join(t.TempDir(), "merged.json")
	code, _, stderr := command(t, "merge", append([]string{"-o", out}, files...)...)
	if code != 0 {
		return "", fmt.Errorf("exit %d: %s", code, stderr)
	}
	return out, nil
}

// Instance 0 of 2 whose other instance never comes fails within the
// timeout, naming it; instance 1 whose instance 0 never comes too. Neither
// runs load or writes a result file.
func TestMissingInstanceIsNamed(t *testing.T) {
	script := writeScript(t, "instance.js", instanceScript)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := ln.Addr().String()
	ln.Close()
	tests := []struct {
		instance, address, want string
	}{
		{"0", "127.0.0.1:0", "instance 1 of 2 did not arrive at 127.0.0.1:0 within 2s"},
		{"1", nobody, "instance 1: instance 0 not reached at " + nobody + " within 2s"},
	}
	for _, tt := range tests {
		export := filepath.Join(t.TempDir(), "summary.json")
		start := time.Now()
		code, _, stderr := cli(t, t.Context(), nil, "run", "--quiet", "--seed", "7", "--instances", "2", "--instance", tt.instance, "--rendezvous", tt.address,
			"--rendezvous-timeout", "2s", "--summary-export", export, script)
		if code != exitError || !strings.Contains(stderr, tt.want) {
			t.Errorf("instance %s: exit %d, stderr:\n%s\nwant %d and %q", tt.instance, code, stderr, exitError, tt.want)
		}
		if _, err := os.Stat(export); err == nil {
			t.Errorf("instance %s: a run that never started wrote a result file", tt.instance)
		}
		if took := time.Since(start); took > time.Minute {
			t.Errorf("instance %s: took %v to give up after a 2s timeout", tt.instance, took)
		}
	}
}

func TestInstanceFlagErrors(t *testing.T) {
	script := writeScript(t, "instance.js", instanceScript)
	tests := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--instance", "1"}, "--instance and --rendezvous need --instances"},
		{map[string]string{"LLMRUN_RENDEZVOUS": "h:1"}, nil, "need --instances (or $LLMRUN_INSTANCES)"},
		{nil, []string{"--instances", "0"}, "--instances 0: at least 1"},
		{nil, []string{"--instances", "3", "--rendezvous", "h:1"}, "--instances 3 needs --instance"},
		{nil, []string{"--instances", "3", "--instance", "3", "--rendezvous", "h:1"}, "--instance 3 of --instances 3: the index must be 0 to 2"},
		{nil, []string{"--instances", "3", "--instance", "1"}, "--instances 3 needs --rendezvous HOST:PORT"},
		{nil, []string{"--instances", "3", "--instance", "1", "--rendezvous", "nohost"}, `--rendezvous "nohost": want HOST:PORT`},
		{map[string]string{"LLMRUN_INSTANCES": "three"}, nil, `$LLMRUN_INSTANCES="three": not an integer`},
		{map[string]string{"LLMRUN_INSTANCES": "3", "JOB_COMPLETION_INDEX": "5", "LLMRUN_RENDEZVOUS": "h:1"}, nil, "--instance 5 of --instances 3"},
		{nil, []string{"--instances", "2", "--instance", "1", "--rendezvous", "h:1", "--rendezvous-timeout", "0s"}, "--rendezvous-timeout must be positive"},
		{nil, []string{"--instances", "2", "--instance", "1", "--rendezvous", "h:1"}, "--instances 2 needs --seed, the same in every instance"},
	}
	for _, tt := range tests {
		code, _, stderr := cli(t, t.Context(), tt.env, append(append([]string{"run"}, tt.args...), script)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want %d and %q", tt.env, tt.args, code, stderr, exitUsage, tt.want)
		}
	}
}
