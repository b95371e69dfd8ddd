package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/inspect"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/runner"
)

const inspectUsage = `Usage: llmrun inspect [flags] SCRIPT

Loads a scenario script as "llmrun run" would (compiles it, runs its init
code once, resolves its scenarios with -u, -d and -i applied) and prints the
scenarios: executor, exec function, start time, VUs, longest possible
duration, and for the whole test the VUs it may use and how long it may
last. No request is sent: llm.stream() cannot be called in init code.

inspect accepts every flag of "llmrun run", so a run's command line can be
checked by replacing "run" with "inspect"; the flags that only matter to a
run are not listed here. With --instances N --instance I (and --seed, as
run needs), or --execution-segment, it prints that instance's or
process's share of the plan; nothing listens at or connects to
--rendezvous, which may be left out.

Flags:
`

// runOnlyFlags are flags of run that change nothing inspect prints; they
// are accepted and hidden.
var runOnlyFlags = []string{"api-key-env", "timeout", "idle-timeout", "summary-export", "quiet", "no-color"}

func inspectCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("llmrun inspect", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SetInterspersed(true)
	f := runFlags{sendsNothing: true}
	f.register(fs)
	for _, name := range runOnlyFlags {
		if err := fs.MarkHidden(name); err != nil {
			panic(err) // a flag of run was renamed: update runOnlyFlags
		}
	}
	inst := instanceFlags{inspectOnly: true}
	inst.register(fs)
	if err := fs.MarkHidden("rendezvous-timeout"); err != nil {
		panic(err)
	}
	asJSON := fs.Bool("json", false, "print the resolved scenarios as JSON")
	fs.Usage = func() { printHelp(stdout, inspectUsage, fs) }
	a, code, ok := parseScriptArgs(ctx, "llmrun inspect", fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	engineCfg := a.engineConfig(fs, f, stderr)
	// Nothing listens or connects: the flags only say which share.
	instance, err := inst.config(fs, getenv, io.Discard)
	if err == nil {
		err = runner.SharePlan(&engineCfg, instance, a.seedDrawn)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmrun inspect: %v\n", err)
		return exitcode.Usage
	}
	script := a.script
	llmconfig.Placeholder(&engineCfg.LLM)
	// Loaded as run loads it, options beside the scenarios checked.
	e, _, err := runner.Load(ctx, engineCfg, a.slo)
	if err != nil {
		return runner.ReportLoadError(stderr, "llmrun inspect", script, err).ExitCode()
	}
	in := inspect.Of(script, e)
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
