package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/vllmbench"
)

const benchUsage = `Usage: llmrun bench [flags]

Runs vllm bench serve's benchmark with its flags: exactly --num-prompts
requests, at --request-rate with gaps from the gamma process --burstiness
shapes (1: Poisson; inf: all at once), at most --max-concurrency in flight
(the others wait), then prints llmrun's summary and vLLM's "Serving
Benchmark Result" block; --save-result writes vLLM's JSON result.

The server is --base-url (with or without /v1, as in "llmrun run"), else
--host and --port, else $LLMRUN_BASE_URL or $OPENAI_BASE_URL, else the
built-in simulator. --out and --summary-export work as in "llmrun run".
Every flag of vllm bench serve is taken: implemented, ignored (named once)
or refused; docs/bench.md has the table. The default seed, 0, repeats a run
exactly.

  llmrun bench --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
    --dataset-name random --random-input-len 1024 --random-output-len 128 \
    --num-prompts 300 --request-rate 20 --burstiness 0.5 --max-concurrency 64 \
    --goodput ttft:500 tpot:50 --save-result --result-dir results

Flags:
`

// benchFlags are llmrun bench's flags beside vllmbench.Options.
type benchFlags struct {
	baseURL, host, apiKeyEnv, requestRate, percentileMetrics, metricPercentiles string
	datasetPath, tokenizer, resultDir, resultFilename, summaryExport, extraBody string
	inputLen, outputLen, sharegptOutputLen, customOutputLen, port, logprobs     int
	readyCheckTimeoutSec                                                        int
	sampling                                                                    samplingFlags
	seed                                                                        int64
	timeout                                                                     time.Duration
	goodput, metadata, headers, outs                                            []string
	saveResult, appendResult, insecure, quiet, noColor, noPreflight             bool
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

func (f *benchFlags) register(fs *pflag.FlagSet, o *vllmbench.Options) {
	fs.StringVar(&o.Backend, "backend", o.Backend, "openai, vllm, sglang, lmdeploy, scalellm or llama.cpp (the completions API), or openai-chat")
	fs.StringVar(&o.EndpointType, "endpoint-type", "", "earlier vLLMs' name of --backend: the API of the requests and the result's endpoint_type")
	fs.StringVar(&o.Endpoint, "endpoint", o.Endpoint, "API endpoint, appended to --base-url")
	fs.StringVar(&o.Label, "label", "", "prefix of the result file's name (default --backend)")
	fs.StringVar(&f.baseURL, "base-url", "", "server URL without the endpoint, with or without /v1, e.g. http://127.0.0.1:8000")
	fs.StringVar(&f.host, "host", "127.0.0.1", "server host, without --base-url")
	fs.IntVar(&f.port, "port", 8000, "server port, without --base-url")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (default OPENAI_API_KEY)")
	fs.StringVar(&o.Model, "model", "", "model (default the first model the server lists)")
	fs.StringVar(&o.ServedModelName, "served-model-name", "", "the model the requests name, when not --model (which stays the result's model_id)")
	fs.StringArrayVar(&f.headers, "header", nil, "KEY=VALUE headers sent with every request, e.g. --header x-tenant=a x-trace=1")
	fs.StringVar(&o.RequestIDPrefix, "request-id-prefix", "", "send x-request-id: PREFIX + the request's number (default none)")
	fs.BoolVar(&f.insecure, "insecure", false, "accept any TLS certificate of an https server")
	fs.IntVar(&f.readyCheckTimeoutSec, "ready-check-timeout-sec", 0, "before the run, wait up to this many seconds for the endpoint to answer a request, probing every 5 s (default no wait)")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "tokenizer the prompts are measured with: cl100k_base, o200k_base, a tokenizer.json path or a model directory, or a Hugging Face model id ORG/NAME[@REVISION] (default cl100k_base; see docs/workloads.md); also the result's tokenizer_id")
	fs.StringVar(&o.DatasetName, "dataset-name", o.DatasetName, "random, prefix_repetition, sharegpt or custom")
	fs.StringVar(&f.datasetPath, "dataset-path", "", "the dataset file, for sharegpt (ShareGPT JSON) and custom (JSONL with prompt)")
	fs.IntVar(&o.RandomInputLen, "random-input-len", o.RandomInputLen, "random dataset: input tokens per request")
	fs.IntVar(&o.RandomOutputLen, "random-output-len", o.RandomOutputLen, "random dataset: output tokens per request")
	fs.Float64Var(&o.RandomRangeRatio, "random-range-ratio", 0, "random dataset: lengths uniform in [len·(1−r), len·(1+r)]")
	fs.IntVar(&o.RandomPrefixLen, "random-prefix-len", 0, "random dataset: tokens of a prefix every prompt shares, before its input")
	pr := &o.PrefixRepetition
	fs.IntVar(&pr.PrefixLen, "prefix-repetition-prefix-len", pr.PrefixLen, "prefix_repetition dataset: tokens of each shared prefix")
	fs.IntVar(&pr.SuffixLen, "prefix-repetition-suffix-len", pr.SuffixLen, "prefix_repetition dataset: tokens of each request's own suffix, after its prefix")
	fs.IntVar(&pr.NumPrefixes, "prefix-repetition-num-prefixes", pr.NumPrefixes, "prefix_repetition dataset: distinct prefixes, each repeated by num-prompts / this many requests")
	fs.IntVar(&pr.OutputLen, "prefix-repetition-output-len", pr.OutputLen, "prefix_repetition dataset: output tokens per request")
	fs.IntVar(&f.inputLen, "input-len", 0, "same as --random-input-len")
	fs.IntVar(&f.outputLen, "output-len", 0, "output tokens for every dataset (--random-output-len, --prefix-repetition-output-len, --sharegpt-output-len, --custom-output-len)")
	fs.IntVar(&f.sharegptOutputLen, "sharegpt-output-len", 0, "sharegpt: output tokens per request (default each conversation's answer length)")
	fs.IntVar(&f.customOutputLen, "custom-output-len", 0, "custom: output tokens per request (default each record's output_tokens)")
	fs.IntVar(&o.NumPrompts, "num-prompts", o.NumPrompts, "requests to send, exactly")
	fs.IntVar(&o.NumWarmups, "num-warmups", 0, "requests sent first, as the benchmark's, and left out of every figure")
	fs.StringVar(&f.requestRate, "request-rate", "inf", "requests per second, or inf to send them all at once")
	fs.Float64Var(&o.Burstiness, "burstiness", o.Burstiness, "gamma shape of the gaps: 1 is Poisson, lower burstier, higher more regular")
	fs.IntVar(&o.MaxConcurrency, "max-concurrency", 0, "requests in flight at most; the others wait (default no limit)")
	fs.StringArrayVar(&f.goodput, "goodput", nil, "goodput bounds KEY:MS (ttft, tpot, e2el), e.g. --goodput ttft:500 tpot:50")
	fs.StringVar(&f.percentileMetrics, "percentile-metrics", "ttft,tpot,itl", "metrics whose percentiles are reported: ttft, tpot, itl, e2el")
	fs.StringVar(&f.metricPercentiles, "metric-percentiles", "99", "percentiles reported, e.g. 25,50,99")
	fs.BoolVar(&o.IgnoreEOS, "ignore-eos", false, "send ignore_eos (always with the random dataset, as vLLM)")
	fs.Float64Var(&f.sampling.temperature, "temperature", 0, "temperature of the requests (default none sent)")
	fs.Float64Var(&f.sampling.topP, "top-p", 0, "top_p of the requests (default none sent)")
	fs.IntVar(&f.sampling.topK, "top-k", 0, "top_k of the requests (default none sent)")
	fs.Float64Var(&f.sampling.minP, "min-p", 0, "min_p of the requests (default none sent)")
	fs.Float64Var(&f.sampling.frequencyPenalty, "frequency-penalty", 0, "frequency_penalty of the requests (default none sent)")
	fs.Float64Var(&f.sampling.presencePenalty, "presence-penalty", 0, "presence_penalty of the requests (default none sent)")
	fs.Float64Var(&f.sampling.repetitionPenalty, "repetition-penalty", 0, "repetition_penalty of the requests (default none sent)")
	fs.StringVar(&f.extraBody, "extra-body", "", `JSON object whose keys are set in every request's body, e.g. '{"chat_template_kwargs":{"enable_thinking":false}}'`)
	fs.IntVar(&f.logprobs, "logprobs", 0, "logprobs of the completions API's requests (default none sent)")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the lengths, prompts and arrivals (and of the simulator)")
	fs.BoolVar(&f.saveResult, "save-result", false, "write vLLM's JSON result")
	fs.BoolVar(&f.appendResult, "append-result", false, "append vLLM's JSON result to the result file, on a line of its own")
	fs.BoolVar(&o.SaveDetailed, "save-detailed", false, "with --save-result, add the per-request lists (input_lens, output_lens, ttfts, itls, start_times, generated_texts, errors)")
	fs.StringVar(&f.resultDir, "result-dir", "", "directory of the result file (made if missing)")
	fs.StringVar(&f.resultFilename, "result-filename", "", "name of the result file (default {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json)")
	fs.StringArrayVar(&f.metadata, "metadata", nil, "KEY=VALUE pairs stored in the result, e.g. --metadata version=0.3.3 tp=1")
	fs.DurationVar(&f.timeout, "timeout", 6*time.Hour, "total timeout of one request")
	fs.StringArrayVar(&f.outs, "out", nil, "also send results to NAME=VALUE, as llmrun run's --out (repeatable)")
	fs.StringVar(&f.summaryExport, "summary-export", "", "also write llmrun's result file")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no banner and no live view")
	fs.BoolVar(&f.noColor, "no-color", false, "no ANSI colours in the output")
	fs.BoolVar(&f.noPreflight, "no-preflight", false, "send no preflight request")
	// vLLM's other flags: taken, so that vLLM's command lines parse, then
	// ignored or refused (checkVLLMFlags).
	for _, vf := range vllmbench.Flags {
		if vf.Use == vllmbench.Implemented {
			continue
		}
		usage := fmt.Sprintf("vLLM's; %s", vf.Why)
		switch vf.Arity {
		case vllmbench.NoValue:
			fs.Bool(vf.Name, false, usage)
		case vllmbench.OneValue:
			fs.String(vf.Name, "", usage)
		default:
			fs.StringArray(vf.Name, nil, usage)
		}
		_ = fs.MarkHidden(vf.Name)
	}
}

