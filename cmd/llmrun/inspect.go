package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/inspect"
	"github.com/llmrun/llmrun/runtime/runflags"
	"github.com/llmrun/llmrun/runtime/runner"
)

// runOnlyFlags are flags of run that change nothing inspect prints; they
// are accepted and hidden.
var runOnlyFlags = []string{"api-key-env", "timeout", "idle-timeout", "summary-export", "quiet", "no-color"}

func inspectCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("llmrun inspect", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SetInterspersed(true)
	f := runflags.Flags{SendsNothing: true}
	f.Register(fs)
	for _, name := range runOnlyFlags {
		if err := fs.MarkHidden(name); err != nil {
			panic(err) // a flag of run was renamed: update runOnlyFlags
		}
	}
	inst := runflags.Instances{InspectOnly: true}
	inst.Register(fs)
	if err := fs.MarkHidden("rendezvous-timeout"); err != nil {
		panic(err)
	}
	asJSON := fs.Bool("json", false, "print the resolved scenarios as JSON")
	fs.Usage = func() { printHelp(stdout, inspectUsage, fs) }
	a, code, ok := runflags.Parse(ctx, "llmrun inspect", fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	engineCfg := a.EngineConfig(stderr)
	// Nothing listens or connects: the flags only say which share.
	instance, err := inst.Config(fs, getenv, io.Discard)
	if err == nil {
		err = runner.SharePlan(&engineCfg, instance, a.SeedDrawn)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmrun inspect: %v\n", err)
		return exitcode.Usage
	}
	script := a.Script
	// Loaded as run loads it, options beside the scenarios checked.
	e, crit, err := runner.Load(ctx, engineCfg, a.SLO)
	if err != nil {
		return runner.ReportLoadError(stderr, "llmrun inspect", script, err).ExitCode()
	}
	in := inspect.Of(script, e)
	if in.Search, err = runner.SearchPlan(e, crit, a.Goodput); err != nil {
		return runner.ReportLoadError(stderr, "llmrun inspect", script, err).ExitCode()
	}
	if part := engineCfg.Overrides.Segment; !part.Whole() {
		in.ExecutionSegment = part.String()
	}
	if instance != nil {
		in.Instance, in.Instances = &instance.Instance, instance.Instances
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(in)
	} else {
		err = in.Render(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmrun inspect: %v\n", err)
		return exitcode.Error
	}
	return exitcode.OK
}
