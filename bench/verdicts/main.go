// Command verdicts is the experiment behind llmrun compare's and trend's
// verdicts: are they safe to gate a pipeline on? It builds llmrun, starts
// two simulators as processes of their own — one as configured, one twice
// as slow to prefill — and an InfluxDB 1.8 (when $LLMRUN_INFLUXD or -influxd
// names one), keeps other processes busy on the machine (-load), then:
//
//   - runs the same small scenario RUNS times against the first simulator,
//     storing each run in InfluxDB and in a result file; after each, it runs
//     "llmrun trend" on the history so far, and "llmrun compare" of the
//     run before against it. Every regression either reports is false.
//
//   - runs it RUNS times against the slow simulator and compares each with
//     the same-numbered run of the first: each should be a regression.
//
//     go run ./bench/verdicts -runs 20 -duration 8s -load 1
//
// With -hog N, N CPUs' worth of busy loops run during the even-numbered
// identical runs only: every compare pairs a run whose machine was taken
// by another process with one whose machine was not, the case of a
// saturated CI host; their verdicts should be inconclusive
// (machine-limited), never a regression.
//
//	go run ./bench/verdicts -runs 10 -duration 8s -load 0 -hog 2
//
// It prints a line per run and the counts; docs/results.md shows a run of
// it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/bench/internal/simproc"
	"github.com/llmrun/llmrun/internal/influxtest"
)

// scenario is the small scenario every run runs: VUS users sending
// prompts of INPUT exact tokens for answers of OUTPUT tokens, for DURATION.
const scenario = `import llm from 'llm';
import { prompts } from 'data';

export const options = { vus: Number(__ENV.VUS), duration: __ENV.DURATION };

export default function () {
  const n = Number(__ENV.INPUT);
  llm.stream({ messages: [{ role: 'user', content: prompts.synthetic(n) }],
               max_tokens: Number(__ENV.OUTPUT), ignore_eos: true, temperature: 0 }, { promptTokens: n });
}
`

// config is the experiment's settings.
type config struct {
	runs          int
	duration      time.Duration
	vus, in, out  int
	load, hog     int
	influxd, keep string
}

func main() {
	var c config
	flag.IntVar(&c.runs, "runs", 20, "runs against each simulator")
	flag.DurationVar(&c.duration, "duration", 8*time.Second, "length of each run")
	flag.IntVar(&c.vus, "vus", 4, "concurrent users of each run")
	flag.IntVar(&c.in, "input", 512, "prompt tokens of each request")
	flag.IntVar(&c.out, "output", 32, "output tokens of each request")
	flag.IntVar(&c.load, "load", 1, "CPUs' worth of busy loops in other processes while the runs go")
	flag.IntVar(&c.hog, "hog", 0, "CPUs' worth of busy loops in other processes during the even-numbered identical runs only (0: none)")
	flag.StringVar(&c.influxd, "influxd", os.Getenv("LLMRUN_INFLUXD"), "influxd 1.8 binary for the trend half (default $LLMRUN_INFLUXD; none: no trend)")
	flag.StringVar(&c.keep, "keep", "", "directory to keep the result files in (default: a temporary one, removed)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "verdicts:", err)
		os.Exit(1)
	}
}

// tally counts the verdicts of one kind of check.
type tally struct{ checks, regressions, inconclusive, machineLimited, butForLimit int }

func (t tally) String() string {
	return fmt.Sprintf("%d checks: %d with a regression (exit 109), %d with an inconclusive figure, %d with a figure inconclusive as machine-limited, %d of them a regression but for the machine's limit",
		t.checks, t.regressions, t.inconclusive, t.machineLimited, t.butForLimit)
}

