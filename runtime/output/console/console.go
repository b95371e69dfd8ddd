// Package console is the output of a run to the terminal (Console): the
// banner and what the preflight found before the run, the live progress
// line while it goes, and the summary at its end, in the look of package
// textfmt.
package console

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// Render writes the end-of-run summary. A sweep's (Summary.Capacity)
// leads with its answer: the verdict and the levels table, then the whole
// run's serving block, labelled as pooled over the levels; the pooled
// latency table is left out, since a percentile over every level is the
// latency of none (the result file keeps it), and so is the scenarios
// table when every scenario is a level.
func Render(w io.Writer, s *summary.Summary, st textfmt.Style) error {
	r := &renderer{w: w, st: st}
	switch {
	case s.Capacity != nil && s.Capacity.Search != nil:
		r.search(s)
		r.serving("whole run (all levels pooled)", s)
	case s.Capacity != nil:
		r.capacity(s)
		r.serving("whole run (all levels pooled)", s)
	default:
		r.serving("serving", s)
	}
	r.outcome(s)
	if s.Capacity == nil {
		r.chainStops(s)
	}
	r.client(s.Client)
	r.tokenChecks(s.TokenChecks)
	r.promptCheck(s.PromptCheck)
	r.uniqueCache(s.UniqueCache)
	if s.Capacity == nil {
		r.latency(s.Latency)
	}
	r.server(s)
	r.scenarios(s)
	r.errors(s)
	r.checks(s.Checks)
	r.thresholds(s)
	r.custom(s)
	r.outputs(s.Outputs)
	r.footer(s)
	return r.err
}

type renderer struct {
	w   io.Writer
	st  textfmt.Style
	err error
}

func (r *renderer) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}

func (r *renderer) heading(title string) { r.printf("\n%s\n", r.st.Bold("█ "+title)) }

// table prints rows under header; columns from firstFigure on hold figures
// and are right-aligned, the others are text.
func (r *renderer) table(header []string, rows [][]string, firstFigure int) {
	if r.err != nil {
		return
	}
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignLeft
		if i >= firstFigure {
			align[i] = tw.AlignRight
		}
	}
	r.err = textfmt.Table(r.w, header, align, rows)
}

// serving prints the serving block: requests, throughput, tokens and,
// when the run's GPUs were read, the energy per output token beside the
// throughput it was spent on.
func (r *renderer) serving(title string, sum *summary.Summary) {
	s, server := sum.Serving, sum.Server
	r.heading(title)
	failed := fmt.Sprintf("%d", s.Failed)
	if s.Failed > 0 {
		failed = r.st.Red(failed)
	}
	rate := fmt.Sprintf("%.2f %%", 100*s.SuccessRate)
	r.printf("  requests ........... %d ok, %s failed (success rate %s)", s.OK, failed, rate)
	if s.Interrupted > 0 {
		r.printf(", %d interrupted (excluded)", s.Interrupted)
	}
	r.printf("\n")
	r.printf("  duration ........... %.1f s\n", s.DurationSeconds)
	r.printf("  request throughput . %s req/s\n", textfmt.Num(s.RequestThroughput))
	r.printf("  output tokens ...... %d (%s tok/s; %s per request)", s.OutputTokens, textfmt.Num(s.OutputTokenThroughput), textfmt.Num(s.MeanOutputTokens))
	if s.ReasoningTokens > 0 {
		r.printf(", %d of them reasoning", s.ReasoningTokens)
	}
	r.printf("\n")
	r.printf("  input tokens ....... %d (%s per request)", s.PromptTokens, textfmt.Num(s.MeanInputTokens))
	if s.CachedTokens > 0 && s.PromptTokens > 0 {
		r.printf(", %.1f %% served from the prefix cache", 100*float64(s.CachedTokens)/float64(s.PromptTokens))
	}
	if implied, ok := traceImpliedHitRate(sum); ok {
		r.printf(", the trace's hash_ids imply %s", percent(implied))
	}
	r.printf("\n")
	r.printf("  total throughput ... %s tok/s (input + output)\n", textfmt.Num(s.TotalTokenThroughput))
	if s.Documents > 0 {
		r.printf("  documents .......... %d reranked (%s documents/s)\n", s.Documents, textfmt.Num(s.DocumentThroughput))
	}
	if server != nil {
		r.energyPerToken(server.Energy)
	}
	if g := s.Goodput; g != nil {
		r.printf("  goodput ............ %s req/s (%d of %d requests met %s)\n", textfmt.Num(g.RequestGoodput), g.Good, g.Requests, g.Bounds)
	}
	r.printf("  iterations ......... %d", s.Iterations)
	if s.InterruptedIterations > 0 {
		r.printf(", %d interrupted", s.InterruptedIterations)
	}
	if s.DroppedIterations > 0 {
		r.printf(", %d planned not started (dropped)", s.DroppedIterations)
	}
	r.printf("\n")
	if s.WarmupIterations > 0 || s.WarmupRequests > 0 {
		r.printf("  warmup ............. %s in %s, excluded from every figure\n", textfmt.Count(s.WarmupRequests, "request"), textfmt.Count(s.WarmupIterations, "iteration"))
	}
	if s.LagP99 > 0 {
		r.printf("  arrivals ........... started late by p50 %s ms, p99 %s ms\n", textfmt.Millis(s.LagP50), textfmt.Millis(s.LagP99))
	}
}

