package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/kube"
	"github.com/llmrun/llmrun/runtime/kube/kuberun"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/rendezvous"
	"github.com/llmrun/llmrun/runtime/runflags"
	"github.com/llmrun/llmrun/runtime/runner"
)

// kubeFlags are the flags of "llmrun kube" beside those of run.
type kubeFlags struct {
	instances         int
	image             string
	namespace         string
	name              string
	secret            string
	secretEnv         []string
	cpu               string
	memory            string
	files             []string
	clusterDomain     string
	rendezvousTimeout time.Duration
	activeDeadline    time.Duration
	ttlAfterFinished  time.Duration
}

func (k *kubeFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&k.instances, "instances", 0, fmt.Sprintf("number of instances, one pod each, at most %d (required)", rendezvous.MaxInstances))
	fs.StringVar(&k.image, "image", "", "the llmrun image the pods run, e.g. ghcr.io/me/llmrun:v1 (required; see the Dockerfile)")
	fs.StringVar(&k.namespace, "namespace", "", "namespace of the manifests (default: kubectl's current)")
	fs.StringVar(&k.name, "name", "", "name of the ConfigMap, Service and Job (default: llmrun- and the script's name)")
	fs.StringVar(&k.secret, "secret", "", "Secret the API key and the InfluxDB token come from, each from the key of its variable's name (default: none, and no secret in the pods)")
	fs.StringArrayVar(&k.secretEnv, "secret-env", nil, "also give the pods this variable from the Secret's key of the same name, by reference (needs --secret; repeatable)")
	fs.StringVar(&k.cpu, "cpu", "", "CPU of each pod, e.g. 2 or 1500m (default: sized from the plan)")
	fs.StringVar(&k.memory, "memory", "", "memory of each pod, e.g. 1Gi (default: sized from the plan)")
	fs.StringArrayVar(&k.files, "file", nil, "also put this file in the ConfigMap: one the script reads only after loading (the files it reads as it loads are found); repeatable")
	fs.StringVar(&k.clusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain, in instance 0's name")
	fs.DurationVar(&k.rendezvousTimeout, "rendezvous-timeout", rendezvous.DefaultTimeout, "how long the pods wait for each other (raise it when images take long to pull)")
	fs.DurationVar(&k.activeDeadline, "active-deadline", 0, "how long the Job may run before Kubernetes stops its pods, activeDeadlineSeconds (default: the longest the run can take, its rendezvous timeout, setup and teardown timeouts and scenarios with their graceful stops, plus "+kube.StartMargin.String()+")")
	fs.DurationVar(&k.ttlAfterFinished, "ttl-after-finished", kube.DefaultTTLAfterFinished, "how long Kubernetes keeps the finished Job and its pods, whose logs hold the results, before deleting them, ttlSecondsAfterFinished")
}

// resources are --cpu and --memory, or where not given, sized's.
func (k kubeFlags) resources(sized kube.Resources) kube.Resources {
	if k.cpu != "" {
		sized.CPU = k.cpu
	}
	if k.memory != "" {
		sized.Memory = k.memory
	}
	return sized
}

// kubeFlagPassed is the flag of kube's own (kubeFlags) that the pods are
// given too, when it is given: "llmrun run" has it.
const kubeFlagPassed = "rendezvous-timeout"

// refusedRunFlags are run's flags that make no sense in a pod of kube's:
// files written in a pod are lost with it, and kube gives each instance
// its part of the plan.
var refusedRunFlags = map[string]string{
	"summary-export":             "a file written in a pod is lost with it: the pods print their result files to their logs (--out json=-), or use --out influxdb",
	"execution-segment":          "each instance runs its own share of the plan",
	"execution-segment-sequence": "each instance runs its own share of the plan",
}

func kubeCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	const cmd = "llmrun kube"
	sc := newSubcommand(cmd, kubeUsage, stdout, stderr)
	fs, usageError := sc.flags, sc.usageError
	fs.SetInterspersed(true)
	f := runflags.Flags{SendsNothing: true}
	f.Register(fs)
	var k kubeFlags
	kubeOnly := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	k.register(kubeOnly)
	fs.AddFlagSet(kubeOnly)
	a, code, ok := runflags.Parse(ctx, cmd, fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	c, err := k.config(fs, f, a.Script)
	if err != nil {
		return usageError("%v", err)
	}
	if f.BaseURL == "" {
		// $LLMRUN_BASE_URL and $OPENAI_BASE_URL do not reach the pods.
		fmt.Fprintf(stderr, "%s: no --base-url: each pod benchmarks the built-in simulator it starts\n", cmd)
	}
	for _, warning := range kubeRun(f).Warnings() {
		fmt.Fprintf(stderr, "%s: %s\n", cmd, warning)
	}
	engineCfg := a.EngineConfig(stderr)
	llmconfig.Placeholder(&engineCfg.LLM)
	var read kuberun.FilesRead
	engineCfg.FileRead = read.Add
	e, _, err := runner.Load(ctx, engineCfg, a.SLO)
	if err != nil {
		return runner.ReportLoadError(stderr, cmd, a.Script, err).ExitCode()
	}
	placed, err := kuberun.Place(ctx, kuberun.Script{Path: a.Script, Stock: a.Source != nil, Engine: engineCfg, Loaded: e, Read: read.List(),
		Files: k.files, Tokenizer: f.Tokenizer})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitcode.Error
	}
	if a.SeedDrawn {
		fmt.Fprintf(stderr, "%s: no --seed given: the instances all use --seed %d, written into the manifests\n", cmd, f.Seed)
	}
	if k.secret == "" && (f.BaseURL != "" || kubeRun(f).HasOut("influxdb")) {
		fmt.Fprintf(stderr, "%s: no --secret: the pods get no API key and no InfluxDB token\n", cmd)
	}
	c.Files, c.WorkDir, c.Args = placed.Layout.Files, placed.Layout.WorkDir, podArgs(fs, kubeOnly, f, a.SeedDrawn, placed.Script, placed.InPod)
	c.Resources = k.resources(kube.Size((e.MaxVUs() + k.instances - 1) / k.instances))
	switch plan := e.MaxDuration(); {
	case !fs.Changed("active-deadline"):
		c.ActiveDeadline = kube.DefaultActiveDeadline(k.rendezvousTimeout + e.MaxRunTime())
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

// config checks kube's flags, and the run flags a pod cannot use or that
// would put a secret in the manifests, before the script is loaded; the
// files, the command line and the sizing follow from loading it.
func (k kubeFlags) config(fs *pflag.FlagSet, f runflags.Flags, script string) (kube.Config, error) {
	switch {
	case !fs.Changed("instances"):
		return kube.Config{}, errors.New("--instances N is required: the number of pods")
	case k.instances < 1:
		return kube.Config{}, fmt.Errorf("--instances %d: at least 1", k.instances)
	case k.instances > rendezvous.MaxInstances:
		return kube.Config{}, fmt.Errorf("--instances %d: at most %d, the most instances a run has (docs/limits.md)", k.instances, rendezvous.MaxInstances)
	case k.image == "":
		return kube.Config{}, errors.New("--image is required: the llmrun image the pods run (built from the Dockerfile)")
	case k.rendezvousTimeout <= 0:
		return kube.Config{}, fmt.Errorf("--rendezvous-timeout must be positive, got %v", k.rendezvousTimeout)
	}
	for name, why := range refusedRunFlags {
		if fs.Changed(name) {
			return kube.Config{}, fmt.Errorf("--%s: not with kube: %s", name, why)
		}
	}
	for _, word := range []struct{ flag, value string }{{"--image", k.image}, {"--cluster-domain", k.clusterDomain}} {
		if err := kube.CheckWord(word.flag, word.value); err != nil {
			return kube.Config{}, err
		}
	}
	secretEnv, err := kubeRun(f).SecretEnv(k.secret, k.secretEnv)
	if err != nil {
		return kube.Config{}, err
	}
	c := kube.Config{
		Name: cmp.Or(k.name, kuberun.DefaultName(script)), Namespace: k.namespace, Image: k.image, Instances: k.instances, ClusterDomain: k.clusterDomain,
		Secret: k.secret, SecretEnv: secretEnv, Resources: k.resources(kube.Size(0)),
		ActiveDeadline: k.activeDeadline, TTLAfterFinished: k.ttlAfterFinished,
	}
	if !fs.Changed("active-deadline") {
		// Until the script is loaded: the deadline of a run that takes no
		// time once its pods have met.
		c.ActiveDeadline = kube.DefaultActiveDeadline(k.rendezvousTimeout)
	}
	return c, c.Check()
}

// kubeRun is the run each pod runs, as the flags give it.
func kubeRun(f runflags.Flags) kuberun.Run {
	return kuberun.Run{BaseURL: f.BaseURL, APIKeyEnv: f.APIKeyEnv, Outs: f.Outs, Env: f.Env, Tags: f.Tags,
		ServerMetrics: f.ServerMetrics, GPUMetrics: f.GPUMetrics}
}

// podArgs is the command line of llmrun in the pods: run with the flags
// of fs given but kubeOnly's (kubeFlagPassed apart), each flag in inPod
// with its value there (a file where the pods have it), the seed,
// --out json=- and the script where the pods have it.
func podArgs(fs, kubeOnly *pflag.FlagSet, f runflags.Flags, seedDrawn bool, script string, inPod map[string]string) []string {
	args := []string{"run"}
	fs.Visit(func(fl *pflag.Flag) {
		if kubeOnly.Lookup(fl.Name) != nil && fl.Name != kubeFlagPassed {
			return
		}
		if s, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range s.GetSlice() {
				args = append(args, "--"+fl.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+fl.Name+"="+cmp.Or(inPod[fl.Name], fl.Value.String()))
	})
	if seedDrawn {
		args = append(args, fmt.Sprintf("--seed=%d", f.Seed))
	}
	return append(args, "--out=json="+runner.StdoutResult, script)
}
