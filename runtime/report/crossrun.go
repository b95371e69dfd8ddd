package report

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/regression"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// CrossRun is several runs drawn together in one page (llmrun report
// with several result files): their Pareto charts, and a table of the
// runs each judged against the baseline.
type CrossRun struct {
	// Runs are the runs in the order given; Runs[Baseline] is the
	// baseline, the others its treatments.
	Runs     []CrossRunInput
	Baseline int
	// GPUs are the runs' GPU counts (--gpus): one for every run, or one
	// per run in the order of Runs; none takes each run's from its GPU
	// telemetry.
	GPUs []int
	// SLO, when not nil, is drawn on the TTFT chart, and each point is
	// judged against it by its own figures: those that miss it are
	// hollow and off the fronts, and the findings lead with the best of
	// the others.
	SLO *summary.SLO
}

// CrossRunInput is one run of a cross-run page.
type CrossRunInput struct {
	// Label names the run on the page; File is its result file.
	Label, File string
	Summary     *summary.Summary
	// Against is the run judged against the baseline (results.Compare);
	// unused for the baseline.
	Against regression.Report
	// Note is what the reader should know of the pair, or "".
	Note string
}

// RenderCrossRun writes the cross-run page of c.
func RenderCrossRun(w io.Writer, c CrossRun) error {
	if len(c.Runs) < 2 || c.Baseline < 0 || c.Baseline >= len(c.Runs) {
		return errors.New("writing the cross-run report: want two runs or more and a baseline among them")
	}
	if n := len(c.GPUs); n > 1 && n != len(c.Runs) {
		return fmt.Errorf("writing the cross-run report: %d GPU counts for %d runs, want one or one per run", n, len(c.Runs))
	}
	for _, n := range c.GPUs {
		if n < 1 {
			return fmt.Errorf("writing the cross-run report: %d GPUs", n)
		}
	}
	tmpl, css, err := pageTemplate("crossrun.html.tmpl", "cross-run")
	if err != nil {
		return err
	}
	p := newCrossPage(c)
	p.CSS = css
	if err := tmpl.ExecuteTemplate(w, "crossrun.html.tmpl", p); err != nil {
		return fmt.Errorf("writing the cross-run report: %w", err)
	}
	return nil
}

// crossPage is what the cross-run template shows.
type crossPage struct {
	CSS   template.CSS
	Title string
	// Notes qualify the charts: what per GPU means here, which runs have
	// no point, sweeps beside single runs.
	Notes    []string
	Findings []string
	Charts   []*Chart
	Front    *table
	Runs     crossTable
	Files    []field
}

// crossTable is the table of the runs: a column each, the baseline
// first, and a row per figure.
type crossTable struct {
	Runs []crossColumn
	Rows []crossRow
}

// crossColumn heads one run's column.
type crossColumn struct {
	Role, Label, Kind string
	Baseline          bool
	// Verdicts sums a treatment's verdicts up.
	Verdicts string
}

// crossRow is one figure of every run.
type crossRow struct {
	Figure string
	Cells  []crossCell
}

// crossCell is one figure of a run: its value and, for a treatment, its
// change against the baseline with the change's interval and verdict.
type crossCell struct {
	Value, Change, Interval, Verdict string
	// Class is the verdict's CSS class: regression, improved or "".
	Class string
}

// gpuBasis is what the charts' output throughput is divided by.
type gpuBasis struct {
	// perGPU says that the figures are per GPU; counts are each run's
	// GPU count (by run index).
	perGPU bool
	counts []int
	axis   string
	note   string
}

// perGPUAxis is the charts' throughput axis when it is per GPU.
const perGPUAxis = "output tok/s per GPU"