// checkVLLMFlags refuses the first of vLLM's refused flags given, and
// returns the ignored ones given.
func checkVLLMFlags(fs *pflag.FlagSet) ([]vllmbench.Flag, error) {
	var ignored []vllmbench.Flag
	for _, vf := range vllmbench.Flags {
		if !fs.Changed(vf.Name) {
			continue
		}
		switch vf.Use {
		case vllmbench.Refused:
			return nil, vf.Refusal()
		case vllmbench.Ignored:
			ignored = append(ignored, vf)
		}
	}
	return ignored, nil
}

// multiValued are the flags that take several values, as vLLM's nargs:
// --goodput ttft:500 tpot:50.
var multiValued = func() map[string]bool {
	m := map[string]bool{}
	for _, vf := range vllmbench.Flags {
		if vf.Arity == vllmbench.Values {
			m["--"+vf.Name] = true
		}
	}
	return m
}()

// expandMultiValued rewrites "--goodput a b" into "--goodput a --goodput
// b": the words after such a flag, up to the next flag, are its values.
func expandMultiValued(args []string) []string {
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

func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c := newSubcommand("llmrun bench", benchUsage, stdout, stderr)
	o := vllmbench.Defaults()
	var f benchFlags
	f.register(c.flags, &o)
	if code, ok := c.parse(expandMultiValued(args)); !ok {
		return code
	}
	if c.flags.NArg() > 0 {
		return c.usageError("unexpected argument %q: llmrun bench takes only flags", c.flags.Arg(0))
	}
	ignored, err := checkVLLMFlags(c.flags)
	if err != nil {
		return c.usageError("%v", err)
	}
	server, err := f.options(c.flags, &o)
	if err == nil {
		err = o.Validate()
	}
	if err != nil {
		return c.usageError("%v", err)
	}
	if notice := vllmbench.IgnoredNotice(ignored); notice != "" {
		fmt.Fprintf(stderr, "llmrun bench: %s\n", notice)
	}
	datasetPath := ""
	if o.DatasetPath != "" {
		if datasetPath, err = filepath.Abs(o.DatasetPath); err != nil {
			return c.usageError("--dataset-path: %v", err)
		}
	}
	// As in vLLM, --save-detailed without --save-result saves nothing:
	// the texts are then not kept at all.
	o.SaveDetailed = o.SaveDetailed && (f.saveResult || f.appendResult)
	source, err := vllmbench.Script(o, datasetPath)
	if err != nil {
		return c.usageError("%v", err)
	}
	sent := o.Model
	if o.ServedModelName != "" {
		sent = o.ServedModelName
	}
	llmCfg, err := llmconfig.Resolve(ctx, llmconfig.Settings{BaseURL: server, APIKeyEnv: f.apiKeyEnv, Model: sent, Timeout: f.timeout,
		IdleTimeout: llm.DefaultIdleTimeout, Tokenizer: f.tokenizer}, getenv)
	if err != nil {
		if code := llmConfigCode(ctx, err); code != exitcode.Usage {
			fmt.Fprintf(stderr, "llmrun bench: %v\n", err)
			return code
		}
		return c.usageError("%v", err)
	}
	if llmCfg.Headers, err = parseHeaders(f.headers); err != nil {
		return c.usageError("%v", err)
	}
	llmCfg.TLS.InsecureSkipVerify = f.insecure
	if f.readyCheckTimeoutSec > 0 && llmCfg.BaseURL != "" {
		if code, ok := waitReady(ctx, llmCfg, o, time.Duration(f.readyCheckTimeoutSec)*time.Second, stderr); !ok {
			return code
		}
	}
	if f.saveResult || f.appendResult {
		if f.resultDir != "" {
			if err := os.MkdirAll(f.resultDir, 0o755); err != nil {
				return c.usageError("--result-dir: %v", output.WithoutPath(err))
			}
		}
		// A result that cannot be written there, or that another output
		// writes, fails now, as --summary-export's does, not after the
		// whole benchmark.
		if err := output.SamePaths(append(runner.FilesWritten(f.summaryExport, f.outs),
			output.FileFlag{Flag: "--save-result", Path: resultPath(o, f.resultDir, f.resultFilename)})); err != nil {
			return c.usageError("%v", err)
		}
		if err := checkResultPath(o, f.resultDir, f.resultFilename); err != nil {
			fmt.Fprintf(stderr, "llmrun bench: --save-result %v; no load was sent\n", err)
			return exitcode.Error
		}
	}
	screen := console.NewScreen(stderr)
	engineCfg := engine.Config{ScriptPath: "llmrun-bench.js", Source: source, LLM: llmCfg, Seed: f.seed,
		Env: map[string]string{}, Logger: console.Logger(screen), InitTimeout: engine.DefaultInitTimeout}
	engineCfg.Modules = runner.StandardModules(engineCfg)
	if dm, ok := engineCfg.Modules.Lookup("data"); ok {
		if err := vllmbench.PreloadDataset(ctx, dm.(*data.Module), o, datasetPath); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "llmrun bench: %v; no load was sent\n", err)
				return exitcode.Interrupted
			}
			return c.usageError("%v", err)
		}
	}
	collector := vllmbench.NewCollector(o)
	var texts *vllmbench.TextSpill
	if o.SaveDetailed {
		// Each answer's text goes to a file beside the result as the
		// request ends, not into memory until the end.
		if texts, err = vllmbench.NewTextSpill(filepath.Dir(resultPath(o, f.resultDir, f.resultFilename))); err != nil {
			fmt.Fprintf(stderr, "llmrun bench: %v; no load was sent\n", err)
			return exitcode.Error
		}
		defer texts.Close()
		collector.SpillTexts(texts)
	}
	if err := engineCfg.Modules.Register(vllmbench.ModuleName, collector); err != nil {
		fmt.Fprintf(stderr, "llmrun bench: %v\n", err)
		return exitcode.Error
	}
	if err := o.PrintTraffic(stdout); err != nil {
		return exitcode.Error
	}
	outcome := runner.Run(ctx, runner.Config{
		Engine: engineCfg, TestID: "bench", Goodput: o.Goodput, Outputs: f.outs, SummaryExport: f.summaryExport,
		Getenv: getenv, NoPreflight: f.noPreflight, Stdout: stdout, Stderr: screen, Quiet: f.quiet,
		Color: useColor(f.noColor, stdout, getenv), Version: version(), Command: "llmrun bench",
	})
	code := outcome.ExitCode()
	if outcome.Summary == nil {
		return code
	}
	model := o.Model
	if model == "" && len(outcome.Summary.Meta.Models) > 0 {
		model = outcome.Summary.Meta.Models[0]
	}
	date := time.Now()
	result := vllmbench.NewResult(o, vllmbench.Run{Summary: outcome.Summary, Requests: collector.Requests(), ModelID: model,
		Date: date, Tokenizer: f.tokenizer, Texts: texts})
	fmt.Fprintln(stdout)
	if err := result.Print(stdout); err != nil {
		return exitcode.Error
	}
	if f.saveResult || f.appendResult {
		path := vllmbench.FileName(o, model, date, f.resultDir, f.resultFilename)
		err := saveResult(path, result, f.appendResult)
		if err != nil {
			fmt.Fprintf(stderr, "llmrun bench: --save-result %s: %v\n", path, err)
			outcome.Lost = true
			return outcome.ExitCode()
		}
		fmt.Fprintf(stderr, "llmrun bench: result saved to %s\n", path)
	}
	return code
}