// client prints how the load generator fared, and what the rest of its
// machine did when that was measured, loudly when either may have limited
// the run.
func (r *renderer) client(c health.Report) {
	if !c.Measured() {
		why := ""
		if c.MachineError != "" {
			why = ": " + c.MachineError
		}
		r.printf("  load generator ..... not measured%s\n", why)
		return
	}
	cpu := "n/a"
	if c.CPU >= 0 {
		cpu = fmt.Sprintf("%.0f %% of %s", 100*c.CPU, textfmt.Count(c.Procs, "CPU"))
	}
	r.printf("  load generator ..... CPU %s, scheduling delay p99 %s ms (max %s ms)\n", cpu, textfmt.Millis(c.SchedDelayP99), textfmt.Millis(c.SchedDelayMax))
	if c.Machine != nil {
		r.printf("  machine ............ %s\n", c.Machine)
	}
	for _, w := range c.Warnings {
		r.printf("  %s\n", r.st.Red("WARNING: "+w))
	}
}

// tokenChecks prints how the server's usage compares with a second count
// of the output tokens, loudly when they disagree.
func (r *renderer) tokenChecks(cs []summary.TokenCheck) {
	for _, tc := range cs {
		if tc.Warning != "" {
			r.printf("  %s\n", r.st.Red("WARNING: "+tc.Warning))
			continue
		}
		r.printf("  token check ........ usage %d tokens, %s %d (%+.1f %%)\n", tc.UsageTokens, tc.Source, tc.CheckTokens, tc.DiffPercent)
	}
}

// promptCheck prints how the prompt lengths asked for compare with the
// server's count, loudly when a chat template does not explain the gap.
func (r *renderer) promptCheck(pc *summary.PromptCheck) {
	if pc == nil {
		return
	}
	if pc.Warning != "" {
		r.printf("  %s\n", r.st.Red("WARNING: "+pc.Warning))
		return
	}
	gap := "the same"
	if pc.PerRequest != 0 {
		gap = fmt.Sprintf("%+.1f per request: a chat template's tokens", pc.PerRequest)
	}
	r.printf("  prompt check ....... asked %s input tokens per request, the server counts %s (%s)\n",
		textfmt.Num(float64(pc.RequestedTokens)/float64(pc.Requests)), textfmt.Num(float64(pc.UsageTokens)/float64(pc.Requests)), gap)
}

// uniqueCache prints what the server's prefix cache served of the prompts
// declared unique: a line, or a warning when it served them.
func (r *renderer) uniqueCache(u *summary.UniqueCache) {
	switch {
	case u == nil:
	case u.Warning != "":
		r.printf("  %s\n", r.st.Red("WARNING: "+u.Warning))
	default:
		r.printf("  unique prompts ..... %.1f %% of their tokens served from the prefix cache (%d of %d requests)\n",
			u.SharePercent, u.CachedRequests, u.Requests)
	}
}