func run(c config) error {
	dir := c.keep
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "verdicts"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin, err := simproc.Build(dir)
	if err != nil {
		return err
	}
	script := filepath.Join(dir, "small.js")
	if err := os.WriteFile(script, []byte(scenario), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	normal, err := startSim(bin, "20ms", "50µs")
	if err != nil {
		return err
	}
	defer normal.Stop()
	slow, err := startSim(bin, "40ms", "100µs")
	if err != nil {
		return err
	}
	defer slow.Stop()
	var influxURL, token string
	if c.influxd != "" {
		srv, err := influxtest.Launch(c.influxd, dir)
		if err != nil {
			return err
		}
		defer srv.Close()
		influxURL, token = srv.URL+"?bucket="+srv.Bucket, srv.Token
	}
	stopLoad := busy(c.load)
	defer stopLoad()

	fmt.Printf("%d runs of %d VUs for %s, %d prompt and %d output tokens, against llmrun sim (prefill 20 ms + 50 µs a token) and one twice as slow to prefill;\n",
		c.runs, c.vus, c.duration, c.in, c.out)
	fmt.Printf("%d CPUs, %d of them kept busy by another process", runtime.NumCPU(), c.load)
	if c.hog > 0 {
		fmt.Printf(", %d more during the even-numbered identical runs", c.hog)
	}
	fmt.Printf("; llmrun %s\n\n", influxNote(influxURL))
	env := append(os.Environ(), "LLMRUN_INFLUXDB_TOKEN="+token)
	var sameCompare, sameTrend, slowCompare tally
	var lastTrend, lastSlow string
	for i := 1; i <= c.runs; i++ {
		file := filepath.Join(dir, fmt.Sprintf("normal-%02d.json", i))
		args := []string{"run", "-q", "--no-color", "--base-url", normal.URL, "--summary-export", file,
			"-e", "VUS=" + strconv.Itoa(c.vus), "-e", "DURATION=" + c.duration.String(),
			"-e", "INPUT=" + strconv.Itoa(c.in), "-e", "OUTPUT=" + strconv.Itoa(c.out)}
		if influxURL != "" {
			args = append(args, "--out", "influxdb="+influxURL, "--testid", "verdicts")
		}
		hogged := c.hog > 0 && i%2 == 0
		stopHog := func() {}
		if hogged {
			stopHog = busy(c.hog)
		}
		_, err := llmrun(ctx, bin, env, append(args, script)...)
		stopHog()
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		line := fmt.Sprintf("run %2d", i)
		if hogged {
			line += " (hog)"
		}
		if i > 1 {
			prev := filepath.Join(dir, fmt.Sprintf("normal-%02d.json", i-1))
			v, err := verdict(ctx, bin, env, "compare", prev, file)
			if err != nil {
				return err
			}
			sameCompare.add(v)
			line += "  compare with run " + strconv.Itoa(i-1) + ": " + v.String()
			if influxURL != "" {
				v, err := verdict(ctx, bin, env, "trend", "--influxdb", influxURL, "--testid", "verdicts")
				if err != nil {
					return err
				}
				sameTrend.add(v)
				lastTrend = v.output
				line += "  trend: " + v.String()
			}
		}
		fmt.Println(line)
	}
	fmt.Println()
	for i := 1; i <= c.runs; i++ {
		file := filepath.Join(dir, fmt.Sprintf("slow-%02d.json", i))
		if _, err := llmrun(ctx, bin, env, "run", "-q", "--no-color", "--base-url", slow.URL, "--summary-export", file,
			"-e", "VUS="+strconv.Itoa(c.vus), "-e", "DURATION="+c.duration.String(),
			"-e", "INPUT="+strconv.Itoa(c.in), "-e", "OUTPUT="+strconv.Itoa(c.out), script); err != nil {
			return fmt.Errorf("slow run %d: %w", i, err)
		}
		v, err := verdict(ctx, bin, env, "compare", filepath.Join(dir, fmt.Sprintf("normal-%02d.json", i)), file)
		if err != nil {
			return err
		}
		slowCompare.add(v)
		lastSlow = v.output
		fmt.Printf("slow run %2d  compare with run %d: %s\n", i, i, v)
	}
	fmt.Printf("\nthe last trend:\n%s\nthe last compare of a slow run:\n%s", lastTrend, lastSlow)
	fmt.Printf("\nsame server, compare: %s\n", sameCompare)
	if influxURL != "" {
		fmt.Printf("same server, trend:   %s\n", sameTrend)
	}
	fmt.Printf("2× prefill, compare:  %s\n", slowCompare)
	return nil
}

// outcome is what one compare or trend said, and its output.
type outcome struct {
	code         int
	regressed    []string
	inconclusive int
	// machineLimited counts the figures inconclusive because a run's
	// machine limited it.
	machineLimited int
	// butForLimit says that a figure would have regressed but for the
	// machine's limit.
	butForLimit bool
	output      string
}

func (o outcome) String() string {
	switch {
	case o.code == 109:
		return "REGRESSION " + strings.Join(o.regressed, ", ")
	case o.butForLimit:
		return fmt.Sprintf("NO VERDICT (exit 112), a regression but for the machine's limit (%d inconclusive, %d of them machine-limited)", o.inconclusive, o.machineLimited)
	case o.machineLimited > 0:
		return fmt.Sprintf("pass (%d inconclusive, %d of them machine-limited)", o.inconclusive, o.machineLimited)
	case o.inconclusive > 0:
		return fmt.Sprintf("pass (%d inconclusive)", o.inconclusive)
	}
	return "pass"
}

func (t *tally) add(o outcome) {
	t.checks++
	if o.code == 109 {
		t.regressions++
	}
	if o.inconclusive > 0 {
		t.inconclusive++
	}
	if o.machineLimited > 0 {
		t.machineLimited++
	}
	if o.butForLimit {
		t.butForLimit++
	}
}

// verdict runs "llmrun compare" or "llmrun trend" and reads its verdict
// from its exit code and output.
func verdict(ctx context.Context, bin string, env []string, args ...string) (outcome, error) {
	out, err := llmrun(ctx, bin, env, append(args, "--no-color")...)
	o := outcome{output: out}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && (exit.ExitCode() == 109 || exit.ExitCode() == 112):
		o.code = exit.ExitCode()
	case err != nil:
		return o, fmt.Errorf("%s: %w\n%s", args[0], err, out)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "│ regression") {
			o.regressed = append(o.regressed, strings.TrimSpace(strings.Split(line, "│")[1]))
		}
		// "  ttft_p99, tpot_p99 inconclusive: reason": the figures of one
		// reason share a line.
		if strings.HasPrefix(line, "? machine-limited, no verdict") {
			o.butForLimit = true
		}
		if names, reason, ok := strings.Cut(line, " inconclusive: "); ok {
			n := len(strings.Split(names, ","))
			o.inconclusive += n
			if strings.HasPrefix(reason, "machine-limited") {
				o.machineLimited += n
			}
		}
	}
	return o, nil
}

