// Package summary is the result document: the figures people read of a
// run (the serving headline, latency rows, errors by class, checks, every
// metric's statistics with its histogram, the server section, the
// metadata that makes the run reproducible), its JSON layout and
// SchemaVersion, the reader of every version from OldestSchemaVersion
// (ReadJSON, Parse, ParseStream), and Merge, which combines the results of
// several processes of one test. runtime/summarize builds a Summary from a
// finished run; the console renders one, --summary-export writes it.
// It imports nothing of the engine or JavaScript, so that the readers of
// result files (compare, trend, report, merge) do not either.
// docs/results.md describes the file field by field.
package summary

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/textfmt"
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
	Retries      []ErrorClassCount `json:"retries,omitempty"`
	ScriptErrors []ErrorCount      `json:"script_errors"`
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
	// said over the measured window (summarize.AttachServer); nil when no target
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
	ChainStops []ChainStop `json:"chain_stops,omitempty"`
	// Preflight is what the request sent to each target before the run
	// showed; empty with --no-preflight. The command fills it in.
	Preflight []Probe `json:"preflight,omitempty"`
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
	// MetricPercentiles are the latency percentiles llmrun bench was asked
	// to print (--metric-percentiles), which its report shows; absent for
	// other runs, and in bench results written before they were kept
	// (the report then shows vLLM's default, p99).
	MetricPercentiles []float64 `json:"metric_percentiles,omitempty"`
}

// DefaultMinSuccessRate is the success rate below which a run warned
// when its result did not keep Meta.MinSuccessRate: the default of
// options.earlyStop.minSuccessRate when it was not kept.
const DefaultMinSuccessRate = 0.9

// successFloor is the success rate below which the run warns.
func (m Meta) successFloor() float64 {
	if m.MinSuccessRate == nil {
		return DefaultMinSuccessRate
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
	// Documents are the documents of completed rerank requests
	// (llm_documents), and DocumentThroughput those per second: 0 and
	// left out of the file without rerank requests.
	Documents          int64   `json:"total_documents,omitempty"`
	DocumentThroughput float64 `json:"document_throughput,omitempty"`
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
	// Timeline is the scenario's own timeline: a point, of the run's
	// timeline's kind, for each interval in which it had a request start
	// or end, output tokens arrive or VUs active (others are left out);
	// nil in files written before it.
	Timeline []TimelinePoint `json:"timeline,omitempty"`
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
	Messages []ErrorCount `json:"messages,omitempty"`
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

// StatsFunc returns the statistics of a metric, nil when it has no samples:
// a snapshot's (summarize.Build) or merged ones (Merge), so that both
// compute every figure with the same code.
type StatsFunc func(metric string) *metrics.Stats

// Finish computes the figures of a serving block that holds only its
// counts: the success rate, the means per request, the throughputs over
// dur, the iteration lag percentiles and the headline, from the block's
// metrics.
func (s *Serving) Finish(dur time.Duration, stats StatsFunc) {
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
		s.DocumentThroughput = float64(s.Documents) / secs
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
func headline(s Serving, stats StatsFunc) map[string]float64 {
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

// LatencyRows computes the latency rows from the latency metrics' statistics.
func LatencyRows(stats StatsFunc) []LatencyRow {
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

// NewTokenCheck compares the usage's count of output tokens with the
// second source's, with a warning when they disagree.
func NewTokenCheck(source string, usage, other int64) TokenCheck {
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

// NewPromptCheck compares the prompt tokens requests asked for with the
// server's count, with a warning when they disagree beyond a chat
// template's share.
func NewPromptCheck(requests, requested, usage int64) *PromptCheck {
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

// NewUniqueCache judges what a server's cache served of unique prompts of
// the run of meta: a warning beyond MaxUniqueCachedShare of their tokens
// and MaxTemplateTokens a request, with the fix for that run's seed.
func NewUniqueCache(requests, cachedRequests, prompt, cached int64, meta Meta) *UniqueCache {
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

// ClampCount is a counter's sum as a count, clamped to [0, MaxCount]: a sum of
// absurd per-request counts (a server's usage of 2^62 tokens) or of
// float64 beyond int64 never shows as an overflowed or negative figure.
func ClampCount(f float64) int64 {
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
	threw := ClampCount(s.Metrics["script_errors"].Values["count"])
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

// LowSuccessWarning is the warning of a serving block whose success rate is
// below floor, "" otherwise, when no request succeeded or floor is 0.
func LowSuccessWarning(sv Serving, floor float64) string {
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