func (r *renderer) latency(rows []summary.LatencyRow) {
	if len(rows) == 0 {
		return
	}
	header := []string{"latency (ms)", "count", "mean"}
	for _, p := range summary.Percentiles {
		header = append(header, fmt.Sprintf("p%g", p))
	}
	header = append(header, "max")
	var data [][]string
	for _, row := range rows {
		line := []string{row.Label, fmt.Sprintf("%d", row.Count), textfmt.Millis(row.Mean)}
		for _, p := range summary.Percentiles {
			line = append(line, textfmt.Millis(row.P[fmt.Sprintf("p%g", p)]))
		}
		data = append(data, append(line, textfmt.Millis(row.Max)))
	}
	r.printf("\n")
	r.table(header, data, 1)
}

// scenarios prints one row per scenario, the figures of a sweep level or of
// one workload of a mix side by side; throughputs are over each scenario's
// own window. In a sweep, the levels table has the levels' rows: this one
// has only the other scenarios, if any.
func (r *renderer) scenarios(s *summary.Summary) {
	scs := s.Scenarios
	if s.Capacity != nil {
		scs = slices.DeleteFunc(slices.Clone(scs), func(sc summary.ScenarioSummary) bool {
			return slices.ContainsFunc(s.Capacity.Levels, func(l summary.CapacityLevel) bool { return l.Scenario == sc.Name }) || skipped(s, sc.Name)
		})
	}
	if len(scs) == 0 {
		return
	}
	r.heading("by scenario")
	shapes := map[string]summary.ScenarioShape{}
	var stopped []string
	for _, sh := range s.Meta.LoadShape {
		shapes[sh.Name] = sh
		if sh.Stopped() != "" && slices.ContainsFunc(scs, func(sc summary.ScenarioSummary) bool { return sc.Name == sh.Name }) {
			stopped = append(stopped, sh.Stopped())
		}
	}
	header := []string{"scenario", "VUs used/max", "ok", "failed", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "E2E p99"}
	cached := anyCached(scs)
	if cached {
		header = append(header, "input cached")
	}
	rows := make([][]string, len(scs))
	for i, sc := range scs {
		rows[i] = append([]string{sc.Name, shapes[sc.Name].VUs()}, scenarioFigures(sc, cached)...)
	}
	r.table(header, rows, 1)
	if len(stopped) > 0 {
		r.printf("  %s\n", r.st.Red("interrupted before the end of its plan: "+strings.Join(stopped, ", ")+"; figures cover the part that ran"))
	}
	r.printf("  %s\n", r.st.Faint("latencies in ms; throughputs over each scenario's own run time; every scenario's full figures are in --summary-export"))
}

// anyCached says whether a server reported its prefix cache for one of
// the scenarios, which earns the tables a column for its share of the
// input.
func anyCached(scs []summary.ScenarioSummary) bool {
	return slices.ContainsFunc(scs, func(sc summary.ScenarioSummary) bool { return sc.Serving.CachedTokens > 0 })
}

// scenarioFigures are a scenario's cells in the scenarios and levels
// tables: ok, failed, req/s, out tok/s, TTFT p50 and p99, TPOT p50 and
// p99, E2E p99, and the prefix cache's share of the input when cached.
func scenarioFigures(sc summary.ScenarioSummary, cached bool) []string {
	p := func(metric, pct string) string {
		for _, row := range sc.Latency {
			if row.Metric == metric {
				return textfmt.Millis(row.P[pct])
			}
		}
		return "-"
	}
	sv := sc.Serving
	cells := []string{fmt.Sprint(sv.OK), fmt.Sprint(sv.Failed), textfmt.Num(sv.RequestThroughput), textfmt.Num(sv.OutputTokenThroughput),
		p("llm_ttft", "p50"), p("llm_ttft", "p99"), p("llm_tpot", "p50"), p("llm_tpot", "p99"), p("llm_e2e", "p99")}
	if cached {
		share := 0.0
		if sv.PromptTokens > 0 {
			share = 100 * float64(sv.CachedTokens) / float64(sv.PromptTokens)
		}
		cells = append(cells, fmt.Sprintf("%.1f %%", share))
	}
	return cells
}

// skipped says whether a stopped chain skipped the scenario.
func skipped(s *summary.Summary, name string) bool {
	return slices.ContainsFunc(s.ChainStops, func(c summary.ChainStop) bool { return slices.Contains(c.Skipped, name) })
}

// chainStops says which chains of scenarios (a sweep's levels) stopped
// before their end, why, and what they skipped: not failures, levels
// that did not run.
func (r *renderer) chainStops(s *summary.Summary) {
	for _, c := range s.ChainStops {
		r.printf("  stopped early ...... after %s: %s; skipped %s (not run, not failed)\n", c.After, c.Reason, strings.Join(c.Skipped, ", "))
	}
}

