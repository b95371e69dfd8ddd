// Package summarize builds the result document (runtime/summary) from a
// finished run: the engine's report (its metric snapshot, scenarios,
// thresholds, errors and client health), what the preflight showed, and
// what the server watch read of the servers over the measured window. It
// holds every conversion from the engine's, modules/llm's and
// runtime/threshold's types to the document's, so that runtime/summary,
// which readers of result files import, imports none of the engine.
package summarize

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// Build computes the summary of a report.
func Build(rep *engine.Report, meta summary.Meta) *summary.Summary {
	snap := rep.Snapshot
	dur := rep.Duration()
	meta.Start, meta.End, meta.Interrupted = rep.Start, rep.End, rep.Interrupted
	meta.Models = snap.TagValues("llm_requests", "model")
	scenarios, final := rep.Scenarios, rep.Final
	if len(rep.Rounds) > 0 {
		// A capacity search's scenarios are its rounds: each one
		// scenario at one level, summarised apart.
		scenarios, final = rep.Rounds, nil
	}
	meta.LoadShape = shapes(scenarios, final)
	s := &summary.Summary{
		SchemaVersion:     summary.SchemaVersion,
		Meta:              meta,
		Serving:           serving(snap, nil, dur),
		Latency:           summary.LatencyRows(snapStats(snap, nil)),
		ScriptErrors:      errorCounts(rep.ScriptErrors),
		OtherScriptErrors: rep.OtherScriptErrors,
		Errors:            errorClasses(snap, "llm_errors", rep.RequestErrors),
		Retries:           errorClasses(snap, "llm_retries", nil),
		Checks:            checks(snap),
		Client:            clientReport(rep),
		TokenChecks:       tokenChecks(snap),
		PromptCheck:       promptCheck(snap),
		UniqueCache:       uniqueCache(snap, meta),
		Thresholds:        thresholdResults(rep.Thresholds),
		Metrics:           allMetrics(rep.Registry, snap, dur),
	}
	if rep.AbortedBy != nil {
		s.AbortedBy = rep.AbortedBy.String()
	}
	if rep.EarlyStopped != nil {
		s.EarlyStop, s.EarlyStopAt = rep.EarlyStopped.String(), rep.EarlyStopped.At.Seconds()
	}
	floor := rep.MinSuccessRate
	s.Meta.MinSuccessRate = &floor
	s.LowSuccess = summary.LowSuccessWarning(s.Serving, floor)
	s.ChainStops = chainStops(rep.ChainStops)
	addSubMetrics(s.Metrics, rep, dur)
	if len(scenarios) > 1 || len(rep.Rounds) > 0 {
		for _, sc := range scenarios {
			filter := scenarioFilter(sc.Name)
			// A scenario's throughput is over its own window: in a
			// sweep, levels run one after another.
			dur := rep.Windows[sc.Name].Duration()
			s.Scenarios = append(s.Scenarios, summary.ScenarioSummary{Name: sc.Name, Serving: serving(snap, filter, dur),
				Latency: summary.LatencyRows(snapStats(snap, filter)), Metrics: scenarioMetrics(rep.Registry, snap, filter, dur)})
		}
	}
	return s
}

// snapStats looks metrics up in a snapshot, restricted to the series whose
// tags contain filter (nil: all).
func snapStats(snap *metrics.Snapshot, filter *metrics.TagSet) summary.StatsFunc {
	return func(metric string) *metrics.Stats { return snap.Stats(metric, filter) }
}

// shapes describes the scenarios scs, with what final, their progress at
// the end of the run (in the same order, when known), says of the VUs
// they used and where an interrupted one stopped.
func shapes(scs []engine.Scenario, final []engine.ScenarioProgress) []summary.ScenarioShape {
	out := make([]summary.ScenarioShape, len(scs))
	for i, sc := range scs {
		out[i] = summary.ScenarioShape{Name: sc.Name, Executor: sc.Executor, Exec: sc.Exec, StartTime: sc.StartTime.String(), StartAfter: sc.StartAfter,
			Description: sc.Describe(), MaxVUs: sc.Config.MaxVUs(), Tags: sc.Tags}
		if i >= len(final) {
			continue
		}
		out[i].PeakVUs = int(final[i].PeakVUs)
		if final[i].StoppedEarly() {
			at := final[i].Fraction()
			out[i].InterruptedAt = &at
		}
	}
	return out
}

