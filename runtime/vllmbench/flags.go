package vllmbench

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/runner"
)

// Use is what llmrun bench does with one of vllm bench serve's flags.
type Use int

const (
	// Implemented flags do what vLLM's do (docs/bench.md says where they
	// differ).
	Implemented Use = iota
	// Ignored flags are accepted and named once as ignored: they cannot
	// change what is sent here.
	Ignored
	// Refused flags stop llmrun bench before anything is sent: they
	// change the load or the requests in a way llmrun does not implement.
	Refused
)

// Arity is what a flag takes after it.
type Arity int

const (
	NoValue  Arity = iota // a switch (argparse's store_true)
	OneValue              // one value
	Values                // one or more words (argparse's nargs)
)

// Flag is one of vllm bench serve's flags and what llmrun bench does with
// it.
type Flag struct {
	Name  string // without its dashes
	Use   Use
	Arity Arity
	// Why says, of an ignored flag, why it cannot matter here; of a
	// refused one, why, and what to do instead.
	Why string
}

// Flags are the flags of vllm bench serve: add_dataset_parser's
// (vllm/benchmarks/datasets/arg_utils.py at commit 237145ea) and
// add_cli_args' (vllm/benchmarks/serve.py at commit 009e6d4a), in their
// order, then those of earlier vLLM releases that scripts still pass.
// docs/bench.md's flag table has a row for each.
var Flags = []Flag{
	{"seed", Implemented, OneValue, ""},
	{"num-prompts", Implemented, OneValue, ""},
	{"dataset-name", Implemented, OneValue, ""},
	{"no-stream", Ignored, NoValue, "it loads Hugging Face datasets, which llmrun bench does not take"},
	{"dataset-path", Implemented, OneValue, ""},
	{"no-oversample", Refused, NoValue, "llmrun bench sends exactly --num-prompts requests, going round the dataset again when it has fewer records; give --num-prompts no more than the dataset's records instead"},
	{"skip-chat-template", Ignored, NoValue, "llmrun never applies a chat template to prompts, which is what this flag asks"},
	{"disable-shuffle", Ignored, NoValue, "llmrun sends a dataset's records in the file's order, which is what this flag asks"},
	{"custom-output-len", Implemented, OneValue, ""},
	{"spec-bench-output-len", Ignored, OneValue, "only the spec_bench dataset uses it, which llmrun bench does not take"},
	{"spec-bench-category", Ignored, OneValue, "only the spec_bench dataset uses it, which llmrun bench does not take"},
	{"sonnet-input-len", Ignored, OneValue, "only the sonnet dataset uses it, which llmrun bench does not take"},
	{"sonnet-output-len", Ignored, OneValue, "only the sonnet dataset uses it, which llmrun bench does not take"},
	{"sonnet-prefix-len", Ignored, OneValue, "only the sonnet dataset uses it, which llmrun bench does not take"},
	{"sharegpt-output-len", Implemented, OneValue, ""},
	{"blazedit-min-distance", Ignored, OneValue, "only the hf dataset's blazedit uses it, which llmrun bench does not take"},
	{"blazedit-max-distance", Ignored, OneValue, "only the hf dataset's blazedit uses it, which llmrun bench does not take"},
	{"random-input-len", Implemented, OneValue, ""},
	{"random-output-len", Implemented, OneValue, ""},
	{"random-range-ratio", Implemented, OneValue, ""},
	{"random-prefix-len", Implemented, OneValue, ""},
	{"random-batch-size", Implemented, OneValue, ""},
	{"no-reranker", Implemented, NoValue, ""},
	{"random-mm-base-items-per-request", Implemented, OneValue, ""},
	{"random-mm-num-mm-items-range-ratio", Implemented, OneValue, ""},
	{"random-mm-limit-mm-per-prompt", Implemented, OneValue, ""},
	{"random-mm-bucket-config", Implemented, OneValue, ""},
	{"hf-subset", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"hf-split", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"hf-name", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"hf-output-len", Ignored, OneValue, "only the hf dataset uses it, which llmrun bench does not take"},
	{"prefix-repetition-prefix-len", Implemented, OneValue, ""},
	{"prefix-repetition-suffix-len", Implemented, OneValue, ""},
	{"prefix-repetition-num-prefixes", Implemented, OneValue, ""},
	{"prefix-repetition-output-len", Implemented, OneValue, ""},
	{"timed-trace-chunk-hash-size", Implemented, OneValue, ""},
	{"timed-trace-sec-multiplier", Implemented, OneValue, ""},

	{"label", Implemented, OneValue, ""},
	{"backend", Implemented, OneValue, ""},
	{"base-url", Implemented, OneValue, ""},
	{"host", Implemented, OneValue, ""},
	{"port", Implemented, OneValue, ""},
	{"endpoint", Implemented, OneValue, ""},
	{"header", Implemented, Values, ""},
	{"max-concurrency", Implemented, OneValue, ""},
	{"model", Implemented, OneValue, ""},
	{"input-len", Implemented, OneValue, ""},
	{"output-len", Implemented, OneValue, ""},
	{"tokenizer", Implemented, OneValue, ""},
	{"tokenizer-mode", Ignored, OneValue, "llmrun's tokenizers (tiktoken encodings, tokenizer.json) have one mode"},
	{"use-beam-search", Ignored, NoValue, "vllm bench serve passes it to no request either"},
	{"logprobs", Implemented, OneValue, ""},
	{"request-rate", Implemented, OneValue, ""},
	{"burstiness", Implemented, OneValue, ""},
	{"probe-request-rate", Refused, OneValue, "llmrun bench sends no probe requests beside the benchmark's; run llmrun run with a second scenario of 1-token requests at that rate instead"},
	{"disable-tqdm", Ignored, NoValue, "llmrun shows no tqdm bar; -q turns its live view off"},
	{"num-warmups", Implemented, OneValue, ""},
	{"profile", Refused, NoValue, "llmrun does not drive vLLM's profiler (/start_profile, /stop_profile); call those endpoints around the run instead"},
	{"save-result", Implemented, NoValue, ""},
	{"save-detailed", Implemented, NoValue, ""},
	{"append-result", Implemented, NoValue, ""},
	{"metadata", Implemented, Values, ""},
	{"result-dir", Implemented, OneValue, ""},
	{"result-filename", Implemented, OneValue, ""},
	{"ignore-eos", Implemented, NoValue, ""},
	{"self-timed", Ignored, NoValue, "llmrun bench replays the timed_trace dataset at its timestamps always, which is what this flag asks"},
	{"no-self-timed", Refused, NoValue, "llmrun bench replays the timed_trace dataset at its timestamps always; scale them with --timed-trace-sec-multiplier instead of sending at --request-rate"},
	{"percentile-metrics", Implemented, OneValue, ""},
	{"metric-percentiles", Implemented, OneValue, ""},
	{"goodput", Implemented, Values, ""},
	{"request-id-prefix", Implemented, OneValue, ""},
	{"top-p", Implemented, OneValue, ""},
	{"top-k", Implemented, OneValue, ""},
	{"min-p", Implemented, OneValue, ""},
	{"temperature", Implemented, OneValue, ""},
	{"frequency-penalty", Implemented, OneValue, ""},
	{"presence-penalty", Implemented, OneValue, ""},
	{"repetition-penalty", Implemented, OneValue, ""},
	{"served-model-name", Implemented, OneValue, ""},
	{"lora-modules", Refused, Values, "llmrun bench sends every request to one model; name the model per request in a script for llmrun run instead"},
	{"lora-assignment", Refused, OneValue, "it assigns --lora-modules, which llmrun bench does not take"},
	{"ramp-up-strategy", Refused, OneValue, "llmrun bench keeps one --request-rate; run llmrun run with a ramping-arrival-rate scenario instead"},
	{"ramp-up-start-rps", Refused, OneValue, "it is --ramp-up-strategy's, which llmrun bench does not take"},
	{"ramp-up-end-rps", Refused, OneValue, "it is --ramp-up-strategy's, which llmrun bench does not take"},
	{"ready-check-timeout-sec", Implemented, OneValue, ""},
	{"chat-template-kwargs", Ignored, OneValue, "llmrun never applies a chat template to prompts, so there is nothing to pass it to"},
	{"extra-body", Implemented, OneValue, ""},
	{"skip-tokenizer-init", Refused, NoValue, "llmrun bench needs its tokenizer to make prompts of exact lengths and to count output tokens the server does not report"},
	{"insecure", Implemented, NoValue, ""},
	{"plot-timeline", Ignored, NoValue, "llmrun bench draws no plot; --out html=FILE writes llmrun's report with the run's timeline"},
	{"timeline-itl-thresholds", Ignored, OneValue, "it colours --plot-timeline's plot, which llmrun bench does not draw"},
	{"plot-dataset-stats", Ignored, NoValue, "llmrun bench draws no plot; --save-detailed keeps input_lens and output_lens"},

	// Earlier vLLM releases' flags.
	{"trust-remote-code", Ignored, NoValue, "llmrun's tokenizers run no code from the model's repository"},
	{"endpoint-type", Implemented, OneValue, ""},
}

