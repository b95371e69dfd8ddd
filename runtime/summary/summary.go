// Package summary turns a run's report into the figures people read: the
// serving headline (requests, throughput, success rate), latency rows
// (TTFT, TPOT, ITL, E2E), errors by class, checks, every metric's
// statistics and the metadata that makes the run reproducible. The console
// renders a Summary; --summary-export writes it as JSON, ReadJSON reads it
// back, and Merge combines the results of several processes of one test.
// docs/results.md describes the file field by field.
package summary

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/textfmt"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// SchemaVersion is the version of the JSON layout; it changes when a field
// changes meaning or goes away, or when a field the file's readers rely on
// is added. Version 2 added the trends' histograms (MetricSummary.
// Histogram), the scenarios' metrics, the serving blocks' vLLM-style
// headline and Meta's options and merged_from. Version 3 changed the
// meaning of the timeline's output_tokens (TimelinePoint.OutputTokens):
// the tokens that arrived in the interval, where version 2 has those of
// the requests completed in it. Version 4 added the server section
// (Summary.Server), which merge keeps one copy of per target.
const SchemaVersion = 4

// OldestSchemaVersion is the oldest version ReadJSON reads: a version-2
// file differs only in its timeline's output_tokens, which keep their
// meaning when read (Summary.SchemaVersion says which); versions 2 and 3
// have no server section.
const OldestSchemaVersion = 2

// Percentiles are the percentiles every latency row and trend carries.
var Percentiles = []float64{50, 90, 95, 99}

// Summary is the result of one run.
type Summary struct {
	SchemaVersion int               `json:"schema_version"`
	Meta          Meta              `json:"meta"`
	Serving       Serving           `json:"serving"`
	Latency       []LatencyRow      `json:"latency"`
	Scenarios     []ScenarioSummary `json:"scenarios"`
	// Errors are the failed requests by class, most frequent first, each
	// with its first few distinct messages.
	Errors []ErrorClassCount `json:"errors"`
	// Retries are the failed attempts a retry policy sent again, by the
	// class of the attempt; empty without retries.
	Retries      []ErrorClassCount   `json:"retries,omitempty"`
	ScriptErrors []engine.ErrorCount `json:"script_errors"`
	// OtherScriptErrors counts exceptions whose message was not kept.
	OtherScriptErrors int64   `json:"other_script_errors,omitempty"`
	Checks            []Check `json:"checks"`
	// Client is how the load generator itself fared: CPU, scheduling
	// delay, and warnings when it may have limited the run.
	Client health.Report `json:"client"`
	// TokenChecks compare the server's usage with a second count of the
	// same requests' output tokens, one per second source; each carries a
	// warning when they disagree by more than MaxTokenDisagreement.
	TokenChecks []TokenCheck `json:"token_checks,omitempty"`
	// PromptCheck compares the prompt lengths the script asked for with
	// the server's count of the same prompts; nil when no request gave
	// its length (llm.stream's promptTokens option).
	PromptCheck *PromptCheck `json:"prompt_check,omitempty"`
	// UniqueCache says how much of the prompts the script declared unique
	// the server served from its prefix cache; nil when no such request
	// had its server report its cache.
	UniqueCache *UniqueCache `json:"unique_prompt_cache,omitempty"`
	// Thresholds are the script's thresholds as evaluated at the end.
	Thresholds []ThresholdResult `json:"thresholds"`
	// Outputs report what each --out output stored and lost; the command
	// fills them in once the outputs have flushed.
	Outputs []OutputReport `json:"outputs,omitempty"`
	// Timeline is the run interval by interval; the command fills it in
	// from its timeline recorder.
	Timeline []TimelinePoint `json:"timeline,omitempty"`
	// Server is what the server's own metrics and its GPUs' telemetry
	// said over the measured window (AttachServer); nil when no target
	// was scraped, and in files of versions 2 and 3.
	Server *Server `json:"server,omitempty"`
	// Capacity is the verdict of a sweep (scenarios tagged with a
	// concurrency or rate level); nil for other runs.
	Capacity *Capacity `json:"capacity,omitempty"`
	// AbortedBy describes the abortOnFail threshold that stopped the run,
	// "" when none did.
	AbortedBy string `json:"aborted_by,omitempty"`
	// EarlyStop says why the early stop (options.earlyStop) stopped the
	// run, "" when it did not; EarlyStopAt is when, in seconds into the
	// run (the earliest of a merged result's).
	EarlyStop   string  `json:"early_stop,omitempty"`
	EarlyStopAt float64 `json:"early_stop_at_s,omitempty"`
	// LowSuccess warns that fewer than Meta.MinSuccessRate of the
	// requests succeeded, "" when the rate is above it or no request
	// succeeded (NoSuccess says so).
	LowSuccess string `json:"low_success,omitempty"`
	// ChainStops are the chains of scenarios (startAfter) stopped before
	// their end, a sweep stopped by options.capacity.stop: after which
	// scenario, why, and the scenarios skipped (they never started, and
	// have no figures); empty when none was.
	ChainStops []engine.ChainStop `json:"chain_stops,omitempty"`
	// Preflight is what the request sent to each target before the run
	// showed; empty with --no-preflight. The command fills it in.
	Preflight []llm.Probe `json:"preflight,omitempty"`
	// Metrics holds every metric's statistics by name, and those of the
	// sub-metrics thresholds select by their key (llm_ttft{scenario:chat}).
	Metrics map[string]MetricSummary `json:"metrics"`
}