// basisOf decides the charts' throughput axis: per GPU with --gpus, or
// with every run's GPU telemetry, else the whole deployment's.
func basisOf(c CrossRun) gpuBasis {
	b := gpuBasis{counts: make([]int, len(c.Runs))}
	if n := len(c.GPUs); n > 0 {
		b.perGPU, b.axis = true, perGPUAxis
		var each []string
		for i, r := range c.Runs {
			// One count is every run's.
			b.counts[i] = c.GPUs[min(i, n-1)]
			each = append(each, r.Label+" by "+strconv.Itoa(b.counts[i]))
		}
		b.note = fmt.Sprintf("Per GPU: each run's output throughput divided by its GPUs (--gpus): %s.", strings.Join(each, ", "))
		if n == 1 {
			b.note = fmt.Sprintf("Per GPU: each run's output throughput divided by %s (--gpus).", textfmt.Count(c.GPUs[0], "GPU"))
		}
		return b
	}
	var without, unsure []string
	for i, r := range c.Runs {
		n, doubt := telemetryGPUs(r.Summary)
		b.counts[i] = n
		if n == 0 {
			without = append(without, r.Label)
		}
		if doubt {
			unsure = append(unsure, fmt.Sprintf("%s (%s)", r.Label, textfmt.Count(n, "GPU")))
		}
	}
	if len(without) == 0 {
		b.perGPU, b.axis = true, perGPUAxis
		b.note = "Per GPU: each run's output throughput divided by the GPUs its GPU telemetry reported, each GPU once (known by its UUID, or its host and index)."
		if len(unsure) > 0 {
			b.note += fmt.Sprintf(" The telemetry of %s names some GPUs by neither, on several targets, so a GPU two targets report may be counted twice: give --gpus to be sure.",
				strings.Join(unsure, ", "))
		}
		return b
	}
	b.axis = "output tok/s, whole deployment (not per GPU)"
	b.note = fmt.Sprintf("Not per GPU: no --gpus was given and %s no GPU telemetry (llmrun run --gpu-metrics), so the charts show each run's whole output throughput. Give --gpus N to divide it.",
		textfmt.Count(len(without), "run")+" ("+strings.Join(without, ", ")+") "+map[bool]string{true: "has", false: "have"}[len(without) == 1])
	return b
}

// telemetryGPUs is how many distinct GPUs a run's GPU telemetry
// reported, 0 without any: a GPU two targets report (two scrapes of one
// node) counts once, known by its UUID, else by its host and index.
// unsure says that GPUs of two targets or more have neither, so that one
// may be counted twice.
func telemetryGPUs(s *summary.Summary) (n int, unsure bool) {
	if s.Server == nil {
		return 0, false
	}
	seen := map[string]bool{}
	anonymous := 0
	for _, t := range s.Server.Targets {
		if t.Kind != summary.TargetGPU {
			continue
		}
		named := 0
		for _, g := range t.GPUs {
			switch {
			case g.UUID != "":
				seen["uuid "+g.UUID] = true
			case g.Host != "" && g.ID != "":
				seen["host "+g.Host+" gpu "+g.ID] = true
			default:
				n++
				continue
			}
			named++
		}
		if named < len(t.GPUs) {
			anonymous++
		}
	}
	return n + len(seen), anonymous > 1 || anonymous == 1 && len(seen) > 0
}

// configPoint is one configuration of a run: the run, or a level of a
// sweep, with the figures the charts place it by.
type configPoint struct {
	name                        string
	output, tpotP50, ttftP99    float64
	requestRate, successRate    float64
	hasTPOT, hasTTFT, completed bool
	// meets says that the point's own figures meet the SLO.
	meets bool
}