// LookupFlag returns the vLLM flag of that name (without dashes).
func LookupFlag(name string) (Flag, bool) {
	for _, f := range Flags {
		if f.Name == name {
			return f, true
		}
	}
	return Flag{}, false
}

// Refusal is the error of a refused flag given.
func (f Flag) Refusal() error {
	return fmt.Errorf("--%s is a vLLM flag llmrun bench does not support: %s", f.Name, f.Why)
}

// IgnoredNotice is the one line that names the ignored flags given, each
// with why it cannot matter; "" when none was given.
func IgnoredNotice(given []Flag) string {
	if len(given) == 0 {
		return ""
	}
	parts := make([]string, len(given))
	for i, f := range given {
		parts[i] = fmt.Sprintf("--%s (%s)", f.Name, f.Why)
	}
	return "ignoring vLLM flags that cannot matter here: " + strings.Join(parts, "; ")
}

// CommandLine is vllm bench serve's command line as llmrun bench takes
// it: the flags AddFlags registers, as given, until Benchmark reads them.
type CommandLine struct {
	o                                                                Options
	baseURL, host, requestRate, percentileMetrics, metricPercentiles string
	extraBody, resultDir, resultFilename                             string
	port, inputLen, outputLen, sharegptOutputLen, customOutputLen    int
	logprobs, readyCheckTimeoutSec                                   int
	sampling                                                         samplingFlags
	mm                                                               randomMMFlags
	goodput, metadata, headers                                       []string
	saveResult, appendResult, insecure                               bool
}

