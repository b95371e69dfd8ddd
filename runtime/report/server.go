package report

import (
	"fmt"
	"strings"

	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// The server section of the report: what the server's own metrics and its
// GPUs' telemetry said (the result file's server section), as charts on
// the timeline's time axis, a tile of the headline and two tables.

// serverEnd is the time of the last point of the section's series, in
// seconds since the run's start; 0 when it has none.
func serverEnd(sec *summary.Server) float64 {
	var end float64
	if sec == nil {
		return 0
	}
	for _, t := range sec.Targets {
		for _, p := range t.Series {
			end = max(end, p.T)
		}
	}
	return end
}

// serverSeries is one figure of each target of a kind that has it, over
// time, scaled by scale; the series are named by what, prefixed with the
// target's URL when several targets of the kind have it.
func serverSeries(sec *summary.Server, kind, what string, field func(summary.ServerPoint) *float64, scale float64, unit string) []series {
	var out []series
	for _, t := range sec.Targets {
		if t.Kind != kind {
			continue
		}
		var pts []point
		for _, p := range t.Series {
			if v := field(p); v != nil {
				y := *v * scale
				pts = append(pts, point{X: p.T, Y: y, Tip: fmt.Sprintf("%s s: %s %s%s", textfmt.Num(p.T), what, textfmt.Num(y), unit)})
			}
		}
		if len(pts) > 0 {
			out = append(out, series{Name: t.URL + " " + what, Points: pts})
		}
	}
	if len(out) == 1 {
		out[0].Name = what
	}
	return out
}

// serverCharts are the charts of the section's series on the timeline's
// time axis: the server's running and waiting requests, its KV-cache use,
// the GPUs' utilisation and power; a chart none of whose targets has its
// figures is left out. The warmup, when there was one, is shaded on
// each.
func serverCharts(sec *summary.Server, timeAxis axisSpec, warmup []band) []*Chart {
	if sec == nil {
		return nil
	}
	const height = 200
	percentAxis := axisSpec{Label: "%", Lo: 0, Hi: 100}
	specs := []chartSpec{
		{Name: "server-queue", Title: "Server queue over time: requests running and waiting in the server, as scraped",
			Y: axisSpec{Label: "requests", Zero: true},
			Series: append(serverSeries(sec, summary.TargetServer, "running", func(p summary.ServerPoint) *float64 { return p.Running }, 1, ""),
				serverSeries(sec, summary.TargetServer, "waiting", func(p summary.ServerPoint) *float64 { return p.Waiting }, 1, "")...)},
		{Name: "server-kv-cache", Title: "KV-cache use over time: the fraction of the server's KV cache in use, as scraped",
			Y: percentAxis, Series: serverSeries(sec, summary.TargetServer, "KV cache", func(p summary.ServerPoint) *float64 { return p.KVCacheUsage }, 100, " %")},
		{Name: "gpu-utilization", Title: "GPU utilisation over time: averaged over each target's GPUs, as sampled",
			Y: percentAxis, Series: serverSeries(sec, summary.TargetGPU, "GPU utilisation", func(p summary.ServerPoint) *float64 { return p.GPUUtilization }, 100, " %")},
		{Name: "gpu-power", Title: "GPU power over time: summed over each target's GPUs, as sampled",
			Y: axisSpec{Label: "W", Zero: true}, Series: serverSeries(sec, summary.TargetGPU, "power", func(p summary.ServerPoint) *float64 { return p.GPUPower }, 1, " W")},
	}
	var charts []*Chart
	for _, spec := range specs {
		if len(spec.Series) == 0 {
			continue
		}
		spec.Width, spec.Height, spec.RightMargin, spec.Legend, spec.X, spec.Bands = wideWidth, height, true, true, timeAxis, warmup
		charts = append(charts, buildChart(spec))
	}
	return charts
}

// energyTile is the headline's energy per output token, false when the
// section has none.
func energyTile(sec *summary.Server) (field, bool) {
	if sec == nil || sec.Energy == nil || sec.Energy.JoulesPerOutputToken == nil || sec.Energy.OutputTokensPerJoule == nil {
		return field{}, false
	}
	e := sec.Energy
	// Three significant digits: a token's energy is a fraction of a joule.
	// The joules and how they were measured are in the GPU table.
	return field{"energy per output token", fmt.Sprintf("%.3g J/tok (%.3g tok/J)", *e.JoulesPerOutputToken, *e.OutputTokensPerJoule)}, true
}

// figure is a target's window figure by canonical name.
func figure(t summary.ServerTarget, f engines.Figure) summary.WindowFigure {
	return t.Figures[string(f)]
}

// pair formats two values of a figure as "a / b", each by format, "-"
// for one the window did not give.
func pair(a, b *float64, format func(float64) string) string {
	return joined(format, a, b)
}

// joined formats values as "a / b / ...", each by format, "-" for one
// the window did not give.
func joined(format func(float64) string, values ...*float64) string {
	cells := make([]string, len(values))
	for i, v := range values {
		cells[i] = "-"
		if v != nil {
			cells[i] = format(*v)
		}
	}
	return strings.Join(cells, " / ")
}

// serverLatency is a server histogram's "mean / p50 / p99" in ms, each
// quantile by summary.ServerQuantile's rule: a number where its bucket
// is narrow, else the interval its bucket and mean bound it to.
func serverLatency(f summary.WindowFigure) string {
	cells := []string{joined(seconds, f.HistogramMean())}
	for _, q := range []float64{0.5, 0.99} {
		cell := "-"
		if v, ok := f.Quantile(q); ok {
			cell = v.Format(seconds)
		}
		cells = append(cells, cell)
	}
	return strings.Join(cells, " / ")
}

// seconds formats seconds as milliseconds.
var seconds = textfmt.SecondsAsMillis

// serverTable is the window figures of the section's server targets, one
// column each, with llmrun's TTFT beside the server's and their
// difference: the network, HTTP and the client. nil without a server
// target.
func serverTable(s *summary.Summary) *table {
	if s.Server == nil {
		return nil
	}
	var targets []summary.ServerTarget
	for _, t := range s.Server.Targets {
		if t.Kind == summary.TargetServer {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	ttft, hasTTFT := findLatency(s.Latency, "llm_ttft")
	client := func(stat string) *float64 {
		v, ok := ttft.P[stat]
		if stat == "mean" {
			v, ok = ttft.Mean, true
		}
		if !hasTTFT || !ok {
			return nil
		}
		return &v
	}
	outside := func(t summary.ServerTarget) string {
		cells := make([]string, 0, 3)
		for _, stat := range []string{"mean", "p50", "p99"} {
			cell := "-"
			if v, ok := summary.OutsideServer(ttft, figure(t, engines.TTFT), stat); hasTTFT && ok {
				cell = textfmt.Millis(v)
			} else if hasTTFT && figure(t, engines.TTFT).Kind == "histogram" && stat != "mean" {
				cell = "—"
			}
			cells = append(cells, cell)
		}
		return strings.Join(cells, " / ")
	}
	rows := []struct {
		label string
		cell  func(summary.ServerTarget) string
	}{
		{"engine", func(t summary.ServerTarget) string { return orDash(t.Engine) + versionOf(t) }},
		{"running requests (mean / max)", func(t summary.ServerTarget) string {
			f := figure(t, engines.Running)
			return pair(f.Mean, f.Max, textfmt.Num)
		}},
		{"waiting requests (mean / max)", func(t summary.ServerTarget) string {
			f := figure(t, engines.Waiting)
			return pair(f.Mean, f.Max, textfmt.Num)
		}},
		{"KV-cache use (mean / max)", func(t summary.ServerTarget) string {
			f := figure(t, engines.KVCacheUsage)
			return pair(f.Mean, f.Max, percent)
		}},
		{"preemptions", func(t summary.ServerTarget) string {
			if d := figure(t, engines.Preemptions).Delta; d != nil {
				return textfmt.Num(*d)
			}
			return "-"
		}},
		{"prefix-cache hit rate", func(t summary.ServerTarget) string {
			if r := t.PrefixCacheHitRate; r != nil {
				return percent(*r)
			}
			return "-"
		}},
		{"queue time, ms (mean / p50 / p99)", func(t summary.ServerTarget) string {
			return serverLatency(figure(t, engines.QueueTime))
		}},
		{"prefill time, ms (mean / p50 / p99)", func(t summary.ServerTarget) string {
			return serverLatency(figure(t, engines.PrefillTime))
		}},
		{"TTFT in the server, ms (mean / p50 / p99)", func(t summary.ServerTarget) string {
			return serverLatency(figure(t, engines.TTFT))
		}},
		{"TTFT measured by llmrun, ms (mean / p50 / p99)", func(summary.ServerTarget) string {
			return joined(textfmt.Millis, client("mean"), client("p50"), client("p99"))
		}},
		{"TTFT outside the server: network, HTTP, client, ms (mean / p50 / p99)", outside},
	}
	tb := &table{Header: []string{"over the measured window"}, FirstFigure: 1}
	for _, t := range targets {
		tb.Header = append(tb.Header, t.URL)
	}
	for _, r := range rows {
		line := []string{r.label}
		for _, t := range targets {
			line = append(line, r.cell(t))
		}
		tb.Rows = append(tb.Rows, line)
	}
	return tb
}

// versionOf is " version" when the target says its version.
func versionOf(t summary.ServerTarget) string {
	if t.Version == "" {
		return ""
	}
	return " " + t.Version
}

// gpuTable is the window figures of the section's GPU targets, one row
// each: their GPUs together (utilisation averaged, power summed) and the
// energy they drew. nil without a GPU target.
func gpuTable(sec *summary.Server) *table {
	if sec == nil {
		return nil
	}
	tb := &table{Header: []string{"GPU telemetry", "GPUs", "utilisation (mean / max)", "memory used, GiB (mean / max)", "power, W (mean / max)", "energy"}, FirstFigure: 1}
	for _, t := range sec.Targets {
		if t.Kind != summary.TargetGPU {
			continue
		}
		var total summary.GPU
		if t.GPUTotal != nil {
			total = *t.GPUTotal
		}
		util, mem, power := total.Figures[string(engines.GPUUtilization)], total.Figures[string(engines.GPUMemoryUsed)], total.Figures[string(engines.GPUPower)]
		energy := "-"
		if t.Energy != nil {
			energy = textfmt.Num(t.Energy.Joules) + " J (" + t.Energy.Method + ")"
		}
		tb.Rows = append(tb.Rows, []string{t.URL, gpuCount(t), pair(util.Mean, util.Max, percent),
			pair(mem.Mean, mem.Max, func(v float64) string { return textfmt.Num(v / (1 << 30)) }), pair(power.Mean, power.Max, textfmt.Num), energy})
	}
	if len(tb.Rows) == 0 {
		return nil
	}
	return tb
}

// gpuCount is how many GPUs a target has, with their model when they
// share one.
func gpuCount(t summary.ServerTarget) string {
	n := fmt.Sprint(len(t.GPUs))
	if len(t.GPUs) == 0 {
		return n
	}
	model := t.GPUs[0].Model
	for _, g := range t.GPUs[1:] {
		if g.Model != model {
			return n
		}
	}
	if model == "" {
		return n
	}
	return n + " × " + model
}
