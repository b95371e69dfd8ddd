package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/kube"
	"github.com/llmrun/llmrun/runtime/kube/kuberun"
	"github.com/llmrun/llmrun/runtime/runflags"
	"github.com/llmrun/llmrun/runtime/runner"
)

func kubeCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	const cmd = "llmrun kube"
	sc := newSubcommand(cmd, kubeUsage, stdout, stderr)
	fs, usageError := sc.flags, sc.usageError
	fs.SetInterspersed(true)
	f := runflags.Flags{SendsNothing: true}
	f.Register(fs)
	var k kuberun.Flags
	kubeOnly := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	k.Register(kubeOnly)
	fs.AddFlagSet(kubeOnly)
	a, code, ok := runflags.Parse(ctx, cmd, fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	c, err := k.Config(fs, f, a.Script)
	if err != nil {
		return usageError("%v", err)
	}
	if f.BaseURL == "" {
		// $LLMRUN_BASE_URL and $OPENAI_BASE_URL do not reach the pods.
		fmt.Fprintf(stderr, "%s: no --base-url: each pod benchmarks the built-in simulator it starts\n", cmd)
	}
	for _, warning := range kuberun.RunOf(f).Warnings() {
		fmt.Fprintf(stderr, "%s: %s\n", cmd, warning)
	}
	engineCfg := a.EngineConfig(stderr)
	var read kuberun.FilesRead
	engineCfg.FileRead = read.Add
	e, _, err := runner.Load(ctx, engineCfg, a.SLO)
	if err != nil {
		return runner.ReportLoadError(stderr, cmd, a.Script, err).ExitCode()
	}
	placed, err := kuberun.Place(ctx, kuberun.Script{Path: a.Script, Stock: a.Source != nil, Engine: engineCfg, Loaded: e, Read: read.List(),
		Files: k.Files, Tokenizer: f.Tokenizer})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitcode.Error
	}
	if a.SeedDrawn {
		fmt.Fprintf(stderr, "%s: no --seed given: the instances all use --seed %d, written into the manifests\n", cmd, f.Seed)
	}
	if k.Secret == "" && (f.BaseURL != "" || kuberun.RunOf(f).HasOut("influxdb")) {
		fmt.Fprintf(stderr, "%s: no --secret: the pods get no API key and no InfluxDB token\n", cmd)
	}
	c.Files, c.WorkDir, c.Args = placed.Layout.Files, placed.Layout.WorkDir, kuberun.PodArgs(fs, kubeOnly, f, a.SeedDrawn, placed.Script, placed.InPod)
	c.Resources = k.Resources(kube.Size((e.MaxVUs() + k.Instances - 1) / k.Instances))
	switch plan := e.MaxDuration(); {
	case !fs.Changed("active-deadline"):
		c.ActiveDeadline = kube.DefaultActiveDeadline(k.RendezvousTimeout + e.MaxRunTime())
	case c.ActiveDeadline < plan:
		fmt.Fprintf(stderr, "%s: --active-deadline %v may stop the pods before the run ends: its scenarios alone may take up to %v, graceful stops included (llmrun inspect shows them); without the flag the deadline allows for the whole run\n",
			cmd, c.ActiveDeadline, plan)
	}
	if err := kube.Write(stdout, c); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitcode.Error
	}
	return exitcode.OK
}
