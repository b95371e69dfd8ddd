package summary

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// The server section: what the server's own Prometheus metrics and its
// GPUs' telemetry said over the measured window, beside the client's
// figures. It is plain data: runtime/servermetrics and runtime/gpumetrics
// compute the window figures, the runner hands them to
// summarize.AttachServer, and the summary derives what compares them with
// its own figures (energy per output token, the warnings).

// The kinds of scrape target.
const (
	// TargetServer is an inference server's /metrics.
	TargetServer = "server"
	// TargetGPU is GPU telemetry: a DCGM exporter or nvidia-smi.
	TargetGPU = "gpu"
)

// The ways the energy over a window was measured.
const (
	// EnergyCounter is the delta of an energy counter (DCGM's total
	// energy consumption).
	EnergyCounter = "counter"
	// EnergyIntegrated is power integrated over the samples (trapezoids),
	// where there is no counter.
	EnergyIntegrated = "integrated power"
)

// Server is the result file's server section.
type Server struct {
	// Targets are the scrape targets, one copy of each (a merge keeps
	// the copy of the instance that scraped it).
	Targets []ServerTarget `json:"targets"`
	// Energy is the energy the targets' GPUs drew over the measured
	// window, summed over the targets that measured it, with the run's
	// output tokens per joule; nil when none did.
	Energy *Energy `json:"energy,omitempty"`
	// Warnings are what the user must know about the server's figures:
	// counts that disagree with llmrun's, preemptions, a full KV cache, a
	// throttled GPU, failed scrapes.
	Warnings []string `json:"warnings,omitempty"`
}

// ServerTarget is what one scrape target said over the measured window.
type ServerTarget struct {
	// URL is the target's address, credentials and query values
	// redacted; "nvidia-smi" for the local GPUs' sampling.
	URL string `json:"url"`
	// Kind is TargetServer or TargetGPU.
	Kind string `json:"kind"`
	// Engine is the preset's name (engines.Engine.Name: vllm, sglang,
	// dcgm, ...), detected from the names the target exposes or forced
	// (EngineForced), "nvidia-smi" for the local GPUs' sampling; "" when
	// none was found.
	Engine       string `json:"engine,omitempty"`
	EngineForced bool   `json:"engine_forced,omitempty"`
	// Version is the server's version, when it says it.
	Version string `json:"version,omitempty"`
	// Instance is the instance that scraped the target, in a distributed
	// run (its "instance" tag).
	Instance string  `json:"instance,omitempty"`
	Scrapes  Scrapes `json:"scrapes"`
	// Figures are the server's figures over the window by canonical name
	// (engines.Running, engines.QueueTime, ...); a figure the target does
	// not expose is absent.
	Figures map[string]WindowFigure `json:"figures,omitempty"`
	// PrefixCacheHitRate is the server's prefix-cache hit rate over the
	// window as it counts it: its hits' delta over its queries' delta, or,
	// where it exposes only a rate, that rate's mean; nil when it exposes
	// neither or looked nothing up.
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`
	// GPUs are the figures of each GPU, GPUTotal those of all of them
	// (utilisation averaged, memory, power and energy summed).
	GPUs     []GPU `json:"gpus,omitempty"`
	GPUTotal *GPU  `json:"gpu_total,omitempty"`
	// Energy is what the target's GPUs drew over the window; nil when it
	// measured neither energy nor power.
	Energy *Energy `json:"energy,omitempty"`
	// Series is a few figures over time for charts, at most
	// MaxServerPoints points.
	Series []ServerPoint `json:"series,omitempty"`
}

// Scrapes counts a target's scrapes over the run.
type Scrapes struct {
	OK int64 `json:"ok"`
	// Failed counts the failed scrapes by kind: refused, timeout, status
	// (an HTTP status other than 200), too_large, malformed, transport
	// (servermetrics.Kind).
	Failed map[string]int64 `json:"failed,omitempty"`
	// Skipped are scrapes not made: the previous one was still running
	// when the interval came.
	Skipped int64 `json:"skipped,omitempty"`
}

// Failures are the failed scrapes of every kind.
func (sc Scrapes) Failures() int64 {
	var n int64
	for _, c := range sc.Failed {
		n += c
	}
	return n
}

// FailedKinds says the failed scrapes by kind: "refused 3, timeout 2".
func (sc Scrapes) FailedKinds() string {
	parts := make([]string, 0, len(sc.Failed))
	for _, kind := range slices.Sorted(maps.Keys(sc.Failed)) {
		if sc.Failed[kind] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", kind, sc.Failed[kind]))
		}
	}
	return strings.Join(parts, ", ")
}

// WindowFigure is one figure over the measured window, in its canonical
// unit (engines.Unit: fractions 0..1, seconds, bytes, watts, joules): a
// gauge has Mean (time-weighted) and Max, a counter Delta, a histogram
// its quantiles (Prometheus' interpolation within the bucket deltas),
// Count, Sum, Mean (Sum over Count) and Buckets. A value the window did
// not give is absent.
type WindowFigure struct {
	// Kind is counter, gauge or histogram; Unit the figure's unit.
	Kind  string   `json:"kind"`
	Unit  string   `json:"unit,omitempty"`
	Mean  *float64 `json:"mean,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	Delta *float64 `json:"delta,omitempty"`
	P50   *float64 `json:"p50,omitempty"`
	P90   *float64 `json:"p90,omitempty"`
	P99   *float64 `json:"p99,omitempty"`
	Count *float64 `json:"count,omitempty"`
	Sum   *float64 `json:"sum,omitempty"`
	// Buckets are a histogram's bucket deltas over the window, cumulative
	// as Prometheus exposes them, in order of their bound; the +Inf
	// bucket is left out (JSON has no infinity): its count is Count.
	Buckets []HistogramBucket `json:"buckets,omitempty"`
}

