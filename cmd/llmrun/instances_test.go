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

	"github.com/llmrun/llmrun/runtime/exitcode"
)

// instanceScript records when its first iteration started, in Unix ms:
// 9 iterations of 3 VUs in all, shared among the instances.
var instanceScript = instancesScript(3)

// instancesScript is instanceScript's plan for n instances: one VU and 3
// iterations each.
func instancesScript(n int) string { return fmt.Sprintf(instancesScriptFormat, n, 3*n) }

const instancesScriptFormat = `
import llm from 'llm';
import { Gauge } from 'metrics';
const first = new Gauge('first_iteration_unix_ms');
let started = false;
export const options = { vus: %d, iterations: %d };
export default function () {
  if (!started) { started = true; first.add(Date.now()); }
  llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
}
`

// instanceProcess is llmrun run as one instance, in a process of its own.
type instanceProcess struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu      sync.Mutex
	stderr  strings.Builder
	changed chan struct{} // closed, and replaced, at each line of stderr
}

// startInstance starts this test binary as llmrun run with args, env
// added to its environment ("NAME=value").
func startInstance(t *testing.T, ctx context.Context, env []string, args ...string) *instanceProcess {
	t.Helper()
	cmd := exec.CommandContext(ctx, llmrunBinary(t), append([]string{"run", "--quiet"}, args...)...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", asMainEnv+"=1"), env...)
	return startProcess(t, cmd)
}

// startProcess starts cmd, this test binary as llmrun, and reads its
// stderr.
func startProcess(t *testing.T, cmd *exec.Cmd) *instanceProcess {
	t.Helper()
	p := &instanceProcess{cmd: cmd, done: make(chan struct{}), changed: make(chan struct{})}
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	return p
}

// await waits until the process's stderr matches re and returns the
// match; it fails the test if the process ends first or ctx does.
func (p *instanceProcess) await(t *testing.T, ctx context.Context, re *regexp.Regexp) []string {
	t.Helper()
	for {
		p.mu.Lock()
		m, changed := re.FindStringSubmatch(p.stderr.String()), p.changed
		p.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-changed:
		case <-p.done:
			if m := re.FindStringSubmatch(p.output()); m != nil {
				return m
			}
			_, stderr := p.wait()
			t.Fatalf("the process ended before its stderr said %q:\n%s", re, stderr)
		case <-ctx.Done():
			t.Fatalf("%v before the process's stderr said %q:\n%s", ctx.Err(), re, p.output())
		}
	}
}

// output is what the process wrote on stderr so far.
func (p *instanceProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// wait returns the process's exit code and stderr.
func (p *instanceProcess) wait() (int, string) {
	<-p.done
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode(), p.output()
}

// listeningAt is what instance 0 says on stderr once it listens.
var listeningAt = regexp.MustCompile(`waiting for the others at (\S+)`)

// Three processes given --instances 3, or five given 5, start together:
// one run id, one start, and their first iterations within a few
// milliseconds; with no --execution-segment each runs its equal share of
// the plan, 3 iterations of its one VU.
func TestInstancesStartTogether(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d instances", n), func(t *testing.T) { startTogether(t, n) })
	}
}

