package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmrun/llmrun/modules/llm/llmsim"
)

// simStartTimeout bounds the simulator's start, stopTimeout its stop.
const (
	simStartTimeout = 30 * time.Second
	stopTimeout     = 30 * time.Second
)

// buildLlmrun builds the llmrun binary of the module the working
// directory is in, into dir.
func buildLlmrun(dir string) (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." || root == "" {
		return "", errors.New("run the harness inside the llmrun module (go run ./bench/soak)")
	}
	bin := filepath.Join(dir, "llmrun")
	build := exec.Command("go", "build", "-o", bin, "./cmd/llmrun")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building llmrun: %v\n%s", err, out)
	}
	return bin, nil
}

// simProc is "llmrun sim" running as a process of its own.
type simProc struct {
	cmd    *exec.Cmd
	url    string
	client *http.Client
	exited chan struct{} // closed once the process is reaped
	err    error         // Wait's error, read after exited is closed
	// stopOnce makes stop idempotent; stopErr is its result.
	stopOnce sync.Once
	stopErr  error
}

// servingLine is the simulator's first line of output, which names its
// address.
var servingLine = regexp.MustCompile(`on (http://\S+)/v1 `)

// startSim starts the simulator on a free loopback port with args, its
// output going to files in dir, and returns once it serves.
func startSim(bin, dir string, args []string) (*simProc, error) {
	out, err := os.Create(filepath.Join(dir, "sim.out"))
	if err != nil {
		return nil, err
	}
	errFile, err := os.Create(filepath.Join(dir, "sim.err"))
	if err != nil {
		out.Close()
		return nil, err
	}
	first := newFirstLine(out)
	cmd := exec.Command(bin, append([]string{"sim", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Stdout, cmd.Stderr = first, errFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting llmrun sim: %w", err)
	}
	p := &simProc{cmd: cmd, client: &http.Client{Timeout: 5 * time.Second}, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		errFile.Close()
		close(p.exited)
	}()
	select {
	case line := <-first.line:
		m := servingLine.FindStringSubmatch(line)
		if m == nil {
			p.stop()
			return nil, fmt.Errorf("llmrun sim's first line names no address: %q", line)
		}
		p.url = m[1]
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("llmrun sim exited at start (%v); see %s", p.err, errFile.Name())
	case <-time.After(simStartTimeout):
		p.stop()
		return nil, fmt.Errorf("llmrun sim printed no address within %s", simStartTimeout)
	}
}

// stats returns the simulator's counters.
func (p *simProc) stats(ctx context.Context) (llmsim.Stats, error) {
	var st llmsim.Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/stats", nil)
	if err != nil {
		return st, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return st, fmt.Errorf("GET /stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /stats: status %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("GET /stats: %w", err)
	}
	return st, nil
}

// inFlight is the simulator's running plus waiting requests, -1 when it
// does not answer.
func (p *simProc) inFlight(ctx context.Context) int {
	st, err := p.stats(ctx)
	if err != nil {
		return -1
	}
	return st.Running + st.Waiting
}

// stop interrupts the simulator, as Ctrl-C would, and returns its exit
// error; it kills it if it has not exited within stopTimeout. Later calls
// return the first's result.
func (p *simProc) stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.interrupt() })
	return p.stopErr
}

// interrupt is stop, once.
func (p *simProc) interrupt() error {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(stopTimeout):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("did not exit within %s of an interrupt and was killed", stopTimeout)
	}
}

// firstLine passes output on to w and sends its first line on line.
type firstLine struct {
	w    *os.File
	line chan string
	mu   sync.Mutex
	buf  []byte
	sent bool
}

func newFirstLine(w *os.File) *firstLine { return &firstLine{w: w, line: make(chan string, 1)} }

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	if !f.sent {
		f.buf = append(f.buf, p...)
		if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
			f.line <- string(f.buf[:i])
			f.sent, f.buf = true, nil
		}
	}
	f.mu.Unlock()
	return f.w.Write(p)
}

// clientRun is the finished "llmrun run".
type clientRun struct {
	exitCode int
	// killed is set when the run outlived its deadline.
	killed  bool
	peakKiB int64 // the process's peak RSS (getrusage)
	cpu     time.Duration
	samples []sample
	// liveHeap is the live heap after each garbage collection, MiB.
	liveHeap []point
}

// runClient runs "llmrun run" with args, its output going to files in
// dir, while w samples it; ctx bounds it.
func runClient(ctx context.Context, bin, dir string, args []string, w *watcher) (clientRun, error) {
	var res clientRun
	out, err := os.Create(filepath.Join(dir, "run.out"))
	if err != nil {
		return res, err
	}
	defer out.Close()
	errFile, err := os.Create(filepath.Join(dir, "run.err"))
	if err != nil {
		return res, err
	}
	defer errFile.Close()
	cmd := exec.CommandContext(ctx, bin, append([]string{"run"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, errFile
	cmd.Env = withGCTrace(os.Environ())
	w.start = time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("starting llmrun run: %w", err)
	}
	w.pid = cmd.Process.Pid
	wctx, stopWatching := context.WithCancel(context.Background())
	samples := make(chan []sample, 1)
	go func() { samples <- w.watch(wctx) }()
	waitErr := cmd.Wait()
	stopWatching()
	res.samples = <-samples
	if err := w.gc.update(); err != nil {
		return res, fmt.Errorf("reading the garbage collector's trace: %w", err)
	}
	res.liveHeap = w.gc.live
	var exit *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exit) {
		return res, fmt.Errorf("llmrun run: %w", waitErr)
	}
	res.exitCode = cmd.ProcessState.ExitCode()
	res.killed = ctx.Err() != nil
	res.peakKiB = peakRSS(cmd.ProcessState)
	res.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return res, nil
}

// stderrProblems returns the lines of the client's stderr that show a
// crash: a panic or a fatal runtime error (the garbage collector's trace
// lines start with "gc ").
func stderrProblems(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var bad []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "goroutine ") {
			bad = append(bad, line)
		}
	}
	return bad, nil
}

// peakRSS is a finished process's peak resident set, in KiB.
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
