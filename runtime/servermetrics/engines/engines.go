package engines

import (
	"fmt"
	"strings"

	"github.com/llmrun/llmrun/runtime/spelling"
)

// Source is one metric family that holds a figure.
type Source struct {
	// Name is the family's name as the text parser returns it: with the
	// _total that Python's client adds to a counter, without the _bucket,
	// _sum and _count of a histogram's samples.
	Name string
	// Kind is the family's type as the engine exposes it.
	Kind Kind
	// Match holds the labels a series must carry to be this figure, as
	// TensorRT-LLM's request_type="active"; nil when every series is.
	Match map[string]string
	// Scale turns the family's unit into the figure's: values, histogram
	// bucket bounds and sums are multiplied by it (0.001 for milliseconds
	// to seconds, 0.01 for percent to a fraction).
	Scale float64
	// HistogramSum marks a counter figure read from a histogram family's
	// sample sum (TGI counts tokens only in histograms).
	HistogramSum bool
}

// Engine is what llmrun knows of one kind of server.
type Engine struct {
	// Name is the preset's name, as `preset` and the error messages
	// spell it.
	Name string
	// Title is the name a person reads, for the banner and the summary.
	Title string
	// Aliases are other names a preset may be asked for by.
	Aliases []string
	// ModelLabel is the label that names the served model, for a label
	// filter; "" when the engine labels no series with it.
	ModelLabel string
	// GPULabel is the label that names one GPU in the GPU figures.
	GPULabel string
	// Figures maps each figure the engine serves to its sources, the
	// preferred first: Lookup reads the first one the target exposes.
	Figures map[Figure][]Source

	// marker, when set, is a family only this engine exposes; otherwise
	// the engine is detected by any family with one of prefixes.
	marker   string
	prefixes []string
}

func counter(name string) Source { return Source{Name: name, Kind: Counter, Scale: 1} }
func gauge(name string) Source   { return Source{Name: name, Kind: Gauge, Scale: 1} }
func histogram(name string) Source {
	return Source{Name: name, Kind: Histogram, Scale: 1}
}

func (s Source) scaled(by float64) Source { s.Scale = by; return s }

func (s Source) where(label, value string) Source {
	s.Match = map[string]string{label: value}
	return s
}

func (s Source) histogramSum() Source { s.HistogramSum = true; return s }

// vllmFigures are vLLM's names: V1 (vllm/v1/metrics/loggers.py) first, the
// V0 and pre-0.9 names after them. Python's client writes a counter named
// vllm:num_preemptions as vllm:num_preemptions_total; the bare name is the
// same counter from a client that adds no suffix.
func vllmFigures() map[Figure][]Source {
	return map[Figure][]Source{
		Running:            {gauge("vllm:num_requests_running")},
		Waiting:            {gauge("vllm:num_requests_waiting")},
		KVCacheUsage:       {gauge("vllm:kv_cache_usage_perc"), gauge("vllm:gpu_cache_usage_perc")},
		Preemptions:        {counter("vllm:num_preemptions_total"), counter("vllm:num_preemptions")},
		PrefixCacheQueries: {counter("vllm:prefix_cache_queries_total"), counter("vllm:gpu_prefix_cache_queries_total")},
		PrefixCacheHits:    {counter("vllm:prefix_cache_hits_total"), counter("vllm:gpu_prefix_cache_hits_total")},
		QueueTime:          {histogram("vllm:request_queue_time_seconds")},
		PrefillTime:        {histogram("vllm:request_prefill_time_seconds")},
		DecodeTime:         {histogram("vllm:request_decode_time_seconds")},
		InferenceTime:      {histogram("vllm:request_inference_time_seconds")},
		TTFT:               {histogram("vllm:time_to_first_token_seconds")},
		ITL:                {histogram("vllm:inter_token_latency_seconds"), histogram("vllm:time_per_output_token_seconds")},
		E2E:                {histogram("vllm:e2e_request_latency_seconds")},
		PromptTokens:       {counter("vllm:prompt_tokens_total")},
		GenerationTokens:   {counter("vllm:generation_tokens_total")},
		Requests:           {counter("vllm:request_success_total")},
	}
}

// llmdFigures are vLLM's names less those llm-d-inference-sim does not
// serve (it counts no preemptions).
func llmdFigures() map[Figure][]Source {
	f := vllmFigures()
	delete(f, Preemptions)
	return f
}