// configurations are the points a run contributes: one per level of a
// sweep, else one for the run; each judged against slo, when not nil,
// by its own figures.
func configurations(s *summary.Summary, slo *summary.SLO) []configPoint {
	if s.Capacity != nil && len(s.Capacity.Levels) > 0 {
		levels := slices.Clone(s.Capacity.Levels)
		slices.SortStableFunc(levels, func(a, b summary.CapacityLevel) int { return cmp.Compare(a.Level, b.Level) })
		var out []configPoint
		for _, l := range levels {
			out = append(out, configPoint{name: cmp.Or(s.Capacity.Variable, "level") + " " + textfmt.Num(l.Level),
				output: l.OutputThroughput, tpotP50: l.TPOTP50, ttftP99: l.TTFTP99, requestRate: l.RequestRate, successRate: l.SuccessRate,
				hasTPOT: l.TPOTP50 > 0, hasTTFT: l.TTFTP99 > 0, completed: l.OutputThroughput > 0, meets: slo != nil && capacity.LevelMeets(l, *slo)})
		}
		return out
	}
	p := configPoint{output: s.Serving.OutputTokenThroughput, requestRate: s.Serving.RequestThroughput, successRate: s.Serving.SuccessRate,
		completed: s.Serving.OK > 0 && s.Serving.OutputTokenThroughput > 0, meets: slo != nil && capacity.RunMeets(s, *slo)}
	if r, ok := findLatency(s.Latency, "llm_tpot"); ok {
		p.tpotP50, p.hasTPOT = r.P["p50"], r.P["p50"] > 0
	}
	if r, ok := findLatency(s.Latency, "llm_ttft"); ok {
		p.ttftP99, p.hasTTFT = r.P["p99"], r.P["p99"] > 0
	}
	return []configPoint{p}
}

func newCrossPage(c CrossRun) *crossPage {
	order := append([]int{c.Baseline}, slices.DeleteFunc(indices(len(c.Runs)), func(i int) bool { return i == c.Baseline })...)
	base := c.Runs[c.Baseline]
	p := &crossPage{Title: fmt.Sprintf("llmrun report: %d runs against %s", len(c.Runs), base.Label)}
	basis := basisOf(c)
	p.Notes = append(p.Notes, basis.note)

	var slo *summary.SLO
	if c.SLO != nil && (c.SLO.TTFTP99 > 0 || c.SLO.TPOTP99 > 0) {
		slo = c.SLO
	}
	var user, ttft []paretoRun
	var sweeps, singles []string
	// best is the point within the SLO with the most throughput.
	var best *bestPoint
	for _, i := range order {
		r := c.Runs[i]
		name := r.Label
		if i == c.Baseline {
			name += " (baseline)"
		}
		points := configurations(r.Summary, slo)
		if r.Summary.Capacity != nil && len(r.Summary.Capacity.Levels) > 0 {
			sweeps = append(sweeps, r.Label)
		} else {
			singles = append(singles, r.Label)
		}
		u, t := paretoRun{Name: name}, paretoRun{Name: name}
		var none []string
		for _, cp := range points {
			label := r.Label
			if cp.name != "" {
				label += " @" + cp.name
			}
			if !cp.completed {
				none = append(none, cmp.Or(cp.name, "the run"))
				continue
			}
			y := cp.output
			if basis.perGPU {
				y /= float64(basis.counts[i])
			}
			tip := fmt.Sprintf("%s: %s %s, TPOT p50 %s ms, TTFT p99 %s ms", label, textfmt.Num(y), basis.axis, textfmt.Millis(cp.tpotP50), textfmt.Millis(cp.ttftP99))
			misses := slo != nil && !cp.meets
			if misses {
				tip += ", misses the SLO"
			}
			if cp.hasTPOT {
				u.Points = append(u.Points, paretoPoint{X: 1000 / cp.tpotP50, Y: y, Label: label, Tip: tip, Misses: misses})
			}
			if cp.hasTTFT {
				t.Points = append(t.Points, paretoPoint{X: cp.ttftP99, Y: y, Label: label, Tip: tip, Misses: misses})
			}
			if !misses && (best == nil || y > best.output) {
				best = &bestPoint{label: label, output: y, config: cp}
			}
		}
		if len(none) > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no completed request in %s, so no point.", r.Label, strings.Join(none, ", ")))
		}
		user, ttft = append(user, u), append(ttft, t)
	}
	if len(sweeps) > 0 && len(singles) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("Sweeps and single runs together: each level of %s is a point, and each of %s one point for its whole run.",
			strings.Join(sweeps, ", "), strings.Join(singles, ", ")))
	}
	for _, i := range order {
		if n := c.Runs[i].Note; n != "" {
			p.Notes = append(p.Notes, c.Runs[i].Label+": "+n)
		}
	}

	misses := "misses the SLO"
	userChart, userFront := buildPareto(paretoSpec{
		Name: "pareto-user", Title: "Throughput against each user's speed: " + basis.axis + " by tok/s per user (1000 / TPOT p50)",
		X: axisSpec{Label: "tok/s per user (1000 / TPOT p50 ms)", Zero: true}, Y: axisSpec{Label: basis.axis, Zero: true}, XHigher: true,
		Runs: user, Empty: "Throughput against tok/s per user: no run has both a TPOT and an output throughput.", Misses: misses,
	})
	ttftSpec := paretoSpec{
		Name: "pareto-ttft", Title: "Throughput against TTFT p99: " + basis.axis + " by TTFT p99",
		X: axisSpec{Label: "TTFT p99 (ms)", Log: true, Zero: true}, Y: axisSpec{Label: basis.axis, Zero: true},
		Runs: ttft, Empty: "Throughput against TTFT p99: no run has both a TTFT and an output throughput.", Misses: misses,
	}
	if c.SLO != nil && c.SLO.TTFTP99 > 0 {
		ttftSpec.Refs = []refLine{{Value: c.SLO.TTFTP99, Vertical: true, Label: "SLO TTFT p99 " + textfmt.Millis(c.SLO.TTFTP99) + " ms", Mark: "slo"}}
	}
	ttftChart, ttftFront := buildPareto(ttftSpec)
	p.Charts = []*Chart{userChart, ttftChart}
	if slo != nil {
		p.Findings = append(p.Findings, bestFinding(*slo, basis, best))
	}
	p.Findings = append(p.Findings, frontFinding("tok/s per user", slo != nil, userFront), frontFinding("TTFT p99", slo != nil, ttftFront))
	p.Front = frontTable(basis.axis, userFront, ttftFront)
	p.Runs = runsTable(c, order)
	for _, i := range order {
		r := c.Runs[i]
		p.Files = append(p.Files, field{r.Label, r.File})
	}
	return p
}

