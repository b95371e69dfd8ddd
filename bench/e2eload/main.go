// Command e2eload measures llmrun's own cost as a client against the
// least any client can spend. For each number of concurrent streams it
// starts one "llmrun sim" process and runs, one after the other against
// it, the floor (a bare Go streaming client: e2eload itself re-executed
// with -floor) and "llmrun run" with bench/stream.js, both closed loop
// with the same requests. It prints, as a markdown table, each client's
// CPU time per output token, peak RSS, TTFT mean and p99 and ITL p99,
// llmrun's ratio to the floor, and a verdict against issue 14's targets.
// With -repeat the pairs repeat against the same simulator and the table
// shows each figure's median and the range of llmrun's ratio.
// Where taskset exists the simulator runs on CPU 0 and the clients on
// CPU 1.
//
// With -rates it measures pacing instead (or as well, when -streams is
// given too): llmrun's open model at each arrival rate against a
// simulator with a batch slot for every request, how late the iterations started, how
// many were dropped, the Go scheduler's delay and llmrun's CPU.
//
//	go run ./bench/e2eload -streams 100,500,1000
//	go run ./bench/e2eload -slow      # 10,000 streams, 500 ms per token
//	go run ./bench/e2eload -rates 1000,2000 -repeat 3
//
// With -dashboard it measures the live dashboard's cost instead: at each
// stream count (1,000 unless -streams says otherwise) llmrun runs closed
// loop for that long without and with --dashboard, a page (an SSE client
// in e2eload's process) reading the dashboard's events for the whole
// run, -repeat pairs in alternating order; it prints llmrun's CPU time
// per second of run and the difference as a percentage of one core.
//
//	go run ./bench/e2eload -dashboard 20s -repeat 5
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/bench/internal/simproc"
)

// script is the llmrun script e2eload runs, relative to the module's root.
const script = "bench/stream.js"

// config is one invocation's load.
type config struct {
	streams   []int
	rates     []int // arrival rates of the pacing rows
	perStream int   // requests per stream: requests = perStream × streams
	tokens    int
	prefill   time.Duration
	decode    time.Duration
	addr      string
	slow      bool
	repeat    int // floor-then-llmrun pairs per stream count
	// dashboard, when positive, is how long each run of -dashboard lasts:
	// the stream counts then measure the dashboard's cost.
	dashboard time.Duration
}

// requests is the closed loop's total for n streams.
func (c config) requests(n int) int { return c.perStream * n }

// timeout bounds one client's run: three times what its requests take
// on an idle simulator (one round of streams after another), and two
// minutes for start-up and teardown.
func (c config) timeout() time.Duration {
	return 3*time.Duration(c.perStream)*(c.prefill+time.Duration(c.tokens)*c.decode) + 2*time.Minute
}

func main() {
	streams := flag.String("streams", "100,500,1000", "comma-separated numbers of concurrent streams")
	perStream := flag.Int("requests-per-stream", 4, "requests per stream: each client sends this many times the streams, closed loop")
	tokens := flag.Int("tokens", 100, "output tokens per request")
	prefill := flag.Duration("prefill", 100*time.Millisecond, "simulator prefill time (its TTFT with no queueing)")
	decode := flag.Duration("decode", 20*time.Millisecond, "simulator decode step (its ITL)")
	addr := flag.String("addr", "127.0.0.1:0", "loopback address for the simulator (port 0: a free one)")
	slow := flag.Bool("slow", false, "10,000 streams with slow tokens: -streams 10000 -decode 500ms unless given")
	rates := flag.String("rates", "", "comma-separated arrival rates (per second) to measure pacing at, 6 s each with 10-token answers; without -streams, no stream rows")
	repeat := flag.Int("repeat", 1, "floor-then-llmrun pairs per stream count (and runs per arrival rate of -rates), against the same simulator: the table shows medians and the range of the ratio")
	dashboard := flag.Duration("dashboard", 0, "measure the live dashboard's cost instead: llmrun runs this long at each stream count (1000 unless -streams is given) without and with --dashboard, -repeat pairs")
	floor := flag.String("floor", "", "run as the floor client with this load (JSON; e2eload sets it)")
	flag.Parse()
	if *floor != "" {
		if err := floorMain(*floor, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "e2eload -floor:", err)
			os.Exit(1)
		}
		return
	}
	c := config{perStream: *perStream, tokens: *tokens, prefill: *prefill, decode: *decode, addr: *addr, slow: *slow, repeat: *repeat, dashboard: *dashboard}
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["rates"] && !given["streams"] && !c.slow {
		*streams = ""
	}
	if c.dashboard > 0 && !given["streams"] {
		*streams = "1000"
	}
	if c.slow {
		if !given["streams"] {
			*streams = "10000"
		}
		if !given["decode"] {
			c.decode = 500 * time.Millisecond
		}
	}
	if err := c.parse(*streams, *rates); err != nil {
		fmt.Fprintln(os.Stderr, "e2eload:", err)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "e2eload:", err)
		os.Exit(1)
	}
}