// Engines lists the engines in the order Detect tries them: llm-d's
// simulator before vLLM, whose names it shares.
var Engines = []*Engine{
	{
		Name: "llm-d-inference-sim", Title: "llm-d inference simulator", Aliases: []string{"llm-d", "llmd"},
		ModelLabel: "model_name", Figures: llmdFigures(),
		// vLLM calls this histogram vllm:request_max_num_generation_tokens.
		marker: "vllm:max_num_generation_tokens",
	},
	{
		Name: "vllm", Title: "vLLM", ModelLabel: "model_name", Figures: vllmFigures(),
		prefixes: []string{"vllm:"},
	},
	{
		Name: "sglang", Title: "SGLang", ModelLabel: "model_name",
		Figures: map[Figure][]Source{
			Running:      {gauge("sglang:num_running_reqs")},
			Waiting:      {gauge("sglang:num_queue_reqs")},
			KVCacheUsage: {gauge("sglang:token_usage")},
			Preemptions:  {counter("sglang:num_retracted_requests_total")},
			// SGLang looks every prompt token up in its radix cache: the
			// prompt tokens are the queries, the cached tokens the hits.
			PrefixCacheQueries: {counter("sglang:prompt_tokens_total")},
			PrefixCacheHits:    {counter("sglang:cached_tokens_total")},
			PrefixCacheHitRate: {gauge("sglang:cache_hit_rate")},
			QueueTime:          {histogram("sglang:queue_time_seconds")},
			TTFT:               {histogram("sglang:time_to_first_token_seconds")},
			ITL:                {histogram("sglang:inter_token_latency_seconds")},
			E2E:                {histogram("sglang:e2e_request_latency_seconds")},
			PromptTokens:       {counter("sglang:prompt_tokens_total")},
			GenerationTokens:   {counter("sglang:generation_tokens_total")},
			Requests:           {counter("sglang:num_requests_total")},
		},
		prefixes: []string{"sglang:"},
	},
	{
		Name: "tgi", Title: "Text Generation Inference", Aliases: []string{"text-generation-inference"},
		Figures: map[Figure][]Source{
			Running:          {gauge("tgi_batch_current_size")},
			Waiting:          {gauge("tgi_queue_size")},
			QueueTime:        {histogram("tgi_request_queue_duration")},
			InferenceTime:    {histogram("tgi_request_inference_duration")},
			E2E:              {histogram("tgi_request_duration")},
			PromptTokens:     {histogram("tgi_request_input_length").histogramSum()},
			GenerationTokens: {histogram("tgi_request_generated_tokens").histogramSum()},
			Requests:         {counter("tgi_request_success")},
		},
		prefixes: []string{"tgi_"},
	},
	{
		Name: "triton", Title: "Triton Inference Server", Aliases: []string{"tensorrt-llm", "trt-llm", "trtllm"},
		ModelLabel: "model", GPULabel: "gpu_uuid",
		Figures: map[Figure][]Source{
			Running:      {gauge("nv_trt_llm_request_metrics").where("request_type", "active")},
			Waiting:      {gauge("nv_trt_llm_request_metrics").where("request_type", "waiting"), gauge("nv_inference_pending_request_count")},
			KVCacheUsage: {gauge("nv_trt_llm_kv_cache_block_metrics").where("kv_cache_block_type", "fraction")},
			// Triton's latencies are cumulative counters: a window's mean is
			// their delta over the requests' delta, and there is no quantile.
			QueueTime:      {counter("nv_inference_queue_duration_us").scaled(1e-6)},
			TTFT:           {histogram("nv_inference_first_response_histogram_ms").scaled(1e-3)},
			E2E:            {counter("nv_inference_request_duration_us").scaled(1e-6)},
			Requests:       {counter("nv_inference_request_success")},
			GPUUtilization: {gauge("nv_gpu_utilization")},
			GPUMemoryUsed:  {gauge("nv_gpu_memory_used_bytes")},
			GPUPower:       {gauge("nv_gpu_power_usage")},
			GPUEnergy:      {counter("nv_energy_consumption")},
		},
		prefixes: []string{"nv_inference_", "nv_trt_llm_"},
	},
	{
		Name: "dcgm", Title: "DCGM exporter", Aliases: []string{"dcgm-exporter"},
		GPULabel: "UUID",
		Figures: map[Figure][]Source{
			GPUUtilization:       {gauge("DCGM_FI_DEV_GPU_UTIL").scaled(0.01)},
			GPUMemoryUsed:        {gauge("DCGM_FI_DEV_FB_USED").scaled(1 << 20)},
			GPUMemoryFree:        {gauge("DCGM_FI_DEV_FB_FREE").scaled(1 << 20)},
			GPUPower:             {gauge("DCGM_FI_DEV_POWER_USAGE")},
			GPUEnergy:            {counter("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").scaled(1e-3)},
			GPUSMClock:           {gauge("DCGM_FI_DEV_SM_CLOCK").scaled(1e6)},
			GPUTemperature:       {gauge("DCGM_FI_DEV_GPU_TEMP")},
			GPUMemoryTemperature: {gauge("DCGM_FI_DEV_MEMORY_TEMP")},
			GPUClockEventReasons: {gauge("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"), gauge("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")},
		},
		prefixes: []string{"DCGM_FI_"},
	},
}

// Names lists the presets' names in Engines' order.
func Names() []string {
	names := make([]string, len(Engines))
	for i, e := range Engines {
		names[i] = e.Name
	}
	return names
}

// Preset returns the engine a preset names, by its name or an alias in any
// case; an unknown name is an error that lists the known ones and the one
// probably meant.
func Preset(name string) (*Engine, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	var all []string
	for _, e := range Engines {
		if want == e.Name {
			return e, nil
		}
		for _, a := range e.Aliases {
			if want == a {
				return e, nil
			}
		}
		all = append(all, e.Name)
		all = append(all, e.Aliases...)
	}
	known := strings.Join(Names(), ", ")
	if near := spelling.Nearest(want, all); near != "" {
		return nil, fmt.Errorf("unknown server-metrics preset %q: did you mean %q? (known: %s)", name, near, known)
	}
	return nil, fmt.Errorf("unknown server-metrics preset %q (known: %s)", name, known)
}
