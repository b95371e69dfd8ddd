package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/kube"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/rendezvous"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/scripts"
)

const kubeUsage = `Usage: llmrun kube SCRIPT --instances N --image IMAGE [flags] [run flags]

Writes to standard output the Kubernetes manifests that run SCRIPT as one
run of N instances (docs/distributed.md, "On Kubernetes"):

  - a ConfigMap with the script, the files it imports, the files it reads
    as it loads (open(), datasets, configuration and tokenizer files) and
    every file given with --file, mounted in each pod where the command
    line and the script find them;
  - a headless Service through which the instances reach instance 0's
    rendezvous (port 7000);
  - an Indexed Job of N pods (completions = parallelism = N, no retries),
    each running "llmrun run" with the run flags given here, its share of
    the plan, and --out json=-, which prints its result file to its log.

Apply them, wait for the Job, and merge the pods' logs:

  llmrun kube chat.js --instances 4 --image REGISTRY/llmrun:TAG --base-url http://vllm:8000 --secret llmrun-keys > chat.yaml
  kubectl apply -f chat.yaml
  kubectl wait --for=condition=complete job/llmrun-chat --timeout=1h
  kubectl logs -l job-name=llmrun-chat --tail=-1 --prefix --max-log-requests 4 | llmrun merge - -o all.json

The script is loaded here, as "llmrun inspect" loads it, to find the files
it reads, size the pods and check that it loads from the ConfigMap's files
alone; --file adds a file it reads only later (in setup() or an
iteration). A file outside the script's tree (the current directory when
it holds the script, else the script's directory; links followed), or
under /proc, /sys or /dev, is refused. The pods see
none of this shell's environment: give --base-url and --model as flags.
API keys reach them only from the Secret named by --secret, by reference:
the key named by --api-key-env (default OPENAI_API_KEY) and, with --out
influxdb, LLMRUN_INFLUXDB_TOKEN, each from the Secret's key of the same
name, which must exist (an empty one for a server that needs none): a
pod without it does not start (CreateContainerConfigError). Without
--secret the pods get no secret at all; --secret-env NAME gives them
another variable from the Secret's key NAME. A flag that would put a
secret in the manifests (a password or token in a URL's user, query or
fragment, -e or --tag with a name like API_KEY, TOKEN, PAT, BEARER,
COOKIE or SESSION) is refused. A URL naming the loopback (127.0.0.1,
localhost) gets a warning: in a pod, that is the pod.

The server's metrics and its GPUs' telemetry are read by instance 0's pod
alone: --server-metrics URL and --gpu-metrics URL (a DCGM exporter, e.g.
http://HOST:9400/metrics) are passed to the pods as given, checked as
--base-url is; --gpu-metrics nvidia-smi gets a warning: a pod runs it on
its own node.

The pods pass Pod Security "restricted" (seccomp RuntimeDefault, non-root,
no privilege escalation, no capabilities, a read-only root with emptyDir
volumes for HOME and TMPDIR), spread over the nodes where they can, and
the Job is stopped at --active-deadline and deleted, with its pods' logs,
--ttl-after-finished after it finished.

Each pod requests 250m + 2 × S × 50 / 45,000 CPUs and 128 MiB + 200 KiB
× S of memory, S its share of the plan's VUs; --cpu and --memory say
otherwise. The memory is also its limit (GOMEMLIMIT 90 % of it); the CPU
is not limited, lest a throttled pod count its pauses as latency.
Without --seed one is drawn, said on stderr and written into the
manifests: every instance must use the same.

Exit codes: 0 written, 1 a file could not be read, is refused or is too
large for a ConfigMap, 2 bad command line, 104 invalid options, 107 the script failed
to load.

Examples:
  llmrun kube chat.js --instances 8 --image ghcr.io/me/llmrun:v1 --base-url http://vllm.serving:8000 --secret llmrun-keys
  llmrun kube sweep.js --instances 4 --image me/llmrun:v1 --file later.jsonl --out influxdb=http://influxdb:8086?bucket=llmrun --secret llmrun-keys

Flags (and every flag of "llmrun run", except those that write files):
`

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
	f := runFlags{sendsNothing: true}
	f.register(fs)
	var k kubeFlags
	kubeOnly := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	k.register(kubeOnly)
	fs.AddFlagSet(kubeOnly)
	a, code, ok := parseScriptArgs(ctx, cmd, fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	switch {
	case !fs.Changed("instances"):
		return usageError("--instances N is required: the number of pods")
	case k.instances < 1:
		return usageError("--instances %d: at least 1", k.instances)
	case k.instances > rendezvous.MaxInstances:
		return usageError("--instances %d: at most %d, the most instances a run has (docs/limits.md)", k.instances, rendezvous.MaxInstances)
	case k.image == "":
		return usageError("--image is required: the llmrun image the pods run (built from the Dockerfile)")
	case k.rendezvousTimeout <= 0:
		return usageError("--rendezvous-timeout must be positive, got %v", k.rendezvousTimeout)
	}
	secretEnv, err := kubeChecks(fs, f, k)
	if err != nil {
		return usageError("%v", err)
	}
	// Checked before the script is loaded; the files, the command line and
	// the sizing follow from loading it.
	c := kube.Config{
		Name: k.name, Namespace: k.namespace, Image: k.image, Instances: k.instances, ClusterDomain: k.clusterDomain,
		Secret: k.secret, SecretEnv: secretEnv, Resources: k.resources(kube.Size(0)),
		ActiveDeadline: k.activeDeadline, TTLAfterFinished: k.ttlAfterFinished,
	}
	deadlineGiven := fs.Changed("active-deadline")
	if !deadlineGiven {
		// Until the script is loaded: the deadline of a run that takes no
		// time once its pods have met.
		c.ActiveDeadline = kube.DefaultActiveDeadline(k.rendezvousTimeout)
	}
	if c.Name == "" {
		c.Name = defaultKubeName(a.script)
	}
	if err := c.Check(); err != nil {
		return usageError("%v", err)
	}

	if f.baseURL == "" {
		// $LLMRUN_BASE_URL and $OPENAI_BASE_URL do not reach the pods.
		fmt.Fprintf(stderr, "%s: no --base-url: each pod benchmarks the built-in simulator it starts\n", cmd)
	}
	for _, warning := range loopbackWarnings(f) {
		fmt.Fprintf(stderr, "%s: %s\n", cmd, warning)
	}
	engineCfg := a.engineConfig(fs, f, stderr)
	llmconfig.Placeholder(&engineCfg.LLM)
	var read filesRead
	engineCfg.FileRead = read.add
	e, _, err := runner.Load(ctx, engineCfg, a.slo)
	if err != nil {
		return runner.ReportLoadError(stderr, cmd, a.script, err).ExitCode()
	}
	files := slices.Concat(e.ScriptFiles(), read.list(), k.files)
	tokenizerFile := false
	if info, err := os.Stat(f.tokenizer); err == nil && info.Mode().IsRegular() {
		// --tokenizer FILE: the file goes with the pods.
		files, tokenizerFile = append(files, f.tokenizer), true
	}
	scriptFile := a.script
	if a.source != nil {
		scriptFile = ""
	}
	layout, err := kube.NewLayout(".", scriptFile, files)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitcode.Error
	}
	// A relative path is the pods' too (their working directory is this
	// one's place among the files); an absolute one is named as the pods
	// have it.
	inPod := map[string]string{}
	if tokenizerFile && filepath.IsAbs(f.tokenizer) {
		inPod["tokenizer"] = layout.InPod(f.tokenizer)
	}
	script := a.script
	if a.source == nil {
		script = layout.InPod(a.script)
		if err := loadsFromFiles(ctx, engineCfg, layout, a.script); err != nil {
			fmt.Fprintf(stderr, "%s: the script does not load from the ConfigMap's files alone (the script, its imports, the files it read and each --file): %v\n", cmd, err)
			return exitcode.Error
		}
	}

	if a.seedDrawn {
		fmt.Fprintf(stderr, "%s: no --seed given: the instances all use --seed %d, written into the manifests\n", cmd, f.seed)
	}
	if k.secret == "" && (f.baseURL != "" || hasOut(f.outs, "influxdb")) {
		fmt.Fprintf(stderr, "%s: no --secret: the pods get no API key and no InfluxDB token\n", cmd)
	}
	c.Files, c.WorkDir, c.Args = layout.Files, layout.WorkDir, podArgs(fs, kubeOnly, f, a.seedDrawn, script, inPod)
	c.Resources = k.resources(kube.Size((e.MaxVUs() + k.instances - 1) / k.instances))
	switch plan := e.MaxDuration(); {
	case !deadlineGiven:
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

// kubeChecks refuses the run flags a pod cannot use or that would put a
// secret in the manifests, and returns the variables the pods get from
// the Secret.
func kubeChecks(fs *pflag.FlagSet, f runFlags, k kubeFlags) ([]string, error) {
	for name, why := range refusedRunFlags {
		if fs.Changed(name) {
			return nil, fmt.Errorf("--%s: not with kube: %s", name, why)
		}
	}
	for _, word := range []struct{ flag, value string }{{"--image", k.image}, {"--cluster-domain", k.clusterDomain}} {
		if err := kube.CheckWord(word.flag, word.value); err != nil {
			return nil, err
		}
	}
	if f.apiKeyEnv != "" {
		if err := kube.CheckEnvName("--api-key-env", f.apiKeyEnv); err != nil {
			return nil, err
		}
	}
	if err := kube.CheckURL("--base-url", f.baseURL); err != nil {
		return nil, err
	}
	for _, target := range metricsTargets(f) {
		if err := kube.CheckURL(target.flag, target.url); err != nil {
			return nil, err
		}
	}
	for _, spec := range f.outs {
		name, value, _ := strings.Cut(spec, "=")
		switch {
		case name == "json" && value == runner.StdoutResult:
			return nil, fmt.Errorf("--out %s: kube adds it", spec)
		case runner.WritesFile(name, value):
			return nil, fmt.Errorf("--out %s: a file written in a pod is lost with it: the pods print their result files to their logs (--out json=-), or use --out influxdb", spec)
		}
		if err := kube.CheckURL("--out "+name, value); err != nil {
			return nil, err
		}
	}
	for _, kv := range f.env {
		if err := kube.CheckSetting("-e", kv); err != nil {
			return nil, err
		}
	}
	for _, kv := range f.tags {
		if err := kube.CheckSetting("--tag", kv); err != nil {
			return nil, err
		}
	}
	if k.secret == "" {
		if f.apiKeyEnv != "" {
			return nil, fmt.Errorf("--api-key-env %s needs --secret: the pods get %s only from a Secret", f.apiKeyEnv, f.apiKeyEnv)
		}
		if len(k.secretEnv) > 0 {
			return nil, fmt.Errorf("--secret-env %s needs --secret: the pods get it only from a Secret", k.secretEnv[0])
		}
		return nil, nil
	}
	env := []string{f.target().KeyEnv()}
	if hasOut(f.outs, "influxdb") {
		env = append(env, influxdb.TokenEnv)
	}
	for _, name := range k.secretEnv {
		if err := kube.CheckEnvName("--secret-env", name); err != nil {
			return nil, err
		}
		if !slices.Contains(env, name) {
			env = append(env, name)
		}
	}
	return env, nil
}

// loopbackWarnings warn of the URLs given to the pods (--base-url, --out,
// --server-metrics, --gpu-metrics) that name this machine's loopback,
// which in a pod is the pod, and of nvidia-smi, which a pod runs on its
// own node.
func loopbackWarnings(f runFlags) []string {
	var warnings []string
	if w := kube.LoopbackWarning("--base-url "+f.baseURL, f.baseURL); w != "" {
		warnings = append(warnings, w)
	}
	for _, spec := range f.outs {
		_, value, _ := strings.Cut(spec, "=")
		if w := kube.LoopbackWarning("--out "+spec, value); w != "" {
			warnings = append(warnings, w)
		}
	}
	for _, target := range metricsTargets(f) {
		if w := kube.LoopbackWarning(target.flag+" "+target.url, target.url); w != "" {
			warnings = append(warnings, w)
		}
	}
	if slices.Contains(f.gpuMetrics, serverwatch.NvidiaSMI) {
		warnings = append(warnings, "--gpu-metrics nvidia-smi: instance 0's pod runs nvidia-smi on its own node, which has it only when the pod is given GPUs, "+
			"not the server's: give the DCGM exporter's URL the pods reach (http://HOST:9400/metrics)")
	}
	return warnings
}

// metricsTarget is a URL a flag names for the pods to read metrics at.
type metricsTarget struct{ flag, url string }

// metricsTargets are the URLs of --server-metrics and --gpu-metrics
// (nvidia-smi apart), which instance 0's pod reads.
func metricsTargets(f runFlags) []metricsTarget {
	var out []metricsTarget
	for _, u := range f.serverMetrics {
		out = append(out, metricsTarget{"--server-metrics", u})
	}
	for _, u := range f.gpuMetrics {
		if u != serverwatch.NvidiaSMI {
			out = append(out, metricsTarget{"--gpu-metrics", u})
		}
	}
	return out
}

// hasOut reports whether the --out flags include the output kind.
func hasOut(outs []string, kind string) bool {
	for _, spec := range outs {
		if name, _, _ := strings.Cut(spec, "="); name == kind {
			return true
		}
	}
	return false
}

// podArgs is the command line of llmrun in the pods: run with the flags
// of fs given but kubeOnly's (kubeFlagPassed apart), each flag in inPod
// with its value there (a file where the pods have it), the seed,
// --out json=- and the script where the pods have it.
func podArgs(fs, kubeOnly *pflag.FlagSet, f runFlags, seedDrawn bool, script string, inPod map[string]string) []string {
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
		args = append(args, fmt.Sprintf("--seed=%d", f.seed))
	}
	return append(args, "--out=json="+runner.StdoutResult, script)
}

