// Package engines knows what an inference server's Prometheus metrics mean:
// the engines known by name (vLLM, llm-d's inference simulator, SGLang, TGI,
// Triton with TensorRT-LLM) and the DCGM exporter's GPU fields, which engine
// a target is from the names it exposes, and, for each canonical figure
// (running, waiting, kv_cache_usage, ttft, gpu_power, ...), which metric
// family of that engine holds it, of which type, in which unit.
//
// It reads the Prometheus data model as the Prometheus project's own text
// parser (github.com/prometheus/common/expfmt) returns it:
// map[string]*dto.MetricFamily. Scraping and the arithmetic over a window
// (counter deltas, histogram quantiles) are runtime/servermetrics's job.
package engines

// Figure names one canonical figure: the same meaning whichever engine
// serves it.
type Figure string

// The server figures.
const (
	Running            Figure = "running"
	Waiting            Figure = "waiting"
	KVCacheUsage       Figure = "kv_cache_usage"
	Preemptions        Figure = "preemptions"
	PrefixCacheQueries Figure = "prefix_cache_queries"
	PrefixCacheHits    Figure = "prefix_cache_hits"
	PrefixCacheHitRate Figure = "prefix_cache_hit_rate"
	QueueTime          Figure = "queue_time"
	PrefillTime        Figure = "prefill_time"
	DecodeTime         Figure = "decode_time"
	InferenceTime      Figure = "inference_time"
	TTFT               Figure = "ttft"
	ITL                Figure = "itl"
	E2E                Figure = "e2e"
	PromptTokens       Figure = "prompt_tokens"
	GenerationTokens   Figure = "generation_tokens"
	Requests           Figure = "requests"
)

// The GPU figures, one value per GPU.
const (
	GPUUtilization       Figure = "gpu_utilization"
	GPUMemoryUsed        Figure = "gpu_memory_used"
	GPUMemoryFree        Figure = "gpu_memory_free"
	GPUPower             Figure = "gpu_power"
	GPUEnergy            Figure = "gpu_energy"
	GPUSMClock           Figure = "gpu_sm_clock"
	GPUTemperature       Figure = "gpu_temperature"
	GPUMemoryTemperature Figure = "gpu_memory_temperature"
	GPUClockEventReasons Figure = "gpu_clock_event_reasons"
)

// Kind is a Prometheus metric type as far as a figure cares.
type Kind int

// The kinds of figure and of metric family.
const (
	Counter Kind = iota + 1
	Gauge
	Histogram
)

func (k Kind) String() string {
	switch k {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	}
	return "unknown"
}

// Unit is the unit a figure is given in, after its source's Scale.
type Unit string

// The units of the canonical figures: fractions are 0..1, never percent;
// times are seconds; energy joules; memory bytes; clocks hertz.
const (
	UnitRequests Unit = "requests"
	UnitTokens   Unit = "tokens"
	UnitFraction Unit = "fraction"
	UnitSeconds  Unit = "seconds"
	UnitJoules   Unit = "joules"
	UnitWatts    Unit = "watts"
	UnitBytes    Unit = "bytes"
	UnitHertz    Unit = "hertz"
	UnitCelsius  Unit = "celsius"
	UnitBitmask  Unit = "bitmask"
)

// Combine says how the series of one figure (several engines of one server,
// several finish reasons) make one value. A GPU figure is per GPU first.
type Combine int

// The ways series combine.
const (
	Sum  Combine = iota + 1 // counts, counters and histograms add up
	Mean                    // fractions of the same whole average
	Max                     // a bitmask: any reason set shows
)

// Definition is what a figure means, whichever engine serves it.
type Definition struct {
	Figure  Figure
	Kind    Kind
	Unit    Unit
	Combine Combine
	GPU     bool // one value per GPU (labels gpu/UUID), not per server
	Help    string
}

// Definitions lists every canonical figure, server figures first, in the
// order docs/metrics.md gives them.
var Definitions = []Definition{
	{Running, Gauge, UnitRequests, Sum, false, "requests in the running batch"},
	{Waiting, Gauge, UnitRequests, Sum, false, "requests queued, not yet scheduled"},
	{KVCacheUsage, Gauge, UnitFraction, Mean, false, "fraction of the KV cache in use"},
	{Preemptions, Counter, UnitRequests, Sum, false, "requests preempted (vLLM) or retracted (SGLang): evicted from the batch to be run again"},
	{PrefixCacheQueries, Counter, UnitTokens, Sum, false, "prompt tokens looked up in the prefix cache"},
	{PrefixCacheHits, Counter, UnitTokens, Sum, false, "prompt tokens found in the prefix cache"},
	{PrefixCacheHitRate, Gauge, UnitFraction, Mean, false, "the engine's own recent prefix-cache hit rate, where it exposes only a rate"},
	{QueueTime, Histogram, UnitSeconds, Sum, false, "time a request waited before it was first scheduled"},
	{PrefillTime, Histogram, UnitSeconds, Sum, false, "time a request spent in prefill"},
	{DecodeTime, Histogram, UnitSeconds, Sum, false, "time a request spent in decode"},
	{InferenceTime, Histogram, UnitSeconds, Sum, false, "time a request spent running: prefill and decode"},
	{TTFT, Histogram, UnitSeconds, Sum, false, "time to first token as the server measures it"},
	{ITL, Histogram, UnitSeconds, Sum, false, "time between output tokens as the server measures it"},
	{E2E, Histogram, UnitSeconds, Sum, false, "a request's whole time in the server"},
	{PromptTokens, Counter, UnitTokens, Sum, false, "prompt tokens processed"},
	{GenerationTokens, Counter, UnitTokens, Sum, false, "output tokens generated"},
	{Requests, Counter, UnitRequests, Sum, false, "requests finished"},
	{GPUUtilization, Gauge, UnitFraction, Mean, true, "fraction of time a kernel ran on the GPU"},
	{GPUMemoryUsed, Gauge, UnitBytes, Sum, true, "GPU memory used"},
	{GPUMemoryFree, Gauge, UnitBytes, Sum, true, "GPU memory free"},
	{GPUPower, Gauge, UnitWatts, Sum, true, "power drawn"},
	{GPUEnergy, Counter, UnitJoules, Sum, true, "energy consumed since a fixed start (boot, or the server's start)"},
	{GPUSMClock, Gauge, UnitHertz, Mean, true, "streaming-multiprocessor clock"},
	{GPUTemperature, Gauge, UnitCelsius, Mean, true, "GPU temperature"},
	{GPUMemoryTemperature, Gauge, UnitCelsius, Mean, true, "memory temperature"},
	{GPUClockEventReasons, Gauge, UnitBitmask, Max, true, "why the clocks are held down (DCGM_CLOCKS_EVENT_REASON_* bits; 0 = none)"},
}

// Define returns the definition of a figure, and false for a name that is
// none.
func Define(f Figure) (Definition, bool) {
	for _, d := range Definitions {
		if d.Figure == f {
			return d, true
		}
	}
	return Definition{}, false
}
