// Command soak is the soak test of llmrun's robustness: a long run at
// many concurrent streams against a simulator that injects faults must
// keep the client's memory flat and account for every request.
//
// It builds llmrun, starts "llmrun sim" as a process of its own on a free
// loopback port with a mix of faults (5xx, 429, refused and reset
// connections, early ends, malformed chunks, error events, HTML pages,
// slow headers, 2 MiB lines and stalls that only the request timeout
// ends), and runs "llmrun run" against it with -vus streams for -duration,
// on a scenario of varied prompt and answer lengths, with a JSONL output
// and a result file. While the run goes, it samples the client process's
// RSS, peak RSS, CPU time, threads and open files from /proc every
// -sample, reads the live heap after each garbage collection from the
// client's GODEBUG=gctrace=1 output, and prints a timeline. At the end it
// prints:
//
//   - the flatness verdicts: the maximum RSS (live heap, open files) over
//     the second half of the load against the maximum over its first
//     third, FLAT when the growth is at most max(-flat-pct, -flat-mib);
//   - the accounting: the summary's completed + failed = requests = the
//     JSONL lines; the requests the simulator received = llmrun's requests
//     (+ interrupted + retried attempts); each error class = the faults
//     of that class the simulator injected (GET /stats);
//   - PASS when llmrun exited 0 without a crash, the simulator too, RSS
//     and open files are FLAT, the live heap is not GROWING and every
//     count matches; FAIL otherwise.
//
// The exit code is 0 on PASS, 1 on FAIL, 2 when the harness could not run.
// Run it from the module's root:
//
//	go run ./bench/soak                          # the soak: 300 streams for 10 minutes
//	go run ./bench/soak -duration 30s -vus 50    # a quick check
//
// docs/performance.md describes the rules.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/llmrun/llmrun/bench/internal/simproc"
)

// model is the model name the simulator serves and the run asks for.
const model = "soak"

// gracefulStop is llmrun's default time for iterations still running when
// the duration ends.
const gracefulStop = 30 * time.Second

// scenario is the script the run runs: streamed chat and completions
// requests, a few non-streamed, with prompt and answer lengths that vary
// over two orders of magnitude, reproducible under --seed.
const scenario = `import llm from 'llm';
import { prompts, lengths } from 'data';

const promptLen = lengths.lognormal({ median: 200, sigma: 1, min: 8, max: 4000 });
const outputLen = lengths.lognormal({ median: 64, sigma: 0.9, min: 1, max: 512 });

export default function () {
  const text = prompts.synthetic(promptLen.sample());
  const max_tokens = outputLen.sample();
  const kind = Math.random();
  if (kind < 0.8) {
    llm.stream({ messages: [{ role: 'user', content: text }], max_tokens, ignore_eos: true });
  } else if (kind < 0.95) {
    llm.stream({ prompt: text, max_tokens, ignore_eos: true });
  } else {
    llm.stream({ messages: [{ role: 'user', content: text }], max_tokens, ignore_eos: true, stream: false });
  }
}
`

// config is the harness's settings.
type config struct {
	vus      int
	duration time.Duration
	timeout  time.Duration
	sample   time.Duration
	seed     int64
	faults   faultList
	flatPct  float64
	flatMiB  float64
	keep     bool
}

func main() {
	c := config{faults: faultList{specs: defaultFaults}}
	flag.IntVar(&c.vus, "vus", 300, "concurrent streams (VUs)")
	flag.DurationVar(&c.duration, "duration", 10*time.Minute, "length of the load")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Second, "llmrun's request timeout, which ends stalled streams")
	flag.DurationVar(&c.sample, "sample", 2*time.Second, "interval between samples of the client process")
	flag.Int64Var(&c.seed, "seed", 42, "seed of the run and of the simulator's fault draws")
	flag.Var(&c.faults, "fault", "a simulator fault rule NAME:RATE[:PARAM=VALUE,...] (repeatable; replaces the default mix)")
	flag.Float64Var(&c.flatPct, "flat-pct", 10, "FLAT: most growth of the max RSS, percent of the first third's max")
	flag.Float64Var(&c.flatMiB, "flat-mib", 16, "FLAT: growth of the max RSS always allowed, MiB (when more than -flat-pct allows)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory (binary, script, outputs, logs) after a PASS; it is always kept after a FAIL")
	flag.Parse()
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	os.Exit(run(c, os.Stdout))
}

// validate reports a setting out of range.
func (c config) validate() error {
	switch {
	case c.vus < 1:
		return fmt.Errorf("-vus must be at least 1, got %d", c.vus)
	case c.duration < 10*c.sample:
		return fmt.Errorf("-duration %s leaves fewer than 10 samples of %s", c.duration, c.sample)
	case c.timeout <= 2*time.Second:
		return fmt.Errorf("-timeout %s: want more than 2s, so that slow_headers (1s) requests do not time out", c.timeout)
	case c.sample < 100*time.Millisecond:
		return fmt.Errorf("-sample %s: want at least 100ms", c.sample)
	}
	return nil
}

