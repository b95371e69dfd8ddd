// Package vllmbench runs `vllm bench serve`'s benchmark on llmrun's engine:
// from vLLM's options (Options, as its flags name them) it builds the
// run's script (Script: exactly NumPrompts requests, arrivals from the
// gamma process RequestRate and Burstiness define, rescaled as vLLM's so
// that the last falls at NumPrompts / RequestRate, at most MaxConcurrency
// in flight, the others waiting), collects each measured request's
// llm.Result (Collector, the engine's Results sink), and turns the run's
// summary and those requests into vLLM's result
// (NewResult): the "Serving Benchmark Result" block it prints and the JSON
// it saves, under vLLM's keys (vllm/benchmarks/serve.py). docs/bench.md
// maps every flag and key.
package vllmbench

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Options are vllm bench serve's options that llmrun honours, as its
// flags name them.
type Options struct {
	Backend string // --backend: one of Backends
	// EndpointType is --endpoint-type (earlier vLLMs' name of the
	// backend): when given, the API of the requests and the result's
	// endpoint_type.
	EndpointType string
	Endpoint     string // --endpoint, "/v1/completions" by default
	Label        string // --label, the result file's prefix (default Backend)
	Model        string // --model; "" asks the server (/v1/models)
	// ServedModelName is --served-model-name: the model the requests name,
	// when it is not Model (which stays the result's model_id).
	ServedModelName string
	// Tokenizer is --tokenizer, the result's tokenizer_id (default
	// llmrun's, cl100k_base).
	Tokenizer string

	DatasetName string // --dataset-name: random, random-mm, prefix_repetition, sharegpt or custom
	DatasetPath string // --dataset-path, for sharegpt and custom

	RandomInputLen   int     // --random-input-len
	RandomOutputLen  int     // --random-output-len
	RandomRangeRatio float64 // --random-range-ratio, in [0, 1)
	RandomPrefixLen  int     // --random-prefix-len
	// RandomBatchSize is --random-batch-size: the documents of one
	// rerank request (random-rerank dataset).
	RandomBatchSize int
	// NoReranker is --no-reranker: the model does not rerank natively,
	// and the random-rerank dataset's first document is its query.
	NoReranker bool
	// OutputLen is --sharegpt-output-len / --custom-output-len: the
	// answer length of a dataset's requests, 0 for the dataset's own.
	OutputLen int

	// PrefixRepetition is the prefix_repetition dataset's shape.
	PrefixRepetition PrefixRepetition
	// RandomMM is the random-mm dataset's images.
	RandomMM RandomMM
	// TimedTrace is the timed_trace dataset's timestamps and blocks.
	TimedTrace TimedTrace
	// Seed is --seed, which also orders the prefix_repetition dataset's
	// requests.
	Seed int64

	NumPrompts     int     // --num-prompts
	NumWarmups     int     // --num-warmups: requests before, in no figure
	RequestRate    float64 // --request-rate; +Inf sends all at once
	Burstiness     float64 // --burstiness: 1 is Poisson
	MaxConcurrency int     // --max-concurrency; 0 for none

	Goodput summary.GoodputBounds // --goodput

	PercentileMetrics []string  // --percentile-metrics: ttft, tpot, itl, e2el
	MetricPercentiles []float64 // --metric-percentiles

	IgnoreEOS bool // --ignore-eos (implied by the random dataset)
	// Sampling are the sampling parameters given (--temperature, --top-p,
	// --top-k, --min-p, --frequency-penalty, --presence-penalty,
	// --repetition-penalty), under their keys in the request body.
	Sampling map[string]any
	// ExtraBody is --extra-body: keys set in every request's body, over
	// the others (vLLM's order).
	ExtraBody map[string]any
	Logprobs  *int // --logprobs, sent with the completions API only (as vLLM)
	// RequestIDPrefix is --request-id-prefix: request i carries the header
	// x-request-id: RequestIDPrefix + i.
	RequestIDPrefix string

	// Metadata are --metadata's KEY=VALUE pairs, in order.
	Metadata [][2]string
	// SaveDetailed is --save-detailed: the result has the per-request
	// lists, generated texts included (kept only then).
	SaveDetailed bool
}