// loadsFromFiles loads the script as the pods will, from a copy of the
// ConfigMap's files alone: a file the pods would miss fails here rather
// than in every pod.
func loadsFromFiles(ctx context.Context, cfg engine.Config, layout *kube.Layout, script string) error {
	dir, err := os.MkdirTemp("", "llmrun-kube-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, file := range layout.Files {
		path := filepath.Join(dir, filepath.FromSlash(file.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, file.Data, 0o644); err != nil {
			return err
		}
	}
	cfg.ScriptPath = filepath.Join(dir, strings.TrimPrefix(layout.InPod(script), kube.MountDir+"/"))
	cfg.Modules = nil
	// A relative path is the pods' too: their working directory is this
	// one's place among the files. An absolute one outside the copy is a
	// file of this machine's.
	var read filesRead
	cfg.FileRead = read.add
	if _, _, err := runner.Load(ctx, cfg, nil); err != nil {
		// Named as the pods will name it.
		return errors.New(strings.ReplaceAll(err.Error(), dir, kube.MountDir))
	}
	for _, path := range read.list() {
		if filepath.IsAbs(path) && !kube.Within(path, dir) {
			return fmt.Errorf("it reads %s by its absolute path, which the pods do not have: name it relative to the script", path)
		}
	}
	return nil
}

// filesRead collects the files a script reads as it loads.
type filesRead struct {
	mu    sync.Mutex
	paths []string
}

func (r *filesRead) add(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, path)
}

func (r *filesRead) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.paths)
}

// nonName are the characters a Kubernetes name cannot have.
var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// defaultKubeName names the manifests after the script: llmrun-chat for
// chat.js or stock:chat.
func defaultKubeName(script string) string {
	base := filepath.Base(strings.TrimPrefix(script, scripts.Prefix))
	base = strings.TrimSuffix(base, filepath.Ext(base))
	name := "llmrun-" + strings.Trim(nonName.ReplaceAllString(strings.ToLower(base), "-"), "-")
	return strings.TrimSuffix(name[:min(len(name), 40)], "-")
}
