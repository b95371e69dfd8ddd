package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/runflags"
	"github.com/llmrun/llmrun/runtime/runner"
)

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("llmrun run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SetInterspersed(true)
	var f runflags.Flags
	f.Register(fs)
	var inst runflags.Instances
	inst.Register(fs)
	var dash runflags.Dashboard
	dash.Register(fs)
	fs.Usage = func() { printHelp(stdout, fmt.Sprintf(runUsage, runflags.StockList()), fs) }
	a, code, ok := runflags.Parse(ctx, "llmrun run", fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	screen := console.NewScreen(stderr)
	cfg, err := a.RunConfig(inst, getenv, stdout, stderr, screen)
	if err == nil {
		cfg.Dashboard, err = dash.Config(fs, getenv)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmrun run: %v\n", err)
		return exitcode.Usage
	}
	cfg.Color, cfg.Version = useColor(f.NoColor, stdout, getenv), version()
	return runner.Run(ctx, cfg).ExitCode()
}