// HistogramBucket is the count of a histogram's observations at or below
// Le over the window.
type HistogramBucket struct {
	Le    float64 `json:"le"`
	Count float64 `json:"count"`
}

// GPU is one GPU's figures over the window, or all of a target's GPUs'
// (ServerTarget.GPUTotal).
type GPU struct {
	// ID is the GPU's index on its host as the telemetry labels it; UUID,
	// Model and Host name it further when known.
	ID    string `json:"gpu,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	Model string `json:"model,omitempty"`
	Host  string `json:"host,omitempty"`
	// Figures are the GPU figures by canonical name (engines.
	// GPUUtilization, GPUMemoryUsed, GPUPower, GPUEnergy, ...).
	Figures map[string]WindowFigure `json:"figures,omitempty"`
	// ClockEventReasons are the reasons that held its clocks down during
	// the window (the DCGM_CLOCKS_EVENT_REASON_* bits of every sample,
	// or'ed); nil when the telemetry does not say.
	ClockEventReasons *uint64 `json:"clock_event_reasons,omitempty"`
}

// Energy is the energy GPUs drew over the measured window.
type Energy struct {
	Joules float64 `json:"joules"`
	// Method is EnergyCounter or EnergyIntegrated; a section's sum over
	// targets measured both ways joins them: "counter, integrated power".
	Method string `json:"method"`
	// OutputTokens are the run's output tokens (serving's
	// total_output_tokens) and the figures per token divide by them; set
	// on the section's sum only, the per-token figures absent when either
	// count is 0.
	OutputTokens         int64    `json:"output_tokens,omitempty"`
	JoulesPerOutputToken *float64 `json:"joules_per_output_token,omitempty"`
	OutputTokensPerJoule *float64 `json:"output_tokens_per_joule,omitempty"`
}

// ServerPoint is a target's figures at one moment, for charts: gauges as
// scraped (the GPU figures summed over its GPUs, utilisation averaged).
type ServerPoint struct {
	// T is the time of the scrape in seconds since the run's start.
	T              float64  `json:"t"`
	Running        *float64 `json:"running,omitempty"`
	Waiting        *float64 `json:"waiting,omitempty"`
	KVCacheUsage   *float64 `json:"kv_cache_usage,omitempty"`
	GPUUtilization *float64 `json:"gpu_utilization,omitempty"`
	GPUPower       *float64 `json:"gpu_power_watts,omitempty"`
}

// MaxServerPoints bounds a target's series, as MaxTimelinePoints bounds
// the timeline: a longer one is thinned by averaging runs of consecutive
// points (see thinSeries).
const MaxServerPoints = MaxTimelinePoints

// MaxServerBuckets bounds a histogram figure's buckets: engines expose
// tens of them; a longer list keeps every ⌈n/MaxServerBuckets⌉th bound and
// the last, a coarser histogram of the same observations.
const MaxServerBuckets = 100

// FinishServer derives the section's energy per output token and its
// warnings from its targets and the client's figures.
func (s *Summary) FinishServer() {
	sec := s.Server
	if sec == nil {
		return
	}
	sec.Energy = totalEnergy(sec.Targets, s.Serving.OutputTokens)
	sec.Warnings = serverWarnings(sec, s.Serving, inFlightBound(s))
}

// totalEnergy sums the targets' energy, per output token of the run; nil
// when no target measured it.
func totalEnergy(targets []ServerTarget, outputTokens int64) *Energy {
	var e *Energy
	var methods []string
	for _, t := range targets {
		if t.Energy == nil {
			continue
		}
		if e == nil {
			e = &Energy{}
		}
		e.Joules += t.Energy.Joules
		if !slices.Contains(methods, t.Energy.Method) {
			methods = append(methods, t.Energy.Method)
		}
	}
	if e == nil {
		return nil
	}
	e.Method = strings.Join(methods, ", ")
	e.OutputTokens = outputTokens
	if e.Joules > 0 && outputTokens > 0 {
		perToken, perJoule := e.Joules/float64(outputTokens), float64(outputTokens)/e.Joules
		e.JoulesPerOutputToken, e.OutputTokensPerJoule = &perToken, &perJoule
	}
	return e
}

// inFlightBound is the most requests the run can have had in flight at
// once: the most its timeline saw at an interval's end, or the VUs its
// scenarios used (a VU sends one request at a time), whichever is more.
func inFlightBound(s *Summary) int64 {
	var vus, seen int64
	for _, sh := range s.Meta.LoadShape {
		if sh.PeakVUs > 0 {
			vus += int64(sh.PeakVUs)
		} else {
			vus += int64(sh.MaxVUs)
		}
	}
	for _, p := range s.Timeline {
		seen = max(seen, p.InFlight)
	}
	return max(vus, seen)
}

// KVCacheFull is the KV-cache use (a fraction) at which the cache counts
// as full: the server can admit no request without evicting one.
const KVCacheFull = 0.99

// throttleReasons are the DCGM_CLOCKS_EVENT_REASON_* bits (NVML's
// nvmlClocksEventReasons, as NVIDIA/DCGM's dcgm_fields.h gives them) that
// say a GPU ran slower than it could under its load: all but GPU idle
// (0x1), which is no load, and the applications-clocks (0x2) and
// display-clocks (0x100) settings, which are the operator's choice.
var throttleReasons = []struct {
	bit  uint64
	name string
}{
	{0x4, "software power cap"},
	{0x8, "hardware slowdown"},
	{0x10, "sync boost"},
	{0x20, "software thermal slowdown"},
	{0x40, "hardware thermal slowdown"},
	{0x80, "hardware power brake"},
}

// throttledBy names the throttle reasons among a GPU's clock event
// reasons; "" when none.
func throttledBy(reasons *uint64) string {
	if reasons == nil {
		return ""
	}
	var names []string
	for _, r := range throttleReasons {
		if *reasons&r.bit != 0 {
			names = append(names, r.name)
		}
	}
	return strings.Join(names, ", ")
}

// serverWarnings are the warnings of a server section, given the run's
// serving block and the most requests it had in flight at once.
func serverWarnings(sec *Server, sv Serving, inFlight int64) []string {
	var out []string
	for _, t := range sec.Targets {
		out = append(out, targetWarnings(t)...)
	}
	out = append(out, countWarnings(sec.Targets, sv, inFlight)...)
	return out
}

// targetWarnings are one target's warnings: failed scrapes, preemptions,
// a full KV cache, throttled GPUs.
func targetWarnings(t ServerTarget) []string {
	var out []string
	if failed := t.Scrapes.Failures(); failed > 0 {
		if t.Scrapes.OK == 0 {
			out = append(out, fmt.Sprintf("every scrape of %s failed (%s): no figures from it", t.URL, t.Scrapes.FailedKinds()))
		} else {
			out = append(out, fmt.Sprintf("%d of %d scrapes of %s failed (%s): its figures rest on the %d that succeeded",
				failed, failed+t.Scrapes.OK, t.URL, t.Scrapes.FailedKinds(), t.Scrapes.OK))
		}
	}
	if p := t.Figures[string(engines.Preemptions)].Delta; p != nil && *p > 0 {
		out = append(out, fmt.Sprintf("%s preempted %s during the measured window: its KV cache could not hold every running request, so it evicted some to compute them again; their latencies include the recompute (lower the load, or give the server more KV-cache memory)",
			t.URL, textfmt.Count(*p, "request")))
	}
	if kv := t.Figures[string(engines.KVCacheUsage)]; kv.Max != nil && *kv.Max >= KVCacheFull {
		mean := ""
		if kv.Mean != nil {
			mean = fmt.Sprintf(", mean %.1f %%", 100**kv.Mean)
		}
		out = append(out, fmt.Sprintf("the KV cache of %s was full during the measured window (max %.1f %%%s): requests waited for cache space or were preempted, so the latencies are those of a server at its memory's limit",
			t.URL, 100**kv.Max, mean))
	}
	for _, g := range t.GPUs {
		if why := throttledBy(g.ClockEventReasons); why != "" {
			out = append(out, fmt.Sprintf("GPU %s of %s was throttled during the measured window (%s): its clocks were held down, so the figures are those of a slower GPU",
				gpuName(g), t.URL, why))
		}
	}
	return out
}

// gpuName names a GPU in a sentence: its index, with its UUID when known.
func gpuName(g GPU) string {
	switch {
	case g.ID != "" && g.UUID != "":
		return g.ID + " (" + g.UUID + ")"
	case g.ID != "":
		return g.ID
	}
	return g.UUID
}

// countWarnings compare the requests and output tokens the servers
// counted over the window with llmrun's; see serverCount.
func countWarnings(targets []ServerTarget, sv Serving, inFlight int64) []string {
	var out []string
	if n, ok := serverCount(targets, engines.Requests); ok {
		// Failed requests may or may not have reached the server; an
		// interrupted one ended there as an abort.
		lo, hi := float64(sv.OK), float64(sv.Requests+sv.Interrupted)
		if w := countMismatch(n, lo, hi, float64(inFlight), "requests", "finished", fmt.Sprintf("%d completed, %d ended", sv.OK, sv.Requests+sv.Interrupted)); w != "" {
			out = append(out, w)
		}
	}
	if n, ok := serverCount(targets, engines.GenerationTokens); ok {
		// The tokens of failed and interrupted requests are the server's
		// only: at most about a request's mean each.
		per := max(sv.MeanOutputTokens, 1)
		lo, hi := float64(sv.OutputTokens), float64(sv.OutputTokens)+float64(sv.Failed+sv.Interrupted)*per
		if w := countMismatch(n, lo, hi, float64(inFlight)*per, "output tokens", "generated", fmt.Sprintf("%d of completed requests", sv.OutputTokens)); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// serverCount sums a counter figure's delta over the server targets;
// false unless every server target gave it.
func serverCount(targets []ServerTarget, f engines.Figure) (float64, bool) {
	var n float64
	found := false
	for _, t := range targets {
		if t.Kind != TargetServer {
			continue
		}
		d := t.Figures[string(f)].Delta
		if d == nil {
			return 0, false
		}
		n += *d
		found = true
	}
	return n, found
}

// countMismatch is the warning for a server's count n of what llmrun
// counted between lo and hi, "" when n is within them, widened by
// MaxTokenDisagreement and by edge: what requests in flight at the
// window's start can add or take away (the server counts a request
// that ends in the window, llmrun one that started in it; warmup
// requests still running at the window's start are the server's only).
func countMismatch(n, lo, hi, edge float64, what, verb, client string) string {
	lo = lo*(1-MaxTokenDisagreement) - edge
	hi = hi*(1+MaxTokenDisagreement) + edge
	if n >= lo && n <= hi {
		return ""
	}
	cause := "another client used the server during the run, or requests were retried inside it"
	if n < lo {
		cause = "the metrics are of one replica of several behind the URL, or of another server than the one llmrun sent to"
	}
	return fmt.Sprintf("the server %s %s %s over the measured window, llmrun counted %s: further apart than %.0f %% and the %.0f that requests in flight at the window's start can explain; %s",
		verb, textfmt.Num(n), what, client, 100*MaxTokenDisagreement, edge, cause)
}

// validate checks what Parse promises of a server section: each target has
// its URL and a known kind.
func (sec *Server) validate() error {
	if sec == nil {
		return nil
	}
	for i, t := range sec.Targets {
		switch {
		case t.URL == "":
			return fmt.Errorf("server.targets[%d].url: missing", i)
		case t.Kind != TargetServer && t.Kind != TargetGPU:
			return fmt.Errorf("server.targets[%d].kind: %q, want %q or %q", i, t.Kind, TargetServer, TargetGPU)
		}
		for _, name := range slices.Sorted(maps.Keys(t.Figures)) {
			if err := t.Figures[name].validateBuckets(); err != nil {
				return fmt.Errorf("server.targets[%d].figures.%s.%w", i, name, err)
			}
		}
	}
	return nil
}

// validateBuckets checks what ServerQuantile reads of a histogram's
// buckets: at most MaxServerBuckets, their bounds rising, their counts
// cumulative, from 0 to the figure's count.
func (f WindowFigure) validateBuckets() error {
	if len(f.Buckets) > MaxServerBuckets {
		return fmt.Errorf("buckets: %d, want at most %d", len(f.Buckets), MaxServerBuckets)
	}
	if len(f.Buckets) > 0 && f.Count == nil {
		return errors.New("buckets: without the figure's count")
	}
	for j, b := range f.Buckets {
		switch {
		case b.Count < 0 || b.Count > *f.Count:
			return fmt.Errorf("buckets[%d].count: %v, want 0 to the figure's count %v", j, b.Count, *f.Count)
		case j > 0 && b.Le <= f.Buckets[j-1].Le:
			return fmt.Errorf("buckets[%d].le: %v, not above the bucket before's %v", j, b.Le, f.Buckets[j-1].Le)
		case j > 0 && b.Count < f.Buckets[j-1].Count:
			return fmt.Errorf("buckets[%d].count: %v, below the bucket before's %v (the counts are cumulative)", j, b.Count, f.Buckets[j-1].Count)
		}
	}
	return nil
}

// mergeServers keeps one copy of each scrape target of the results (by
// kind and URL): the one with the most successful scrapes, the first
// given among equals. In a distributed run one instance scrapes each
// target, and a server's figures are the server's, whichever instances
// sent it requests: they are never added up. The copy's series is moved
// to the merged run's start, and it names the instance it came from.
// nil when no result has a server section.
func mergeServers(results []*Summary, start time.Time) *Server {
	type kept struct {
		target ServerTarget
		from   *Summary
	}
	var order []string
	byKey := map[string]kept{}
	for _, r := range results {
		if r.Server == nil {
			continue
		}
		for _, t := range r.Server.Targets {
			key := t.Kind + "\x00" + t.URL
			prev, ok := byKey[key]
			if !ok {
				order = append(order, key)
			}
			if !ok || t.Scrapes.OK > prev.target.Scrapes.OK {
				byKey[key] = kept{t, r}
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	sec := &Server{}
	for _, key := range order {
		k := byKey[key]
		t := k.target
		if t.Instance == "" {
			t.Instance = k.from.Meta.Tags["instance"]
		}
		shift := k.from.Meta.Start.Sub(start).Seconds()
		t.Series = slices.Clone(t.Series)
		for i := range t.Series {
			t.Series[i].T += shift
		}
		sec.Targets = append(sec.Targets, t)
	}
	return sec
}
