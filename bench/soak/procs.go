package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmrun/llmrun/bench/internal/procstat"
	"github.com/llmrun/llmrun/bench/internal/simproc"
)

// startSim starts the simulator on a free loopback port with args, its
// output going to files in dir, and returns once it serves.
func startSim(bin, dir string, args []string) (*simproc.Proc, error) {
	out, err := os.Create(filepath.Join(dir, "sim.out"))
	if err != nil {
		return nil, err
	}
	errFile, err := os.Create(filepath.Join(dir, "sim.err"))
	if err != nil {
		out.Close()
		return nil, err
	}
	p, err := simproc.Start(append([]string{bin, "sim", "--addr", "127.0.0.1:0"}, args...), out, errFile)
	if err != nil {
		out.Close()
		errFile.Close()
		return nil, fmt.Errorf("%w; see %s", err, errFile.Name())
	}
	go func() {
		<-p.Exited()
		out.Close()
		errFile.Close()
	}()
	return p, nil
}

// inFlight returns a reader of the simulator's running plus waiting
// requests, -1 when it does not answer.
func inFlight(p *simproc.Proc) func(context.Context) int {
	return func(ctx context.Context) int {
		st, err := p.Stats(ctx)
		if err != nil {
			return -1
		}
		return st.Running + st.Waiting
	}
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
	res.peakKiB = procstat.PeakRSS(cmd.ProcessState)
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
