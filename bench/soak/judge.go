package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/summary"
)

// fdFloor is the growth of open files the flatness rule always allows: a
// few connections more or less at the moment of a sample.
const fdFloor = 16

// verdictInputs are what the end of the run left besides the client's
// own figures.
type verdictInputs struct {
	stats    llmsim.Stats
	statsErr error
	simErr   error
	lines    int64
}

// judge prints the verdicts of a finished soak and reports whether all
// passed.
func judge(c config, dir string, out io.Writer, cr clientRun, in verdictInputs) bool {
	pass := judgeFlatness(c, out, cr)
	fmt.Fprintln(out, "\nprocesses:")
	checks := processChecks(c, dir, cr, in)
	sum, err := summary.ReadJSON(filepath.Join(dir, "summary.json"))
	if err != nil {
		checks = append(checks, check{"llmrun's result file", err.Error(), "readable", false})
		printChecks(out, checks)
		return false
	}
	pass = printChecks(out, checks) && pass
	if in.statsErr != nil {
		return false
	}
	fmt.Fprintf(out, "\naccounting: llmrun: %d requests (%d completed, %d failed), %d interrupted by the end of the run, %d retried attempts\n",
		sum.Serving.Requests, sum.Serving.OK, sum.Serving.Failed, sum.Serving.Interrupted, sumCounts(sum.Retries))
	printSimStats(out, in.stats)
	pass = printChecks(out, accountChecks(outcome{sum: sum, stats: in.stats, lines: in.lines})) && pass
	printClientWarnings(out, sum.Client.Warnings)
	return pass
}

// printClientWarnings prints llmrun's warnings about its own machine: a
// starved machine explains timeouts beyond the stalls.
func printClientWarnings(out io.Writer, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(out, "llmrun warned: %s\n", w)
	}
}

// judgeFlatness prints the verdicts on RSS, the live heap and open files,
// and reports whether they pass: RSS and open files FLAT, the live heap
// not GROWING (too few collections to judge it is no failure: a growing
// heap is collected more often).
func judgeFlatness(c config, out io.Writer, cr clientRun) bool {
	rss := judgeFlat(points(cr.samples, sample.rssMiB), c.duration,
		flatRule{what: "RSS", unit: " MiB", pct: c.flatPct, floor: c.flatMiB})
	heap := judgeFlat(cr.liveHeap, c.duration,
		flatRule{what: "live heap after GC", unit: " MiB", pct: c.flatPct, floor: c.flatMiB})
	fds := judgeFlat(points(cr.samples, func(s sample) float64 { return float64(s.fds) }), c.duration,
		flatRule{what: "open files", pct: c.flatPct, floor: fdFloor})
	fmt.Fprintf(out, "memory, over the %d samples and %d garbage collections of the load (the first %s of the process):\n%s\n%s\n%s\n",
		countUntil(points(cr.samples, sample.rssMiB), c.duration), countUntil(cr.liveHeap, c.duration), c.duration, rss, heap, fds)
	fmt.Fprintf(out, "peak RSS of the whole process (getrusage): %.1f MiB; CPU time %s\n", float64(cr.peakKiB)/1024, cr.cpu.Round(100*time.Millisecond))
	return rss.flat && fds.flat && (heap.flat || !heap.enough)
}

// countUntil counts the points read at or before end.
func countUntil(ps []point, end time.Duration) int {
	n := 0
	for _, p := range ps {
		if p.at <= end {
			n++
		}
	}
	return n
}

// processChecks are the checks that neither process crashed or hung.
func processChecks(c config, dir string, cr clientRun, in verdictInputs) []check {
	checks := []check{
		{"llmrun run: exit code", fmt.Sprint(cr.exitCode), "0", cr.exitCode == 0 && !cr.killed},
	}
	if cr.killed {
		checks = append(checks, check{"llmrun run: ended by itself", "killed", fmt.Sprintf("within %s", c.deadline()), false})
	}
	bad, err := stderrProblems(filepath.Join(dir, "run.err"))
	switch {
	case err != nil:
		checks = append(checks, check{"llmrun run: stderr", err.Error(), "readable", false})
	default:
		first := "none"
		if len(bad) > 0 {
			first = bad[0]
		}
		checks = append(checks, check{"llmrun run: panics and fatal errors in stderr", first, "none", len(bad) == 0})
	}
	statsOK, simOK := "answered", "0"
	if in.statsErr != nil {
		statsOK = in.statsErr.Error()
	}
	if in.simErr != nil {
		simOK = in.simErr.Error()
	}
	return append(checks,
		check{"llmrun sim: GET /stats after the run", statsOK, "answered", in.statsErr == nil},
		check{"llmrun sim: exit after an interrupt", simOK, "0", in.simErr == nil})
}
