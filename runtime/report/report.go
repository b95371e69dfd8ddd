// Package report renders a run's result (a summary.Summary, as
// --summary-export and the result file hold it) as one self-contained HTML
// page that leads with its answer: after the run's metadata, for a sweep
// its verdict, the levels table and the latency-throughput curve with its
// SLO line and capacity markers, then the figures against the level (a
// capacity search's section before them: its capacity with its bracket,
// why it stopped, and the levels in the order tried, search.go); for
// other runs the merged instances (and any missing), vLLM's result block
// of a bench run, the thresholds' verdict, and for several scenarios the
// per-scenario table and distributions, and each scenario over time
// (scenariotimeline.go). Then the serving headline, the
// latency table and charts drawn as inline SVG in Go (latency
// percentiles on a log scale of 1 − p, the run over time with its warmup
// shaded, with the server's and GPUs' scraped figures on the same time
// axis when the result has a server section), labelled as pooled across
// the levels or scenarios; then the server's window figures beside
// llmrun's TTFT, errors and checks. A chart with nothing to show is one
// line of text; labels go where no data is drawn.
// The page needs no network access and no JavaScript; every text in it
// goes through html/template's escaping.
package report

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// files are the pages' templates and their one style: the cross-run
// page's template uses the single-run page's "chart" and "table".
//
//go:embed report.html.tmpl crossrun.html.tmpl report.css
var files embed.FS

// pageTemplate parses the named page's template (with the single-run
// page's, whose "chart" and "table" templates every page uses) and reads
// the style the page embeds; what names the page in errors.
func pageTemplate(name, what string) (*template.Template, template.CSS, error) {
	tmpl, err := template.New(name).ParseFS(files, slices.Compact([]string{name, "report.html.tmpl"})...)
	if err != nil {
		return nil, "", fmt.Errorf("parsing the %s template: %w", what, err)
	}
	css, err := files.ReadFile("report.css")
	if err != nil {
		return nil, "", fmt.Errorf("reading the report style: %w", err)
	}
	return tmpl, template.CSS(css), nil
}

// Render writes the HTML report of s.
func Render(w io.Writer, s *summary.Summary) error {
	return RenderSource(w, s, Source{})
}

// Source is where a result read from another tool's file came from, for
// its page's header; the zero Source is llmrun's own result.
type Source struct {
	// Tool names the tool as its users know it ("vLLM bench serve"), File
	// the file as given (FILE#N for a run of a file of several).
	Tool, File string
	// LocalStart says that the result's start is the tool's machine's
	// local time, saved without its zone (vLLM's date).
	LocalStart bool
}