// Meta is what makes a run reproducible.
type Meta struct {
	// RunID identifies the run (in InfluxDB too); TestID names the test
	// whose runs are compared over time; Tags are the command line's
	// --tag pairs.
	RunID        string            `json:"run_id,omitempty"`
	TestID       string            `json:"testid,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	Tool         string            `json:"tool"`
	Version      string            `json:"version"`
	Script       string            `json:"script"`
	ScriptSHA256 string            `json:"script_sha256"`
	Target       string            `json:"target"`
	BaseURL      string            `json:"base_url"`
	Models       []string          `json:"models"`
	Seed         int64             `json:"seed"`
	// SeedDrawn says that Seed was drawn for the run (no --seed): --seed
	// Seed repeats it.
	SeedDrawn   bool            `json:"seed_drawn,omitempty"`
	Host        string          `json:"host"`
	OS          string          `json:"os"`
	CPUs        int             `json:"cpus"`
	GoVersion   string          `json:"go_version"`
	Start       time.Time       `json:"start"`
	End         time.Time       `json:"end"`
	Interrupted bool            `json:"interrupted"`
	LoadShape   []ScenarioShape `json:"load_shape"`
	// Options are the run's options as resolved (script, config file and
	// command line), as JSON; the command fills them in.
	Options json.RawMessage `json:"options,omitempty"`
	// Merged names the results a merged result was made of (their run_id,
	// else their host), in the order given to Merge; empty for a single
	// run.
	Merged []string `json:"merged_from,omitempty"`
	// SLO is the run's --slo, which capacity verdicts and reports use.
	SLO SLO `json:"slo,omitzero"`
	// ExecutionSegment is the part of the test plan the run ran
	// (--execution-segment, "1/3:2/3") and ExecutionSegmentSequence the
	// sequence it is a segment of ("0,1/3,2/3,1"); empty for a whole
	// plan. Merged, the inputs' distinct values are joined with ", ".
	ExecutionSegment         string `json:"execution_segment,omitempty"`
	ExecutionSegmentSequence string `json:"execution_segment_sequence,omitempty"`
	// Instances is how many instances the run had (--instances), when
	// more than one; each instance's index is its "instance" tag.
	// MissingInstances, in a merged result of one run, are the indices of
	// the instances whose results were not in the merge.
	Instances        int   `json:"instances,omitempty"`
	MissingInstances []int `json:"missing_instances,omitempty"`
	// MinSuccessRate is the success rate below which the run warned
	// (options.earlyStop.minSuccessRate; 0: no warning); absent in
	// results written before it was kept, which warned below the
	// default.
	MinSuccessRate *float64 `json:"min_success_rate,omitempty"`
}

// successFloor is the success rate below which the run warns.
func (m Meta) successFloor() float64 {
	if m.MinSuccessRate == nil {
		return engine.DefaultEarlyStop().MinSuccessRate
	}
	return *m.MinSuccessRate
}

// ScenarioShape describes one scenario's load.
type ScenarioShape struct {
	Name      string `json:"name"`
	Executor  string `json:"executor"`
	Exec      string `json:"exec"`
	StartTime string `json:"start_time"`
	// StartAfter names the scenario this one started after (startAfter),
	// StartTime being then a delay after its end.
	StartAfter  string `json:"start_after,omitempty"`
	Description string `json:"description"`
	MaxVUs      int    `json:"max_vus"`
	// PeakVUs is the most VUs that ran an iteration at once: the VUs it
	// used, out of MaxVUs (0 in results written before it was kept).
	PeakVUs int               `json:"peak_vus,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
	// InterruptedAt is the share of its plan (0 to 1: its duration, or
	// its iterations) done when the run's stop (a signal, the early stop,
	// an abort) ended it; absent when it ran to its end or never started.
	InterruptedAt *float64 `json:"interrupted_at,omitempty"`
}

// VUs says the VUs the scenario used out of its maxVUs: "3/8", or "-/8"
// when the result did not keep the VUs used.
func (sh ScenarioShape) VUs() string {
	used := "-"
	if sh.PeakVUs > 0 {
		used = strconv.Itoa(sh.PeakVUs)
	}
	return used + "/" + strconv.Itoa(sh.MaxVUs)
}

// Stopped says where the run's stop ended the scenario: "chat at 30%";
// "" when it ran to its end.
func (sh ScenarioShape) Stopped() string {
	if sh.InterruptedAt == nil {
		return ""
	}
	return fmt.Sprintf("%s at %.0f%%", sh.Name, 100**sh.InterruptedAt)
}