// samplingFlags are vLLM's sampling parameters, sent under their body
// keys when given.
type samplingFlags struct {
	temperature, topP, minP, frequencyPenalty, presencePenalty, repetitionPenalty float64
	topK                                                                          int
}

// given returns the sampling parameters given, under their body keys.
func (s *samplingFlags) given(fs *pflag.FlagSet) map[string]any {
	out := map[string]any{}
	for flag, v := range map[string]any{
		"temperature": s.temperature, "top-p": s.topP, "top-k": s.topK, "min-p": s.minP,
		"frequency-penalty": s.frequencyPenalty, "presence-penalty": s.presencePenalty, "repetition-penalty": s.repetitionPenalty,
	} {
		if fs.Changed(flag) {
			out[strings.ReplaceAll(flag, "-", "_")] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// AddFlags registers every flag of vllm bench serve (Flags) on fs: the
// implemented ones with their help, with vLLM's defaults; the others
// hidden, taken so that vLLM's command lines parse, then ignored or
// refused by Benchmark. It returns the command line they fill.
func AddFlags(fs *pflag.FlagSet) *CommandLine {
	c := &CommandLine{o: Defaults()}
	c.addServerFlags(fs)
	c.addDatasetFlags(fs)
	c.addLoadFlags(fs)
	c.addRequestFlags(fs)
	c.addResultFlags(fs)
	for _, vf := range Flags {
		if vf.Use == Implemented {
			continue
		}
		usage := fmt.Sprintf("vLLM's; %s", vf.Why)
		switch vf.Arity {
		case NoValue:
			fs.Bool(vf.Name, false, usage)
		case OneValue:
			fs.String(vf.Name, "", usage)
		default:
			fs.StringArray(vf.Name, nil, usage)
		}
		_ = fs.MarkHidden(vf.Name)
	}
	return c
}

// addServerFlags registers the flags of the server and the API.
func (c *CommandLine) addServerFlags(fs *pflag.FlagSet) {
	o := &c.o
	fs.StringVar(&o.Backend, "backend", o.Backend, "openai, vllm, sglang, lmdeploy, scalellm or llama.cpp (the completions API), openai-chat, vllm-rerank (the rerank API), or openai-responses (llmrun's: the Responses API)")
	fs.StringVar(&o.EndpointType, "endpoint-type", "", "earlier vLLMs' name of --backend: the API of the requests and the result's endpoint_type")
	fs.StringVar(&o.Endpoint, "endpoint", o.Endpoint, "API endpoint, appended to --base-url")
	fs.StringVar(&c.baseURL, "base-url", "", "server URL without the endpoint, with or without /v1, e.g. http://127.0.0.1:8000")
	fs.StringVar(&c.host, "host", "127.0.0.1", "server host, without --base-url")
	fs.IntVar(&c.port, "port", 8000, "server port, without --base-url")
	fs.StringVar(&o.Model, "model", "", "model (default the first model the server lists)")
	fs.StringVar(&o.ServedModelName, "served-model-name", "", "the model the requests name, when not --model (which stays the result's model_id)")
	fs.StringArrayVar(&c.headers, "header", nil, "KEY=VALUE headers sent with every request, e.g. --header x-tenant=a x-trace=1")
	fs.StringVar(&o.RequestIDPrefix, "request-id-prefix", "", "send x-request-id: PREFIX + the request's number (default none)")
	fs.BoolVar(&c.insecure, "insecure", false, "accept any TLS certificate of an https server")
	fs.IntVar(&c.readyCheckTimeoutSec, "ready-check-timeout-sec", 0, "before the run, wait up to this many seconds for the endpoint to answer a request, probing every 5 s (default no wait)")
	fs.StringVar(&o.Tokenizer, "tokenizer", "", "tokenizer the prompts are measured with: cl100k_base, o200k_base, a tokenizer.json path or a model directory, or a Hugging Face model id ORG/NAME[@REVISION] (default cl100k_base; see docs/workloads.md); also the result's tokenizer_id")
}

// addDatasetFlags registers the flags of the dataset and its lengths.
func (c *CommandLine) addDatasetFlags(fs *pflag.FlagSet) {
	o := &c.o
	fs.StringVar(&o.DatasetName, "dataset-name", o.DatasetName, "random, random-mm (random with images), prefix_repetition, sharegpt, custom, random-rerank (vllm-rerank), or timed_trace (a Mooncake trace replayed at its timestamps)")
	fs.StringVar(&o.DatasetPath, "dataset-path", "", "the dataset file, for sharegpt (ShareGPT JSON), custom (JSONL with prompt) and timed_trace (Mooncake JSONL)")
	fs.IntVar(&o.RandomInputLen, "random-input-len", o.RandomInputLen, "random dataset: input tokens per request")
	fs.IntVar(&o.RandomOutputLen, "random-output-len", o.RandomOutputLen, "random dataset: output tokens per request")
	fs.Float64Var(&o.RandomRangeRatio, "random-range-ratio", 0, "random dataset: lengths uniform in [len·(1−r), len·(1+r)]")
	fs.IntVar(&o.RandomPrefixLen, "random-prefix-len", 0, "random dataset: tokens of a prefix every prompt shares, before its input")
	fs.IntVar(&o.RandomBatchSize, "random-batch-size", o.RandomBatchSize, "random-rerank dataset: documents per rerank request")
	fs.BoolVar(&o.NoReranker, "no-reranker", false, "random-rerank dataset: the model does not rerank natively (the first document is the query)")
	pr := &o.PrefixRepetition
	fs.IntVar(&pr.PrefixLen, "prefix-repetition-prefix-len", pr.PrefixLen, "prefix_repetition dataset: tokens of each shared prefix")
	fs.IntVar(&pr.SuffixLen, "prefix-repetition-suffix-len", pr.SuffixLen, "prefix_repetition dataset: tokens of each request's own suffix, after its prefix")
	fs.IntVar(&pr.NumPrefixes, "prefix-repetition-num-prefixes", pr.NumPrefixes, "prefix_repetition dataset: distinct prefixes, each repeated by num-prompts / this many requests")
	fs.IntVar(&pr.OutputLen, "prefix-repetition-output-len", pr.OutputLen, "prefix_repetition dataset: output tokens per request")
	mm := &o.RandomMM
	fs.IntVar(&mm.BaseItems, "random-mm-base-items-per-request", mm.BaseItems, "random-mm dataset: images per request, around which their number is drawn")
	fs.Float64Var(&mm.RangeRatio, "random-mm-num-mm-items-range-ratio", 0, "random-mm dataset: images per request uniform in [n·(1−r), n·(1+r)]")
	fs.StringVar(&c.mm.limit, "random-mm-limit-mm-per-prompt", "", `random-mm dataset: the most images a request has, as '{"image": 3, "video": 0}' (default 255 images)`)
	fs.StringVar(&c.mm.buckets, "random-mm-bucket-config", "", "random-mm dataset: image sizes (height, width, 1) and their probabilities, as '{(256, 256, 1): 0.5, (720, 1280, 1): 0.5}' (the default)")
	tt := &o.TimedTrace
	fs.IntVar(&tt.ChunkHashSize, "timed-trace-chunk-hash-size", tt.ChunkHashSize, "timed_trace dataset: tokens of the block each hash id stands for (Mooncake's: 512)")
	fs.Float64Var(&tt.SecMultiplier, "timed-trace-sec-multiplier", tt.SecMultiplier, "timed_trace dataset: a timestamp (ms in a Mooncake trace) times this is its start in seconds; 0.0005 replays twice as fast")
	fs.IntVar(&c.inputLen, "input-len", 0, "same as --random-input-len")
	fs.IntVar(&c.outputLen, "output-len", 0, "output tokens for every dataset (--random-output-len, --prefix-repetition-output-len, --sharegpt-output-len, --custom-output-len)")
	fs.IntVar(&c.sharegptOutputLen, "sharegpt-output-len", 0, "sharegpt: output tokens per request (default each conversation's answer length)")
	fs.IntVar(&c.customOutputLen, "custom-output-len", 0, "custom: output tokens per request (default each record's output_tokens)")
	fs.Int64Var(&o.Seed, "seed", 0, "seed of the lengths, prompts and arrivals (and of the simulator); 0 unless given, as vLLM's, so that a run repeats exactly")
}

// addLoadFlags registers the flags of the load and of the figures
// reported.
func (c *CommandLine) addLoadFlags(fs *pflag.FlagSet) {
	o := &c.o
	fs.IntVar(&o.NumPrompts, "num-prompts", o.NumPrompts, "requests to send, exactly")
	fs.IntVar(&o.NumWarmups, "num-warmups", 0, "requests sent first, as the benchmark's, and left out of every figure")
	fs.StringVar(&c.requestRate, "request-rate", "inf", "requests per second, or inf to send them all at once")
	fs.Float64Var(&o.Burstiness, "burstiness", o.Burstiness, "gamma shape of the gaps: 1 is Poisson, lower burstier, higher more regular")
	fs.IntVar(&o.MaxConcurrency, "max-concurrency", 0, "requests in flight at most; the others wait (default no limit)")
	fs.StringArrayVar(&c.goodput, "goodput", nil, "goodput bounds KEY:MS (ttft, tpot, e2el), e.g. --goodput ttft:500 tpot:50; vllm-rerank counts none, as vLLM's pooling benchmarks")
	fs.StringVar(&c.percentileMetrics, "percentile-metrics", "ttft,tpot,itl", "metrics whose percentiles are reported: ttft, tpot, itl, e2el (vllm-rerank: e2el alone, its default)")
	fs.StringVar(&c.metricPercentiles, "metric-percentiles", "99", "percentiles reported, e.g. 25,50,99")
}

// addRequestFlags registers the flags of the fields every request sends.
func (c *CommandLine) addRequestFlags(fs *pflag.FlagSet) {
	s := &c.sampling
	fs.BoolVar(&c.o.IgnoreEOS, "ignore-eos", false, "send ignore_eos (always with the random dataset, as vLLM)")
	fs.Float64Var(&s.temperature, "temperature", 0, "temperature of the requests (default none sent)")
	fs.Float64Var(&s.topP, "top-p", 0, "top_p of the requests (default none sent)")
	fs.IntVar(&s.topK, "top-k", 0, "top_k of the requests (default none sent)")
	fs.Float64Var(&s.minP, "min-p", 0, "min_p of the requests (default none sent)")
	fs.Float64Var(&s.frequencyPenalty, "frequency-penalty", 0, "frequency_penalty of the requests (default none sent)")
	fs.Float64Var(&s.presencePenalty, "presence-penalty", 0, "presence_penalty of the requests (default none sent)")
	fs.Float64Var(&s.repetitionPenalty, "repetition-penalty", 0, "repetition_penalty of the requests (default none sent)")
	fs.StringVar(&c.extraBody, "extra-body", "", `JSON object whose keys are set in every request's body, e.g. '{"chat_template_kwargs":{"enable_thinking":false}}'`)
	fs.IntVar(&c.logprobs, "logprobs", 0, "logprobs of the completions API's requests (default none sent)")
}

// addResultFlags registers the flags of vLLM's result file.
func (c *CommandLine) addResultFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.o.Label, "label", "", "prefix of the result file's name (default --backend)")
	fs.BoolVar(&c.saveResult, "save-result", false, "write vLLM's JSON result")
	fs.BoolVar(&c.appendResult, "append-result", false, "append vLLM's JSON result to the result file, on a line of its own")
	fs.BoolVar(&c.o.SaveDetailed, "save-detailed", false, "with --save-result, add the per-request lists (input_lens, output_lens, ttfts, itls, start_times, generated_texts, errors)")
	fs.StringVar(&c.resultDir, "result-dir", "", "directory of the result file (made if missing)")
	fs.StringVar(&c.resultFilename, "result-filename", "", "name of the result file (default {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json)")
	fs.StringArrayVar(&c.metadata, "metadata", nil, "KEY=VALUE pairs stored in the result, e.g. --metadata version=0.3.3 tp=1")
}

// Benchmark reads the command line once fs has parsed it: it refuses the
// first of vLLM's refused flags given, completes and validates the
// options, and builds the run's script. Its errors name the flag.
func (c *CommandLine) Benchmark(fs *pflag.FlagSet) (*Benchmark, error) {
	ignored, err := checkVLLMFlags(fs)
	if err != nil {
		return nil, err
	}
	o := c.o
	for _, complete := range []func(*pflag.FlagSet, *Options) error{c.traffic, c.reporting, c.requestFields, c.limits, c.randomMM} {
		if err := complete(fs, &o); err != nil {
			return nil, err
		}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	b := &Benchmark{Options: o, Server: c.server(fs), Ignored: ignored, insecure: c.insecure,
		readyTimeout: time.Duration(c.readyCheckTimeoutSec) * time.Second}
	if o.DatasetPath != "" {
		if b.datasetPath, err = filepath.Abs(o.DatasetPath); err != nil {
			return nil, fmt.Errorf("--dataset-path: %w", err)
		}
	}
	if c.saveResult || c.appendResult {
		b.save = &ResultFile{Dir: c.resultDir, Filename: c.resultFilename, Append: c.appendResult}
	}
	// As in vLLM, --save-detailed without --save-result saves nothing:
	// the texts are then not kept at all.
	b.Options.SaveDetailed = o.SaveDetailed && b.save != nil
	if b.source, err = Script(b.Options, b.datasetPath); err != nil {
		return nil, err
	}
	if b.headers, err = parseHeaders(c.headers); err != nil {
		return nil, err
	}
	return b, nil
}

// traffic completes o from --request-rate.
func (c *CommandLine) traffic(_ *pflag.FlagSet, o *Options) error {
	if c.requestRate == "inf" {
		o.RequestRate = math.Inf(1)
		return nil
	}
	var err error
	if o.RequestRate, err = strconv.ParseFloat(c.requestRate, 64); err != nil || math.IsInf(o.RequestRate, 0) || math.IsNaN(o.RequestRate) {
		return fmt.Errorf("--request-rate %q: want a number of requests per second, or inf", c.requestRate)
	}
	return nil
}

// reporting completes o from the flags of what the result reports:
// --goodput, --metadata, --percentile-metrics and --metric-percentiles.
func (c *CommandLine) reporting(fs *pflag.FlagSet, o *Options) error {
	var err error
	if len(c.goodput) > 0 {
		if o.Goodput, err = runner.ParseGoodput(strings.Join(c.goodput, " ")); err != nil {
			return fmt.Errorf("--goodput: %w", err)
		}
	}
	if o.Metadata, err = parsePairs("metadata", c.metadata, false); err != nil {
		return err
	}
	o.PercentileMetrics = parseList(c.percentileMetrics)
	if o.rerank() && !fs.Changed("percentile-metrics") {
		o.PercentileMetrics = []string{"e2el"} // vLLM's default for a pooling model
	}
	if o.MetricPercentiles, err = parsePercentiles(c.metricPercentiles); err != nil {
		return fmt.Errorf("--metric-percentiles: %w", err)
	}
	return nil
}

// requestFields completes o from the flags of the requests' bodies: the
// sampling parameters given, --extra-body and --logprobs.
func (c *CommandLine) requestFields(fs *pflag.FlagSet, o *Options) error {
	o.Sampling = c.sampling.given(fs)
	if c.extraBody != "" {
		if err := json.Unmarshal([]byte(c.extraBody), &o.ExtraBody); err != nil || o.ExtraBody == nil {
			return fmt.Errorf("--extra-body %q: want a JSON object, e.g. '{\"top_k\": 20}'", c.extraBody)
		}
	}
	if fs.Changed("logprobs") {
		logprobs := c.logprobs
		o.Logprobs = &logprobs
	}
	return nil
}

// limits checks the numbers Validate cannot tell from vLLM's defaults
// (--ready-check-timeout-sec, --max-concurrency given as 0), and
// completes o from vLLM's shorthand lengths, 0 for "not given": a
// negative one is an error, not the default.
func (c *CommandLine) limits(fs *pflag.FlagSet, o *Options) error {
	if c.readyCheckTimeoutSec < 0 {
		return fmt.Errorf("--ready-check-timeout-sec must not be negative, got %d", c.readyCheckTimeoutSec)
	}
	if fs.Changed("max-concurrency") && o.MaxConcurrency <= 0 {
		return fmt.Errorf("--max-concurrency must be greater than 0, got %d", o.MaxConcurrency)
	}
	for _, l := range []struct {
		flag string
		n    int
	}{{"input-len", c.inputLen}, {"output-len", c.outputLen}, {"sharegpt-output-len", c.sharegptOutputLen}, {"custom-output-len", c.customOutputLen}} {
		if l.n < 0 {
			return fmt.Errorf("--%s must not be negative, got %d", l.flag, l.n)
		}
	}
	if c.inputLen > 0 {
		o.RandomInputLen = c.inputLen
	}
	if c.outputLen > 0 {
		o.RandomOutputLen, o.OutputLen, o.PrefixRepetition.OutputLen = c.outputLen, c.outputLen, c.outputLen
	}
	if o.DatasetName == "sharegpt" && c.sharegptOutputLen > 0 {
		o.OutputLen = c.sharegptOutputLen
	}
	if o.DatasetName == "custom" && c.customOutputLen > 0 {
		o.OutputLen = c.customOutputLen
	}
	return nil
}

// randomMM completes o from the random-mm dataset's flags.
func (c *CommandLine) randomMM(_ *pflag.FlagSet, o *Options) error { return c.mm.complete(o) }

// server is the server's base URL the flags name, for o's endpoint
// (Options.BaseURL): --base-url, else --host and --port when either is
// given; "" when none is (the environment's, or the simulator).
func (c *CommandLine) server(fs *pflag.FlagSet) string {
	switch {
	case c.baseURL != "":
		return c.o.BaseURL(c.baseURL)
	case fs.Changed("host") || fs.Changed("port"):
		return c.o.BaseURL(fmt.Sprintf("http://%s:%d", c.host, c.port))
	}
	return ""
}

// checkVLLMFlags refuses the first of vLLM's refused flags given, and
// returns the ignored ones given.
func checkVLLMFlags(fs *pflag.FlagSet) ([]Flag, error) {
	var ignored []Flag
	for _, vf := range Flags {
		if !fs.Changed(vf.Name) {
			continue
		}
		switch vf.Use {
		case Refused:
			return nil, vf.Refusal()
		case Ignored:
			ignored = append(ignored, vf)
		}
	}
	return ignored, nil
}

// multiValued are the flags that take several values, as vLLM's nargs:
// --goodput ttft:500 tpot:50.
var multiValued = func() map[string]bool {
	m := map[string]bool{}
	for _, vf := range Flags {
		if vf.Arity == Values {
			m["--"+vf.Name] = true
		}
	}
	return m
}()

// ExpandMultiValued rewrites "--goodput a b" into "--goodput a --goodput
// b": the words after such a flag, up to the next flag, are its values.
// A command line goes through it before the flag set parses it.
func ExpandMultiValued(args []string) []string {
	var out []string
	flag := ""    // the multi-valued flag whose values follow
	given := true // whether flag has a value already
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			name, _, hasValue := strings.Cut(a, "=")
			flag, given = "", true
			if multiValued[name] {
				flag, given = name, hasValue
			}
		} else if flag != "" {
			if given {
				out = append(out, flag)
			}
			given = true
		}
		out = append(out, a)
	}
	return out
}

// parsePairs parses the KEY=VALUE items of --flag as vLLM parses
// --header's and --metadata's: the first = splits each, key and value
// trimmed. An item without =, or without a key when keyed, is refused.
func parsePairs(flag string, items []string, keyed bool) ([][2]string, error) {
	var out [][2]string
	for _, item := range items {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || keyed && k == "" {
			return nil, fmt.Errorf("--%s %q: invalid %s format; please use KEY=VALUE format", flag, item, flag)
		}
		out = append(out, [2]string{k, strings.TrimSpace(v)})
	}
	return out, nil
}

// parseHeaders parses --header's pairs (parsePairs), each of which needs
// a name; nil when none is given.
func parseHeaders(items []string) (map[string]string, error) {
	pairs, err := parsePairs("header", items, true)
	if err != nil || len(pairs) == 0 {
		return nil, err
	}
	out := map[string]string{}
	for _, kv := range pairs {
		out[kv[0]] = kv[1]
	}
	return out, nil
}
