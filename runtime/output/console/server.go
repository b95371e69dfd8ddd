package console

import (
	"fmt"
	"strings"

	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// server prints, after the client's figures, what each scrape target said
// over the measured window: a server block (its queue, batch, KV cache,
// prefix cache and where TTFT went), a gpu block for its GPUs, then the
// section's warnings (the energy per output token is in the serving
// block, beside the throughput). A summary without a server section
// prints nothing.
func (r *renderer) server(s *summary.Summary) {
	sec := s.Server
	if sec == nil {
		return
	}
	for _, t := range sec.Targets {
		if t.Kind == summary.TargetServer {
			r.serverTarget(t, s)
		}
		if t.Kind == summary.TargetGPU || len(t.GPUs) > 0 {
			r.gpuTarget(t)
		}
	}
	for _, w := range sec.Warnings {
		r.printf("  %s\n", r.st.Red("WARNING: "+w))
	}
}

// targetHeading is a block's heading: what it is, the engine and its
// version, the target, and the instance that scraped it.
func (r *renderer) targetHeading(what string, t summary.ServerTarget) {
	engine := engineTitle(t.Engine)
	if t.Version != "" {
		engine += " " + t.Version
	}
	if t.EngineForced {
		engine += " (preset)"
	}
	title := what + " · " + engine + " · " + t.URL
	if t.Engine == t.URL {
		title = what + " · " + t.URL // nvidia-smi names itself
	}
	if t.Instance != "" {
		title += " (scraped by instance " + t.Instance + ")"
	}
	r.heading(title)
}

// engineTitle is the name a person reads for an engine's preset name.
func engineTitle(name string) string {
	if name == "" {
		return "unknown engine"
	}
	if e, err := engines.Preset(name); err == nil {
		return e.Title
	}
	return name
}

// field prints one "label ....... value" line of a block.
func (r *renderer) field(label, value string) {
	r.printf("  %s %s %s\n", label, strings.Repeat(".", max(19-len(label), 1)), value)
}

// scrapes prints how a target's scrapes went.
func (r *renderer) scrapes(sc summary.Scrapes) {
	line := fmt.Sprintf("%d ok", sc.OK)
	if n := sc.Failures(); n > 0 {
		line += fmt.Sprintf(", %s", r.st.Red(fmt.Sprintf("%d failed (%s)", n, sc.FailedKinds())))
	}
	if sc.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped (the previous one still running)", sc.Skipped)
	}
	r.field("scrapes", line)
}

// serverTarget prints an inference server's block.
func (r *renderer) serverTarget(t summary.ServerTarget, s *summary.Summary) {
	r.targetHeading("server", t)
	r.scrapes(t.Scrapes)
	fig := func(f engines.Figure) summary.WindowFigure { return t.Figures[string(f)] }
	for _, g := range []struct {
		label  string
		figure engines.Figure
		format func(float64) string
	}{
		{"running", engines.Running, textfmt.Num},
		{"waiting", engines.Waiting, textfmt.Num},
		{"KV cache", engines.KVCacheUsage, percent},
	} {
		if f := fig(g.figure); f.Mean != nil || f.Max != nil {
			r.field(g.label, fmt.Sprintf("mean %s, max %s", orDash(f.Mean, g.format), orDash(f.Max, g.format)))
		}
	}
	if p := fig(engines.Preemptions).Delta; p != nil {
		r.field("preemptions", textfmt.Num(*p))
	}
	if rate := t.PrefixCacheHitRate; rate != nil {
		line := percent(*rate) + " of prompt tokens hit, as the server counts; " + clientCached(s.Serving)
		if implied, ok := traceImpliedHitRate(s); ok {
			line += "; the trace's hash_ids imply " + percent(implied)
		}
		r.field("prefix cache", line)
	}
	r.counted(t, s.Serving)
	r.ttftWent(t, s)
}

// clientCached is llmrun's own cached-token figure, for beside the
// server's hit rate.
func clientCached(sv summary.Serving) string {
	if sv.CachedTokens == 0 || sv.PromptTokens == 0 {
		return "llmrun: no response reported cached tokens"
	}
	return "llmrun: " + percent(float64(sv.CachedTokens)/float64(sv.PromptTokens)) + " of input tokens served cached, as the responses' usage says"
}

