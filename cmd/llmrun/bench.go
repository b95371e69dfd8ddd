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

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
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

The server is --base-url (as vLLM's: no /v1; --endpoint is appended), else
--host and --port, else $LLMRUN_BASE_URL or $OPENAI_BASE_URL, else the
built-in simulator. --out and --summary-export work as in "llmrun run".

  llmrun bench --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
    --dataset-name random --random-input-len 1024 --random-output-len 128 \
    --num-prompts 300 --request-rate 20 --burstiness 0.5 --max-concurrency 64 \
    --goodput ttft:500 tpot:50 --save-result --result-dir results

Flags:
`

// benchFlags are llmrun bench's flags beside vllmbench.Options.
type benchFlags struct {
	baseURL, host, apiKeyEnv, requestRate, percentileMetrics, metricPercentiles string
	datasetPath, tokenizer, resultDir, resultFilename, summaryExport            string
	inputLen, outputLen, sharegptOutputLen, customOutputLen, port               int
	temperature                                                                 float64
	seed                                                                        int64
	timeout                                                                     time.Duration
	goodput, metadata, outs                                                     []string
	saveResult, quiet, noColor, noPreflight                                     bool
}

func (f *benchFlags) register(fs *pflag.FlagSet, o *vllmbench.Options) {
	fs.StringVar(&o.Backend, "backend", o.Backend, "openai or vllm (the completions API), or openai-chat")
	fs.StringVar(&o.Endpoint, "endpoint", o.Endpoint, "API endpoint, appended to --base-url")
	fs.StringVar(&o.Label, "label", "", "prefix of the result file's name (default --backend)")
	fs.StringVar(&f.baseURL, "base-url", "", "server URL without the endpoint, e.g. http://127.0.0.1:8000")
	fs.StringVar(&f.host, "host", "127.0.0.1", "server host, without --base-url")
	fs.IntVar(&f.port, "port", 8000, "server port, without --base-url")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (default OPENAI_API_KEY)")
	fs.StringVar(&o.Model, "model", "", "model (default the first model the server lists)")
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
	fs.Float64Var(&f.temperature, "temperature", 0, "temperature of the requests (default none sent)")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the lengths, prompts and arrivals (and of the simulator)")
	fs.BoolVar(&f.saveResult, "save-result", false, "write vLLM's JSON result")
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
}

// multiValued are the flags that take several values, as vLLM's nargs:
// --goodput ttft:500 tpot:50.
var multiValued = map[string]bool{"--goodput": true, "--metadata": true}

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
	server, err := f.options(c.flags, &o)
	if err == nil {
		err = o.Validate()
	}
	if err != nil {
		return c.usageError("%v", err)
	}
	datasetPath := ""
	if o.DatasetPath != "" {
		if datasetPath, err = filepath.Abs(o.DatasetPath); err != nil {
			return c.usageError("--dataset-path: %v", err)
		}
	}
	source, err := vllmbench.Script(o, datasetPath)
	if err != nil {
		return c.usageError("%v", err)
	}
	llmCfg, err := llmConfig(ctx, runFlags{baseURL: server, apiKeyEnv: f.apiKeyEnv, model: o.Model, timeout: f.timeout,
		idleTimeout: llm.DefaultIdleTimeout, tokenizer: f.tokenizer}, getenv)
	if err != nil {
		if code := llmConfigCode(ctx, err); code != exitUsage {
			fmt.Fprintf(stderr, "llmrun bench: %v\n", err)
			return code
		}
		return c.usageError("%v", err)
	}
	if f.saveResult && f.resultDir != "" {
		if err := os.MkdirAll(f.resultDir, 0o755); err != nil {
			return c.usageError("--result-dir: %v", output.WithoutPath(err))
		}
	}
	screen := console.NewScreen(stderr)
	engineCfg := engine.Config{ScriptPath: "llmrun-bench.js", Source: source, LLM: llmCfg, Seed: f.seed,
		Env: map[string]string{}, Logger: consoleLogger(screen)}
	engineCfg.Modules = runner.StandardModules(engineCfg)
	collector := &vllmbench.Collector{}
	if err := engineCfg.Modules.Register(vllmbench.ModuleName, collector); err != nil {
		fmt.Fprintf(stderr, "llmrun bench: %v\n", err)
		return exitError
	}
	if err := o.PrintTraffic(stdout); err != nil {
		return exitError
	}
	outcome := runner.Run(ctx, runner.Config{
		Engine: engineCfg, TestID: "bench", Goodput: o.Goodput, Outputs: f.outs, SummaryExport: f.summaryExport,
		Getenv: getenv, NoPreflight: f.noPreflight, Stdout: stdout, Stderr: screen, Quiet: f.quiet,
		Color: useColor(f.noColor, stdout, getenv), Version: version(), Command: "llmrun bench",
	})
	code := outcomeCode(outcome)
	if outcome.Summary == nil {
		return code
	}
	model := o.Model
	if model == "" && len(outcome.Summary.Meta.Models) > 0 {
		model = outcome.Summary.Meta.Models[0]
	}
	date := time.Now()
	result := vllmbench.NewResult(o, vllmbench.Run{Summary: outcome.Summary, Requests: collector.Requests(), ModelID: model,
		Date: date, Tokenizer: f.tokenizer})
	fmt.Fprintln(stdout)
	if err := result.Print(stdout); err != nil {
		return exitError
	}
	if f.saveResult {
		path := vllmbench.FileName(o, model, date, f.resultDir, f.resultFilename)
		err := output.WriteFile(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(result) })
		if err != nil {
			fmt.Fprintf(stderr, "llmrun bench: --save-result %s: %v\n", path, err)
			return exitCode(code, afterRun{lost: true})
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
	if fs.Changed("temperature") {
		o.Temperature = &f.temperature
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