// Serving is the headline block; throughputs are over the measured window.
type Serving struct {
	DurationSeconds float64 `json:"duration_s"`
	// Requests counts requests that ended (ok or failed); interrupted
	// ones are counted apart and kept out of every other figure.
	Requests    int64 `json:"requests"`
	OK          int64 `json:"completed"`
	Failed      int64 `json:"failed"`
	Interrupted int64 `json:"interrupted"`
	// SuccessRate is OK / Requests.
	SuccessRate float64 `json:"success_rate"`
	// RequestThroughput is completed requests per second.
	RequestThroughput float64 `json:"request_throughput"`
	// OutputTokens and PromptTokens are summed over completed requests.
	OutputTokens int64 `json:"total_output_tokens"`
	PromptTokens int64 `json:"total_input_tokens"`
	// ReasoningTokens are the reasoning share of OutputTokens (see
	// llm_reasoning_tokens).
	ReasoningTokens int64 `json:"total_reasoning_tokens"`
	// CachedTokens are the input tokens the server reported as served
	// from its prefix cache (llm_cached_tokens), 0 when none did.
	CachedTokens int64 `json:"total_cached_input_tokens"`
	// MeanInputTokens and MeanOutputTokens are per completed request.
	MeanInputTokens       float64 `json:"mean_input_tokens"`
	MeanOutputTokens      float64 `json:"mean_output_tokens"`
	OutputTokenThroughput float64 `json:"output_throughput"`
	TotalTokenThroughput  float64 `json:"total_token_throughput"`
	Iterations            int64   `json:"iterations"`
	InterruptedIterations int64   `json:"interrupted_iterations"`
	// WarmupRequests and WarmupIterations ran before the measured part
	// and are in no other figure.
	WarmupRequests   int64 `json:"warmup_requests"`
	WarmupIterations int64 `json:"warmup_iterations"`
	// DroppedIterations are planned iterations never started:
	// arrival-rate ones, and those maxDuration cut from an
	// iteration-based scenario; the lag figures are how late the
	// arrival-rate ones that started did (ms).
	DroppedIterations int64   `json:"dropped_iterations"`
	LagP50            float64 `json:"iteration_lag_p50_ms"`
	LagP99            float64 `json:"iteration_lag_p99_ms"`
	// Goodput is how many requests met the run's per-request bounds
	// (options.goodput, --goodput); nil when none are given.
	Goodput *Goodput `json:"goodput,omitempty"`
	// Headline repeats the block's main figures under the keys of vLLM's
	// benchmark_serving results (duration, completed, mean_ttft_ms,
	// p99_itl_ms, ...; see HeadlineKeys), for tools written for those
	// files. Latency keys are absent when no request completed.
	Headline map[string]float64 `json:"headline"`
}

// LatencyRow is one latency metric's distribution, in milliseconds.
type LatencyRow struct {
	Metric string             `json:"metric"`
	Label  string             `json:"label"`
	Count  int64              `json:"count"`
	Mean   float64            `json:"mean_ms"`
	Min    float64            `json:"min_ms"`
	Max    float64            `json:"max_ms"`
	P      map[string]float64 `json:"percentiles_ms"`
}

// ScenarioSummary is the serving block and latency rows of one scenario,
// present when a run has several.
type ScenarioSummary struct {
	Name    string       `json:"name"`
	Serving Serving      `json:"serving"`
	Latency []LatencyRow `json:"latency"`
	// Metrics are the scenario's llm_* metrics and its iteration_lag, by
	// name, as in Summary.Metrics (counter rates over the scenario's
	// window): what Merge needs to merge the scenario's figures.
	Metrics map[string]MetricSummary `json:"metrics"`
}

// ThresholdResult is one threshold's outcome.
type ThresholdResult struct {
	// Metric is the threshold's key as written, with its sub-metric tags:
	// llm_ttft{scenario:chat}.
	Metric string `json:"metric"`
	// Threshold is the expression, as written: p(99)<2000.
	Threshold string  `json:"threshold"`
	Value     float64 `json:"value"`
	Passed    bool    `json:"passed"`
	// Note explains an outcome without samples ("no samples", "no
	// samples, counted as 0") or not evaluated.
	Note string `json:"note,omitempty"`
	// Skipped says that the threshold was not judged: the scenario its
	// selector names never started (a stopped sweep skipped it, or the
	// execution segment had no VU of it), or no scenario did. It passed.
	Skipped bool `json:"skipped,omitempty"`
}

// ErrorClassCount is the number of failed requests of one class.
type ErrorClassCount struct {
	Class string `json:"class"`
	Count int64  `json:"count"`
	// Messages are the first few distinct messages of the class, in the
	// order they were first seen, with how often each occurred; API keys,
	// credential header values and the base URL's password and query
	// values are redacted (also URL-encoded or in base64), and the
	// server's control characters escaped (docs/limits.md).
	Messages []engine.ErrorCount `json:"messages,omitempty"`
}