// traceImpliedHitRate is the prefix-cache hit rate the prompts built from
// a trace's hash ids imply: the data module's counters (data.
// RegisterMetrics), their ratio; false when no prompt was built so.
func traceImpliedHitRate(s *summary.Summary) (float64, bool) {
	input := s.Metrics["trace_input_tokens"].Values["count"]
	if input <= 0 {
		return 0, false
	}
	return s.Metrics["trace_expected_cached_tokens"].Values["count"] / input, true
}

// counted prints what the server counted beside what llmrun did.
func (r *renderer) counted(t summary.ServerTarget, sv summary.Serving) {
	var server, client []string
	if n := t.Figures[string(engines.Requests)].Delta; n != nil {
		server = append(server, textfmt.Count(*n, "request"))
		client = append(client, fmt.Sprintf("%d completed", sv.OK))
	}
	if n := t.Figures[string(engines.GenerationTokens)].Delta; n != nil {
		server = append(server, textfmt.Count(*n, "output token"))
		client = append(client, textfmt.Count(sv.OutputTokens, "output token"))
	}
	if len(server) > 0 {
		r.field("server counted", strings.Join(server, ", ")+" (llmrun: "+strings.Join(client, ", ")+")")
	}
}

// ttftWent prints where TTFT went: the server's queue, prefill and TTFT
// (mean, p50, p99) beside llmrun's TTFT, and what lies between the
// server's TTFT and llmrun's: the network, HTTP and the client. A server
// quantile prints by summary.ServerQuantile's rule: a number where its
// bucket is narrow, else the interval its bucket and mean bound it to,
// which the last row does not subtract.
func (r *renderer) ttftWent(t summary.ServerTarget, s *summary.Summary) {
	queue, prefill, ttft := t.Figures[string(engines.QueueTime)], t.Figures[string(engines.PrefillTime)], t.Figures[string(engines.TTFT)]
	if queue.Kind != "histogram" && prefill.Kind != "histogram" && ttft.Kind != "histogram" {
		return
	}
	seconds := textfmt.SecondsAsMillis
	quantile := func(f summary.WindowFigure, q float64) string {
		if v, ok := f.Quantile(q); ok {
			return v.Format(seconds)
		}
		return "-"
	}
	rows := [][]string{}
	bounded := false
	for _, row := range []struct {
		label string
		f     summary.WindowFigure
	}{{"server queue", queue}, {"server prefill", prefill}, {"server TTFT", ttft}} {
		if row.f.Kind == "histogram" {
			rows = append(rows, []string{row.label, orDash(row.f.HistogramMean(), seconds), quantile(row.f, 0.5), quantile(row.f, 0.99)})
			for _, q := range []float64{0.5, 0.99} {
				v, ok := row.f.Quantile(q)
				bounded = bounded || ok && !v.IsNumber()
			}
		}
	}
	client := clientTTFT(s.Latency)
	if client != nil {
		rows = append(rows, []string{"llmrun TTFT", textfmt.Millis(client.Mean), textfmt.Millis(client.P["p50"]), textfmt.Millis(client.P["p99"])})
	}
	outside, dashed := ttftOutside(client, ttft)
	if outside != nil {
		rows = append(rows, outside)
	}
	r.printf("\n")
	r.table([]string{"where TTFT went (ms)", "mean", "p50", "p99"}, rows, 1)
	r.printf("  %s\n", r.st.Faint("the server's figures from its histograms over the measured window; the last row is llmrun's TTFT less the server's, figure by figure"))
	if bounded {
		r.printf("  %s\n", r.st.Faint("a server quantile is known only to the bucket it falls in: \"≤ x\" or \"a–b\" is where its bucket and the exact mean (Markov: a q-quantile ≤ mean/(1−q)) put it; Prometheus' interpolation within the bucket is in the result file"))
	}
	if dashed {
		r.printf("  %s\n", r.st.Faint("— : the server's TTFT quantile is known only to an interval, so llmrun's less it is not a number; the means are exact"))
	}
}