// PrefixRepetition is vLLM's prefix_repetition dataset
// (PrefixRepetitionRandomDataset): NumPrefixes random prefixes of
// PrefixLen tokens, each request one of them followed by a random suffix
// of SuffixLen tokens, and asking for OutputLen tokens.
type PrefixRepetition struct {
	PrefixLen   int // --prefix-repetition-prefix-len
	SuffixLen   int // --prefix-repetition-suffix-len
	NumPrefixes int // --prefix-repetition-num-prefixes
	OutputLen   int // --prefix-repetition-output-len
}

// Defaults are vllm bench serve's defaults.
func Defaults() Options {
	return Options{
		Backend: "openai", Endpoint: "/v1/completions", DatasetName: "random",
		RandomInputLen: 1024, RandomOutputLen: 128, NumPrompts: 1000, RandomBatchSize: 1,
		RequestRate: math.Inf(1), Burstiness: 1,
		PrefixRepetition:  PrefixRepetition{PrefixLen: 256, SuffixLen: 256, NumPrefixes: 10, OutputLen: 128},
		RandomMM:          randomMMDefaults(),
		TimedTrace:        timedTraceDefaults(),
		PercentileMetrics: []string{"ttft", "tpot", "itl"}, MetricPercentiles: []float64{99},
	}
}

// PercentileMetrics are the metrics --percentile-metrics may name, in the
// order vLLM prints them.
var PercentileMetrics = []string{"ttft", "tpot", "itl", "e2el"}

// Backends maps the backends of vLLM (--backend, --endpoint-type) that
// llmrun speaks to the API of their requests: those whose request function
// is vLLM's async_request_openai_completions or
// async_request_openai_chat_completions (its OPENAI_COMPATIBLE_BACKENDS,
// vllm/benchmarks/lib/endpoint_request_func.py), with the names earlier
// vLLMs gave the completions one (vllm/benchmarks/backend_request_func.py).
var Backends = map[string]string{
	"openai": "completions", "vllm": "completions", "openai-chat": "chat",
	"sglang": "completions", "lmdeploy": "completions", "scalellm": "completions", "llama.cpp": "completions",
	// llmrun's own: vLLM's bench has no backend for the Responses API
	// (vllm-project/vllm#23365).
	ResponsesBackend: "responses",
}

// ResponsesBackend is the backend of OpenAI's Responses API
// (POST /v1/responses): one user message as "input", --*-output-len as
// "max_output_tokens". Its endpoint is /v1/responses, which --endpoint
// may give (the default /v1/completions is taken to mean it).
const ResponsesBackend = "openai-responses"

// otherBackends are vLLM's backends that llmrun bench does not speak, and
// why.
var otherBackends = map[string]string{
	"openai-audio":              "transcription requests",
	"openai-embeddings":         "embedding requests",
	"openai-embeddings-chat":    "embedding requests",
	"openai-embeddings-clip":    "embedding requests",
	"openai-embeddings-vlm2vec": "embedding requests",
	"infinity-embeddings":       "embedding requests",
	"infinity-embeddings-clip":  "embedding requests",
	"vllm-pooling":              "pooling requests",
	"tgi":                       "TGI's /generate_stream (llmrun run speaks it: api 'tgi')",
	"tensorrt-llm":              "TensorRT-LLM's generate_stream",
	"deepspeed-mii":             "DeepSpeed-MII's API",
}