// parse checks the flags and reads the stream counts and rates.
func (c *config) parse(streams, rates string) error {
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil || host != "127.0.0.1" {
		return fmt.Errorf("-addr %q: e2eload serves on 127.0.0.1 only", c.addr)
	}
	if c.perStream < 1 || c.tokens < 1 || c.repeat < 1 || c.decode <= 0 || c.prefill < 0 || c.dashboard < 0 {
		return errors.New("-requests-per-stream, -tokens and -repeat must be at least 1, -decode positive, -prefill and -dashboard not negative")
	}
	if c.streams, err = positiveList(streams, "stream count"); err != nil {
		return err
	}
	if c.rates, err = positiveList(rates, "arrival rate"); err != nil {
		return err
	}
	if len(c.streams)+len(c.rates) == 0 {
		return errors.New("nothing to measure: give -streams or -rates")
	}
	return nil
}

// positiveList reads a comma-separated list of positive integers; empty
// is none.
func positiveList(list, what string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var v []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad %s %q", what, f)
		}
		v = append(v, n)
	}
	return v, nil
}

func run(c config) error {
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("run e2eload from the llmrun module's root, where %s is: %w", script, err)
	}
	dir, err := os.MkdirTemp("", "e2eload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := simproc.Build(dir)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding e2eload's own binary for the floor: %w", err)
	}
	p := choosePinning()
	fmt.Printf("e2eload: %s; %d CPUs\n", p.note, runtime.NumCPU())
	if len(c.rates) > 0 {
		fmt.Printf("pacing: llmrun sim with %s prefill and %s per token whatever the batch; %s at each rate for %s, %d-token answers, %d runs per rate\n",
			paceSimPrefill, paceSimDecode, paceScript, paceDuration, paceTokens, c.repeat)
	}
	if len(c.streams) > 0 && c.dashboard > 0 {
		fmt.Printf("dashboard: llmrun sim with %s prefill and %s per token, %d tokens per request, closed loop for %s, %d without-and-with --dashboard pairs per stream count\n",
			c.prefill, c.decode, c.tokens, c.dashboard, c.repeat)
	} else if len(c.streams) > 0 {
		fmt.Printf("streams: llmrun sim with %s prefill and %s per token, %d tokens per request, %d requests per stream, closed loop, %d floor-then-llmrun pairs per stream count\n",
			c.prefill, c.decode, c.tokens, c.perStream, c.repeat)
	}
	var (
		rows     []row
		paceRows []paceRow
		dashRows []dashboardCost
	)
	defer func() {
		printTable(os.Stdout, c, rows)
		printPaceTable(os.Stdout, paceRows)
		printDashboardTable(os.Stdout, c, dashRows)
	}()
	for _, rate := range c.rates {
		r, err := measurePacing(c, rate, bin, dir, p)
		if err != nil {
			return fmt.Errorf("%d arrivals/s: %w", rate, err)
		}
		paceRows = append(paceRows, r)
	}
	for _, n := range c.streams {
		if c.dashboard > 0 {
			r, err := measureDashboard(c, n, bin, dir, p)
			if err != nil {
				return fmt.Errorf("%d streams, dashboard: %w", n, err)
			}
			dashRows = append(dashRows, r)
			continue
		}
		r, err := measure(c, n, bin, self, dir, p)
		if err != nil {
			return fmt.Errorf("%d streams: %w", n, err)
		}
		rows = append(rows, r)
	}
	return nil
}