// ttftOutside is the row of llmrun's TTFT less the server's
// (summary.OutsideServer), "—" where the server's quantile is an interval
// (dashed says so); nil without both TTFTs.
func ttftOutside(client *summary.LatencyRow, ttft summary.WindowFigure) (row []string, dashed bool) {
	if client == nil || ttft.Kind != "histogram" {
		return nil, false
	}
	mean, ok := summary.OutsideServer(*client, ttft, "mean")
	if !ok {
		return nil, false
	}
	row = []string{"network, HTTP and the client", textfmt.Millis(mean)}
	for _, stat := range []string{"p50", "p99"} {
		v, ok := summary.OutsideServer(*client, ttft, stat)
		if !ok {
			row, dashed = append(row, "—"), true
			continue
		}
		row = append(row, textfmt.Millis(v))
	}
	return row, dashed
}

// clientTTFT is llmrun's TTFT row (ms), nil without one.
func clientTTFT(rows []summary.LatencyRow) *summary.LatencyRow {
	for i := range rows {
		if rows[i].Metric == "llm_ttft" {
			return &rows[i]
		}
	}
	return nil
}

// gpuTarget prints a target's GPUs: utilisation, memory and power, mean
// and max, and energy, one row per GPU and one for them all.
func (r *renderer) gpuTarget(t summary.ServerTarget) {
	r.targetHeading("gpu", t)
	if t.Kind == summary.TargetGPU {
		r.scrapes(t.Scrapes)
	}
	gpus := t.GPUs
	if t.GPUTotal != nil {
		total := *t.GPUTotal
		total.ID = "all"
		gpus = append(gpus[:len(gpus):len(gpus)], total)
	}
	if len(gpus) > 0 {
		if t.Kind == summary.TargetGPU {
			r.printf("\n")
		}
		rows := make([][]string, len(gpus))
		for i, g := range gpus {
			fig := func(f engines.Figure) summary.WindowFigure { return g.Figures[string(f)] }
			rows[i] = []string{g.ID, g.Model, meanMax(fig(engines.GPUUtilization), percent), meanMax(fig(engines.GPUMemoryUsed), gib),
				meanMax(fig(engines.GPUPower), watts), orDash(fig(engines.GPUEnergy).Delta, joules)}
		}
		r.table([]string{"gpu", "model", "utilisation mean / max", "memory mean / max", "power mean / max", "energy"}, rows, 2)
	}
	if e := t.Energy; e != nil {
		r.field("energy", joules(e.Joules)+" over the measured window ("+energyMethod(e.Method)+")")
	}
}

// energyPerToken prints the energy per output token of the run.
func (r *renderer) energyPerToken(e *summary.Energy) {
	if e == nil || e.JoulesPerOutputToken == nil || e.OutputTokensPerJoule == nil {
		return
	}
	r.field("energy per token", fmt.Sprintf("%s J per output token, %s output tokens per J (%s for %s)",
		textfmt.Num(*e.JoulesPerOutputToken), textfmt.Num(*e.OutputTokensPerJoule), joules(e.Joules), textfmt.Count(e.OutputTokens, "output token")))
}

// energyMethod says in words how energy was measured.
func energyMethod(method string) string {
	switch method {
	case summary.EnergyCounter:
		return "from the energy counter"
	case summary.EnergyIntegrated:
		return "power integrated over the samples"
	}
	return method
}

func percent(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }
func gib(v float64) string     { return fmt.Sprintf("%.1f GiB", v/(1<<30)) }
func watts(v float64) string   { return textfmt.Num(v) + " W" }
func joules(v float64) string  { return grouped(fmt.Sprintf("%.0f", v)) + " J" }

// orDash formats a value, "-" when absent.
func orDash(v *float64, format func(float64) string) string {
	if v == nil {
		return "-"
	}
	return format(*v)
}

// meanMax is a gauge's "mean / max", "-" when absent.
func meanMax(f summary.WindowFigure, format func(float64) string) string {
	if f.Mean == nil && f.Max == nil {
		return "-"
	}
	return orDash(f.Mean, format) + " / " + orDash(f.Max, format)
}