// backendError is the error of a backend llmrun bench does not speak,
// given with flag.
func backendError(flag, name string) error {
	names := slices.Sorted(maps.Keys(Backends))
	names = append(names, RerankBackend) // whose requests are not generation ones
	if what, ok := otherBackends[name]; ok {
		return fmt.Errorf("%s %s: a vLLM backend llmrun bench does not support (%s); it speaks %s", flag, name, what, strings.Join(names, ", "))
	}
	return fmt.Errorf("%s %q: not a backend of vLLM that llmrun bench supports; want one of %s", flag, name, strings.Join(names, ", "))
}

// api is the request API of o's backend (or endpoint type) and endpoint:
// "completions" (a prompt), "chat" (messages) or "rerank".
func (o Options) api() string {
	if o.rerank() {
		return string(llm.Rerank)
	}
	if strings.HasSuffix(o.Endpoint, "/chat/completions") {
		return "chat"
	}
	if strings.HasSuffix(o.Endpoint, "/responses") {
		return "responses"
	}
	if o.EndpointType != "" {
		return Backends[o.EndpointType]
	}
	return Backends[o.Backend]
}

// API is the llm module's API of o's requests.
func (o Options) API() llm.API {
	switch o.api() {
	case "chat":
		return llm.ChatCompletions
	case string(llm.Rerank):
		return llm.Rerank
	case "responses":
		return llm.Responses
	}
	return llm.Completions
}

// RequestModel is the model the requests name: --served-model-name when
// given, else --model (which stays the result's model_id).
func (o Options) RequestModel() string {
	if o.ServedModelName != "" {
		return o.ServedModelName
	}
	return o.Model
}

// BaseURL is the base URL llmrun's client takes for o's endpoint on the
// server at server (vLLM's --base-url): server, with or without its /v1
// as llmrun run's --base-url (the client adds /v1 where it is missing),
// followed by what the endpoint has before its "/v1/completions" or
// "/v1/chat/completions".
func (o Options) BaseURL(server string) string {
	dir := o.Endpoint
	for _, api := range []string{"/rerank", "/responses", "/completions", "/chat"} {
		dir = strings.TrimSuffix(dir, api)
	}
	return strings.TrimSuffix(server, "/") + strings.TrimSuffix(dir, "/v1")
}