// options completes o from the flags that need parsing, and returns the
// server's base URL for llm.Config ("" for the environment's or the
// simulator).
func (f *benchFlags) options(fs *pflag.FlagSet, o *vllmbench.Options) (string, error) {
	var err error
	if f.requestRate == "inf" {
		o.RequestRate = math.Inf(1)
	} else if o.RequestRate, err = strconv.ParseFloat(f.requestRate, 64); err != nil || math.IsInf(o.RequestRate, 0) || math.IsNaN(o.RequestRate) {
		return "", fmt.Errorf("--request-rate %q: want a number of requests per second, or inf", f.requestRate)
	}
	if len(f.goodput) > 0 {
		if o.Goodput, err = runner.ParseGoodput(strings.Join(f.goodput, " ")); err != nil {
			return "", fmt.Errorf("--goodput: %w", err)
		}
	}
	if o.Metadata, err = vllmbench.ParseMetadata(f.metadata); err != nil {
		return "", err
	}
	o.PercentileMetrics = vllmbench.ParseList(f.percentileMetrics)
	if o.MetricPercentiles, err = vllmbench.ParsePercentiles(f.metricPercentiles); err != nil {
		return "", fmt.Errorf("--metric-percentiles: %w", err)
	}
	o.Sampling = f.sampling.given(fs)
	if f.extraBody != "" {
		if err := json.Unmarshal([]byte(f.extraBody), &o.ExtraBody); err != nil || o.ExtraBody == nil {
			return "", fmt.Errorf("--extra-body %q: want a JSON object, e.g. '{\"top_k\": 20}'", f.extraBody)
		}
	}
	if fs.Changed("logprobs") {
		o.Logprobs = &f.logprobs
	}
	if f.readyCheckTimeoutSec < 0 {
		return "", fmt.Errorf("--ready-check-timeout-sec must not be negative, got %d", f.readyCheckTimeoutSec)
	}
	if fs.Changed("max-concurrency") && o.MaxConcurrency <= 0 {
		return "", fmt.Errorf("--max-concurrency must be greater than 0, got %d", o.MaxConcurrency)
	}
	o.DatasetPath, o.Tokenizer, o.Seed = f.datasetPath, f.tokenizer, f.seed
	// vLLM's shorthand lengths, 0 for "not given": a negative one is an
	// error, not the default.
	for _, l := range []struct {
		flag string
		n    int
	}{{"input-len", f.inputLen}, {"output-len", f.outputLen}, {"sharegpt-output-len", f.sharegptOutputLen}, {"custom-output-len", f.customOutputLen}} {
		if l.n < 0 {
			return "", fmt.Errorf("--%s must not be negative, got %d", l.flag, l.n)
		}
	}
	if f.inputLen > 0 {
		o.RandomInputLen = f.inputLen
	}
	if f.outputLen > 0 {
		o.RandomOutputLen, o.OutputLen, o.PrefixRepetition.OutputLen = f.outputLen, f.outputLen, f.outputLen
	}
	if o.DatasetName == "sharegpt" && f.sharegptOutputLen > 0 {
		o.OutputLen = f.sharegptOutputLen
	}
	if o.DatasetName == "custom" && f.customOutputLen > 0 {
		o.OutputLen = f.customOutputLen
	}
	switch {
	case f.baseURL != "":
		return o.BaseURL(f.baseURL), nil
	case fs.Changed("host") || fs.Changed("port"):
		return o.BaseURL(fmt.Sprintf("http://%s:%d", f.host, f.port)), nil
	}
	return "", nil
}