// run runs the soak and returns the exit code.
func run(c config, out io.Writer) int {
	dir, err := os.MkdirTemp("", "llmrun-soak")
	if err != nil {
		fmt.Fprintln(out, "soak:", err)
		return 2
	}
	pass, err := soak(c, dir, out)
	switch {
	case err != nil:
		fmt.Fprintf(out, "soak: %v\nwork directory kept: %s\n", err, dir)
		return 2
	case !pass:
		fmt.Fprintf(out, "\nFAIL\nwork directory kept: %s (run.out is llmrun's summary, run.err its errors, sim.err the simulator's)\n", dir)
		return 1
	case c.keep:
		fmt.Fprintf(out, "\nPASS\nwork directory kept: %s\n", dir)
	default:
		os.RemoveAll(dir)
		fmt.Fprintln(out, "\nPASS")
	}
	return 0
}

// soak builds llmrun, runs the simulator and the load, and judges them.
// It reports whether every check passed; an error means the harness
// itself could not run.
func soak(c config, dir string, out io.Writer) (bool, error) {
	bin, err := simproc.Build(dir)
	if err != nil {
		return false, err
	}
	script := filepath.Join(dir, "soak.js")
	if err := os.WriteFile(script, []byte(scenario), 0o644); err != nil {
		return false, err
	}
	sim, err := startSim(bin, dir, c.simArgs())
	if err != nil {
		return false, err
	}
	defer sim.Stop()
	fmt.Fprintf(out, "soak: %d VUs for %s against llmrun sim at %s (seed %d), request timeout %s; faults: %s\n",
		c.vus, c.duration, sim.URL, c.seed, c.timeout, c.faults.String())
	fmt.Fprintf(out, "work directory: %s\n\n", dir)
	cr, in, err := load(c, dir, bin, script, sim, out)
	if err != nil {
		return false, err
	}
	return judge(c, dir, out, cr, in), nil
}

// load runs the client against sim while sampling it, then stops sim and
// gathers what both left.
func load(c config, dir, bin, script string, sim *simproc.Proc, out io.Writer) (clientRun, verdictInputs, error) {
	var in verdictInputs
	jsonl := filepath.Join(dir, "requests.jsonl")
	w := &watcher{every: c.sample, row: c.rowEvery(), records: &lineCounter{path: jsonl},
		gc: &gcTrace{path: filepath.Join(dir, "run.err")}, inFlight: inFlight(sim), out: out}
	ctx, cancel := context.WithTimeout(context.Background(), c.deadline())
	defer cancel()
	cr, err := runClient(ctx, bin, dir, c.runArgs(sim.URL, jsonl, filepath.Join(dir, "summary.json"), script), w)
	if err != nil {
		return cr, in, err
	}
	if err := writeSamples(filepath.Join(dir, "samples.csv"), cr.samples); err != nil {
		return cr, in, err
	}
	in.stats, in.statsErr = sim.Stats(context.Background())
	in.simErr = sim.Stop()
	fmt.Fprintln(out)
	if in.lines, err = w.records.update(); err != nil {
		return cr, in, fmt.Errorf("counting the lines of %s: %w", jsonl, err)
	}
	return cr, in, nil
}

// simArgs are the simulator's flags: a batch slot for every stream, so
// that latency stays well under the request timeout, a cheap tokenizer
// and the fault mix.
func (c config) simArgs() []string {
	args := []string{"--model", model, "--seed", strconv.FormatInt(c.seed, 10),
		"--max-num-seqs", strconv.Itoa(c.vus + 64), "--tokenizer", "bytes",
		"--prefill-base", "5ms", "--prefill-per-token", "2us", "--decode-base", "15ms", "--decode-per-seq", "20us"}
	return append(args, simFaultArgs(c.faults.specs)...)
}

// runArgs are "llmrun run"'s flags. The preflight is off: its request
// would draw a fault too, and is in no count of the summary.
func (c config) runArgs(url, jsonl, export, script string) []string {
	return []string{"-q", "--no-color", "--no-preflight", "--base-url", url, "--model", model,
		"-u", strconv.Itoa(c.vus), "-d", c.duration.String(),
		"--timeout", c.timeout.String(), "--idle-timeout", (2 * c.timeout).String(),
		"--seed", strconv.FormatInt(c.seed, 10),
		"--out", "jsonl=" + jsonl, "--summary-export", export, script}
}

// rowEvery is the timeline's interval: a minute, or a tenth of a shorter
// run, in whole samples.
func (c config) rowEvery() time.Duration {
	return min(time.Minute, max(c.sample, (c.duration/10).Truncate(c.sample)))
}

// deadline bounds the client process: the load, the graceful stop, a
// request timeout and two minutes to start and write its results. A run
// that outlives it is killed and fails.
func (c config) deadline() time.Duration {
	return c.duration + gracefulStop + c.timeout + 2*time.Minute
}
