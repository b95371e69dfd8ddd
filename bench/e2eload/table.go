package main

import (
	"fmt"
	"io"
	"slices"
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
// per row. Each figure is the median over the row's runs, RSS the
// largest; a ratio's range over the pairs follows its median.
func printTable(w io.Writer, c config, rows []row) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| client | server | streams | CPU per output token | TTFT mean / p99 | ITL p99 | RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	server := fmt.Sprintf("llmrun sim, %s prefill, %s per token", c.prefill, c.decode)
	for _, r := range rows {
		fl, ll := summarize(r.floor), summarize(r.llmrun)
		fmt.Fprintf(w, "| floor | %s | %d | %.1f µs | %.1f / %.1f ms | %.1f ms | %s |\n",
			server, r.streams, fl.cpuPerToken, fl.ttftMean, fl.ttftP99, fl.itlP99, rssText(fl.rss, 0))
		fmt.Fprintf(w, "| llmrun | same | %d | %.1f µs (%s) | %.1f / %.1f ms | %.1f ms | %s |\n",
			r.streams, ll.cpuPerToken, ratioText(r.cpuRatios()), ll.ttftMean, ll.ttftP99, ll.itlP99, rssText(ll.rss, fl.rss))
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "- %d streams: %s\n", r.streams, verdict(c, r))
	}
}

// client is one client's figures over a row's runs.
type client struct {
	cpuPerToken, ttftMean, ttftP99, itlP99 float64 // medians
	rss                                    float64 // MB, the largest
	completed                              int64   // the fewest
}

func summarize(runs []figures) client {
	cl := client{
		cpuPerToken: median(runs, figures.cpuPerToken),
		ttftMean:    median(runs, func(f figures) float64 { return f.ttftMean }),
		ttftP99:     median(runs, func(f figures) float64 { return f.ttftP99 }),
		itlP99:      median(runs, func(f figures) float64 { return f.itlP99 }),
		completed:   runs[0].completed,
	}
	for _, f := range runs {
		cl.rss = max(cl.rss, mb(f.peakRSS))
		cl.completed = min(cl.completed, f.completed)
	}
	return cl
}

// median of get over runs.
func median[T any](runs []T, get func(T) float64) float64 { return medianOf(values(runs, get)) }

// values is get of each of runs.
func values[T any](runs []T, get func(T) float64) []float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = get(r)
	}
	return v
}

func medianOf(v []float64) float64 {
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// cpuRatios are llmrun's CPU per token over the floor's, pair by pair.
func (r row) cpuRatios() []float64 {
	v := make([]float64, len(r.floor))
	for i := range r.floor {
		v[i] = r.llmrun[i].cpuPerToken() / r.floor[i].cpuPerToken()
	}
	return v
}

// ratioText is a ratio's median, and its range when there are several.
func ratioText(ratios []float64) string {
	m := medianOf(slices.Clone(ratios))
	if len(ratios) == 1 {
		return fmt.Sprintf("%.2f×", m)
	}
	return fmt.Sprintf("%.2f×; %.2f–%.2f× over %d pairs", m, slices.Min(ratios), slices.Max(ratios), len(ratios))
}

// verdict is one row's line: the targets met or missed (by the median
// ratio and the largest RSS), how llmrun's timings compare with the
// floor's, and whether every request completed.
func verdict(c config, r row) string {
	fl, ll := summarize(r.floor), summarize(r.llmrun)
	ratio := medianOf(r.cpuRatios())
	var parts []string
	if t, ok := targetFor(c, r.streams); ok {
		parts = append(parts, fmt.Sprintf("CPU per token %.2f× the floor's (target ≤ %g×): %s",
			ratio, t.maxRatio, metOrMissed(ratio <= t.maxRatio)))
		if t.maxRSS > 0 {
			parts = append(parts, fmt.Sprintf("RSS %.0f MB (target ≤ %g MB): %s", ll.rss, t.maxRSS, metOrMissed(ll.rss <= t.maxRSS)))
		}
	} else {
		parts = append(parts, fmt.Sprintf("CPU per token %.2f× the floor's (no target at this count)", ratio))
	}
	parts = append(parts, fmt.Sprintf("TTFT mean %+.1f ms, ITL p99 %+.1f ms against the floor's",
		ll.ttftMean-fl.ttftMean, ll.itlP99-fl.itlP99))
	want := int64(c.requests(r.streams))
	if fl.completed != want || ll.completed != want {
		parts = append(parts, fmt.Sprintf("INCOMPLETE: floor %d, llmrun %d of %d requests completed in a run", fl.completed, ll.completed, want))
	}
	return strings.Join(parts, "; ")
}

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// rssText is a peak RSS in MB, with its ratio to floor when floor is
// given; "?" where the system reported none.
func rssText(rss, floor float64) string {
	switch {
	case rss <= 0:
		return "?"
	case floor <= 0:
		return fmt.Sprintf("%.0f MB", rss)
	}
	return fmt.Sprintf("%.0f MB (%.1f×)", rss, rss/floor)
}

// mb is bytes in MB (10⁶ bytes).
func mb(bytes int64) float64 { return float64(bytes) / 1e6 }