func sum(snap *metrics.Snapshot, name string, filter *metrics.TagSet) float64 {
	if st := snap.Stats(name, filter); st != nil {
		return st.Sum
	}
	return 0
}

func serving(snap *metrics.Snapshot, filter *metrics.TagSet, dur time.Duration) summary.Serving {
	var s summary.Serving
	if st := snap.Stats("llm_failed", filter); st != nil {
		s.Requests, s.Failed = st.Count, st.NonZero
		s.OK = s.Requests - s.Failed
	}
	s.Interrupted = summary.ClampCount(sum(snap, "llm_interrupted", filter))
	s.OutputTokens = summary.ClampCount(sum(snap, "llm_output_tokens", filter))
	s.PromptTokens = summary.ClampCount(sum(snap, "llm_prompt_tokens", filter))
	s.ReasoningTokens = summary.ClampCount(sum(snap, "llm_reasoning_tokens", filter))
	s.CachedTokens = summary.ClampCount(sum(snap, "llm_cached_tokens", filter))
	s.Documents = summary.ClampCount(sum(snap, "llm_documents", filter))
	s.Iterations = summary.ClampCount(sum(snap, "iterations", filter))
	s.InterruptedIterations = summary.ClampCount(sum(snap, "iterations_interrupted", filter))
	s.WarmupRequests = summary.ClampCount(sum(snap, "warmup_requests", filter))
	s.WarmupIterations = summary.ClampCount(sum(snap, "warmup_iterations", filter))
	s.DroppedIterations = summary.ClampCount(sum(snap, "dropped_iterations", filter))
	s.Finish(dur, snapStats(snap, filter))
	return s
}

// errorClasses counts the named counter by its error_class tag, with the
// classes' messages.
func errorClasses(snap *metrics.Snapshot, metric string, messages map[string][]engine.ErrorCount) []summary.ErrorClassCount {
	var out []summary.ErrorClassCount
	for _, class := range snap.TagValues(metric, "error_class") {
		n := sum(snap, metric, metrics.NewTagSet(map[string]string{"error_class": class}))
		out = append(out, summary.ErrorClassCount{Class: class, Count: summary.ClampCount(n), Messages: errorCounts(messages[class])})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

func checks(snap *metrics.Snapshot) []summary.Check {
	byKey := map[[2]string]*summary.Check{}
	var order [][2]string
	for _, se := range snap.Series() {
		if se.Metric.Name != "checks" {
			continue
		}
		name, _ := se.Tags.Get("check")
		group, _ := se.Tags.Get("group")
		k := [2]string{group, name}
		c, ok := byKey[k]
		if !ok {
			c = &summary.Check{Name: name, Group: group}
			byKey[k] = c
			order = append(order, k)
		}
		c.Passes += se.Stats.NonZero
		c.Fails += se.Stats.Count - se.Stats.NonZero
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i][0] != order[j][0] {
			return order[i][0] < order[j][0]
		}
		return order[i][1] < order[j][1]
	})
	out := make([]summary.Check, len(order))
	for i, k := range order {
		out[i] = *byKey[k]
	}
	return out
}

func allMetrics(reg *metrics.Registry, snap *metrics.Snapshot, dur time.Duration) map[string]summary.MetricSummary {
	out := make(map[string]summary.MetricSummary)
	for _, m := range reg.All() {
		if st := snap.Stats(m.Name, nil); st != nil {
			out[m.Name] = metricSummary(m, st, dur)
		}
	}
	return out
}

// scenarioMetrics are the llm_* metrics and the iteration_lag of the series
// whose tags contain filter (one scenario's).
func scenarioMetrics(reg *metrics.Registry, snap *metrics.Snapshot, filter *metrics.TagSet, dur time.Duration) map[string]summary.MetricSummary {
	out := make(map[string]summary.MetricSummary)
	for _, m := range reg.All() {
		if !strings.HasPrefix(m.Name, "llm_") && m.Name != "iteration_lag" {
			continue
		}
		if st := snap.Stats(m.Name, filter); st != nil {
			out[m.Name] = metricSummary(m, st, dur)
		}
	}
	return out
}

// metricSummary is a metric's statistics under k6's names, with a trend's
// histogram; a counter's rate is over dur.
func metricSummary(m *metrics.Metric, st *metrics.Stats, dur time.Duration) summary.MetricSummary {
	return summary.MetricSummary{Type: m.Type.String(), Contains: m.Contains.String(), Unit: m.Unit, Desc: m.Desc, Custom: m.Custom,
		Values: summary.Values(st, dur), Histogram: summary.NewHistogram(st)}
}