// parseHeaders parses --header's KEY=VALUE pairs as vLLM does: the first
// = splits them, key and value trimmed.
func parseHeaders(items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, item := range items {
		k, v, ok := strings.Cut(item, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--header %q: invalid header format; please use KEY=VALUE format", item)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// waitReady is --ready-check-timeout-sec: it waits for the server of cfg
// to answer a request of o's API, telling each failure on stderr; false
// with the exit code when it did not in time.
func waitReady(ctx context.Context, cfg llm.Config, o vllmbench.Options, timeout time.Duration, stderr io.Writer) (int, bool) {
	cfg.API = o.API()
	client, err := llm.NewClient(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun bench: --ready-check-timeout-sec: %v\n", err)
		return exitcode.Usage, false
	}
	defer client.CloseIdleConnections()
	fmt.Fprintf(stderr, "llmrun bench: waiting up to %s for the endpoint to become ready\n", timeout)
	_, err = vllmbench.WaitReady(ctx, client.Probe, timeout, vllmbench.ReadyRetryInterval, func(p llm.Probe) {
		fmt.Fprintf(stderr, "llmrun bench: the endpoint is not ready: %s\n", p.Error)
	})
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "llmrun bench: interrupted while waiting for the endpoint\n")
		return exitcode.Interrupted, false
	case err != nil:
		fmt.Fprintf(stderr, "llmrun bench: --ready-check-timeout-sec %d: %v; no load was sent\n", int(timeout.Seconds()), err)
		return exitcode.Preflight, false
	}
	return 0, true
}

// checkResultPath checks, before the run, that the result file can be
// written where it is to be (resultPath), as output.CheckPath checks
// --summary-export's.
func checkResultPath(o vllmbench.Options, dir, filename string) error {
	path := resultPath(o, dir, filename)
	if err := output.CheckPath(path); err != nil {
		return fmt.Errorf("%s: cannot write there: %w", path, err)
	}
	return nil
}

// resultPath is the result file's path before the run: without
// --result-filename, a name of the same directory stands for the one the
// model and the date will give.
func resultPath(o vllmbench.Options, dir, filename string) string {
	return vllmbench.FileName(o, "model", time.Now(), dir, filename)
}

// saveResult writes result to path as vLLM's json.dump does (its
// separators, no newline after), or with appending adds it to the file's
// end, after a newline when the file is not empty (vLLM's
// --append-result).
func saveResult(path string, result *vllmbench.Result, appending bool) error {
	if !appending {
		return output.WriteFile(path, result.WriteJSON)
	}
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if st, serr := file.Stat(); serr == nil && st.Size() > 0 {
		_, err = file.WriteString("\n")
	}
	if err == nil {
		err = result.WriteJSON(file)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}