// capacity prints the verdict of a sweep, first of the summary: where
// the server saturates, the level of highest throughput within the SLO,
// whether the sweep stopped early, then a row per level and how the
// verdict was found.
func (r *renderer) capacity(s *summary.Summary) {
	c := s.Capacity
	r.heading("capacity (by " + c.Variable + ")")
	level := func(l summary.CapacityLevel) string {
		return c.Variable + " " + strconv.FormatFloat(l.Level, 'f', -1, 64)
	}
	// The SLO's bounds are shown as given.
	bound := func(v float64) string { return grouped(strconv.FormatFloat(v, 'f', -1, 64)) }
	gain := fmt.Sprintf("%g %%", 100*capacity.Criteria{MinGain: c.MinGain}.EffectiveMinGain())
	if sat := c.Saturation; sat != nil {
		r.printf("  saturation ......... at %s: output %s tok/s; beyond it throughput grows < %s while TTFT p50 grows > %s\n",
			level(*sat), grouped(textfmt.Num(sat.OutputThroughput)), gain, gain)
	} else if n := len(c.Levels); n > 0 {
		r.printf("  saturation ......... not reached within the levels swept (up to %s)\n", level(c.Levels[n-1]))
	}
	var bounds []string
	if c.SLO.TTFTP99 > 0 {
		bounds = append(bounds, fmt.Sprintf("TTFT p99 ≤ %s ms", bound(c.SLO.TTFTP99)))
	}
	if c.SLO.TPOTP99 > 0 {
		bounds = append(bounds, fmt.Sprintf("TPOT p99 ≤ %s ms", bound(c.SLO.TPOTP99)))
	}
	switch best := c.MaxWithinSLO; {
	case len(bounds) == 0:
		r.printf("  within SLO ......... no SLO given: pass --slo ttft_p99=MS (and tpot_p99=MS), or set options.slo\n")
	case best == nil:
		bounds = append(bounds, fmt.Sprintf("success rate ≥ %g %%", 100*capacity.MinSuccessRate))
		r.printf("  within SLO ......... %s\n", r.st.Red("no level meets the SLO ("+strings.Join(bounds, ", ")+")"))
	default:
		line := fmt.Sprintf("%s: %s tok/s at TTFT p99 %s ms", level(*best), grouped(textfmt.Num(best.OutputThroughput)), grouped(textfmt.Millis(best.TTFTP99)))
		if c.SLO.TTFTP99 > 0 {
			line += fmt.Sprintf(" (SLO %s ms)", bound(c.SLO.TTFTP99))
		}
		if c.SLO.TPOTP99 > 0 {
			line += fmt.Sprintf(", TPOT p99 %s ms (SLO %s ms)", grouped(textfmt.Millis(best.TPOTP99)), bound(c.SLO.TPOTP99))
		}
		r.printf("  within SLO ......... %s\n", line)
	}
	r.chainStops(s)
	r.levels(s, len(bounds) > 0)
	for _, line := range textfmt.Fit(strings.Fields(c.Method), " ", 100) {
		r.printf("  %s\n", r.st.Faint(line))
	}
}

// levels prints a row per level of a sweep, in order, with whether it met
// the SLO when there is one.
func (r *renderer) levels(s *summary.Summary, slo bool) {
	c := s.Capacity
	byName := make(map[string]summary.ScenarioSummary, len(s.Scenarios))
	for _, sc := range s.Scenarios {
		byName[sc.Name] = sc
	}
	var scs []summary.ScenarioSummary
	for _, l := range c.Levels {
		scs = append(scs, byName[l.Scenario])
	}
	cached := anyCached(scs)
	header := []string{c.Variable, "scenario", "ok", "failed", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "E2E p99"}
	if cached {
		header = append(header, "input cached")
	}
	header = append(header, "success")
	if slo {
		header = append(header, "SLO")
	}
	rows := make([][]string, len(c.Levels))
	for i, l := range c.Levels {
		rows[i] = append([]string{strconv.FormatFloat(l.Level, 'f', -1, 64), l.Scenario}, scenarioFigures(scs[i], cached)...)
		rows[i] = append(rows[i], fmt.Sprintf("%.1f %%", 100*l.SuccessRate))
		if slo {
			met := "met"
			if !l.MeetsSLO {
				met = "missed"
			}
			if c.Search != nil {
				// A search's verdict may be inconclusive, which is not missed.
				met = cmp.Or(c.Search.VerdictOf(l.Level), met)
			}
			rows[i] = append(rows[i], met)
		}
	}
	r.printf("\n")
	r.table(header, rows, 2)
	r.printf("  %s\n", r.st.Faint("latencies in ms; throughputs over each level's own run time"))
}