// Check is one named check's outcome.
type Check struct {
	Name   string `json:"name"`
	Group  string `json:"group,omitempty"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

// MetricSummary is one metric's statistics, k6-style: a counter has count
// and rate, a gauge value/min/max, a rate its ratio, a trend avg/min/med/
// max/p(N).
type MetricSummary struct {
	Type     string             `json:"type"`
	Contains string             `json:"contains"`
	Unit     string             `json:"unit,omitempty"`
	Desc     string             `json:"desc,omitempty"`
	Values   map[string]float64 `json:"values"`
	// Histogram is a trend's distribution, from which any percentile can
	// be computed again and which merges exactly; nil for other types.
	Histogram *Histogram `json:"histogram,omitempty"`
	// Custom marks a metric the script defined; llmrun's own metrics are
	// built-in. A file written before the mark existed has none.
	Custom bool `json:"custom,omitempty"`
}

// latencyMetrics are the rows of the latency table, in order.
var latencyMetrics = []struct{ name, label string }{
	{"llm_ttft", "TTFT"},
	{"llm_tpot", "TPOT"},
	{"llm_itl", "ITL"},
	{"llm_e2e", "E2E"},
	{"llm_ttfb", "TTFB"},
}

// Build computes the summary of a report.
func Build(rep *engine.Report, meta Meta) *Summary {
	snap := rep.Snapshot
	dur := rep.Duration()
	meta.Start, meta.End, meta.Interrupted = rep.Start, rep.End, rep.Interrupted
	meta.Models = snap.TagValues("llm_requests", "model")
	meta.LoadShape = shapes(rep.Scenarios, rep.Final)
	s := &Summary{
		SchemaVersion:     SchemaVersion,
		Meta:              meta,
		Serving:           serving(snap, nil, dur),
		Latency:           latency(snapStats(snap, nil)),
		ScriptErrors:      rep.ScriptErrors,
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
	s.LowSuccess = lowSuccess(s.Serving, floor)
	s.ChainStops = rep.ChainStops
	addSubMetrics(s.Metrics, rep, dur)
	if len(rep.Scenarios) > 1 {
		for _, sc := range rep.Scenarios {
			filter := scenarioFilter(sc.Name)
			// A scenario's throughput is over its own window: in a
			// sweep, levels run one after another.
			dur := rep.Windows[sc.Name].Duration()
			s.Scenarios = append(s.Scenarios, ScenarioSummary{Name: sc.Name, Serving: serving(snap, filter, dur),
				Latency: latency(snapStats(snap, filter)), Metrics: scenarioMetrics(rep.Registry, snap, filter, dur)})
		}
	}
	return s
}

// statsFunc returns the statistics of a metric, nil when it has no samples:
// a snapshot's (Build) or merged ones (Merge), so that both compute every
// figure with the same code.
type statsFunc func(metric string) *metrics.Stats

// snapStats looks metrics up in a snapshot, restricted to the series whose
// tags contain filter (nil: all).
func snapStats(snap *metrics.Snapshot, filter *metrics.TagSet) statsFunc {
	return func(metric string) *metrics.Stats { return snap.Stats(metric, filter) }
}

// shapes describes the scenarios scs, with what final, their progress at
// the end of the run (in the same order, when known), says of the VUs
// they used and where an interrupted one stopped.
func shapes(scs []engine.Scenario, final []engine.ScenarioProgress) []ScenarioShape {
	out := make([]ScenarioShape, len(scs))
	for i, sc := range scs {
		out[i] = ScenarioShape{Name: sc.Name, Executor: sc.Executor, Exec: sc.Exec, StartTime: sc.StartTime.String(), StartAfter: sc.StartAfter,
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

func serving(snap *metrics.Snapshot, filter *metrics.TagSet, dur time.Duration) Serving {
	var s Serving
	if st := snap.Stats("llm_failed", filter); st != nil {
		s.Requests, s.Failed = st.Count, st.NonZero
		s.OK = s.Requests - s.Failed
	}
	s.Interrupted = count(sum(snap, "llm_interrupted", filter))
	s.OutputTokens = count(sum(snap, "llm_output_tokens", filter))
	s.PromptTokens = count(sum(snap, "llm_prompt_tokens", filter))
	s.ReasoningTokens = count(sum(snap, "llm_reasoning_tokens", filter))
	s.CachedTokens = count(sum(snap, "llm_cached_tokens", filter))
	s.Iterations = count(sum(snap, "iterations", filter))
	s.InterruptedIterations = count(sum(snap, "iterations_interrupted", filter))
	s.WarmupRequests = count(sum(snap, "warmup_requests", filter))
	s.WarmupIterations = count(sum(snap, "warmup_iterations", filter))
	s.DroppedIterations = count(sum(snap, "dropped_iterations", filter))
	s.finish(dur, snapStats(snap, filter))
	return s
}

// finish computes the figures of a serving block that holds only its
// counts: the success rate, the means per request, the throughputs over
// dur, the iteration lag percentiles and the headline, from the block's
// metrics.
func (s *Serving) finish(dur time.Duration, stats statsFunc) {
	s.DurationSeconds = dur.Seconds()
	if s.Requests > 0 {
		s.SuccessRate = float64(s.OK) / float64(s.Requests)
	}
	if st := stats("iteration_lag"); st != nil {
		s.LagP50, s.LagP99 = st.Percentile(50), st.Percentile(99)
	}
	if s.OK > 0 {
		s.MeanInputTokens = float64(s.PromptTokens) / float64(s.OK)
		s.MeanOutputTokens = float64(s.OutputTokens) / float64(s.OK)
	}
	if secs := dur.Seconds(); secs > 0 {
		s.RequestThroughput = float64(s.OK) / secs
		s.OutputTokenThroughput = float64(s.OutputTokens) / secs
		s.TotalTokenThroughput = float64(s.OutputTokens+s.PromptTokens) / secs
	}
	s.Goodput.finish(dur)
	s.Headline = headline(*s, stats)
}

// headlinePercentiles are the percentiles of the headline's latency keys
// (p90_ttft_ms, ...); the median has its own key.
var headlinePercentiles = []float64{90, 95, 99}

// headlineLatencies are the latencies of the headline, by the name vLLM
// gives them, with their metric.
var headlineLatencies = []struct{ name, metric string }{
	{"ttft", "llm_ttft"},
	{"tpot", "llm_tpot"},
	{"itl", "llm_itl"},
	{"e2el", "llm_e2e"},
}

// HeadlineKeys returns every key a headline can have, in the order
// docs/results.md lists them: the counts and throughputs (request_goodput
// with goodput bounds only), then mean_X_ms,
// median_X_ms, std_X_ms and pN_X_ms for X in ttft, tpot, itl and e2el.
func HeadlineKeys() []string {
	keys := []string{"duration", "completed", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput", "output_throughput", "total_token_throughput"}
	for _, l := range headlineLatencies {
		keys = append(keys, "mean_"+l.name+"_ms", "median_"+l.name+"_ms", "std_"+l.name+"_ms")
		for _, p := range headlinePercentiles {
			keys = append(keys, fmt.Sprintf("p%g_%s_ms", p, l.name))
		}
	}
	return keys
}

// headline is a serving block's figures under vLLM's benchmark_serving
// keys: the latencies' mean, median, population standard deviation and
// percentiles, in ms, over completed requests (percentiles and median from
// the HDR histograms, within 0.1 %).
func headline(s Serving, stats statsFunc) map[string]float64 {
	h := map[string]float64{
		"duration":               s.DurationSeconds,
		"completed":              float64(s.OK),
		"total_input_tokens":     float64(s.PromptTokens),
		"total_output_tokens":    float64(s.OutputTokens),
		"request_throughput":     s.RequestThroughput,
		"output_throughput":      s.OutputTokenThroughput,
		"total_token_throughput": s.TotalTokenThroughput,
	}
	if s.Goodput != nil {
		h["request_goodput"] = s.Goodput.RequestGoodput
	}
	for _, l := range headlineLatencies {
		st := stats(l.metric)
		if st == nil || st.Count == 0 {
			continue
		}
		h["mean_"+l.name+"_ms"] = st.Mean()
		h["median_"+l.name+"_ms"] = st.Percentile(50)
		h["std_"+l.name+"_ms"] = st.StdDev()
		for _, p := range headlinePercentiles {
			h[fmt.Sprintf("p%g_%s_ms", p, l.name)] = st.Percentile(p)
		}
	}
	return h
}

// latency computes the latency rows from the latency metrics' statistics.
func latency(stats statsFunc) []LatencyRow {
	var rows []LatencyRow
	for _, lm := range latencyMetrics {
		st := stats(lm.name)
		if st == nil {
			continue
		}
		row := LatencyRow{Metric: lm.name, Label: lm.label, Count: st.Count, Mean: st.Mean(), Min: st.Min, Max: st.Max, P: map[string]float64{}}
		for _, p := range Percentiles {
			row.P[pName(p)] = st.Percentile(p)
		}
		rows = append(rows, row)
	}
	return rows
}

func pName(p float64) string { return fmt.Sprintf("p%g", p) }

// errorClasses counts the named counter by its error_class tag, with the
// classes' messages.
func errorClasses(snap *metrics.Snapshot, metric string, messages map[string][]engine.ErrorCount) []ErrorClassCount {
	var out []ErrorClassCount
	for _, class := range snap.TagValues(metric, "error_class") {
		n := sum(snap, metric, metrics.NewTagSet(map[string]string{"error_class": class}))
		out = append(out, ErrorClassCount{Class: class, Count: count(n), Messages: messages[class]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

func checks(snap *metrics.Snapshot) []Check {
	byKey := map[[2]string]*Check{}
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
			c = &Check{Name: name, Group: group}
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
	out := make([]Check, len(order))
	for i, k := range order {
		out[i] = *byKey[k]
	}
	return out
}

func allMetrics(reg *metrics.Registry, snap *metrics.Snapshot, dur time.Duration) map[string]MetricSummary {
	out := make(map[string]MetricSummary)
	for _, m := range reg.All() {
		if st := snap.Stats(m.Name, nil); st != nil {
			out[m.Name] = metricSummary(m, st, dur)
		}
	}
	return out
}

// scenarioMetrics are the llm_* metrics and the iteration_lag of the series
// whose tags contain filter (one scenario's).
func scenarioMetrics(reg *metrics.Registry, snap *metrics.Snapshot, filter *metrics.TagSet, dur time.Duration) map[string]MetricSummary {
	out := make(map[string]MetricSummary)
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
func metricSummary(m *metrics.Metric, st *metrics.Stats, dur time.Duration) MetricSummary {
	return MetricSummary{Type: m.Type.String(), Contains: m.Contains.String(), Unit: m.Unit, Desc: m.Desc, Custom: m.Custom,
		Values: Values(st, dur), Histogram: encodeHistogram(st)}
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
		s := cappedScenario{name: sc.Name, cap: cfg.ConcurrencyCap(), dropped: count(sum(rep.Snapshot, "dropped_iterations", filter))}
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
	n := count(sum(rep.Snapshot, "dropped_iterations", scenarioFilter(rep.Scenarios[i].Name)))
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

// MaxTokenDisagreement is the relative gap between the server's usage and
// a second count of the output tokens above which the summary warns.
const MaxTokenDisagreement = 0.03

// TokenCheck compares the output tokens the server's usage reported with
// a second count of the same requests.
type TokenCheck struct {
	// Source is the second count's: "tokenizer" (the client's tokenizer
	// over the generated text) or "chunks" (token-bearing chunks of
	// streamed responses, when no tokenizer is configured).
	Source      string `json:"source"`
	UsageTokens int64  `json:"usage_tokens"`
	CheckTokens int64  `json:"check_tokens"`
	// DiffPercent is (CheckTokens - UsageTokens) / UsageTokens, in %.
	DiffPercent float64 `json:"diff_percent"`
	// Warning says what a disagreement above MaxTokenDisagreement means;
	// "" when they agree.
	Warning string `json:"warning,omitempty"`
}

// tokenChecks compares, per second source, the sums of
// llm_output_tokens_check.
func tokenChecks(snap *metrics.Snapshot) []TokenCheck {
	var out []TokenCheck
	for _, check := range snap.TagValues("llm_output_tokens_check", "check") {
		usage := sum(snap, "llm_output_tokens_check", metrics.NewTagSet(map[string]string{"check": check, "source": "usage"}))
		other := sum(snap, "llm_output_tokens_check", metrics.NewTagSet(map[string]string{"check": check, "source": check}))
		out = append(out, newTokenCheck(check, count(usage), count(other)))
	}
	return out
}

// newTokenCheck compares the usage's count of output tokens with the
// second source's, with a warning when they disagree.
func newTokenCheck(source string, usage, other int64) TokenCheck {
	tc := TokenCheck{Source: source, UsageTokens: usage, CheckTokens: other}
	switch {
	case usage > 0:
		tc.DiffPercent = 100 * float64(other-usage) / float64(usage)
	case other > 0:
		tc.DiffPercent = 100
	}
	if math.Abs(tc.DiffPercent) > 100*MaxTokenDisagreement {
		tc.Warning = tokenWarning(tc)
	}
	return tc
}

func tokenWarning(tc TokenCheck) string {
	head := fmt.Sprintf("the server's usage says %d output tokens, %s %d (%.1f %% apart): ",
		tc.UsageTokens, map[string]string{"tokenizer": "the tokenizer counts", "chunks": "the stream had token-bearing chunks numbering"}[tc.Source], tc.CheckTokens, math.Abs(tc.DiffPercent))
	if tc.Source == "chunks" {
		if tc.CheckTokens < tc.UsageTokens {
			return head + "the server sends several tokens per chunk (stream batching, speculative decoding), so ITL measures gaps between chunks, not tokens; token counts and TPOT use the usage, or the usage is wrong"
		}
		return head + "the server sends chunks carrying no new token, or its usage undercounts; token counts and TPOT use the usage"
	}
	return head + "the tokenizer is not the model's (counts are only comparable with the model's own tokenizer), or the server's usage is wrong; token counts, throughput and TPOT use the usage"
}

// OutputReport is what an output stored: how many points or records were
// written and how many dropped, and why.
type OutputReport struct {
	Output  string `json:"output"`
	Written int64  `json:"written"`
	Dropped int64  `json:"dropped"`
	// Reasons count the dropped points by cause ("buffer full while
	// InfluxDB was unreachable: ...").
	Reasons map[string]int64 `json:"reasons,omitempty"`
	// Err is the output's last error, "" when none.
	Err string `json:"error,omitempty"`
}

// PromptCheck compares, over the requests that gave the length of their
// prompt (llm.stream's promptTokens), the lengths asked for with the
// server's usage.prompt_tokens.
type PromptCheck struct {
	Requests        int64 `json:"requests"`
	RequestedTokens int64 `json:"requested_tokens"`
	UsageTokens     int64 `json:"usage_tokens"`
	// PerRequest is the mean of usage minus requested, in tokens: on chat
	// endpoints, the chat template's tokens.
	PerRequest float64 `json:"diff_tokens_per_request"`
	// DiffPercent is (UsageTokens - RequestedTokens) / RequestedTokens, in %.
	DiffPercent float64 `json:"diff_percent"`
	Warning     string  `json:"warning,omitempty"`
}

// MaxTemplateTokens is the gap per request between the prompt tokens asked
// for and the server's count that a chat template explains; beyond it and
// MaxTokenDisagreement, the summary warns.
const MaxTemplateTokens = 32

// promptCheck sums llm_prompt_tokens_check by source.
func promptCheck(snap *metrics.Snapshot) *PromptCheck {
	req := snap.Stats("llm_prompt_tokens_check", metrics.NewTagSet(map[string]string{"source": "requested"}))
	if req == nil || req.Count == 0 {
		return nil
	}
	return newPromptCheck(req.Count, count(req.Sum), count(sum(snap, "llm_prompt_tokens_check", metrics.NewTagSet(map[string]string{"source": "usage"}))))
}

// newPromptCheck compares the prompt tokens requests asked for with the
// server's count, with a warning when they disagree beyond a chat
// template's share.
func newPromptCheck(requests, requested, usage int64) *PromptCheck {
	pc := &PromptCheck{Requests: requests, RequestedTokens: requested, UsageTokens: usage}
	diff := float64(pc.UsageTokens - pc.RequestedTokens)
	pc.PerRequest = diff / float64(pc.Requests)
	if pc.RequestedTokens > 0 {
		pc.DiffPercent = 100 * diff / float64(pc.RequestedTokens)
	}
	if math.Abs(pc.DiffPercent) > 100*MaxTokenDisagreement && math.Abs(pc.PerRequest) > MaxTemplateTokens {
		pc.Warning = fmt.Sprintf("prompts were asked to have %.0f tokens on average, the server counts %.0f (%+.1f %%, %+.0f per request, more than a chat template adds): "+
			"the prompts were synthesized with another tokenizer than the model's (pass the model's tokenizer.json with --tokenizer), so input lengths are not what the script intended",
			float64(pc.RequestedTokens)/float64(pc.Requests), float64(pc.UsageTokens)/float64(pc.Requests), pc.DiffPercent, pc.PerRequest)
	}
	return pc
}

// UniqueCache is what the server's prefix cache served of the prompts the
// script declared unique (llm.stream's uniquePrompt): a unique prompt has
// nothing to find in a cache, but the template's few tokens.
type UniqueCache struct {
	// Requests are those declared unique whose server reported its
	// cache; CachedRequests those of them with cached tokens.
	Requests       int64 `json:"requests"`
	CachedRequests int64 `json:"cached_requests"`
	PromptTokens   int64 `json:"prompt_tokens"`
	CachedTokens   int64 `json:"cached_tokens"`
	// SharePercent is CachedTokens / PromptTokens, in %.
	SharePercent float64 `json:"share_percent"`
	Warning      string  `json:"warning,omitempty"`
}

// MaxUniqueCachedShare is the share of unique prompts' tokens a server may
// serve from its cache (beyond MaxTemplateTokens per request) before the
// summary warns.
const MaxUniqueCachedShare = 0.05

// uniqueCache sums llm_unique_prompt_tokens by source, for the run of
// meta.
func uniqueCache(snap *metrics.Snapshot, meta Meta) *UniqueCache {
	cached := snap.Stats("llm_unique_prompt_tokens", metrics.NewTagSet(map[string]string{"source": "cached"}))
	if cached == nil || cached.Count == 0 {
		return nil
	}
	usage := sum(snap, "llm_unique_prompt_tokens", metrics.NewTagSet(map[string]string{"source": string(llm.TokensFromUsage)}))
	return newUniqueCache(cached.Count, cached.NonZero, count(usage), count(cached.Sum), meta)
}

// newUniqueCache judges what a server's cache served of unique prompts of
// the run of meta: a warning beyond MaxUniqueCachedShare of their tokens
// and MaxTemplateTokens a request, with the fix for that run's seed.
func newUniqueCache(requests, cachedRequests, prompt, cached int64, meta Meta) *UniqueCache {
	u := &UniqueCache{Requests: requests, CachedRequests: cachedRequests, PromptTokens: prompt, CachedTokens: cached}
	if prompt > 0 {
		u.SharePercent = 100 * float64(cached) / float64(prompt)
	}
	if u.SharePercent > 100*MaxUniqueCachedShare && float64(cached)/float64(requests) > MaxTemplateTokens {
		u.Warning = fmt.Sprintf("%d of %d requests whose prompts the script declared unique (uniquePrompt) were served from the server's prefix cache, %.1f %% of their prompt tokens: "+
			"the server had seen these prompts before — a run given an earlier run's --seed replays its prompts — so their TTFT is a cache hit's, not a prefill's; "+
			"%s, to measure cold prefills",
			cachedRequests, requests, u.SharePercent, coldCacheFix(meta))
	}
	return u
}

// coldCacheFix is how to send the run of meta prompts the server has not
// seen: a seed drawn for the run is new at the next run; a given one
// (--seed, or llmrun bench's, fixed as vLLM's) replays its prompts until
// another is given.
func coldCacheFix(meta Meta) string {
	if meta.SeedDrawn {
		return "run again (a new seed is drawn) or restart the server"
	}
	return fmt.Sprintf("run with another --seed than %d, or restart the server", meta.Seed)
}

// thresholdResults are the thresholds' final results as the summary keeps
// them.
func thresholdResults(results []threshold.Result) []ThresholdResult {
	out := make([]ThresholdResult, len(results))
	for i, r := range results {
		out[i] = ThresholdResult{Metric: r.Key, Threshold: r.Source, Value: r.Value, Passed: r.Passed, Note: r.Note, Skipped: r.Skipped}
	}
	return out
}

// addSubMetrics adds the sub-metrics thresholds select (llm_ttft{scenario:
// chat}) to the metrics, under their keys, as k6 does.
func addSubMetrics(out map[string]MetricSummary, rep *engine.Report, dur time.Duration) {
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

// Values are a metric's statistics under k6's names (count, rate, value,
// avg, min, med, max, p(90), ...).
func Values(st *metrics.Stats, dur time.Duration) map[string]float64 {
	v := map[string]float64{}
	switch st.Type {
	case metrics.Counter:
		v["count"] = st.Sum
		if dur > 0 {
			v["rate"] = st.Sum / dur.Seconds()
		}
	case metrics.Gauge:
		v["value"], v["min"], v["max"] = st.Last, st.Min, st.Max
	case metrics.Rate:
		v["rate"], v["passes"], v["fails"] = st.Rate(), float64(st.NonZero), float64(st.Count-st.NonZero)
	case metrics.Trend:
		v["count"], v["avg"], v["min"], v["max"] = float64(st.Count), st.Mean(), st.Min, st.Max
		v["med"] = st.Percentile(50)
		for _, p := range Percentiles {
			v[fmt.Sprintf("p(%g)", p)] = st.Percentile(p)
		}
	}
	return v
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("encoding summary: %w", err)
	}
	return nil
}

// count is a counter's sum as a count, clamped to [0, MaxCount]: a sum of
// absurd per-request counts (a server's usage of 2^62 tokens) or of
// float64 beyond int64 never shows as an overflowed or negative figure.
func count(f float64) int64 {
	switch {
	case !(f > 0):
		return 0
	case f >= MaxCount:
		return MaxCount
	}
	return int64(f)
}

// NoSuccess says why a run that tried measured no successful request:
// its requests all failed, all were cut by the end of the run, all were
// warmup, or every iteration threw (before sending one, say); "" when a
// request succeeded, and when the run sent no LLM request and ran cleanly
// (a script that is not an LLM benchmark is not judged).
func (s *Summary) NoSuccess() string {
	sv := s.Serving
	threw := count(s.Metrics["script_errors"].Values["count"])
	switch {
	case sv.OK > 0:
		return ""
	case sv.Requests > 0:
		return fmt.Sprintf("no request succeeded: all %d failed", sv.Requests)
	case sv.Interrupted > 0:
		return fmt.Sprintf("no request completed: all %d were cut by the end of the run", sv.Interrupted)
	case sv.WarmupRequests > 0:
		return fmt.Sprintf("no measured request: the %s sent were all warmup", textfmt.Count(sv.WarmupRequests, "request"))
	case sv.Iterations > 0 && threw >= sv.Iterations:
		return fmt.Sprintf("no request was sent: all %s threw (see the script errors)", textfmt.Count(sv.Iterations, "iteration"))
	}
	return ""
}

// lowSuccess is the warning of a serving block whose success rate is
// below floor, "" otherwise, when no request succeeded or floor is 0.
func lowSuccess(sv Serving, floor float64) string {
	if sv.OK == 0 || sv.SuccessRate >= floor {
		return ""
	}
	return fmt.Sprintf("only %d of %d requests succeeded (success rate %.2f %%, below %.0f %%): the latency and throughput figures describe what little succeeded; see the errors by class, and add a threshold such as llm_failed: ['rate<0.01'] to make the run fail on it",
		sv.OK, sv.Requests, 100*sv.SuccessRate, 100*floor)
}

// CustomMetrics returns the names of the script's own metrics (those
// marked Custom), sorted.
func (s *Summary) CustomMetrics() []string {
	var names []string
	for name, m := range s.Metrics {
		if m.Custom {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