// bestPoint is a configuration with its throughput as the charts show
// it (per GPU or not) and its label.
type bestPoint struct {
	label  string
	output float64
	config configPoint
}

// bestFinding is the answer within the SLO: the configuration with the
// most output throughput among those that meet it.
func bestFinding(slo summary.SLO, basis gpuBasis, best *bestPoint) string {
	within := "Within " + capacity.SLOWords(slo)
	if best == nil {
		return within + ": no configuration meets the SLO."
	}
	most := "the most output tok/s per GPU"
	if !basis.perGPU {
		most = "the most output tok/s (whole deployment)"
	}
	var at []string
	if best.config.hasTPOT {
		at = append(at, textfmt.Num(1000/best.config.tpotP50)+" tok/s per user")
	}
	if best.config.hasTTFT {
		at = append(at, "TTFT p99 "+textfmt.Millis(best.config.ttftP99)+" ms")
	}
	unit := map[bool]string{true: "tok/s per GPU", false: "tok/s"}[basis.perGPU]
	return fmt.Sprintf("%s: %s is %s (%s %s at %s).", within, most, best.label, textfmt.Num(best.output), unit, strings.Join(at, ", "))
}

// indices are 0 to n−1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// frontFinding says which configurations a front is made of; with an
// SLO, the front is of the points that meet it.
func frontFinding(against string, withSLO bool, front []paretoPoint) string {
	of := map[bool]string{true: " within the SLO", false: ""}[withSLO]
	if len(front) == 0 {
		return "Against " + against + ": no point" + of + ", so no front."
	}
	var names []string
	for _, f := range front {
		names = append(names, f.Label)
	}
	return fmt.Sprintf("Against %s, the front%s (what no other configuration beats on both axes): %s.", against, of, strings.Join(names, ", "))
}