func (r *renderer) errors(s *summary.Summary) {
	if len(s.Errors) == 0 && len(s.Retries) == 0 && len(s.ScriptErrors) == 0 {
		return
	}
	r.heading("errors")
	if len(s.Errors) > 0 {
		rows := make([][]string, len(s.Errors))
		width := 0
		for i, e := range s.Errors {
			rows[i] = []string{e.Class, fmt.Sprintf("%d", e.Count)}
			width = max(width, len(e.Class))
		}
		r.table([]string{"request error class", "count"}, rows, 1)
		// The first distinct messages of each class, under the table.
		for _, e := range s.Errors {
			for i, m := range e.Messages {
				class := ""
				if i == 0 {
					class = e.Class
				}
				count := fmt.Sprintf("%d×", m.Count)
				// A message's further lines (a pretty-printed error
				// body) line up under its first.
				pad := "\n" + strings.Repeat(" ", 2+width+1+utf8.RuneCountInString(count)+1)
				r.printf("  %-*s %s %s\n", width, class, r.st.Red(count), strings.ReplaceAll(m.Message, "\n", pad))
			}
		}
	}
	if len(s.Retries) > 0 {
		var total int64
		parts := make([]string, len(s.Retries))
		for i, e := range s.Retries {
			total += e.Count
			parts[i] = fmt.Sprintf("%s %d", e.Class, e.Count)
		}
		r.printf("  retried attempts ... %d (%s); each request counts once above, by its final attempt\n", total, strings.Join(parts, ", "))
	}
	for _, e := range s.ScriptErrors {
		r.printf("  %s %s\n", r.st.Red(fmt.Sprintf("%d×", e.Count)), indent(e.Message))
	}
	if s.OtherScriptErrors > 0 {
		r.printf("  %d more script errors with other messages\n", s.OtherScriptErrors)
	}
}

func (r *renderer) checks(cs []summary.Check) {
	if len(cs) == 0 {
		return
	}
	r.heading("checks")
	rows := make([][]string, len(cs))
	for i, c := range cs {
		mark := r.st.Green("✓")
		if c.Fails > 0 {
			mark = r.st.Red("✗")
		}
		name := c.Name
		if c.Group != "" {
			name = c.Group + " › " + c.Name
		}
		pct := 100 * float64(c.Passes) / float64(c.Passes+c.Fails)
		rows[i] = []string{mark + " " + name, fmt.Sprintf("%d", c.Passes), fmt.Sprintf("%d", c.Fails), fmt.Sprintf("%.2f %%", pct)}
	}
	r.table([]string{"check", "passes", "fails", "rate"}, rows, 1)
}

func (r *renderer) thresholds(s *summary.Summary) {
	if len(s.Thresholds) == 0 {
		return
	}
	r.heading("thresholds")
	rows := make([][]string, len(s.Thresholds))
	for i, t := range s.Thresholds {
		mark, observed := r.st.Green("✓"), fmt.Sprintf("%.6g", t.Value)
		if unit := thresholdUnit(s, t); unit != "" {
			observed += " " + unit
		}
		switch {
		case !t.Passed:
			mark = r.st.Red("✗")
		case t.Skipped:
			mark = r.st.Faint("-")
		}
		if t.Note != "" {
			observed = t.Note
		}
		rows[i] = []string{mark + " " + t.Metric, t.Threshold, observed}
	}
	r.table([]string{"metric", "threshold", "observed"}, rows, 2)
	if s.AbortedBy != "" {
		r.printf("  %s\n", r.st.Red("the run was aborted early by a threshold: "+s.AbortedBy))
	}
}

// thresholdUnit is the unit of a threshold's observed value: its metric's,
// per second for a counter's rate, none for a rate metric's ratio.
func thresholdUnit(s *summary.Summary, t summary.ThresholdResult) string {
	m, ok := s.Metrics[t.Metric]
	if !ok {
		return ""
	}
	expr, err := threshold.ParseExpression(t.Threshold)
	if err != nil {
		return ""
	}
	return threshold.ValueUnit(m.Type, m.Unit, expr.Method)
}

