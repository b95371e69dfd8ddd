package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/vllmbench"
)

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
	llmCfg, err := b.Target(ctx, f.apiKeyEnv, f.timeout, getenv)
	if err != nil {
		if code := llmconfig.ExitCode(ctx, err); code != exitcode.Usage {
			fmt.Fprintf(stderr, "llmrun bench: %v\n", err)
			return code
		}
		return c.usageError("%v", err)
	}
	screen := console.NewScreen(stderr)
	cfg := runner.Config{Outputs: f.outs, SummaryExport: f.summaryExport,
		Getenv: getenv, NoPreflight: f.noPreflight, Stdout: stdout, Stderr: screen, Quiet: f.quiet,
		Color: useColor(f.noColor, stdout, getenv), Version: version(), Command: "llmrun bench",
	}
	cfg.Engine.LLM, cfg.Engine.Logger = llmCfg, console.Logger(screen)
	outcome, err := b.Run(ctx, cfg)
	if err != nil {
		return c.usageError("%v", err)
	}
	return outcome.ExitCode()
}