// Validate checks o as vLLM does, naming the flag of the first wrong
// option.
func (o Options) Validate() error {
	for _, check := range []func() error{o.checkAPI, o.checkRerank, o.checkDataset, o.checkCounts, o.checkRandom, o.checkTraffic,
		o.checkSchedule, o.checkLengths, o.checkReported, o.checkRandomMM, o.checkTimedTrace} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkAPI checks --backend, --endpoint-type and --endpoint.
func (o Options) checkAPI() error {
	if o.rerank() && o.EndpointType == "" {
		return nil // checkRerank
	}
	if _, ok := Backends[o.Backend]; !ok {
		return backendError("--backend", o.Backend)
	}
	if _, ok := Backends[o.EndpointType]; o.EndpointType != "" && !ok {
		return backendError("--endpoint-type", o.EndpointType)
	}
	if !strings.HasSuffix(o.Endpoint, "/completions") && !strings.HasSuffix(o.Endpoint, "/responses") {
		return fmt.Errorf("--endpoint %q: want an OpenAI endpoint such as /v1/completions, /v1/chat/completions or /v1/responses", o.Endpoint)
	}
	return nil
}

// checkDataset checks --dataset-name, with the --dataset-path it needs or
// refuses and the prefix_repetition dataset's shape.
func (o Options) checkDataset() error {
	switch o.DatasetName {
	case "random", "random-mm", RerankDataset:
		if o.DatasetPath != "" {
			return fmt.Errorf("--dataset-path: cannot be used with --dataset-name %s", o.DatasetName)
		}
	case "sharegpt", "custom", TimedTraceDataset:
		if o.DatasetPath == "" {
			return fmt.Errorf("--dataset-name %s needs --dataset-path", o.DatasetName)
		}
	case "prefix_repetition":
		if o.DatasetPath != "" {
			return fmt.Errorf("--dataset-path: cannot be used with --dataset-name prefix_repetition")
		}
		return o.PrefixRepetition.validate(o.NumPrompts)
	default:
		return fmt.Errorf("--dataset-name %q: a vLLM dataset llmrun bench does not support; want random, random-mm, prefix_repetition, sharegpt, custom (a JSONL file of prompts), random-rerank or timed_trace (a Mooncake trace)", o.DatasetName)
	}
	return nil
}

// checkCounts checks --num-prompts and --num-warmups.
func (o Options) checkCounts() error {
	switch {
	case o.NumPrompts < 1:
		return fmt.Errorf("--num-prompts must be at least 1, got %d", o.NumPrompts)
	case o.NumWarmups < 0:
		return fmt.Errorf("--num-warmups must not be negative, got %d", o.NumWarmups)
	case o.NumPrompts > MaxRequests || o.NumWarmups > MaxRequests-o.NumPrompts:
		return fmt.Errorf("--num-prompts %d and --num-warmups %d: more than llmrun bench's limit of %d requests in one run, each kept for vLLM's result (see docs/limits.md); run several benchmarks", o.NumPrompts, o.NumWarmups, MaxRequests)
	}
	return nil
}

// checkRandom checks the random dataset's lengths.
func (o Options) checkRandom() error {
	switch {
	case o.RandomInputLen < 1:
		return fmt.Errorf("--random-input-len must be at least 1, got %d", o.RandomInputLen)
	case o.RandomOutputLen < 1:
		return fmt.Errorf("--random-output-len must be at least 1, got %d", o.RandomOutputLen)
	case o.RandomPrefixLen < 0:
		return fmt.Errorf("--random-prefix-len must not be negative, got %d", o.RandomPrefixLen)
	case !(o.RandomRangeRatio >= 0 && o.RandomRangeRatio < 1):
		return fmt.Errorf("--random-range-ratio must be in [0, 1), got %v", o.RandomRangeRatio)
	}
	return nil
}

// checkTraffic checks --request-rate, --burstiness and --max-concurrency.
func (o Options) checkTraffic() error {
	switch {
	case !(o.RequestRate > 0):
		return fmt.Errorf("--request-rate must be positive or inf, got %v", o.RequestRate)
	case !math.IsInf(o.RequestRate, 1) && o.RequestRate > executor.RateLimit:
		return fmt.Errorf("--request-rate %v exceeds llmrun's limit of %d requests per second (see docs/limits.md); use inf to send them all at once", o.RequestRate, executor.RateLimit)
	case !(o.Burstiness > 0) || math.IsInf(o.Burstiness, 0):
		return fmt.Errorf("--burstiness must be a positive number, got %v", o.Burstiness)
	case o.MaxConcurrency < 0:
		return fmt.Errorf("--max-concurrency must be greater than 0, got %d", o.MaxConcurrency)
	}
	return nil
}

// checkReported checks --temperature, --percentile-metrics and
// --metric-percentiles.
func (o Options) checkReported() error {
	if t, ok := o.Sampling["temperature"].(float64); ok && !(t >= 0) {
		return fmt.Errorf("--temperature must not be negative, got %v", t)
	}
	for _, m := range o.PercentileMetrics {
		if !slices.Contains(PercentileMetrics, m) {
			return fmt.Errorf("--percentile-metrics: %q is not supported by llmrun bench; want some of %s", m, strings.Join(PercentileMetrics, ","))
		}
	}
	for _, p := range o.MetricPercentiles {
		if !(p > 0 && p < 100) && p != 100 {
			return fmt.Errorf("--metric-percentiles: %v is not a percentile in (0, 100]", p)
		}
	}
	return nil
}

// MaxRequests bounds --num-prompts + --num-warmups: every request's
// lengths are drawn before the run, and each benchmark request is kept
// for vLLM's result (its percentiles are over all of them).
const MaxRequests = 10_000_000

// maxOutputLen bounds an output length: the most tokens llmrun takes a
// server's count of for one response (docs/limits.md).
const maxOutputLen = math.MaxInt32

// checkLengths refuses, before anything is drawn or allocated, a prompt
// longer than the data module's data.MaxPromptTokens (the longest a
// --random-range-ratio draw may give, with its prefix), prefixes longer
// than it together, or an output length beyond maxOutputLen.
func (o Options) checkLengths() error {
	if o.RandomOutputLen > maxOutputLen {
		return fmt.Errorf("--random-output-len %d exceeds llmrun's limit of %d tokens for a response (see docs/limits.md)", o.RandomOutputLen, maxOutputLen)
	}
	if o.PrefixRepetition.OutputLen > maxOutputLen {
		return fmt.Errorf("--prefix-repetition-output-len %d exceeds llmrun's limit of %d tokens for a response (see docs/limits.md)", o.PrefixRepetition.OutputLen, maxOutputLen)
	}
	if o.OutputLen > maxOutputLen {
		return fmt.Errorf("--output-len %d exceeds llmrun's limit of %d tokens for a response (see docs/limits.md)", o.OutputLen, maxOutputLen)
	}
	switch o.DatasetName {
	case "random", "random-mm":
		if err := data.CheckPromptTokens("--random-prefix-len", o.RandomPrefixLen); err != nil {
			return err
		}
		if err := data.CheckPromptTokens("--random-input-len", o.RandomInputLen); err != nil {
			return err
		}
		_, high := o.randomRange(o.RandomInputLen)
		if err := data.CheckPromptTokens("--random-prefix-len + --random-input-len × (1 + --random-range-ratio)", o.RandomPrefixLen+high); err != nil {
			return err
		}
	case "prefix_repetition":
		pr := o.PrefixRepetition
		if err := data.CheckPromptTokens("--prefix-repetition-prefix-len", pr.PrefixLen); err != nil {
			return err
		}
		if err := data.CheckPromptTokens("--prefix-repetition-suffix-len", pr.SuffixLen); err != nil {
			return err
		}
		if err := data.CheckPromptTokens("--prefix-repetition-prefix-len + --prefix-repetition-suffix-len", pr.PrefixLen+pr.SuffixLen); err != nil {
			return err
		}
		if pr.PrefixLen > 0 && pr.NumPrefixes > data.MaxPromptTokens/pr.PrefixLen {
			return fmt.Errorf("--prefix-repetition-num-prefixes %d × --prefix-repetition-prefix-len %d exceeds llmrun's limit of %d tokens for the prefixes together (see docs/limits.md)", pr.NumPrefixes, pr.PrefixLen, data.MaxPromptTokens)
		}
	}
	return nil
}

// validate checks p for a run of numPrompts requests, as vLLM does.
func (p PrefixRepetition) validate(numPrompts int) error {
	switch {
	case p.PrefixLen < 0:
		return fmt.Errorf("--prefix-repetition-prefix-len must not be negative, got %d", p.PrefixLen)
	case p.SuffixLen < 0:
		return fmt.Errorf("--prefix-repetition-suffix-len must not be negative, got %d", p.SuffixLen)
	case p.PrefixLen == 0 && p.SuffixLen == 0:
		return errors.New("--prefix-repetition-prefix-len and --prefix-repetition-suffix-len are both 0: a prompt needs at least 1 token")
	case p.NumPrefixes < 1:
		return fmt.Errorf("--prefix-repetition-num-prefixes must be at least 1, got %d", p.NumPrefixes)
	case p.OutputLen < 1:
		return fmt.Errorf("--prefix-repetition-output-len must be at least 1, got %d", p.OutputLen)
	case numPrompts >= 1 && numPrompts < p.NumPrefixes:
		return fmt.Errorf("--num-prompts (%d) must be greater than or equal to --prefix-repetition-num-prefixes (%d)", numPrompts, p.NumPrefixes)
	}
	return nil
}

// prefixOrder is the prefix each of the n requests of the
// prefix_repetition dataset repeats, in the order they are sent: as
// vLLM's, each prefix for n / NumPrefixes requests, shuffled (by seed).
// vLLM sends no more than NumPrefixes × (n / NumPrefixes) requests;
// llmrun sends n, the n mod NumPrefixes left over repeating the first
// prefixes once more each.
func (p PrefixRepetition) prefixOrder(n int, seed int64) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i % p.NumPrefixes
	}
	rng := rand.New(rand.NewPCG(uint64(seed), prefixOrderStream))
	rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// prefixOrderStream keeps prefixOrder's random stream apart from the