func (r *renderer) custom(s *summary.Summary) {
	names := s.CustomMetrics()
	if len(names) == 0 {
		return
	}
	r.heading("custom metrics")
	rows := make([][]string, len(names))
	for i, n := range names {
		m := s.Metrics[n]
		rows[i] = []string{n, m.Type, describe(m)}
	}
	r.table([]string{"metric", "type", "values"}, rows, 3)
}

func describe(m summary.MetricSummary) string {
	v := m.Values
	f := textfmt.Num
	if m.Contains == "time" {
		f = func(x float64) string { return textfmt.Millis(x) + " ms" }
	}
	switch m.Type {
	case "counter":
		return fmt.Sprintf("count=%s rate=%s/s", textfmt.Num(v["count"]), textfmt.Num(v["rate"]))
	case "gauge":
		return fmt.Sprintf("value=%s min=%s max=%s", f(v["value"]), f(v["min"]), f(v["max"]))
	case "rate":
		return fmt.Sprintf("%.2f %% (%d of %d)", 100*v["rate"], int64(v["passes"]), int64(v["passes"]+v["fails"]))
	default:
		return fmt.Sprintf("avg=%s med=%s p(90)=%s p(95)=%s p(99)=%s max=%s (n=%d)",
			f(v["avg"]), f(v["med"]), f(v["p(90)"]), f(v["p(95)"]), f(v["p(99)"]), f(v["max"]), int64(v["count"]))
	}
}

// outputs prints what each --out output stored, loudly when it lost
// points.
func (r *renderer) outputs(reports []summary.OutputReport) {
	if len(reports) == 0 {
		return
	}
	r.heading("outputs")
	for _, o := range reports {
		line := fmt.Sprintf("%s: %s written, %d dropped", o.Output, textfmt.Count(o.Written, "point"), o.Dropped)
		if o.Dropped == 0 && o.Err == "" {
			r.printf("  %s\n", line)
			continue
		}
		r.printf("  %s\n", r.st.Red("WARNING: "+line))
		for _, reason := range slices.Sorted(maps.Keys(o.Reasons)) {
			r.printf("    %d× %s\n", o.Reasons[reason], reason)
		}
		if o.Err != "" {
			r.printf("    last error: %s\n", o.Err)
		}
	}
}

// defaultFooterWidth is the width the footer fits in when the summary goes
// to no terminal (a file, a pipe, a CI log).
const defaultFooterWidth = 120

// footer prints what makes the run reproducible, its parts on lines that
// fit the terminal's width (or defaultFooterWidth), each part whole.
func (r *renderer) footer(s *summary.Summary) {
	width := textfmt.TerminalWidth(r.w)
	if width <= 0 {
		width = defaultFooterWidth
	}
	r.printf("\n")
	for _, line := range footerLines(s.Meta, width) {
		r.printf("%s\n", r.st.Faint(line))
	}
	if s.Meta.Interrupted {
		r.printf("%s\n", r.st.Red("the run was interrupted before its end: figures cover the part that ran"))
	}
}

// footerLines are the footer's parts, "·"-separated, on lines of at most
// width characters, broken only between parts.
func footerLines(m summary.Meta, width int) []string {
	models := strings.Join(m.Models, ", ")
	if models == "" {
		models = "-"
	}
	parts := []string{
		"llmrun " + m.Version,
		fmt.Sprintf("script %s (sha256 %.12s)", m.Script, m.ScriptSHA256),
		"target " + m.Target,
		"model " + models,
		fmt.Sprintf("seed %d", m.Seed),
		fmt.Sprintf("host %s (%s)", m.Host, textfmt.Count(m.CPUs, "CPU")),
	}
	if m.RunID != "" {
		parts = append(parts, fmt.Sprintf("run %s of test %s", m.RunID, m.TestID))
	}
	return textfmt.Fit(parts, " · ", width)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") }

// grouped separates the thousands of a formatted number's integer part
// with commas: 5120.5 becomes 5,120.5.
func grouped(s string) string {
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	var b strings.Builder
	for i := range digits {
		if i > 0 && (digits-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String() + s[digits:]
}
