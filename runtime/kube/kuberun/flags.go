package kuberun

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/kube"
	"github.com/llmrun/llmrun/runtime/rendezvous"
	"github.com/llmrun/llmrun/runtime/runflags"
	"github.com/llmrun/llmrun/runtime/runner"
)

// Flags are the flags of "llmrun kube" beside those of run.
type Flags struct {
	Instances         int
	Image             string
	Namespace         string
	Name              string
	Secret            string
	SecretEnv         []string
	CPU               string
	Memory            string
	Files             []string
	ClusterDomain     string
	RendezvousTimeout time.Duration
	ActiveDeadline    time.Duration
	TTLAfterFinished  time.Duration
}

// Register adds the flags to fs.
func (k *Flags) Register(fs *pflag.FlagSet) {
	fs.IntVar(&k.Instances, "instances", 0, fmt.Sprintf("number of instances, one pod each, at most %d (required)", rendezvous.MaxInstances))
	fs.StringVar(&k.Image, "image", "", "the llmrun image the pods run, e.g. ghcr.io/me/llmrun:v1 (required; see the Dockerfile)")
	fs.StringVar(&k.Namespace, "namespace", "", "namespace of the manifests (default: kubectl's current)")
	fs.StringVar(&k.Name, "name", "", "name of the ConfigMap, Service and Job (default: llmrun- and the script's name)")
	fs.StringVar(&k.Secret, "secret", "", "Secret the API key and the InfluxDB token come from, each from the key of its variable's name (default: none, and no secret in the pods)")
	fs.StringArrayVar(&k.SecretEnv, "secret-env", nil, "also give the pods this variable from the Secret's key of the same name, by reference (needs --secret; repeatable)")
	fs.StringVar(&k.CPU, "cpu", "", "CPU of each pod, e.g. 2 or 1500m (default: sized from the plan)")
	fs.StringVar(&k.Memory, "memory", "", "memory of each pod, e.g. 1Gi (default: sized from the plan)")
	fs.StringArrayVar(&k.Files, "file", nil, "also put this file in the ConfigMap: one the script reads only after loading (the files it reads as it loads are found); repeatable")
	fs.StringVar(&k.ClusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain, in instance 0's name")
	fs.DurationVar(&k.RendezvousTimeout, "rendezvous-timeout", rendezvous.DefaultTimeout, "how long the pods wait for each other (raise it when images take long to pull)")
	fs.DurationVar(&k.ActiveDeadline, "active-deadline", 0, "how long the Job may run before Kubernetes stops its pods, activeDeadlineSeconds (default: the longest the run can take, its rendezvous timeout, setup and teardown timeouts and scenarios with their graceful stops, plus "+kube.StartMargin.String()+")")
	fs.DurationVar(&k.TTLAfterFinished, "ttl-after-finished", kube.DefaultTTLAfterFinished, "how long Kubernetes keeps the finished Job and its pods, whose logs hold the results, before deleting them, ttlSecondsAfterFinished")
}

// Resources are --cpu and --memory, or where not given, sized's.
func (k Flags) Resources(sized kube.Resources) kube.Resources {
	if k.CPU != "" {
		sized.CPU = k.CPU
	}
	if k.Memory != "" {
		sized.Memory = k.Memory
	}
	return sized
}

// kubeFlagPassed is the flag of kube's own (Flags) that the pods are
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

// Config checks kube's flags, and the run flags a pod cannot use or that
// would put a secret in the manifests, before the script is loaded; the
// files, the command line and the sizing follow from loading it.
func (k Flags) Config(fs *pflag.FlagSet, f runflags.Flags, script string) (kube.Config, error) {
	switch {
	case !fs.Changed("instances"):
		return kube.Config{}, errors.New("--instances N is required: the number of pods")
	case k.Instances < 1:
		return kube.Config{}, fmt.Errorf("--instances %d: at least 1", k.Instances)
	case k.Instances > rendezvous.MaxInstances:
		return kube.Config{}, fmt.Errorf("--instances %d: at most %d, the most instances a run has (docs/limits.md)", k.Instances, rendezvous.MaxInstances)
	case k.Image == "":
		return kube.Config{}, errors.New("--image is required: the llmrun image the pods run (built from the Dockerfile)")
	case k.RendezvousTimeout <= 0:
		return kube.Config{}, fmt.Errorf("--rendezvous-timeout must be positive, got %v", k.RendezvousTimeout)
	}
	for _, name := range slices.Sorted(maps.Keys(refusedRunFlags)) {
		if fs.Changed(name) {
			return kube.Config{}, fmt.Errorf("--%s: not with kube: %s", name, refusedRunFlags[name])
		}
	}
	for _, word := range []struct{ flag, value string }{{"--image", k.Image}, {"--cluster-domain", k.ClusterDomain}} {
		if err := kube.CheckWord(word.flag, word.value); err != nil {
			return kube.Config{}, err
		}
	}
	secretEnv, err := RunOf(f).SecretEnv(k.Secret, k.SecretEnv)
	if err != nil {
		return kube.Config{}, err
	}
	c := kube.Config{
		Name: cmp.Or(k.Name, DefaultName(script)), Namespace: k.Namespace, Image: k.Image, Instances: k.Instances, ClusterDomain: k.ClusterDomain,
		Secret: k.Secret, SecretEnv: secretEnv, Resources: k.Resources(kube.Size(0)),
		ActiveDeadline: k.ActiveDeadline, TTLAfterFinished: k.TTLAfterFinished,
	}
	if !fs.Changed("active-deadline") {
		// Until the script is loaded: the deadline of a run that takes no
		// time once its pods have met.
		c.ActiveDeadline = kube.DefaultActiveDeadline(k.RendezvousTimeout)
	}
	return c, c.Check()
}

// RunOf is the run each pod runs, as the flags give it.
func RunOf(f runflags.Flags) Run {
	return Run{BaseURL: f.BaseURL, APIKeyEnv: f.APIKeyEnv, Outs: f.Outs, Env: f.Env, Tags: f.Tags,
		ServerMetrics: f.ServerMetrics, GPUMetrics: f.GPUMetrics}
}

// PodArgs is the command line of llmrun in the pods: run with the flags
// of fs given but kubeOnly's (kubeFlagPassed apart), each flag in inPod
// with its value there (a file where the pods have it), the seed,
// --out json=- and the script where the pods have it.
func PodArgs(fs, kubeOnly *pflag.FlagSet, f runflags.Flags, seedDrawn bool, script string, inPod map[string]string) []string {
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