// frontTable lists the fronts' points with their figures, so that a
// label the chart had no room for is still read.
func frontTable(axis string, user, ttft []paretoPoint) *table {
	if len(user)+len(ttft) == 0 {
		return nil
	}
	t := &table{Header: []string{"front", "configuration", axis, "against"}, FirstFigure: 2}
	for _, p := range user {
		t.Rows = append(t.Rows, []string{"tok/s per user", p.Label, textfmt.Num(p.Y), textfmt.Num(p.X) + " tok/s per user"})
	}
	for _, p := range ttft {
		t.Rows = append(t.Rows, []string{"TTFT p99", p.Label, textfmt.Num(p.Y), textfmt.Millis(p.X) + " ms TTFT p99"})
	}
	return t
}

// runsTable is each run's figures, the treatments' with their change
// against the baseline and compare's verdict.
func runsTable(c CrossRun, order []int) crossTable {
	var figures []regression.Figure
	for _, i := range order[1:] {
		for _, cmpr := range c.Runs[i].Against.Comparisons {
			if !slices.Contains(figures, cmpr.Figure) {
				figures = append(figures, cmpr.Figure)
			}
		}
	}
	var t crossTable
	for k, i := range order {
		r := c.Runs[i]
		col := crossColumn{Role: "treatment", Label: r.Label, Kind: kindOf(r.Summary), Baseline: k == 0}
		if col.Baseline {
			col.Role = "baseline"
		} else {
			col.Verdicts = verdictCounts(r.Against.Comparisons)
		}
		t.Runs = append(t.Runs, col)
	}
	for _, f := range figures {
		row := crossRow{Figure: f.Label()}
		for k, i := range order {
			row.Cells = append(row.Cells, cellOf(c, c.Runs[i], k == 0, f))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// cellOf is figure f of run r: the baseline's value, or a treatment's
// with its comparison.
func cellOf(c CrossRun, r CrossRunInput, baseline bool, f regression.Figure) crossCell {
	if baseline {
		// The baseline's value is any treatment's baseline run's (the
		// second of its report's runs).
		for _, o := range c.Runs {
			if len(o.Against.Runs) == 2 {
				e, ok := o.Against.Runs[1].Figures[f.Name]
				return crossCell{Value: f.Format(e.Value, ok)}
			}
		}
		return crossCell{Value: f.Format(0, false)}
	}
	i := slices.IndexFunc(r.Against.Comparisons, func(x regression.Comparison) bool { return x.Figure == f })
	if i < 0 {
		return crossCell{Value: f.Format(0, false)}
	}
	cm := r.Against.Comparisons[i]
	change, ci, verdict := regression.Cells(cm)
	cell := crossCell{Value: f.Format(cm.Newest.Value, cm.Verdict != regression.NoData), Change: change, Interval: ci, Verdict: verdict}
	switch cm.Verdict {
	case regression.Regression:
		cell.Class = "regression"
	case regression.Improved:
		cell.Class = "improved"
	}
	return cell
}

// kindOf says what a run is: a sweep with its levels, or a run.
func kindOf(s *summary.Summary) string {
	if s.Capacity != nil && len(s.Capacity.Levels) > 0 {
		return "sweep, " + textfmt.Count(len(s.Capacity.Levels), "level") + " by " + cmp.Or(s.Capacity.Variable, "level")
	}
	return "run, " + textfmt.Count(s.Serving.OK, "completed request")
}

// verdictCounts sums a treatment's verdicts up: "2 improved, 1
// regression, 6 unchanged".
func verdictCounts(cs []regression.Comparison) string {
	counts := map[regression.Verdict]int{}
	var order []regression.Verdict
	for _, c := range cs {
		if counts[c.Verdict] == 0 {
			order = append(order, c.Verdict)
		}
		counts[c.Verdict]++
	}
	var parts []string
	for _, v := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
	}
	return strings.Join(parts, ", ")
}
