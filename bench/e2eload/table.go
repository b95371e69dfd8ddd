package main

import (
	"fmt"
	"io"
	"strings"
)

// target is what issue 14 asks of llmrun at one stream count.
type target struct {
	maxRatio float64 // llmrun's CPU per token over the floor's
	maxRSS   float64 // MB; 0 for none
}

// targetFor returns the target at n streams: ≤ 1.25× the floor's CPU per
// token at 100, 500 and 1,000 streams with the default 20 ms per token;
// ≤ 1.5× and ≤ 800 MB at 10,000 streams with slow tokens.
func targetFor(c config, n int) (target, bool) {
	switch {
	case c.slow && n == 10000:
		return target{maxRatio: 1.5, maxRSS: 800}, true
	case !c.slow && (n == 100 || n == 500 || n == 1000):
		return target{maxRatio: 1.25}, true
	}
	return target{}, false
}

// printTable prints rows as issue 14's markdown table, then one verdict
// per row.
func printTable(w io.Writer, c config, rows []row) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| client | server | streams | CPU per output token | TTFT mean / p99 | ITL p99 | RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	server := fmt.Sprintf("llmrun sim, %s prefill, %s per token", c.prefill, c.decode)
	for _, r := range rows {
		fl, ll := r.floor, r.llmrun
		fmt.Fprintf(w, "| floor | %s | %d | %.1f µs | %.1f / %.1f ms | %.1f ms | %.0f MB |\n",
			server, r.streams, fl.cpuPerToken(), fl.ttftMean, fl.ttftP99, fl.itlP99, mb(fl.peakRSS))
		fmt.Fprintf(w, "| llmrun | same | %d | %.1f µs (%.2f×) | %.1f / %.1f ms | %.1f ms | %.0f MB (%.1f×) |\n",
			r.streams, ll.cpuPerToken(), r.cpuRatio(), ll.ttftMean, ll.ttftP99, ll.itlP99, mb(ll.peakRSS), mb(ll.peakRSS)/mb(fl.peakRSS))
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "- %d streams: %s\n", r.streams, verdict(c, r))
	}
}

// cpuRatio is llmrun's CPU per token over the floor's.
func (r row) cpuRatio() float64 { return r.llmrun.cpuPerToken() / r.floor.cpuPerToken() }

// verdict is one row's line: the targets met or missed, how llmrun's
// timings compare with the floor's, and whether every request completed.
func verdict(c config, r row) string {
	var parts []string
	if t, ok := targetFor(c, r.streams); ok {
		parts = append(parts, fmt.Sprintf("CPU per token %.2f× the floor's (target ≤ %.2g×): %s",
			r.cpuRatio(), t.maxRatio, metOrMissed(r.cpuRatio() <= t.maxRatio)))
		if t.maxRSS > 0 {
			parts = append(parts, fmt.Sprintf("RSS %.0f MB (target ≤ %.0f MB): %s",
				mb(r.llmrun.peakRSS), t.maxRSS, metOrMissed(mb(r.llmrun.peakRSS) <= t.maxRSS)))
		}
	} else {
		parts = append(parts, fmt.Sprintf("CPU per token %.2f× the floor's (no target at this count)", r.cpuRatio()))
	}
	parts = append(parts, fmt.Sprintf("TTFT mean %+.1f ms, ITL p99 %+.1f ms against the floor's",
		r.llmrun.ttftMean-r.floor.ttftMean, r.llmrun.itlP99-r.floor.itlP99))
	want := int64(c.requests(r.streams))
	if r.floor.completed != want || r.llmrun.completed != want {
		parts = append(parts, fmt.Sprintf("INCOMPLETE: floor %d, llmrun %d of %d requests completed", r.floor.completed, r.llmrun.completed, want))
	}
	return strings.Join(parts, "; ")
}

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// mb is bytes in MB (10⁶ bytes).
func mb(bytes int64) float64 { return float64(bytes) / 1e6 }
