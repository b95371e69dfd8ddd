package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/bench/internal/procstat"
	"github.com/llmrun/llmrun/bench/internal/simproc"
	"github.com/llmrun/llmrun/runtime/summary"
)

// pinning is the command prefix that pins the simulator and the
// clients to their CPUs, empty where they cannot be pinned.
type pinning struct {
	sim, client []string
	note        string
}

func choosePinning() pinning {
	if runtime.NumCPU() < 2 {
		return pinning{note: "one CPU: the simulator and the clients share it"}
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return pinning{note: "no taskset: the simulator and the clients are not pinned and share the CPUs"}
	}
	return pinning{
		sim:    []string{taskset, "-c", "0"},
		client: []string{taskset, "-c", "1"},
		note:   "simulator pinned to CPU 0, clients to CPU 1 (taskset)",
	}
}

// figures are one client's run against the simulator.
type figures struct {
	completed, failed int64
	tokens            uint64        // output tokens the simulator generated during the run
	cpu               time.Duration // the client process's user+system time
	wall              time.Duration
	peakRSS           int64 // bytes
	ttftMean, ttftP99 float64
	itlP99            float64       // milliseconds
	simCPU            time.Duration // -1 when unknown (no /proc)
}

// cpuPerToken is the client's CPU time per output token, in µs.
func (f figures) cpuPerToken() float64 {
	if f.tokens == 0 {
		return 0
	}
	return float64(f.cpu.Nanoseconds()) / 1e3 / float64(f.tokens)
}

// row is one stream count: the floor's and llmrun's runs against one
// simulator, in pairs.
type row struct {
	streams       int
	floor, llmrun []figures
}

// measure starts a simulator with a batch slot for every stream (no
// queueing) and runs the floor, then llmrun, against it, c.repeat times.
func measure(c config, n int, bin, self, dir string, p pinning) (row, error) {
	r := row{streams: n}
	sim, err := startStreamSimulator(c, n, bin, p)
	if err != nil {
		return r, err
	}
	defer sim.Stop()
	for range c.repeat {
		fl, err := runFloorClient(c, n, self, sim, p)
		if err != nil {
			return r, fmt.Errorf("floor: %w", err)
		}
		r.floor = append(r.floor, fl)
		ll, err := runLlmrun(c, n, bin, dir, sim, p)
		if err != nil {
			return r, fmt.Errorf("llmrun: %w", err)
		}
		r.llmrun = append(r.llmrun, ll)
	}
	return r, nil
}

// startStreamSimulator starts a simulator with a batch slot for each of
// n streams (no queueing) and c's prefill and decode steps.
func startStreamSimulator(c config, n int, bin string, p pinning) (*simproc.Proc, error) {
	return startSimulator(bin, c.addr, p.sim, []string{
		"--max-num-seqs", strconv.Itoa(n + 16), "--tokenizer", "bytes",
		"--prefill-base", c.prefill.String(), "--prefill-per-token", "0",
		"--decode-base", c.decode.String(), "--decode-per-seq", "0",
	})
}

// runFloorClient runs the floor (e2eload -floor) against sim.
func runFloorClient(c config, n int, self string, sim *simproc.Proc, p pinning) (figures, error) {
	load, err := json.Marshal(floorLoad{URL: sim.URL, Model: sim.Model, Streams: n, Requests: c.requests(n), Tokens: c.tokens, Timeout: c.timeout()})
	if err != nil {
		return figures{}, err
	}
	var out bytes.Buffer
	f, err := runClient(c.timeout(), sim, append(append([]string{}, p.client...), self, "-floor", string(load)), &out)
	if err != nil {
		return f, err
	}
	var fr floorResult
	if err := json.Unmarshal(out.Bytes(), &fr); err != nil {
		return f, fmt.Errorf("reading its result: %w", err)
	}
	f.completed, f.failed = fr.Completed, fr.Failed
	f.ttftMean, f.ttftP99, f.itlP99 = fr.TTFTMean, fr.TTFTP99, fr.ITLP99
	report(n, "floor", f)
	return f, nil
}

// runLlmrun runs "llmrun run" with script against sim.
func runLlmrun(c config, n int, bin, dir string, sim *simproc.Proc, p pinning) (figures, error) {
	export := filepath.Join(dir, fmt.Sprintf("summary-%d.json", n))
	f, err := runClient(c.timeout(), sim, append(append([]string{}, p.client...), bin, "run", "-q", "--no-color",
		"--base-url", sim.URL, "-u", strconv.Itoa(n), "-i", strconv.Itoa(c.requests(n)),
		"-e", "TOKENS="+strconv.Itoa(c.tokens), "--summary-export", export, script), nil)
	if err != nil {
		return f, err
	}
	if err := readSummary(export, &f); err != nil {
		return f, err
	}
	report(n, "llmrun", f)
	return f, nil
}

// runClient runs one client process to its end, bounded by the load's
// timeout, and reads its CPU time, its peak RSS, and the tokens and CPU
// time the simulator spent meanwhile.
func runClient(timeout time.Duration, sim *simproc.Proc, argv []string, stdout io.Writer) (figures, error) {
	var f figures
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	before, err := sim.Stats(ctx)
	if err != nil {
		return f, err
	}
	simBefore, simKnown := procstat.CPU(sim.Pid())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return f, fmt.Errorf("%v\n%s", err, tail(stderr.String(), 20))
	}
	f.wall = time.Since(start)
	f.simCPU = -1 // unknown without /proc
	if simAfter, ok := procstat.CPU(sim.Pid()); ok && simKnown {
		f.simCPU = simAfter - simBefore
	}
	after, err := sim.Stats(ctx)
	if err != nil {
		return f, err
	}
	f.tokens = after.Tokens - before.Tokens
	f.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	f.peakRSS = procstat.PeakRSS(cmd.ProcessState) << 10
	if f.tokens == 0 {
		return f, errors.New("the simulator generated no token")
	}
	return f, nil
}

// readSummary reads llmrun's requests and latencies from its summary file.
func readSummary(path string, f *figures) error {
	s, err := summary.ReadJSON(path)
	if err != nil {
		return err
	}
	f.completed, f.failed = s.Serving.OK, s.Serving.Failed
	for _, l := range s.Latency {
		switch l.Metric {
		case "llm_ttft":
			f.ttftMean, f.ttftP99 = l.Mean, l.P["p99"]
		case "llm_itl":
			f.itlP99 = l.P["p99"]
		}
	}
	return nil
}

// report prints one finished run, with the machine's load average: on a
// shared machine other processes' load shows in the timings.
func report(n int, client string, f figures) {
	simCPU := "?"
	if f.simCPU >= 0 {
		simCPU = fmt.Sprintf("%.0f %%", 100*f.simCPU.Seconds()/f.wall.Seconds())
	}
	fmt.Printf("  %d streams, %s: %d requests completed, %d failed, %d tokens in %.1f s; client CPU %.2f s (%.0f %% of a CPU), %.1f µs per token; simulator CPU %s of a CPU; load average %s\n",
		n, client, f.completed, f.failed, f.tokens, f.wall.Seconds(), f.cpu.Seconds(),
		100*f.cpu.Seconds()/f.wall.Seconds(), f.cpuPerToken(), simCPU, loadAverage())
}

// loadAverage is the machine's 1-minute load average, "?" without /proc.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
