package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/llmconfig"
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

// benchFlags are llmrun's own flags of llmrun bench, beside vLLM's
// (vllmbench.AddFlags).
type benchFlags struct {
	apiKeyEnv, summaryExport    string
	timeout                     time.Duration
	outs                        []string
	quiet, noColor, noPreflight bool
}

func (f *benchFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (default OPENAI_API_KEY)")
	fs.DurationVar(&f.timeout, "timeout", 6*time.Hour, "total timeout of one request")
	fs.StringArrayVar(&f.outs, "out", nil, "also send results to NAME=VALUE, as llmrun run's --out (repeatable)")
	fs.StringVar(&f.summaryExport, "summary-export", "", "also write llmrun's result file")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no banner and no live view")
	fs.BoolVar(&f.noColor, "no-color", false, "no ANSI colours in the output")
	fs.BoolVar(&f.noPreflight, "no-preflight", false, "send no preflight request")
}

func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c := newSubcommand("llmrun bench", benchUsage, stdout, stderr)
	var f benchFlags
	f.register(c.flags)
	vllm := vllmbench.AddFlags(c.flags)
	if code, ok := c.parse(vllmbench.ExpandMultiValued(args)); !ok {
		return code
	}
	if c.flags.NArg() > 0 {
		return c.usageError("unexpected argument %q: llmrun bench takes only flags", c.flags.Arg(0))
	}
	b, err := vllm.Benchmark(c.flags)
	if err != nil {
		return c.usageError("%v", err)
	}
	if notice := vllmbench.IgnoredNotice(b.Ignored); notice != "" {
		fmt.Fprintf(stderr, "llmrun bench: %s\n", notice)
	}
	llmCfg, err := llmconfig.Resolve(ctx, llmconfig.Settings{BaseURL: b.Server, APIKeyEnv: f.apiKeyEnv, Model: b.Options.RequestModel(), Timeout: f.timeout,
		IdleTimeout: llm.DefaultIdleTimeout, Tokenizer: b.Options.Tokenizer}, getenv)
	if err != nil {
		if code := llmConfigCode(ctx, err); code != exitcode.Usage {
			fmt.Fprintf(stderr, "llmrun bench: %v\n", err)
			return code
		}
		return c.usageError("%v", err)
	}
	screen := console.NewScreen(stderr)
	outcome, err := b.Run(ctx, runner.Config{
		Engine: engine.Config{LLM: llmCfg, Logger: console.Logger(screen)}, Outputs: f.outs, SummaryExport: f.summaryExport,
		Getenv: getenv, NoPreflight: f.noPreflight, Stdout: stdout, Stderr: screen, Quiet: f.quiet,
		Color: useColor(f.noColor, stdout, getenv), Version: version(), Command: "llmrun bench",
	})
	if err != nil {
		return c.usageError("%v", err)
	}
	return outcome.ExitCode()
}