// RenderSource writes the HTML report of s, read from src: for another
// tool's file, the page is titled by the tool, model and file, and its
// header leaves out what that file never keeps (script, seed, host...).
func RenderSource(w io.Writer, s *summary.Summary, src Source) error {
	if s == nil {
		return errors.New("writing the report: no summary")
	}
	tmpl, css, err := pageTemplate("report.html.tmpl", "report")
	if err != nil {
		return err
	}
	p := newPage(s)
	if src.Tool != "" {
		p.Title, p.Meta = foreignHeader(s, src, p.Meta)
	}
	p.CSS = css
	if err := tmpl.Execute(w, p); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// page is what the template shows.
type page struct {
	CSS   template.CSS
	Title string
	Meta  []field
	// Shapes are the scenarios' load, one line each.
	Shapes []string
	// Alerts are warnings about the run's validity (interrupted, aborted,
	// a client that limited it, token counts that disagree).
	Alerts []string
	// Pooled, for a sweep or a run of several scenarios, says that the
	// whole-run figures mix the levels or the scenarios; PooledOver names
	// them ("levels", "scenarios").
	Pooled, PooledOver string
	// Verdict says whether the thresholds passed, and which failed; ""
	// without thresholds.
	Verdict string
	// Bench is vLLM's result block of an llmrun bench run, as vllm bench
	// serve prints it; nil for other runs.
	Bench *benchView
	// Instances says which instances a merged result holds, Missing which
	// it lacks; both "" for a result that is not merged.
	Instances, Missing string
	// Warmup says that the time charts shade the run's warmup.
	Warmup bool
	// ScenarioCharts are the latency distributions with a line per
	// scenario, for a run of several that is not a sweep.
	ScenarioCharts []*Chart
	Headline       []field
	Latency        table
	LatencyCharts  []*Chart
	Timeline       []*Chart
	Capacity       *capacityView
	Errors         []errorRow
	Retries        string
	ScriptErrors   []scriptError
	Checks         []checkRow
	Thresholds     []thresholdRow
	Scenarios      *table

	// Server and GPUs are the window figures of the run's server
	// section's targets; nil without such targets.
	Server, GPUs *table

	// Search is a capacity search's section, before the levels'; nil
	// for other runs.
	Search *searchView

	// ScenarioTimeline are the charts over time with a line per scenario,
	// for a run of several that is not a sweep, when its scenarios have
	// timelines.
	ScenarioTimeline []*Chart
}

// field is a labelled value.
type field struct{ Label, Value string }

// table is a table of figures; columns from FirstFigure on are
// right-aligned.
type table struct {
	Header      []string
	Rows        [][]string
	FirstFigure int
}

// errorRow is one error class with its first messages.
type errorRow struct {
	Class    string
	Count    int64
	Messages []string
}

// scriptError is one exception message with how often it was thrown.
type scriptError struct {
	Message string
	Count   int64
}

// checkRow is one check's outcome.
type checkRow struct {
	Name, Rate    string
	Passes, Fails int64
	Passed        bool
}

// thresholdRow is one threshold's outcome.
type thresholdRow struct {
	Metric, Threshold, Observed string
	Passed                      bool
}

// benchView is vLLM's result block: its counts and throughputs, then its
// latencies' mean, median and the percentiles the run was asked for.
type benchView struct {
	Fields  []field
	Latency table
}

// capacityView is the sweep section: the answer first (findings, levels,
// curve), then the figures against the level.
type capacityView struct {
	Variable string
	Findings []string
	Levels   table
	Curve    *Chart
	Charts   []*Chart
}

func newPage(s *summary.Summary) *page {
	p := &page{
		Title:      "llmrun report: " + orDash(s.Meta.Script),
		Meta:       metaFields(s),
		Alerts:     alerts(s),
		Headline:   headline(s.Serving),
		Server:     serverTable(s),
		GPUs:       gpuTable(s.Server),
		Latency:    latencyRows(s.Latency),
		Errors:     errorRows(s.Errors),
		Checks:     checkRows(s.Checks),
		Thresholds: thresholdRows(s),
		Bench:      benchSection(s),
	}
	p.Verdict = thresholdVerdict(p.Thresholds)
	p.Instances, p.Missing = instancesText(s.Meta)
	if p.Bench != nil {
		p.Headline = slices.DeleteFunc(p.Headline, func(f field) bool { return f.Label == "requests" || strings.Contains(f.Label, "throughput") })
		p.Meta = slices.DeleteFunc(p.Meta, func(f field) bool { return f.Label == "duration" })
	}
	shapes, more := searchShapes(s)
	for _, sh := range shapes {
		p.Shapes = append(p.Shapes, sh.Name+": "+cmp.Or(sh.Description, sh.Executor)+startOf(sh))
	}
	if more != "" {
		p.Shapes = append(p.Shapes, more)
	}
	slo := effectiveSLO(s)
	if slo != (summary.SLO{}) {
		p.Meta = append(p.Meta, field{"SLO", sloText(slo)})
	}
	for _, m := range []struct {
		metric, label string
		objective     float64
	}{{"llm_ttft", "TTFT", slo.TTFTP99}, {"llm_tpot", "TPOT", slo.TPOTP99}, {"llm_itl", "ITL", 0}, {"llm_e2e", "E2E", 0}} {
		p.LatencyCharts = append(p.LatencyCharts, percentileChart(s.Latency, histogramOf(s, m.metric), m.metric, m.label, m.objective))
		if s.Capacity == nil && len(s.Scenarios) > 1 {
			p.ScenarioCharts = append(p.ScenarioCharts, scenarioPercentileChart(s.Scenarios, m.metric, m.label, m.objective))
		}
	}
	if tile, ok := energyTile(s.Server); ok {
		p.Headline = append(p.Headline, tile)
	}
	// The server's series share the timeline's time axis, which spans
	// both.
	timeAxis := axisSpec{Label: "time since start (s)", Lo: 0, Hi: max(timelineEnd(s.Timeline), serverEnd(s.Server))}
	warmup := warmupBand(s)
	p.Warmup = warmup != nil
	if len(s.Timeline) > 0 {
		p.Timeline = timelineCharts(s.Timeline, slo, timeAxis, warmup)
	}
	p.Timeline = append(p.Timeline, serverCharts(s.Server, timeAxis, warmup)...)
	if p.ScenarioCharts != nil {
		p.ScenarioTimeline = scenarioTimelineCharts(s.Scenarios, slo, timeAxis, warmup)
	}
	if s.Capacity != nil {
		p.Capacity = capacitySection(s, slo)
		p.Search = searchSection(s)
		p.Pooled, p.PooledOver = "All levels pooled: not the latency of any level. Each level's own figures are in the levels table above; these are the whole run's, which the thresholds judge.", "levels"
	}
	p.Scenarios = scenarioTable(s)
	if s.Capacity == nil && p.Scenarios != nil && len(p.Scenarios.Rows) > 1 {
		p.Pooled, p.PooledOver = "All scenarios pooled: not the latency of any scenario. Each scenario's own figures are in the table and charts above; these are the whole run's.", "scenarios"
	}
	if len(s.Retries) > 0 {
		var total int64
		parts := make([]string, len(s.Retries))
		for i, e := range s.Retries {
			total += e.Count
			parts[i] = fmt.Sprintf("%s %d", e.Class, e.Count)
		}
		p.Retries = fmt.Sprintf("%d retried attempts (%s); each request counts once above, by its final attempt", total, strings.Join(parts, ", "))
	}
	for _, e := range s.ScriptErrors {
		p.ScriptErrors = append(p.ScriptErrors, scriptError{Message: e.Message, Count: e.Count})
	}
	if s.OtherScriptErrors > 0 {
		p.ScriptErrors = append(p.ScriptErrors, scriptError{Message: "other messages", Count: s.OtherScriptErrors})
	}
	return p
}

// effectiveSLO is the SLO the charts draw: a sweep's verdict's, so that
// the SLO line agrees with the markers, else the run's.
func effectiveSLO(s *summary.Summary) summary.SLO {
	if s.Capacity != nil {
		return s.Capacity.SLO
	}
	return s.Meta.SLO
}

func metaFields(s *summary.Summary) []field {
	m := s.Meta
	models := strings.Join(m.Models, ", ")
	host := orDash(m.Host)
	cpus := textfmt.Count(m.CPUs, "CPU")
	if hosts := strings.Split(m.Host, ", "); len(hosts) > 1 {
		// A merged result of several machines: merge joins their names
		// and adds their CPUs.
		host = fmt.Sprintf("%d hosts: %s", len(hosts), m.Host)
		cpus += " in all"
	}
	if m.CPUs > 0 {
		host += fmt.Sprintf(" (%s, %s)", orDash(m.OS), cpus)
	}
	target := orDash(m.Target)
	if m.BaseURL != "" && m.BaseURL != m.Target {
		target += " (" + m.BaseURL + ")"
	}
	script := orDash(m.Script)
	if m.ScriptSHA256 != "" {
		script += fmt.Sprintf(" (sha256 %.12s)", m.ScriptSHA256)
	}
	tool := strings.TrimSpace(orDash(m.Tool) + " " + m.Version)
	if m.GoVersion != "" {
		tool += " (" + m.GoVersion + ")"
	}
	out := []field{
		{"script", script},
		{"target", target},
		{"models", orDash(models)},
		{"seed", strconv.FormatInt(m.Seed, 10)},
		{"start", timeText(m.Start)},
		{"end", timeText(m.End)},
		{"duration", durationText(s.Serving.DurationSeconds)},
		{"host", host},
		{"tool", tool},
	}
	if m.RunID != "" {
		out = append(out, field{"run", m.RunID + " of test " + orDash(m.TestID)})
	}
	if len(m.Tags) > 0 {
		var tags []string
		for _, k := range slices.Sorted(maps.Keys(m.Tags)) {
			tags = append(tags, k+"="+m.Tags[k])
		}
		out = append(out, field{"tags", strings.Join(tags, ", ")})
	}
	return out
}

// foreignHeader is the title and metadata of another tool's result:
// what that file does not keep is left out (it has no script, target,
// seed, end or host: a seed of 0 would be one it never had), and a start
// in the tool's local time says so rather than passing for UTC.
func foreignHeader(s *summary.Summary, src Source, meta []field) (string, []field) {
	title := src.Tool + " result: "
	if len(s.Meta.Models) > 0 {
		title += strings.Join(s.Meta.Models, ", ") + " (" + filepath.Base(src.File) + ")"
	} else {
		title += filepath.Base(src.File)
	}
	var out []field
	for _, f := range meta {
		switch {
		case f.Label == "seed" || f.Value == "-":
			continue
		case f.Label == "start" && src.LocalStart:
			f.Value = s.Meta.Start.Format("2006-01-02 15:04:05") + " (" + src.Tool + "'s local time: it saves no zone)"
		}
		out = append(out, f)
	}
	return title, out
}

// alerts are the warnings that qualify the run's figures.
func alerts(s *summary.Summary) []string {
	var out []string
	if s.Meta.Interrupted {
		out = append(out, "the run was interrupted before its end: figures cover the part that ran")
	}
	var stopped []string
	for _, sh := range s.Meta.LoadShape {
		if at := sh.Stopped(); at != "" {
			stopped = append(stopped, at)
		}
	}
	if len(stopped) > 0 {
		out = append(out, "interrupted before the end of its plan: "+strings.Join(stopped, ", "))
	}
	if s.AbortedBy != "" {
		out = append(out, "the run was aborted early by a threshold: "+s.AbortedBy)
	}
	out = append(out, s.Client.Warnings...)
	if s.Server != nil {
		out = append(out, s.Server.Warnings...)
	}
	for _, tc := range s.TokenChecks {
		if tc.Warning != "" {
			out = append(out, tc.Warning)
		}
	}
	if s.PromptCheck != nil && s.PromptCheck.Warning != "" {
		out = append(out, s.PromptCheck.Warning)
	}
	for _, o := range s.Outputs {
		if o.Dropped > 0 || o.Err != "" {
			out = append(out, fmt.Sprintf("output %s: %d written, %d dropped %s", o.Output, o.Written, o.Dropped, o.Err))
		}
	}
	return out
}

func headline(sv summary.Serving) []field {
	requests := fmt.Sprintf("%d (%d ok, %d failed)", sv.Requests, sv.OK, sv.Failed)
	if sv.Requests == 0 && sv.OK > 0 {
		// Another tool's file that counts no failures (SGLang's saved
		// without its requests' errors).
		requests = fmt.Sprintf("%d ok (failures not saved)", sv.OK)
	}
	if sv.Interrupted > 0 {
		requests += fmt.Sprintf(", %d interrupted", sv.Interrupted)
	}
	success := "-"
	if sv.Requests > 0 {
		success = percent(sv.SuccessRate)
	}
	return []field{
		{"requests", requests},
		{"success rate", success},
		{"request throughput", textfmt.Num(sv.RequestThroughput) + " req/s"},
		{"output throughput", textfmt.Num(sv.OutputTokenThroughput) + " tok/s"},
		{"total throughput", textfmt.Num(sv.TotalTokenThroughput) + " tok/s"},
		{"tokens per request", textfmt.Num(sv.MeanInputTokens) + " in, " + textfmt.Num(sv.MeanOutputTokens) + " out"},
	}
}

func latencyRows(rows []summary.LatencyRow) table {
	t := table{Header: []string{"latency (ms)", "count", "mean", "min"}, FirstFigure: 1}
	for _, p := range summary.Percentiles {
		t.Header = append(t.Header, fmt.Sprintf("p%g", p))
	}
	t.Header = append(t.Header, "max")
	for _, r := range rows {
		line := []string{r.Label, countText(r.Count), textfmt.Millis(r.Mean), textfmt.Millis(r.Min)}
		for _, p := range summary.Percentiles {
			line = append(line, textfmt.Millis(r.P[fmt.Sprintf("p%g", p)]))
		}
		t.Rows = append(t.Rows, append(line, textfmt.Millis(r.Max)))
	}
	return t
}

// countText is a latency row's count: "-" for 0, which only a row of
// another tool's figures has (a count it did not save, as SGLang's of
// ITL gaps), llmrun's rows being of metrics with samples.
func countText(n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// curvePercentiles are where a latency distribution is drawn when its
// histogram is at hand: finer towards the tail, where the SLOs live.
var curvePercentiles = []float64{0, 5, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92, 94, 95, 96, 97, 98, 99, 99.5, 99.9, 100}

// histogramOf is the decoded histogram of a metric of the result, nil when
// the file has none (or it does not decode).
func histogramOf(s *summary.Summary, metric string) *metrics.Stats {
	m, ok := s.Metrics[metric]
	if !ok || m.Histogram == nil {
		return nil
	}
	st, err := m.Histogram.Stats()
	if err != nil {
		return nil
	}
	return st
}

// maxTailX is where the percentile axis draws the max (p100), which a
// log scale of 1 − p cannot place: half a decade after p99.9.
const maxTailX = 3.5

// tailX is where the percentile axis draws percentile p: −log10(1 − p), so
// that p90, p99 and p99.9 are a decade apart and the tail is spread, not
// crushed against the edge.
func tailX(p float64) float64 {
	if p >= 100 {
		return maxTailX
	}
	return -math.Log10(1 - p/100)
}

// percentileAxis is the x axis of the latency distributions: a log scale
// of 1 − p, with ticks at min, p50, p90, p99, p99.9 and max.
var percentileAxis = axisSpec{
	Label: "percentile (log scale of 1 − p)", Lo: -0.1, Hi: maxTailX + 0.1,
	Ticks: []float64{tailX(0), tailX(50), tailX(90), tailX(99), tailX(99.9), maxTailX},
	TickText: func(x float64) string {
		switch {
		case x <= 0:
			return "min"
		case x >= maxTailX:
			return "max"
		}
		return "p" + strconv.FormatFloat(100*(1-math.Pow(10, -x)), 'g', 4, 64)
	},
}

// percentilePoints are a latency row's latencies by percentile, from its
// histogram when there is one (hist), else from min, the row's
// percentiles and max; name prefixes their tips.
func percentilePoints(r summary.LatencyRow, hist *metrics.Stats, name string) []point {
	pt := func(p float64, tag string, v float64) point {
		return point{X: tailX(p), Y: v, Tip: strings.TrimSpace(name + " " + tag + " " + textfmt.Millis(v) + " ms")}
	}
	var pts []point
	if hist != nil && hist.Count > 0 {
		for _, p := range curvePercentiles {
			v := hist.Percentile(p)
			switch p {
			case 0:
				v = r.Min
			case 100:
				v = r.Max
			}
			pts = append(pts, pt(p, fmt.Sprintf("p%g", p), v))
		}
		return pts
	}
	pts = append(pts, pt(0, "min", r.Min))
	for _, p := range summary.Percentiles {
		pts = append(pts, pt(p, fmt.Sprintf("p%g", p), r.P[fmt.Sprintf("p%g", p)]))
	}
	pts = append(pts, pt(100, "max", r.Max))
	// What the result lacks (another tool's file keeps some percentiles
	// only) is NaN: not drawn.
	return slices.DeleteFunc(pts, func(p point) bool { return math.IsNaN(p.Y) })
}

// percentileSpec is the chart of one latency metric's distribution,
// without its series; with the SLO on its p99 when objective is not 0.
func percentileSpec(name, title, label string, objective float64) chartSpec {
	spec := chartSpec{
		Name:  name,
		Title: title,
		X:     percentileAxis,
		Y:     axisSpec{Label: label + " (ms)", Log: true, Zero: true},
		Empty: label + " distribution: no " + label + " sample.",
	}
	if objective > 0 {
		spec.Refs = []refLine{{Value: objective, Label: "SLO " + label + " p99 " + textfmt.Millis(objective) + " ms", Mark: "slo"}}
	}
	return spec
}

// percentileChart draws one latency metric's distribution: its latency at
// each percentile, from its histogram when there is one (hist), else from
// min, the summary's percentiles and max; with the SLO on its p99 when
// objective is not 0.
func percentileChart(rows []summary.LatencyRow, hist *metrics.Stats, metric, label string, objective float64) *Chart {
	spec := percentileSpec("latency-"+strings.ToLower(label), label+" distribution: latency by percentile", label, objective)
	r, ok := findLatency(rows, metric)
	if !ok {
		return buildChart(spec)
	}
	spec.Series = []series{{Name: label, Points: percentilePoints(r, hist, "")}}
	var parts []string
	for _, f := range []struct {
		name  string
		value float64
	}{{"p50", r.P["p50"]}, {"p99", r.P["p99"]}, {"max", r.Max}} {
		if finite(f.value) {
			parts = append(parts, f.name+" "+textfmt.Millis(f.value)+" ms")
		}
	}
	spec.Caption = strings.Join(parts, ", ")
	if r.Count > 0 {
		spec.Caption = fmt.Sprintf("%d samples; %s", r.Count, spec.Caption)
	}
	return buildChart(spec)
}

// scenarioPercentileChart draws one latency metric's distribution with a
// line per scenario, each from the scenario's own histogram when the
// result has it.
func scenarioPercentileChart(scenarios []summary.ScenarioSummary, metric, label string, objective float64) *Chart {
	spec := percentileSpec("scenario-latency-"+strings.ToLower(label), label+" distribution by scenario: latency by percentile, a line per scenario", label, objective)
	var counts []string
	for _, sc := range scenarios {
		r, ok := findLatency(sc.Latency, metric)
		if !ok {
			continue
		}
		var hist *metrics.Stats
		if m, ok := sc.Metrics[metric]; ok && m.Histogram != nil {
			hist, _ = m.Histogram.Stats()
		}
		spec.Series = append(spec.Series, series{Name: sc.Name, Points: percentilePoints(r, hist, sc.Name+":"), Markers: true})
		counts = append(counts, fmt.Sprintf("%s %d samples, p99 %s ms", sc.Name, r.Count, textfmt.Millis(r.P["p99"])))
	}
	spec.Legend = true
	spec.Caption = strings.Join(counts, "; ")
	return buildChart(spec)
}

// timelineEnd is the time of the timeline's last interval's end, in
// seconds since the run's start; 0 when it has none.
func timelineEnd(tl []summary.TimelinePoint) float64 {
	var end float64
	for _, p := range tl {
		end = max(end, p.T)
	}
	return end
}

// timelineCharts draws the run over time: output throughput, requests
// (and failures when there were any), latency and load, on the same time
// axis, timeAxis. Requests have their own chart: their rate is the token
// rate over the tokens per request, so on an axis of their own beside
// tokens the two lines would lie on each other.
func timelineCharts(tl []summary.TimelinePoint, slo summary.SLO, timeAxis axisSpec, warmup []band) []*Chart {
	var failed int64
	for _, p := range tl {
		failed += p.Failed
	}
	const height, smallHeight = 240, 170
	var reqs, fails, toks, t50, t99, e50, e99, vus, inflight []point
	for _, p := range tl {
		perSec := func(n int64) float64 {
			if p.Seconds <= 0 {
				return math.NaN()
			}
			return float64(n) / p.Seconds
		}
		// Latencies are 0 in an interval where no request completed: no
		// point there, and no line across it.
		lat := func(name string, v float64) point {
			if v <= 0 {
				return point{X: p.T, Y: math.NaN()}
			}
			return point{X: p.T, Y: v, Tip: fmt.Sprintf("%s s: %s %s ms", textfmt.Num(p.T), name, textfmt.Millis(v))}
		}
		reqs = append(reqs, point{X: p.T, Y: perSec(p.Requests)})
		fails = append(fails, point{X: p.T, Y: perSec(p.Failed)})
		toks = append(toks, point{X: p.T, Y: perSec(p.OutputTokens)})
		t50 = append(t50, lat("TTFT p50", p.TTFTP50))
		t99 = append(t99, lat("TTFT p99", p.TTFTP99))
		e50 = append(e50, lat("E2E p50", p.E2EP50))
		e99 = append(e99, lat("E2E p99", p.E2EP99))
		vus = append(vus, point{X: p.T, Y: float64(p.ActiveVUs)})
		inflight = append(inflight, point{X: p.T, Y: float64(p.InFlight)})
	}
	latency := chartSpec{
		Name: "time-latency", Title: "Latency over time: TTFT and E2E p50 and p99 of the requests completed in each interval",
		Width: wideWidth, Height: height, RightMargin: true,
		X: timeAxis, Y: axisSpec{Label: "latency (ms)", Log: true, Zero: true},
		Series: []series{{Name: "TTFT p50", Points: t50, Markers: true}, {Name: "TTFT p99", Points: t99, Markers: true},
			{Name: "E2E p50", Points: e50, Markers: true}, {Name: "E2E p99", Points: e99, Markers: true}},
		Bands: warmup,
		Empty: "Latency over time: no request completed.",
	}
	if slo.TTFTP99 > 0 {
		latency.Refs = []refLine{sloLine(slo)}
	}
	requests := chartSpec{
		Name: "time-requests", Title: "Requests over time: requests completed per second",
		Width: wideWidth, Height: smallHeight, RightMargin: true, Legend: true,
		X: timeAxis, Y: axisSpec{Label: "requests/s", Zero: true},
		Series:  []series{{Name: "requests/s", Points: reqs}},
		Bands:   warmup,
		Caption: "No request failed.",
		Empty:   "Requests over time: no interval.",
	}
	if failed > 0 {
		requests.Title = "Requests over time: requests completed and failed per second"
		requests.Series = append(requests.Series, series{Name: "failed/s", Points: fails})
		requests.Caption = textfmt.Count(failed, "request") + " failed."
	}
	return []*Chart{
		buildChart(chartSpec{
			Name: "time-throughput", Title: "Throughput over time: output tokens per second, counted as they arrived",
			Width: wideWidth, Height: height, RightMargin: true, Legend: true,
			X: timeAxis, Y: axisSpec{Label: "output tok/s", Zero: true},
			Series: []series{{Name: "output tok/s", Points: toks}},
			Bands:  warmup,
			Empty:  "Throughput over time: no interval.",
		}),
		buildChart(requests),
		buildChart(latency),
		buildChart(chartSpec{
			Name: "time-load", Title: "Load over time: active VUs (wide, pale) and requests in flight",
			Width: wideWidth, Height: height, RightMargin: true,
			X: timeAxis, Y: axisSpec{Label: "count", Zero: true},
			Series: []series{{Name: "active VUs", Points: vus, Wide: true}, {Name: "requests in flight", Points: inflight}},
			Bands:  warmup,
			Empty:  "Load over time: no interval.",
		}),
	}
}

// warmupBand is the run's warmup on the timeline's time axis, nil when it
// had none. The timeline counts from the run's start and its last
// interval ends at the measured window's end (meta.end), so the window
// starts at that end less the window's length; what came before it was
// warmup, which no figure counts: its intervals read 0 requests and
// tokens.
func warmupBand(s *summary.Summary) []band {
	if s.Serving.WarmupRequests == 0 && s.Serving.WarmupIterations == 0 || len(s.Timeline) == 0 || s.Meta.Start.IsZero() {
		return nil
	}
	from := timelineEnd(s.Timeline) - s.Meta.End.Sub(s.Meta.Start).Seconds()
	if from <= 0 {
		return nil
	}
	return []band{{From: 0, To: from, Label: "warmup: not measured", Mark: "warmup"}}
}

// sloLine is the TTFT p99 objective as a horizontal dashed line.
func sloLine(slo summary.SLO) refLine {
	return refLine{Value: slo.TTFTP99, Label: "SLO TTFT p99 " + textfmt.Millis(slo.TTFTP99) + " ms", Mark: "slo"}
}

// capacitySection draws a sweep: the verdict, the levels table and the
// latency-throughput curve, then its figures against the level. The
// table's counts, TTFT p95 and ITL p99 are the level's scenario's (the
// stock sweeps run each level as a scenario of its own), "-" when the
// result has no such scenario.
func capacitySection(s *summary.Summary, slo summary.SLO) *capacityView {
	c := s.Capacity
	variable := orDash(c.Variable)
	levels := slices.Clone(c.Levels)
	slices.SortStableFunc(levels, func(a, b summary.CapacityLevel) int { return cmp.Compare(a.Level, b.Level) })
	scenarios := map[string]*summary.ScenarioSummary{}
	for i := range s.Scenarios {
		scenarios[s.Scenarios[i].Name] = &s.Scenarios[i]
	}
	withITL := slices.ContainsFunc(levels, func(l summary.CapacityLevel) bool {
		sc := scenarios[l.Scenario]
		return sc != nil && latencyOf(sc.Latency, "llm_itl", "p99") != "-"
	})
	v := &capacityView{Variable: variable}
	v.Levels = table{Header: []string{variable, "scenario", "ok", "failed", "success", "req/s", "out tok/s", "TTFT p50", "TTFT p95", "TTFT p99", "TPOT p50", "TPOT p99"}, FirstFigure: 2}
	if withITL {
		v.Levels.Header = append(v.Levels.Header, "ITL p99")
	}
	// Without an SLO no level is judged: no "meets SLO" column.
	judged := slo != (summary.SLO{})
	if judged {
		v.Levels.Header = append(v.Levels.Header, "meets SLO")
	}
	v.Levels.Header = append(v.Levels.Header, "")
	var requests, failed int64
	for _, l := range levels {
		ok, fails, ttft95, itl99 := "-", "-", "-", "-"
		if sc := scenarios[l.Scenario]; sc != nil {
			ok, fails = strconv.FormatInt(sc.Serving.OK, 10), strconv.FormatInt(sc.Serving.Failed, 10)
			ttft95, itl99 = latencyOf(sc.Latency, "llm_ttft", "p95"), latencyOf(sc.Latency, "llm_itl", "p99")
			requests, failed = requests+sc.Serving.Requests, failed+sc.Serving.Failed
		}
		row := []string{textfmt.Num(l.Level), l.Scenario, ok, fails, percent(l.SuccessRate), textfmt.Num(l.RequestRate), textfmt.Num(l.OutputThroughput),
			textfmt.Millis(l.TTFTP50), ttft95, textfmt.Millis(l.TTFTP99), textfmt.Millis(l.TPOTP50), textfmt.Millis(l.TPOTP99)}
		if withITL {
			row = append(row, itl99)
		}
		if judged {
			meets := map[bool]string{true: "yes", false: "no"}[l.MeetsSLO]
			if c.Search != nil && c.Search.VerdictOf(l.Level) == "inconclusive" {
				meets = "inconclusive" // not shown to miss it
			}
			row = append(row, meets)
		}
		v.Levels.Rows = append(v.Levels.Rows, append(row, levelNote(c, l)))
	}
	if requests == 0 {
		requests, failed = s.Serving.Requests, s.Serving.Failed
	}
	v.Findings = capacityFindings(c, variable, slo)

	// Levels usually double: a log axis when they span a factor of 8,
	// with a tick at each.
	levelAxis := axisSpec{Label: variable, Log: true, LogRatio: 8, Zero: true}
	var t50, t99, tput, success, curve50, curve99 []point
	allSucceeded := len(levels) > 0
	for _, l := range levels {
		levelAxis.Ticks = append(levelAxis.Ticks, l.Level)
		name := variable + " " + textfmt.Num(l.Level)
		t50 = append(t50, point{X: l.Level, Y: l.TTFTP50, Tip: name + ": TTFT p50 " + textfmt.Millis(l.TTFTP50) + " ms"})
		t99 = append(t99, point{X: l.Level, Y: l.TTFTP99, Tip: name + ": TTFT p99 " + textfmt.Millis(l.TTFTP99) + " ms"})
		tput = append(tput, point{X: l.Level, Y: l.OutputThroughput, Tip: name + ": " + textfmt.Num(l.OutputThroughput) + " output tok/s"})
		success = append(success, point{X: l.Level, Y: 100 * l.SuccessRate, Tip: name + ": success rate " + percent(l.SuccessRate)})
		allSucceeded = allSucceeded && l.SuccessRate == 1
		curve50 = append(curve50, point{X: l.OutputThroughput, Y: l.TTFTP50, Label: textfmt.Num(l.Level),
			Tip: fmt.Sprintf("%s: %s output tok/s, TTFT p50 %s ms", name, textfmt.Num(l.OutputThroughput), textfmt.Millis(l.TTFTP50))})
		curve99 = append(curve99, point{X: l.OutputThroughput, Y: l.TTFTP99, Label: textfmt.Num(l.Level),
			Tip: fmt.Sprintf("%s: %s output tok/s, TTFT p99 %s ms", name, textfmt.Num(l.OutputThroughput), textfmt.Millis(l.TTFTP99))})
	}
	spec := chartSpec{
		Name:    "latency-throughput",
		Title:   "Latency against throughput: TTFT p50 and p99 by output tok/s, one point per level, joined in level order and labelled with its " + variable,
		Caption: c.Method,
		Width:   wideWidth, Height: 420,
		X:      axisSpec{Label: "output tok/s", Zero: true},
		Y:      axisSpec{Label: "TTFT (ms)", Log: true, Zero: true},
		Series: []series{{Name: "TTFT p50", Points: curve50, LabelBelow: true}, {Name: "TTFT p99", Points: curve99}},
		Empty:  "Latency against throughput: no level.",
	}
	if slo.TTFTP99 > 0 {
		spec.Refs = []refLine{sloLine(slo)}
	}
	if c.Saturation != nil {
		spec.Markers = append(spec.Markers, marker{X: c.Saturation.OutputThroughput, Y: c.Saturation.TTFTP99, Mark: "saturation",
			Label: "saturation: " + variable + " " + textfmt.Num(c.Saturation.Level)})
	}
	if m := c.MaxWithinSLO; m != nil {
		spec.Markers = append(spec.Markers, marker{X: m.OutputThroughput, Y: m.TTFTP99, Mark: "max-within-slo", Below: true,
			Label: fmt.Sprintf("max within SLO: %s %s, %s tok/s", variable, textfmt.Num(m.Level), textfmt.Num(m.OutputThroughput))})
	}
	v.Curve = buildChart(spec)

	var levelRefs []refLine
	if c.Saturation != nil {
		levelRefs = append(levelRefs, refLine{Value: c.Saturation.Level, Vertical: true, Label: "saturation", Mark: "saturation"})
	}
	if c.MaxWithinSLO != nil {
		levelRefs = append(levelRefs, refLine{Value: c.MaxWithinSLO.Level, Vertical: true, Label: "max within SLO", Mark: "max-within-slo"})
	}
	ttft := chartSpec{
		Name: "sweep-ttft", Title: "TTFT p50 and p99 by " + variable,
		X: levelAxis, Y: axisSpec{Label: "TTFT (ms)", Log: true, Zero: true},
		Series: []series{{Name: "TTFT p50", Points: t50}, {Name: "TTFT p99", Points: t99}},
		Refs:   levelRefs, Empty: "TTFT by " + variable + ": no level.",
	}
	if slo.TTFTP99 > 0 {
		ttft.Refs = append(slices.Clone(levelRefs), sloLine(slo))
	}
	successChart := textChart("sweep-success", "success rate 100 % throughout: "+textfmt.Count(requests, "request")+", 0 failed")
	if !allSucceeded || failed > 0 {
		successChart = buildChart(chartSpec{
			Name: "sweep-success", Title: "Success rate by " + variable,
			X: levelAxis, Y: axisSpec{Label: "success rate (%)", Lo: 0, Hi: 100},
			Series: []series{{Name: "success rate", Points: success}}, Refs: levelRefs, Empty: "Success rate by " + variable + ": no level.",
		})
	}
	v.Charts = []*Chart{
		buildChart(ttft),
		buildChart(chartSpec{
			Name: "sweep-throughput", Title: "Output throughput by " + variable,
			X: levelAxis, Y: axisSpec{Label: "output tok/s", Zero: true},
			Series: []series{{Name: "output tok/s", Points: tput}}, Refs: levelRefs, Empty: "Output throughput by " + variable + ": no level.",
		}),
		successChart,
	}
	return v
}

// findLatency is metric's row in latency rows; false when the rows have
// none, or one without samples.
func findLatency(rows []summary.LatencyRow, metric string) (summary.LatencyRow, bool) {
	i := slices.IndexFunc(rows, func(r summary.LatencyRow) bool { return r.Metric == metric })
	// A row of another tool's figures may have no count (countText) but
	// its figures; a row of llmrun's with no count has none.
	if i < 0 || rows[i].Count == 0 && !(finite(rows[i].Mean) && rows[i].Mean > 0) {
		return summary.LatencyRow{}, false
	}
	return rows[i], true
}

// latencyOf is a percentile of a metric in latency rows, in ms, "-" when
// the rows do not have it.
func latencyOf(rows []summary.LatencyRow, metric, pct string) string {
	row, ok := findLatency(rows, metric)
	if v, has := row.P[pct]; ok && has {
		return textfmt.Millis(v)
	}
	return "-"
}

// levelNote marks the saturation and max-within-SLO levels in the table.
func levelNote(c *summary.Capacity, l summary.CapacityLevel) string {
	var notes []string
	if c.Saturation != nil && c.Saturation.Level == l.Level {
		notes = append(notes, "saturation")
	}
	if c.MaxWithinSLO != nil && c.MaxWithinSLO.Level == l.Level {
		notes = append(notes, "max within SLO")
	}
	return strings.Join(notes, ", ")
}

// capacityFindings says the sweep's findings in words.
func capacityFindings(c *summary.Capacity, variable string, slo summary.SLO) []string {
	var out []string
	if s := c.Saturation; s != nil {
		out = append(out, fmt.Sprintf("The server saturates at %s %s (%s output tok/s, TTFT p99 %s ms).", variable, textfmt.Num(s.Level), textfmt.Num(s.OutputThroughput), textfmt.Millis(s.TTFTP99)))
	} else {
		what := "sweep"
		if c.Search != nil {
			what = "search's levels"
		}
		out = append(out, "The "+what+" did not reach saturation.")
	}
	switch m := c.MaxWithinSLO; {
	case slo == (summary.SLO{}):
		out = append(out, "No SLO was set.")
	case m != nil:
		out = append(out, fmt.Sprintf("The most throughput within the SLO (%s) is %s output tok/s, at %s %s.", sloText(slo), textfmt.Num(m.OutputThroughput), variable, textfmt.Num(m.Level)))
	default:
		out = append(out, fmt.Sprintf("No level meets the SLO (%s).", sloText(slo)))
	}
	return out
}

// sloText writes an SLO as "TTFT p99 ≤ 500 ms, TPOT p99 ≤ 50 ms".
func sloText(slo summary.SLO) string {
	var parts []string
	if slo.TTFTP99 > 0 {
		parts = append(parts, "TTFT p99 ≤ "+textfmt.Millis(slo.TTFTP99)+" ms")
	}
	if slo.TPOTP99 > 0 {
		parts = append(parts, "TPOT p99 ≤ "+textfmt.Millis(slo.TPOTP99)+" ms")
	}
	return strings.Join(parts, ", ")
}

func errorRows(classes []summary.ErrorClassCount) []errorRow {
	out := make([]errorRow, len(classes))
	for i, e := range classes {
		out[i] = errorRow{Class: e.Class, Count: e.Count}
		for _, m := range e.Messages {
			out[i].Messages = append(out[i].Messages, fmt.Sprintf("%d× %s", m.Count, m.Message))
		}
	}
	return out
}

func checkRows(cs []summary.Check) []checkRow {
	out := make([]checkRow, len(cs))
	for i, c := range cs {
		name := c.Name
		if c.Group != "" {
			name = c.Group + " › " + c.Name
		}
		rate := "-"
		if n := c.Passes + c.Fails; n > 0 {
			rate = percent(float64(c.Passes) / float64(n))
		}
		out[i] = checkRow{Name: name, Passes: c.Passes, Fails: c.Fails, Rate: rate, Passed: c.Fails == 0}
	}
	return out
}

func thresholdRows(s *summary.Summary) []thresholdRow {
	out := make([]thresholdRow, len(s.Thresholds))
	for i, t := range s.Thresholds {
		observed := strconv.FormatFloat(t.Value, 'g', 6, 64)
		if m, ok := s.Metrics[t.Metric]; ok && m.Unit != "" && m.Type != "rate" {
			observed += " " + m.Unit
		}
		if t.Note != "" {
			observed = t.Note
		}
		out[i] = thresholdRow{Metric: t.Metric, Threshold: t.Threshold, Observed: observed, Passed: t.Passed}
	}
	return out
}

// scenarioTable is one row per scenario, as the console prints it, but
// for a sweep's levels, which the levels table has; nil when no scenario
// is left.
func scenarioTable(s *summary.Summary) *table {
	shapes := map[string]summary.ScenarioShape{}
	for _, sh := range s.Meta.LoadShape {
		shapes[sh.Name] = sh
	}
	levels := map[string]bool{}
	if s.Capacity != nil {
		for _, l := range s.Capacity.Levels {
			levels[l.Scenario] = true
		}
	}
	t := &table{Header: []string{"scenario", "VUs used/max", "ok", "failed", "success", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "E2E p99"}, FirstFigure: 1}
	for _, sc := range s.Scenarios {
		if levels[sc.Name] {
			continue
		}
		p := func(metric, pct string) string { return latencyOf(sc.Latency, metric, pct) }
		sv := sc.Serving
		t.Rows = append(t.Rows, []string{sc.Name, shapes[sc.Name].VUs(), strconv.FormatInt(sv.OK, 10), strconv.FormatInt(sv.Failed, 10), percent(sv.SuccessRate),
			textfmt.Num(sv.RequestThroughput), textfmt.Num(sv.OutputTokenThroughput),
			p("llm_ttft", "p50"), p("llm_ttft", "p99"), p("llm_tpot", "p50"), p("llm_tpot", "p99"), p("llm_e2e", "p99")})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// percent formats a ratio as a percentage.
func percent(r float64) string {
	if !finite(r) {
		return "-"
	}
	return fmt.Sprintf("%.2f %%", 100*r)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

func durationText(secs float64) string {
	if secs <= 0 || !finite(secs) {
		return "-"
	}
	return time.Duration(secs * float64(time.Second)).Round(100 * time.Millisecond).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// startOf says when a scenario started, beside its description: after
// the scenario it was chained to, or at its start time ("" at the run's
// start).
func startOf(sh summary.ScenarioShape) string {
	delay := sh.StartTime != "" && sh.StartTime != "0s"
	switch {
	case sh.StartAfter != "" && delay:
		return ", " + sh.StartTime + " after " + sh.StartAfter + " ended"
	case sh.StartAfter != "":
		return ", after " + sh.StartAfter
	case delay:
		return ", from " + sh.StartTime
	}
	return ""
}

// thresholdVerdict says whether the thresholds passed, naming the failed
// ones with what was observed; "" without thresholds.
func thresholdVerdict(ts []thresholdRow) string {
	if len(ts) == 0 {
		return ""
	}
	var failed []string
	for _, t := range ts {
		if !t.Passed {
			failed = append(failed, fmt.Sprintf("%s %s (observed %s)", t.Metric, t.Threshold, t.Observed))
		}
	}
	if len(failed) == 0 {
		return fmt.Sprintf("Passed: %d of %s met.", len(ts), textfmt.Count(int64(len(ts)), "threshold"))
	}
	return fmt.Sprintf("Failed: %d of %s not met: %s.", len(failed), textfmt.Count(int64(len(ts)), "threshold"), strings.Join(failed, "; "))
}

// instancesText says which instances a merged result holds and which it
// lacks (missing, "" when none); both "" for a result that is not merged.
func instancesText(m summary.Meta) (held, missing string) {
	if len(m.Merged) == 0 {
		return "", ""
	}
	held = fmt.Sprintf("Merged from %s: %s.", textfmt.Count(int64(len(m.Merged)), "result"), strings.Join(m.Merged, ", "))
	if m.Instances > 1 {
		var in []string
		for i := range m.Instances {
			if !slices.Contains(m.MissingInstances, i) {
				in = append(in, strconv.Itoa(i))
			}
		}
		held = fmt.Sprintf("Merged from %s: instances %s of %d.", textfmt.Count(int64(len(m.Merged)), "result"), strings.Join(in, ", "), m.Instances)
	}
	if len(m.MissingInstances) > 0 {
		ids := make([]string, len(m.MissingInstances))
		for i, n := range m.MissingInstances {
			ids[i] = strconv.Itoa(n)
		}
		missing = fmt.Sprintf("Missing: instance %s. Its requests are in no figure of this report: the merge was given no result of it.", strings.Join(ids, ", "))
	}
	return held, missing
}

// benchScript is the script name of an llmrun bench run
// (runtime/vllmbench), which tells its result from others.
const benchScript = "llmrun-bench.js"

// benchSection is vLLM's result block of an llmrun bench run, from the
// serving headline's vLLM keys, its numbers as vllm bench serve prints
// them (two decimals); nil for another run.
func benchSection(s *summary.Summary) *benchView {
	h := s.Serving.Headline
	if s.Meta.Script != benchScript || h == nil {
		return nil
	}
	num := func(key string) string {
		v, ok := h[key]
		if !ok {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	v := &benchView{Fields: []field{
		{"Successful requests", strconv.FormatInt(s.Serving.OK, 10)},
		{"Failed requests", strconv.FormatInt(s.Serving.Failed, 10)},
		{"Benchmark duration (s)", num("duration")},
		{"Request throughput (req/s)", num("request_throughput")},
		{"Output token throughput (tok/s)", num("output_throughput")},
		{"Total token throughput (tok/s)", num("total_token_throughput")},
	}, Latency: table{Header: []string{"(ms)", "Mean", "Median"}, FirstFigure: 1}}
	if _, ok := h["request_goodput"]; ok {
		v.Fields = append(v.Fields, field{"Request goodput (req/s)", num("request_goodput")})
	}
	// The percentiles the run was asked for, as its console printed them;
	// vLLM's default when the result did not keep them.
	percentiles := s.Meta.MetricPercentiles
	if len(percentiles) == 0 {
		percentiles = []float64{99}
	}
	for _, p := range percentiles {
		v.Latency.Header = append(v.Latency.Header, "P"+strconv.FormatFloat(p, 'f', -1, 64))
	}
	for _, l := range []struct{ label, key, metric string }{{"TTFT", "ttft", "llm_ttft"}, {"TPOT", "tpot", "llm_tpot"}, {"ITL", "itl", "llm_itl"}, {"E2EL", "e2el", "llm_e2e"}} {
		hist := histogramOf(s, l.metric)
		// The median and percentiles as vLLM computes them, from the
		// metric's histogram; the headline's keys when it has none.
		figure := func(p float64, key string) string {
			if hist != nil && hist.Count > 0 {
				return strconv.FormatFloat(linearPercentile(hist, p), 'f', 2, 64)
			}
			return num(key)
		}
		row := []string{l.label, num("mean_" + l.key + "_ms"), figure(50, "median_"+l.key+"_ms")}
		for _, p := range percentiles {
			row = append(row, figure(p, fmt.Sprintf("p%s_%s_ms", strconv.FormatFloat(p, 'f', -1, 64), l.key)))
		}
		v.Latency.Rows = append(v.Latency.Rows, row)
	}
	return v
}

// linearPercentile is the p-th percentile of the samples of st as vLLM
// computes it (numpy's percentile and median): linear between the two
// samples around rank (n − 1)·p/100, each read from the histogram (within
// 0.1 %). With few samples it differs from the headline's, which takes
// the sample at a rank: the p99 of 40 requests is nearly their largest,
// not their largest.
func linearPercentile(st *metrics.Stats, p float64) float64 {
	n := float64(st.Count)
	sample := func(rank float64) float64 {
		// The sample of rank from 0, the (rank+1)-th smallest.
		return st.Percentile(100 * (rank + 1) / n)
	}
	at := (n - 1) * p / 100
	below := math.Floor(at)
	if below >= n-1 {
		return st.Max
	}
	return sample(below) + (at-below)*(sample(below+1)-sample(below))
}