// MaxLagP99 is the iteration lag p99 above which the summary says what
// started arrival-rate iterations late.
const MaxLagP99 = 5 * time.Millisecond

// clientReport adds to the load generator's report what the arrival-rate
// executors saw, iterations started late or not at all, each warning
// naming the cause found: a maxConcurrency cap the scenario reached (by
// design), else what the probe found (llmrun's own load, or other
// processes on the machine), else that none was found.
func clientReport(rep *engine.Report) health.Report {
	c := rep.Client
	capped := cappedScenarios(rep)
	c.Warnings = append(c.Warnings, lagWarnings(rep, capped)...)
	c.Warnings = append(c.Warnings, dropWarnings(rep, capped)...)
	if w := overflowWarning(rep.Snapshot); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	return c
}

// overflowWarning says which metrics had samples of more tag sets than
// llmrun keeps series for (metrics.MaxSeries a metric); "" when none had.
func overflowWarning(snap *metrics.Snapshot) string {
	if snap == nil {
		return ""
	}
	var names []string
	var samples int64
	for _, se := range snap.Series() {
		if v, ok := se.Tags.Get(metrics.OverflowTag); ok && v == "true" {
			names = append(names, se.Metric.Name)
			samples += se.Stats.Count
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("%s had samples of more than %d distinct tag sets (a tag whose values do not repeat, such as a request id, makes one each): "+
		"%s of later tag sets were kept untagged in series tagged %s=true; the totals are whole, the figures by tag miss them",
		strings.Join(slices.Compact(names), ", "), metrics.MaxSeries, textfmt.Count(samples, "sample"), metrics.OverflowTag)
}

// cappedScenario is an arrival-rate scenario with a maxConcurrency cap.
type cappedScenario struct {
	name string
	cap  int
	// inFlight is its mean number of iterations in flight (Little's law:
	// its iterations' durations summed over its window); dropped counts
	// its arrivals still waiting for the cap when it ended (with a cap,
	// no other arrival is dropped: the VUs never run out first).
	inFlight float64
	dropped  int64
}

// cappedScenarios returns the run's scenarios that set maxConcurrency, by
// name.
func cappedScenarios(rep *engine.Report) map[string]cappedScenario {
	out := map[string]cappedScenario{}
	for _, sc := range rep.Scenarios {
		cfg, ok := sc.Config.(executor.ConcurrencyCapped)
		if !ok || cfg.ConcurrencyCap() == 0 {
			continue
		}
		filter := scenarioFilter(sc.Name)
		s := cappedScenario{name: sc.Name, cap: cfg.ConcurrencyCap(), dropped: summary.ClampCount(sum(rep.Snapshot, "dropped_iterations", filter))}
		if window := rep.Windows[sc.Name].Duration(); window > 0 {
			s.inFlight = sum(rep.Snapshot, "iteration_duration", filter) / (float64(window) / float64(time.Millisecond))
		}
		out[sc.Name] = s
	}
	return out
}

// reached says whether the scenario reached its cap: it dropped arrivals
// that waited for it, or its mean in flight came within 2√mean of it. At
// that load at least about 3 % of Poisson arrivals find every slot taken
// (Erlang C; β ≤ 2 in Halfin and Whitt's terms): more than the 1 % a p99
// reads.
func (s cappedScenario) reached() bool {
	return s.cap > 0 && (s.dropped > 0 || float64(s.cap)-s.inFlight <= 2*math.Sqrt(s.inFlight))
}

// String names the scenario with its cap and mean in flight.
func (s cappedScenario) String() string {
	return fmt.Sprintf("%s (maxConcurrency %d, %.1f iterations in flight on average)", s.name, s.cap, s.inFlight)
}

// lagWarnings explain an iteration lag p99 above MaxLagP99: one warning
// for the lagging scenarios that reached their cap, by design, and one
// with the probe's cause for the others.
func lagWarnings(rep *engine.Report, capped map[string]cappedScenario) []string {
	limit := float64(MaxLagP99) / float64(time.Millisecond)
	overall := lagP99(rep.Snapshot, nil)
	if overall <= limit {
		return nil
	}
	var atCap, others []string
	var capP99, othersP99 float64
	for _, sc := range rep.Scenarios {
		switch p99 := lagP99(rep.Snapshot, scenarioFilter(sc.Name)); {
		case p99 <= limit:
		case capped[sc.Name].reached():
			atCap, capP99 = append(atCap, capped[sc.Name].String()), max(capP99, p99)
		default:
			others, othersP99 = append(others, sc.Name), max(othersP99, p99)
		}
	}
	if len(atCap) == 0 {
		return []string{fmt.Sprintf("arrival-rate iterations started up to %.1f ms late (p99): %s", overall, lagCause(rep.Client))}
	}
	out := []string{fmt.Sprintf("arrival-rate iterations of %s started up to %.1f ms late (p99): arrivals that found the maxConcurrency cap reached waited for a free slot, by design (the queue of the client being modelled, not a limit of llmrun or of the server)",
		scenarioList(atCap), capP99)}
	if len(others) > 0 {
		out = append(out, fmt.Sprintf("arrival-rate iterations of %s started up to %.1f ms late (p99): %s", scenarioList(others), othersP99, lagCause(rep.Client)))
	}
	return out
}

// lagCause says what the probe found that started iterations late.
func lagCause(c health.Report) string {
	if own := c.OwnCause(); own != "" {
		return "the client, not the server, limited the arrival rate: " + own
	}
	if machine := c.MachineCause(); machine != "" {
		return machine + " and delayed the start of iterations, not llmrun's own load nor the server; measured latencies may include the same wait"
	}
	return "the cause was not found (checked: " + c.Checked() + "; none above its limit); VUs initialised during the run (preAllocatedVUs below what the rate needs) also start iterations late"
}

// dropWarnings explain dropped iterations by their cause: a capped
// scenario's were still waiting for its cap when it ended, by design;
// others found every VU busy, and the warning says what the probe found;
// others were reached only after their scenario ended, or their VU was
// initialised too late, VUs being free.
func dropWarnings(rep *engine.Report, capped map[string]cappedScenario) []string {
	var out []string
	var busy int64
	for i, sc := range rep.Scenarios {
		d := drops(rep, i, capped[sc.Name].cap > 0)
		if n := d[executor.DropCapped]; n > 0 {
			out = append(out, fmt.Sprintf("%d planned iterations of scenario %s were still waiting for its maxConcurrency cap (%d) when it ended and were not started, by design", n, sc.Name, capped[sc.Name].cap))
		}
		busy += d[executor.DropBusy]
		used := ""
		if i < len(rep.Final) {
			used = fmt.Sprintf(" (at most %d of its %d VUs ran at once)", rep.Final[i].PeakVUs, rep.Final[i].MaxVUs)
		}
		if n := d[executor.DropEnded]; n > 0 {
			out = append(out, fmt.Sprintf("%d planned iterations of scenario %s were not started: the scenario ended before its schedule, running late, reached them, not for want of VUs%s; %s", n, sc.Name, used, lagCause(rep.Client)))
		}
		if n := d[executor.DropUnscheduled]; n > 0 {
			out = append(out, fmt.Sprintf("%d planned iterations of scenario %s were not started: its duration ended before their planned start (its iterations need a longer duration at its rate)", n, sc.Name))
		}
		if n := d[executor.DropMaxDuration]; n > 0 {
			out = append(out, fmt.Sprintf("%d planned iterations of scenario %s were not started: its maxDuration ended it first (its iterations need a longer maxDuration)", n, sc.Name))
		}
		if n := d[executor.DropLateVU]; n > 0 {
			out = append(out, fmt.Sprintf("%d planned iterations of scenario %s were not started: the VU initialised for them during the run was ready only after the scenario ended%s; raise preAllocatedVUs so that the VUs are initialised before the run", n, sc.Name, used))
		}
	}
	if busy > 0 {
		out = append(out, fmt.Sprintf("%d planned iterations were dropped: every one of maxVUs was busy at a planned start; %s", busy, dropCause(rep.Client)))
	}
	return out
}

// drops are scenario i's dropped iterations by cause, as the engine
// counted them; from dropped_iterations when the report has no final
// progress: a capped scenario's were waiting for its cap, the others'
// found every VU busy.
func drops(rep *engine.Report, i int, capped bool) [executor.DropCauses]int64 {
	if i < len(rep.Final) {
		return rep.Final[i].Dropped
	}
	var d [executor.DropCauses]int64
	n := summary.ClampCount(sum(rep.Snapshot, "dropped_iterations", scenarioFilter(rep.Scenarios[i].Name)))
	if capped {
		d[executor.DropCapped] = n
	} else {
		d[executor.DropBusy] = n
	}
	return d
}

// dropCause says what the probe found that left no VU free.
func dropCause(c health.Report) string {
	if own := c.OwnCause(); own != "" {
		return "the client, not the server, limited the run: " + own + "; raise preAllocatedVUs/maxVUs"
	}
	if machine := c.MachineCause(); machine != "" {
		return machine + " and slowed the iterations down: raise preAllocatedVUs/maxVUs, or run on a quieter machine"
	}
	return "raise preAllocatedVUs/maxVUs (about rate × iteration time), or the server is too slow for this rate; no cause was found in the load generator (checked: " + c.Checked() + ")"
}

// lagP99 is the iteration lag p99 of the series filter selects, in ms; 0
// without samples.
func lagP99(snap *metrics.Snapshot, filter *metrics.TagSet) float64 {
	if st := snap.Stats("iteration_lag", filter); st != nil {
		return st.Percentile(99)
	}
	return 0
}

// scenarioFilter selects one scenario's series.
func scenarioFilter(name string) *metrics.TagSet {
	return metrics.NewTagSet(map[string]string{"scenario": name})
}

// scenarioList names scenarios in a sentence.
func scenarioList(names []string) string {
	if len(names) == 1 {
		return "scenario " + names[0]
	}
	return "scenarios " + strings.Join(names, ", ")
}

// tokenChecks compares, per second source, the sums of
// llm_output_tokens_check.
func tokenChecks(snap *metrics.Snapshot) []summary.TokenCheck {
	var out []summary.TokenCheck
	for _, check := range snap.TagValues("llm_output_tokens_check", "check") {
		usage := sum(snap, "llm_output_tokens_check", metrics.NewTagSet(map[string]string{"check": check, "source": "usage"}))
		other := sum(snap, "llm_output_tokens_check", metrics.NewTagSet(map[string]string{"check": check, "source": check}))
		out = append(out, summary.NewTokenCheck(check, summary.ClampCount(usage), summary.ClampCount(other)))
	}
	return out
}

// promptCheck sums llm_prompt_tokens_check by source.
func promptCheck(snap *metrics.Snapshot) *summary.PromptCheck {
	req := snap.Stats("llm_prompt_tokens_check", metrics.NewTagSet(map[string]string{"source": "requested"}))
	if req == nil || req.Count == 0 {
		return nil
	}
	return summary.NewPromptCheck(req.Count, summary.ClampCount(req.Sum), summary.ClampCount(sum(snap, "llm_prompt_tokens_check", metrics.NewTagSet(map[string]string{"source": "usage"}))))
}

// uniqueCache sums llm_unique_prompt_tokens by source, for the run of
// meta.
func uniqueCache(snap *metrics.Snapshot, meta summary.Meta) *summary.UniqueCache {
	cached := snap.Stats("llm_unique_prompt_tokens", metrics.NewTagSet(map[string]string{"source": "cached"}))
	if cached == nil || cached.Count == 0 {
		return nil
	}
	usage := sum(snap, "llm_unique_prompt_tokens", metrics.NewTagSet(map[string]string{"source": string(llm.TokensFromUsage)}))
	return summary.NewUniqueCache(cached.Count, cached.NonZero, summary.ClampCount(usage), summary.ClampCount(cached.Sum), meta)
}

// thresholdResults are the thresholds' final results as the summary keeps
// them.
func thresholdResults(results []threshold.Result) []summary.ThresholdResult {
	out := make([]summary.ThresholdResult, len(results))
	for i, r := range results {
		out[i] = summary.ThresholdResult{Metric: r.Key, Threshold: r.Source, Value: r.Value, Passed: r.Passed, Note: r.Note, Skipped: r.Skipped}
	}
	return out
}

// addSubMetrics adds the sub-metrics thresholds select (llm_ttft{scenario:
// chat}) to the metrics, under their keys, as k6 does.
func addSubMetrics(out map[string]summary.MetricSummary, rep *engine.Report, dur time.Duration) {
	for _, r := range rep.Thresholds {
		th := r.Threshold
		if th.Tags == nil {
			continue
		}
		if _, done := out[th.Key]; done {
			continue
		}
		m := rep.Registry.Get(th.Metric)
		st := rep.Snapshot.Stats(th.Metric, th.Tags)
		if m == nil || st == nil {
			continue
		}
		out[th.Key] = metricSummary(m, st, dur)
	}
}
