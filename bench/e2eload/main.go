// Command e2eload measures llmrun's own cost as a client: for each number
// of concurrent streams it runs "llmrun sim" and "llmrun run" as two
// processes on loopback and reports the client's CPU time per output token
// and its TTFT excess, the client's mean TTFT minus the simulator's own
// mean TTFT (request arrival to first token flushed, from GET /stats).
//
//	go run ./bench/e2eload -streams 100,1000 -duration 20s
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/llm/llmsim"
	"github.com/llmrun/llmrun/runtime/summary"
)

func main() {
	streams := flag.String("streams", "100,1000", "comma-separated numbers of concurrent streams")
	duration := flag.Duration("duration", 20*time.Second, "length of each run")
	tokens := flag.Int("tokens", 256, "output tokens per request")
	prefill := flag.Duration("prefill", 100*time.Millisecond, "simulator prefill time (its TTFT with no queueing)")
	decode := flag.Duration("decode", 20*time.Millisecond, "simulator decode step (its ITL)")
	addr := flag.String("addr", "127.0.0.1:18431", "loopback address for the simulator")
	flag.Parse()
	if err := run(*streams, *duration, *tokens, *prefill, *decode, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "e2eload:", err)
		os.Exit(1)
	}
}

func run(streams string, duration time.Duration, tokens int, prefill, decode time.Duration, addr string) error {
	dir, err := os.MkdirTemp("", "e2eload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "llmrun")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/llmrun").CombinedOutput(); err != nil {
		return fmt.Errorf("building llmrun: %v\n%s", err, out)
	}
	fmt.Printf("simulator: prefill %s, decode step %s, %d tokens per request, runs of %s; host has %d CPUs shared by both processes\n\n",
		prefill, decode, tokens, duration, numCPU())
	fmt.Printf("%8s %10s %12s %14s %12s %12s %12s %12s %10s\n",
		"streams", "requests", "out tok/s", "client µs/tok", "client CPU%", "sim CPU%", "TTFT client", "TTFT server", "excess")
	for _, f := range strings.Split(streams, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad stream count %q", f)
		}
		if err := measure(bin, dir, n, duration, tokens, prefill, decode, addr); err != nil {
			return fmt.Errorf("%d streams: %w", n, err)
		}
	}
	return nil
}

func measure(bin, dir string, n int, duration time.Duration, tokens int, prefill, decode time.Duration, addr string) error {
	sim := exec.Command(bin, "sim", "--addr", addr, "--max-num-seqs", strconv.Itoa(n+16),
		"--prefill-base", prefill.String(), "--prefill-per-token", "0", "--tokenizer", "bytes",
		"--decode-base", decode.String(), "--decode-per-seq", "0")
	if err := sim.Start(); err != nil {
		return err
	}
	defer func() { sim.Process.Signal(os.Interrupt); sim.Wait() }()
	base := "http://" + addr
	if err := waitHealthy(base, 10*time.Second); err != nil {
		return err
	}

	export := filepath.Join(dir, fmt.Sprintf("summary-%d.json", n))
	ctx, cancel := context.WithTimeout(context.Background(), duration+2*time.Minute)
	defer cancel()
	client := exec.CommandContext(ctx, bin, "run", "-q", "--no-color", "--base-url", base,
		"-u", strconv.Itoa(n), "-d", duration.String(), "-e", "TOKENS="+strconv.Itoa(tokens),
		"--summary-export", export, "bench/stream.js")
	client.Stdout, client.Stderr = nil, os.Stderr
	start := time.Now()
	if err := client.Run(); err != nil {
		return fmt.Errorf("llmrun run: %w", err)
	}
	wall := time.Since(start)
	clientCPU := cpuTime(client.ProcessState)

	var st llmsim.Stats
	if err := getJSON(base+"/stats", &st); err != nil {
		return err
	}
	b, err := os.ReadFile(export)
	if err != nil {
		return err
	}
	var s summary.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	var ttft float64
	for _, row := range s.Latency {
		if row.Metric == "llm_ttft" {
			ttft = row.Mean
		}
	}
	if st.FirstTokens == 0 || s.Serving.OutputTokens == 0 {
		return errors.New("no tokens were streamed")
	}
	serverTTFT := float64(st.TTFTSum) / float64(st.FirstTokens) / float64(time.Millisecond)
	simCPU := procCPU(sim.Process.Pid)
	fmt.Printf("%8d %10d %12.0f %14.2f %11.0f%% %11.0f%% %10.1fms %10.1fms %8.2fms\n",
		n, s.Serving.OK, s.Serving.OutputTokenThroughput,
		float64(clientCPU.Microseconds())/float64(s.Serving.OutputTokens),
		100*clientCPU.Seconds()/wall.Seconds(), 100*simCPU.Seconds()/wall.Seconds(),
		ttft, serverTTFT, ttft-serverTTFT)
	return nil
}

func waitHealthy(base string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the simulator at %s did not answer within %s", base, timeout)
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func cpuTime(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

// procCPU reads a live process's user+system CPU time from /proc.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which ends with ')': utime and
	// stime are the 12th and 13th of them, in clock ticks (100 Hz).
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+stime) * 10 * time.Millisecond
}

func numCPU() int { return runtime.NumCPU() }