func startTogether(t *testing.T, n int) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	script := writeScript(t, "instance.js", instancesScript(n))
	result := func(i int) string { return filepath.Join(dir, fmt.Sprintf("instance%d.json", i)) }
	records := func(i int) string { return filepath.Join(dir, fmt.Sprintf("instance%d.jsonl", i)) }
	args := func(i int, addr string) []string {
		return []string{"--instances", strconv.Itoa(n), "--instance", strconv.Itoa(i), "--rendezvous", addr, "--seed", "7", "--summary-export", result(i),
			"--out", "jsonl=" + records(i), script}
	}
	procs := []*instanceProcess{startInstance(t, ctx, nil, args(0, "127.0.0.1:0")...)}
	addr := procs[0].await(t, ctx, listeningAt)[1]
	// The last first: the order they arrive in does not matter.
	for i := n - 1; i > 0; i-- {
		procs = append(procs, startInstance(t, ctx, nil, args(i, addr)...))
	}
	waitAll(t, procs...)
	first := readSummary(t, result(0))
	lo, hi := math.Inf(1), math.Inf(-1)
	files := make([]string, n)
	for i := range n {
		files[i] = result(i)
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
	t.Logf("%d instances: first iterations %.0f to %.0f ms after the shared start: a skew of %.0f ms", n, lo-start, hi-start, hi-lo)
	// A loose bound: on a loaded machine a process may wait for a CPU; the
	// figure itself is logged above.
	if hi-lo > 2000 || lo < start-1 {
		t.Errorf("first iterations %.0f to %.0f ms after the shared start, want all at it", lo-start, hi-start)
	}
	all, err := readMerged(t, files...)
	if err != nil {
		t.Fatalf("the instances' results do not merge: %v", err)
	}
	if m := readSummary(t, all); m.Meta.Instances != n || m.Meta.MissingInstances != nil || m.Serving.Requests != int64(3*n) {
		t.Errorf("merged: %d instances, missing %v, %d requests; want %d, none, the plan's %d", m.Meta.Instances, m.Meta.MissingInstances, m.Serving.Requests, n, 3*n)
	}
	// Without instance 1's result, the merge says so.
	out := filepath.Join(t.TempDir(), "partial.json")
	code, _, stderr := command(t, "merge", append([]string{"-o", out}, slices.Delete(files, 1, 2)...)...)
	if code != 0 || !strings.Contains(stderr, "no result of instance 1 was given") {
		t.Errorf("merging all instances but 1: exit %d, stderr %q; want a warning naming instance 1", code, stderr)
	}
	if m := readSummary(t, out); !slices.Equal(m.Meta.MissingInstances, []int{1}) {
		t.Errorf("partial merge: missing_instances %v, want [1]", m.Meta.MissingInstances)
	}
	if n == 3 {
		// Its report says which instances it holds and which is missing,
		// above the fold.
		page := reportOf(t, out)
		for _, want := range []string{"Merged from 2 results: instances 0, 2 of 3.", "Missing: instance 1."} {
			if !strings.Contains(page, want) {
				t.Errorf("the partial merge's report does not say %q", want)
			}
		}
		aboveTheFold(t, page, "#instances", "#instances .alert")
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
// TestStrayHelloDoesNotEndTheRun: a line that is no llmrun hello, sent
// to instance 0's port, is refused alone; the instances still run, and
// instance 0 says what it ignored.
func TestStrayHelloDoesNotEndTheRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	script := writeScript(t, "instance.js", instancesScript(2))
	args := func(i int, addr string) []string {
		return []string{"--instances", "2", "--instance", strconv.Itoa(i), "--rendezvous", addr, "--seed", "7", script}
	}
	p0 := startInstance(t, ctx, nil, args(0, "127.0.0.1:0")...)
	addr := p0.await(t, ctx, listeningAt)[1]
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := conn.Write([]byte("null\n")); err != nil {
		t.Fatal(err)
	}
	refusal, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if err != nil || !strings.Contains(refusal, "a hello without a protocol number") {
		t.Fatalf("instance 0 answered %q (%v), want a refusal", refusal, err)
	}
	waitAll(t, p0, startInstance(t, ctx, nil, args(1, addr)...))
	want := regexp.MustCompile(`llmrun run: rendezvous: ignored 1 connection that was not an llmrun instance of this run, from 127\.0\.0\.1:\d+: a hello without a protocol number`)
	if !want.MatchString(p0.output()) {
		t.Errorf("instance 0's stderr:\n%s\nwant a line matching %s", p0.output(), want)
	}
}

func TestMissingInstanceIsNamed(t *testing.T) {
	script := writeScript(t, "instance.js", instanceScript)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A listener that hangs up on every connection, kept open for the
	// whole test: instance 0 is never reached at its address, and no other
	// test can take the port meanwhile, as it could if it were closed.
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	nobody := ln.Addr().String()
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
		if code != exitcode.Error || !strings.Contains(stderr, tt.want) {
			t.Errorf("instance %s: exit %d, stderr:\n%s\nwant %d and %q", tt.instance, code, stderr, exitcode.Error, tt.want)
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
		{nil, []string{"--instances", "10001", "--instance", "1", "--rendezvous", "h:1", "--seed", "1", "--rendezvous-timeout", "1s"}, "--instances 10001: at most 10000"},
		{map[string]string{"LLMRUN_INSTANCES": "1000000000", "LLMRUN_INSTANCE": "1", "LLMRUN_RENDEZVOUS": "h:1"}, []string{"--seed", "1"}, "--instances 1000000000: at most 10000"},
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
		if code != exitcode.Usage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want %d and %q", tt.env, tt.args, code, stderr, exitcode.Usage, tt.want)
		}
	}
}