// others a seed starts.
const prefixOrderStream = 0x7072656669786f72 // "prefixor"

// randomRange is the lengths vLLM's random dataset draws around n:
// integers from floor(n·(1−r)) to ceil(n·(1+r)), inclusive, at least 1
// (vllm/benchmarks/datasets.py, RandomDataset).
func (o Options) randomRange(n int) (low, high int) {
	low = max(1, int(math.Floor(float64(n)*(1-o.RandomRangeRatio))))
	return low, max(low, int(math.Ceil(float64(n)*(1+o.RandomRangeRatio))))
}

// randomLengths are the random dataset's input and output lengths of
// each of the run's requests, the warmups' after the benchmark's: drawn
// from the seed before the run, as vLLM's RandomDataset draws them, so
// that a seed gives the same lengths to the same requests whichever VU
// sends them.
func (o Options) randomLengths() (inputs, outputs []int) {
	n := o.NumPrompts + o.NumWarmups
	inLow, inHigh := o.randomRange(o.RandomInputLen)
	outLow, outHigh := o.randomRange(o.RandomOutputLen)
	rng := rand.New(rand.NewPCG(uint64(o.Seed), randomLengthsStream))
	inputs, outputs = make([]int, n), make([]int, n)
	for i := range n {
		inputs[i] = inLow + rng.IntN(inHigh-inLow+1)
		outputs[i] = outLow + rng.IntN(outHigh-outLow+1)
	}
	return inputs, outputs
}