// llmrun runs the binary and returns its standard output.
func llmrun(ctx context.Context, bin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && (exit.ExitCode() == 109 || exit.ExitCode() == 112) {
			return string(out), err
		}
		return string(out), fmt.Errorf("llmrun %s: %w\n%s", args[0], err, stderr.String())
	}
	return string(out), nil
}

// startSim starts "llmrun sim" on a free port of 127.0.0.1, the system's
// choice, with the given prefill costs, once it serves.
func startSim(bin, prefillBase, prefillPerToken string) (*simproc.Proc, error) {
	return simproc.StartQuiet([]string{bin, "sim", "--addr", "127.0.0.1:0", "--prefill-base", prefillBase, "--prefill-per-token", prefillPerToken})
}

// busy keeps cpus CPUs busy with shell loops, processes of their own that
// stand for other work on the machine, until stopped.
func busy(cpus int) (stop func()) {
	if cpus <= 0 {
		return func() {}
	}
	cmd := exec.Command("sh", "-c", strings.Repeat("while :; do :; done & ", cpus)+"wait")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "verdicts: no background load:", err)
		return func() {}
	}
	return func() {
		// The loops are the shell's children: end them, then it.
		exec.Command("pkill", "-P", strconv.Itoa(cmd.Process.Pid)).Run()
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// influxNote says whether the runs go to InfluxDB for trend.
func influxNote(url string) string {
	if url == "" {
		return "stores no run in InfluxDB (no influxd): trend is not tried"
	}
	return "stores every run in InfluxDB 1.8 for trend"
}