// randomLengthsStream keeps randomLengths' random stream apart from the
// others a seed starts.
const randomLengthsStream = 0x6c656e67746873 // "lengths"

// parseList parses a comma-separated list, as --percentile-metrics takes
// it.
func parseList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parsePercentiles parses --metric-percentiles: "25,50,99.9".
func parsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, f := range parseList(s) {
		p, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: want numbers such as 50,90,99", f)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, errors.New("empty: want numbers such as 50,90,99")
	}
	return out, nil
}

// pyFloat formats v as Python's str(float) does: as json.dump writes it
// (pythonFloat) but for the infinities, "inf" and "-inf".
func pyFloat(v float64) string {
	if math.IsInf(v, 0) {
		return strings.ToLower(strings.TrimSuffix(pythonFloat(v), "inity"))
	}
	return pythonFloat(v)
}

// PrintTraffic writes the lines vLLM prints of the traffic before its run:
// "Traffic request rate: 20.0", "Burstiness factor: 0.5 (Gamma
// distribution)", "Maximum request concurrency: 64" (None without).
func (o Options) PrintTraffic(w io.Writer) error {
	distribution := "Gamma distribution"
	if o.Burstiness == 1 {
		distribution = "Poisson process"
	}
	conc := "None"
	if o.MaxConcurrency > 0 {
		conc = strconv.Itoa(o.MaxConcurrency)
	}
	_, err := fmt.Fprintf(w, "Traffic request rate: %s\nBurstiness factor: %s (%s)\nMaximum request concurrency: %s\n",
		pyFloat(o.RequestRate), pyFloat(o.Burstiness), distribution, conc)
	return err
}
