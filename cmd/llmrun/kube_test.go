package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/llmrun/llmrun/internal/kubetest"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/kube"
)

// kubeScript opens a data file, relative to itself, and runs 12
// iterations on 4 VUs: a plan whose requests the merge must find exactly.
const kubeScript = `
import llm from 'llm';
const prompts = open('./data/prompts.txt').trim().split('\n');
export const options = { scenarios: { chat: { executor: 'shared-iterations', vus: 4, iterations: 12 } } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: prompts[__ITER % prompts.length] }], max_tokens: 4 });
}
`

// kubeDir writes the script and its data file into a directory of their
// own, as a user's test would be.
func kubeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"chat.js": kubeScript, "data/prompts.txt": "Say hi.\nSay bye.\n", "notes.txt": "read later"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// llmrunIn runs this test binary as llmrun in dir, with the environment
// and env added, and returns its exit code, stdout and stderr.
func llmrunIn(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), llmrunBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", asMainEnv+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// The manifests decode strictly into Kubernetes' types and say what a
// distributed run needs: an Indexed Job of N pods that reach instance 0
// through a headless Service, the script and the file it opens, keys
// from the Secret by reference only, and pods sized from the plan.
func TestKubeManifests(t *testing.T) {
	t.Parallel()
	dir := kubeDir(t)
	const apiKey, influxToken = "sk-do-not-leak-4711", "influx-do-not-leak-0815"
	code, stdout, stderr := llmrunIn(t, dir, []string{"OPENAI_API_KEY=" + apiKey, "LLMRUN_INFLUXDB_TOKEN=" + influxToken},
		"kube", "chat.js", "--instances", "4", "--image", "registry.example/llmrun:v1", "--namespace", "load", "--secret", "llmrun-keys",
		"--base-url", "http://vllm.serving:8000", "--out", "influxdb=http://influxdb:8086?bucket=llmrun", "--tag", "team=serving", "-s", "10s:2", "-s", "20s:4", "--rendezvous-timeout", "3m")
	if code != exitcode.OK {
		t.Fatalf("kube: exit %d\n%s", code, stderr)
	}
	for _, secret := range []string{apiKey, influxToken} {
		if strings.Contains(stdout, secret) || strings.Contains(stderr, secret) {
			t.Errorf("the secret %q is in the output", secret)
		}
	}
	if !strings.Contains(stderr, "no --seed given: the instances all use --seed ") {
		t.Errorf("stderr does not say the seed was drawn:\n%s", stderr)
	}
	if strings.Contains(stderr, "loopback") {
		t.Errorf("a warning about the loopback, for URLs that are not:\n%s", stderr)
	}
	// Pod Security "restricted" admits the pods: Decode checks it.
	m := kubetest.Decode(t, stdout)
	name := "llmrun-chat"
	for _, md := range []struct{ kind, name, ns string }{
		{"ConfigMap", m.ConfigMap.Name, m.ConfigMap.Namespace}, {"Service", m.Service.Name, m.Service.Namespace}, {"Job", m.Job.Name, m.Job.Namespace},
	} {
		if md.name != name || md.ns != "load" {
			t.Errorf("%s %s in namespace %q, want %s in load", md.kind, md.name, md.ns, name)
		}
	}

	js := m.Job.Spec
	if js.CompletionMode == nil || *js.CompletionMode != "Indexed" || js.Completions == nil || *js.Completions != 4 ||
		js.Parallelism == nil || *js.Parallelism != 4 || js.BackoffLimit == nil || *js.BackoffLimit != 0 {
		t.Errorf("job spec: completionMode %v, completions %v, parallelism %v, backoffLimit %v; want Indexed, 4, 4, 0",
			kubetest.Deref(js.CompletionMode), kubetest.Deref(js.Completions), kubetest.Deref(js.Parallelism), kubetest.Deref(js.BackoffLimit))
	}
	pod := js.Template.Spec
	if pod.Subdomain != m.Service.Name || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("pods: subdomain %q, restartPolicy %q; want the Service %q and Never", pod.Subdomain, pod.RestartPolicy, m.Service.Name)
	}
	svc := m.Service.Spec
	if svc.ClusterIP != corev1.ClusterIPNone || len(svc.Selector) == 0 || len(svc.Ports) != 1 || svc.Ports[0].Port != kube.RendezvousPort {
		t.Errorf("service: clusterIP %q, selector %v, ports %+v; want headless, a selector, port %d", svc.ClusterIP, svc.Selector, svc.Ports, kube.RendezvousPort)
	}
	for k, v := range svc.Selector {
		if js.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods' labels %v lack", k, v, js.Template.Labels)
		}
	}

	c := m.Container(t)
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if got := env["LLMRUN_INSTANCES"].Value; got != "4" {
		t.Errorf("LLMRUN_INSTANCES %q, want 4", got)
	}
	if got, want := env["LLMRUN_RENDEZVOUS"].Value, name+"-0."+name+".$(POD_NAMESPACE).svc.cluster.local:7000"; got != want {
		t.Errorf("LLMRUN_RENDEZVOUS %q, want %q", got, want)
	}
	// Each key from the Secret, which must exist and hold it: a misnamed
	// Secret keeps the pods from starting rather than sending requests
	// without a key.
	for _, key := range []string{"OPENAI_API_KEY", "LLMRUN_INFLUXDB_TOKEN"} {
		ref := env[key].ValueFrom
		if env[key].Value != "" || ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "llmrun-keys" || ref.SecretKeyRef.Key != key ||
			ref.SecretKeyRef.Optional != nil && *ref.SecretKeyRef.Optional {
			t.Errorf("%s: %+v, want it from the Secret llmrun-keys's key %s, not optional", key, env[key], key)
		}
	}
	// The deadline allows for the whole run: the rendezvous timeout (3m),
	// setup's and teardown's default timeouts (60 s each), the plan's
	// longest (as llmrun inspect has it) and 10 minutes to start; the
	// finished Job is kept a day.
	code, inspected, stderr := llmrunIn(t, dir, nil, "inspect", "--json", "chat.js", "-s", "10s:2", "-s", "20s:4")
	if code != exitcode.OK {
		t.Fatalf("inspect: exit %d\n%s", code, stderr)
	}
	var plan struct {
		MaxDurationS float64 `json:"max_duration_s"`
	}
	if err := json.Unmarshal([]byte(inspected), &plan); err != nil || plan.MaxDurationS <= 30 {
		t.Fatalf("inspect --json: %v, max_duration_s %v; want the stages' 30 s and a graceful stop", err, plan.MaxDurationS)
	}
	if want := int64(3*60 + 60 + plan.MaxDurationS + 60 + 10*60); js.ActiveDeadlineSeconds == nil || *js.ActiveDeadlineSeconds != want {
		t.Errorf("activeDeadlineSeconds %v, want %d", kubetest.Deref(js.ActiveDeadlineSeconds), want)
	}
	if js.TTLSecondsAfterFinished == nil || *js.TTLSecondsAfterFinished != 24*60*60 {
		t.Errorf("ttlSecondsAfterFinished %v, want a day", kubetest.Deref(js.TTLSecondsAfterFinished))
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"run ", "--base-url=http://vllm.serving:8000", "--tag=team=serving", "--stage=10s:2 --stage=20s:4", "--seed=", "--out=influxdb=http://influxdb:8086?bucket=llmrun",
		"--out=json=- " + kube.MountDir + "/chat.js", "--rendezvous-timeout=3m0s"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	// kube's own flags stay out of the pods' command line.
	for _, own := range []string{"--instances", "--image", "--namespace", "--secret"} {
		if strings.Contains(args, own) {
			t.Errorf("args %q carry kube's own %s", args, own)
		}
	}
	// The stages' 4 VUs at most among 4 instances: 1 stream each.
	want := kube.Size(1)
	if cpu, mem := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Requests[corev1.ResourceMemory]; cpu.String() != want.CPU || mem.String() != want.Memory {
		t.Errorf("requests %v, want cpu %s and memory %s", c.Resources.Requests, want.CPU, want.Memory)
	}
	// Memory is limited, and the Go runtime told to stay under 90 % of
	// it; the CPU is not, lest the pod be throttled mid-request.
	if mem, ok := c.Resources.Limits[corev1.ResourceMemory]; len(c.Resources.Limits) != 1 || !ok || mem.String() != want.Memory {
		t.Errorf("limits %v, want memory %s alone", c.Resources.Limits, want.Memory)
	}
	if limit := kubetest.EnvValue(c.Env, "GOMEMLIMIT"); limit != strconv.FormatInt(int64(0.9*float64(c.Resources.Limits.Memory().Value())), 10) {
		t.Errorf("GOMEMLIMIT %q, want 90 %% of the memory limit %v", limit, c.Resources.Limits.Memory())
	}
	files := m.Files(t)
	if string(files["chat.js"]) != kubeScript || string(files["data/prompts.txt"]) != "Say hi.\nSay bye.\n" || len(files) != 2 {
		t.Errorf("the ConfigMap's files: %q", files)
	}
	if c.WorkingDir != kube.MountDir || c.VolumeMounts[0].MountPath != kube.MountDir {
		t.Errorf("workingDir %q, mount %q: want both %s", c.WorkingDir, c.VolumeMounts[0].MountPath, kube.MountDir)
	}

	// --cpu and --memory say otherwise; without --secret there is no
	// secret in the pods at all; --file adds a file the script reads only
	// later.
	code, stdout, stderr = llmrunIn(t, dir, []string{"OPENAI_API_KEY=" + apiKey}, "kube", "chat.js", "--instances", "2", "--image", "llmrun:v1",
		"--file", "notes.txt", "--cpu", "3", "--memory", "2Gi", "--seed", "5", "--name", "small", "--active-deadline", "1h", "--ttl-after-finished", "90m")
	if code != exitcode.OK {
		t.Fatalf("kube: exit %d\n%s", code, stderr)
	}
	m = kubetest.Decode(t, stdout)
	if files := m.Files(t); len(files) != 3 || string(files["notes.txt"]) != "read later" {
		t.Errorf("with --file notes.txt, the ConfigMap's files: %q", files)
	}
	c = m.Container(t)
	if cpu, mem := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceMemory]; cpu.String() != "3" || mem.String() != "2Gi" {
		t.Errorf("requests %v, limits %v: want cpu 3 and memory 2Gi", c.Resources.Requests, c.Resources.Limits)
	}
	if limit := kubetest.EnvValue(c.Env, "GOMEMLIMIT"); limit != "1932735283" {
		t.Errorf("GOMEMLIMIT %q, want 90 %% of 2Gi", limit)
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("without --secret, %s comes from a Secret", e.Name)
		}
	}
	if n := strings.Count(strings.Join(c.Args, " "), "--seed="); n != 1 || !strings.Contains(strings.Join(c.Args, " "), "--seed=5") {
		t.Errorf("args %q: want the given --seed=5 once", c.Args)
	}
	if d, ttl := m.Job.Spec.ActiveDeadlineSeconds, m.Job.Spec.TTLSecondsAfterFinished; d == nil || *d != 3600 || ttl == nil || *ttl != 5400 {
		t.Errorf("activeDeadlineSeconds %v, ttlSecondsAfterFinished %v; want --active-deadline's 3600 and --ttl-after-finished's 5400", kubetest.Deref(d), kubetest.Deref(ttl))
	}
	for _, own := range []string{"--active-deadline", "--ttl-after-finished"} {
		if strings.Contains(strings.Join(c.Args, " "), own) {
			t.Errorf("args %q carry kube's own %s", c.Args, own)
		}
	}
}

// A URL given to the pods that names the loopback is this machine's to
// the user, but the pod's own inside it: kube warns, naming the flag and
// what to give instead, and still writes the manifests.
func TestKubeWarnsOfLoopbackURLs(t *testing.T) {
	t.Parallel()
	script := filepath.Join(kubeDir(t), "chat.js")
	base := []string{"kube", script, "--seed", "1", "--instances", "2", "--image", "x"}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--base-url", "http://127.0.0.1:8000"}, []string{"--base-url http://127.0.0.1:8000: 127.0.0.1 is the loopback, which inside a pod is the pod itself"}},
		{[]string{"--base-url", "http://localhost:8000/v1", "--out", "influxdb=http://[::1]:8086?bucket=llmrun"},
			[]string{"--base-url http://localhost:8000/v1: localhost is the loopback", "--out influxdb=http://[::1]:8086?bucket=llmrun: ::1 is the loopback"}},
		{[]string{"--base-url", "http://0.0.0.0:8000"}, []string{"--base-url http://0.0.0.0:8000: 0.0.0.0 is the loopback"}},
		{[]string{"--base-url", "http://vllm:8000", "--server-metrics", "http://127.0.0.1:8000/metrics", "--gpu-metrics", "http://localhost:9400/metrics"},
			[]string{"--server-metrics http://127.0.0.1:8000/metrics: 127.0.0.1 is the loopback", "--gpu-metrics http://localhost:9400/metrics: localhost is the loopback"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := cli(t, t.Context(), nil, append(base, tt.args...)...)
		if code != exitcode.OK || stdout == "" {
			t.Errorf("%q: exit %d, %d bytes of manifests; want them written\n%s", tt.args, code, len(stdout), stderr)
		}
		for _, want := range tt.want {
			if !strings.Contains(stderr, "llmrun kube: "+want) || !strings.Contains(stderr, "a Service's name (http://SERVICE.NAMESPACE.svc:PORT)") {
				t.Errorf("%q: stderr\n%s\nwant a warning %q saying what to give instead", tt.args, stderr, want)
			}
		}
	}
}

// kube can be told where the server's metrics and its GPUs' DCGM
// exporter are: the pods get the flags as given (instance 0 reads them),
// with no warning for URLs the pods reach; nvidia-smi, which a pod runs
// on its own node, gets one.
func TestKubePassesServerMetrics(t *testing.T) {
	t.Parallel()
	script := filepath.Join(kubeDir(t), "chat.js")
	const server, dcgm = "http://vllm.serving:8000/metrics", "http://dcgm-exporter.monitoring:9400/metrics"
	code, stdout, stderr := cli(t, t.Context(), nil, "kube", script, "--seed", "1", "--instances", "3", "--image", "x",
		"--base-url", "http://vllm.serving:8000", "--server-metrics", server, "--gpu-metrics", dcgm, "--server-metrics-interval", "2s")
	if code != exitcode.OK {
		t.Fatalf("kube: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "loopback") || strings.Contains(stderr, "nvidia-smi") {
		t.Errorf("a warning for URLs the pods reach:\n%s", stderr)
	}
	args := kubetest.Decode(t, stdout).Container(t).Args
	for _, want := range []string{"--server-metrics=" + server, "--gpu-metrics=" + dcgm, "--server-metrics-interval=2s"} {
		if !slices.Contains(args, want) {
			t.Errorf("the pods' args %q lack %s", args, want)
		}
	}

	code, stdout, stderr = cli(t, t.Context(), nil, "kube", script, "--seed", "1", "--instances", "3", "--image", "x",
		"--base-url", "http://vllm.serving:8000", "--gpu-metrics", "nvidia-smi")
	if code != exitcode.OK || !strings.Contains(stderr, "llmrun kube: --gpu-metrics nvidia-smi: instance 0's pod runs nvidia-smi on its own node") ||
		!slices.Contains(kubetest.Decode(t, stdout).Container(t).Args, "--gpu-metrics=nvidia-smi") {
		t.Errorf("kube --gpu-metrics nvidia-smi: exit %d, want the manifests with it and a warning\n%s", code, stderr)
	}
}

// The pods of the generated Job, run here as processes with exactly the
// Job's arguments and environment (the index Kubernetes sets, the
// rendezvous on 127.0.0.1) and the ConfigMap's files, print results to
// their logs that llmrun merge reads back into the whole plan: from the
// logs concatenated, and with kubectl's --prefix.
func TestKubePodsMergeFromLogs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const instances = 3
	code, stdout, stderr := llmrunIn(t, kubeDir(t), nil, "kube", "chat.js", "--instances", strconv.Itoa(instances), "--image", "llmrun:test",
		"--name", "chat")
	if code != exitcode.OK {
		t.Fatalf("kube: exit %d\n%s", code, stderr)
	}
	m := kubetest.Decode(t, stdout)
	mount := t.TempDir()
	for path, data := range m.Files(t) {
		p := filepath.Join(mount, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := m.Container(t)
	inMount := func(s string) string { return strings.ReplaceAll(s, kube.MountDir, mount) }
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = inMount(a)
	}
	pod := func(i int, rendezvous string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, llmrunBinary(t), args...)
		cmd.Dir = inMount(c.WorkingDir)
		cmd.Env = []string{"NO_COLOR=1", asMainEnv + "=1", "JOB_COMPLETION_INDEX=" + strconv.Itoa(i), "PATH=" + os.Getenv("PATH")}
		// Each pod's own emptyDir volumes (HOME, TMPDIR): a directory here
		// for each.
		scratch := map[string]string{}
		for _, vm := range c.VolumeMounts {
			if vm.MountPath != kube.MountDir {
				scratch[vm.MountPath] = t.TempDir()
			}
		}
		for _, e := range c.Env {
			switch {
			case e.Name == "LLMRUN_RENDEZVOUS":
				cmd.Env = append(cmd.Env, e.Name+"="+rendezvous)
			case scratch[e.Value] != "":
				cmd.Env = append(cmd.Env, e.Name+"="+scratch[e.Value])
			case e.ValueFrom == nil:
				cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
			}
		}
		cmd.Stdout = &bytes.Buffer{}
		return cmd
	}
	procs := []*instanceProcess{startProcess(t, pod(0, "127.0.0.1:0"))}
	addr := procs[0].await(t, ctx, listeningAt)[1]
	for i := 1; i < instances; i++ {
		procs = append(procs, startProcess(t, pod(i, addr)))
	}
	var concatenated, prefixed, withoutPod1 strings.Builder
	for i, p := range procs {
		code, stderr := p.wait()
		if code != 0 {
			t.Fatalf("pod %d exited %d:\n%s", i, code, stderr)
		}
		// kubectl logs gives a pod's stdout and stderr as one log.
		log := p.cmd.Stdout.(*bytes.Buffer).String() + stderr
		concatenated.WriteString(log)
		if i != 1 {
			withoutPod1.WriteString(log)
		}
		for line := range strings.Lines(log) {
			fmt.Fprintf(&prefixed, "[pod/chat-%d-x7k2p/llmrun] %s", i, line)
		}
	}
	logs := filepath.Join(t.TempDir(), "logs.txt")
	if err := os.WriteFile(logs, []byte(concatenated.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := readMerged(t, logs)
	if err != nil {
		t.Fatalf("merging the logs: %v", err)
	}
	if s := readSummary(t, all); s.Serving.Requests != 12 || s.Serving.OK != 12 || s.Meta.Instances != instances || s.Meta.MissingInstances != nil {
		t.Errorf("merged: %d requests (%d ok), %d instances, missing %v; want the plan's 12, 3, none", s.Serving.Requests, s.Serving.OK, s.Meta.Instances, s.Meta.MissingInstances)
	}

	// From standard input, with kubectl's --prefix.
	out := filepath.Join(t.TempDir(), "all.json")
	merge := exec.CommandContext(ctx, llmrunBinary(t), "merge", "-", "-o", out)
	merge.Env = append(os.Environ(), asMainEnv+"=1")
	merge.Stdin = strings.NewReader(prefixed.String())
	if b, err := merge.CombinedOutput(); err != nil {
		t.Fatalf("merge - : %v\n%s", err, b)
	}
	if s := readSummary(t, out); s.Serving.Requests != 12 || s.Meta.Instances != instances {
		t.Errorf("merged from stdin: %d requests, %d instances; want 12 and 3", s.Serving.Requests, s.Meta.Instances)
	}

	// Without pod 1's log, the merge says which instance is missing.
	if err := os.WriteFile(logs, []byte(withoutPod1.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = command(t, "merge", "-o", out, logs)
	if s := readSummary(t, out); code != exitcode.OK || !strings.Contains(stderr, "no result of instance 1 was given") || s.Serving.Requests >= 12 {
		t.Errorf("merging without pod 1: exit %d, %d requests, stderr %q; want a warning naming instance 1 and fewer than 12", code, s.Serving.Requests, stderr)
	}

	// A log cut inside instance 1's block is an error naming it.
	var cut []string
	for line := range strings.Lines(concatenated.String()) {
		if strings.Contains(line, " 1 end") && strings.Contains(line, "llmrun-result ") {
			continue
		}
		cut = append(cut, line)
	}
	if err := os.WriteFile(logs, []byte(strings.Join(cut, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readMerged(t, logs); err == nil || !strings.Contains(err.Error(), "instance 1: the block is cut short") {
		t.Errorf("merging a log cut short: %v, want an error naming instance 1", err)
	}
}

// A deadline shorter than the scenarios can take is the user's to give,
// but kube says the pods may be stopped before the run ends.
func TestKubeDeadlineShorterThanThePlan(t *testing.T) {
	t.Parallel()
	script := filepath.Join(kubeDir(t), "chat.js")
	// shared-iterations: at most its maxDuration (10m) and graceful stop (30s).
	code, stdout, stderr := cli(t, t.Context(), nil, "kube", script, "--seed", "1", "--instances", "2", "--image", "x", "--active-deadline", "5m")
	if code != exitcode.OK || stdout == "" || !strings.Contains(stderr, "--active-deadline 5m0s may stop the pods before the run ends: its scenarios alone may take up to 10m30s") {
		t.Errorf("exit %d, %d bytes of manifests, stderr:\n%s\nwant them written and a warning that the plan takes up to 10m30s", code, len(stdout), stderr)
	}
	code, _, stderr = cli(t, t.Context(), nil, "kube", script, "--seed", "1", "--instances", "2", "--image", "x", "--active-deadline", "11m")
	if code != exitcode.OK || strings.Contains(stderr, "--active-deadline") {
		t.Errorf("a deadline past the plan: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestKubeBadInput(t *testing.T) {
	t.Parallel()
	dir := kubeDir(t)
	script := filepath.Join(dir, "chat.js")
	data := filepath.Join(dir, "data", "prompts.txt")
	big := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), kube.MaxFiles+1), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := writeScript(t, "keys.txt", "sk-do-not-ship")
	base := []string{"kube", script, "--seed", "1"}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no image", []string{"--instances", "2"}, exitcode.Usage, "--image is required"},
		{"no instances", []string{"--image", "x"}, exitcode.Usage, "--instances N is required"},
		{"zero instances", []string{"--instances", "0", "--image", "x"}, exitcode.Usage, "--instances 0: at least 1"},
		{"too many instances", []string{"--instances", "1000000000", "--image", "x"}, exitcode.Usage, "--instances 1000000000: at most 10000"},
		{"password in the base URL", []string{"--instances", "2", "--image", "x", "--base-url", "http://me:hunter2@vllm:8000"}, exitcode.Usage, "--base-url: the URL carries a user or password"},
		{"token in the InfluxDB URL", []string{"--instances", "2", "--image", "x", "--out", "influxdb=http://influxdb:8086?bucket=b&token=abc"}, exitcode.Usage, `--out influxdb: the URL's parameter "token" looks like a secret`},
		{"key in -e", []string{"--instances", "2", "--image", "x", "-e", "HF_TOKEN=abc"}, exitcode.Usage, "-e HF_TOKEN=…: named like a secret"},
		{"bearer in -e", []string{"--instances", "2", "--image", "x", "-e", "BEARER=abc"}, exitcode.Usage, "-e BEARER=…: named like a secret, whose value the manifests would hold in plain text: put it in the Secret named by --secret"},
		{"cookie in -e", []string{"--instances", "2", "--image", "x", "-e", "SESSION_COOKIE=abc"}, exitcode.Usage, "-e SESSION_COOKIE=…: named like a secret"},
		{"PAT in -e", []string{"--instances", "2", "--image", "x", "-e", "GITHUB_PAT=ghp_abc"}, exitcode.Usage, "-e GITHUB_PAT=…: named like a secret"},
		{"URL with a token in -e", []string{"--instances", "2", "--image", "x", "-e", "TARGET=http://h:1/v1?access_token=abc"}, exitcode.Usage, `-e TARGET: the URL's parameter "access_token" looks like a secret`},
		{"key in a tag", []string{"--instances", "2", "--image", "x", "--tag", "api_key=abc"}, exitcode.Usage, "--tag api_key=…: named like a secret"},
		{"camel-case key in a tag", []string{"--instances", "2", "--image", "x", "--tag", "apiKey=abc"}, exitcode.Usage, "--tag apiKey=…: named like a secret"},
		{"token in the DCGM exporter's URL", []string{"--instances", "2", "--image", "x", "--gpu-metrics", "http://dcgm:9400/metrics?access_token=abc"}, exitcode.Usage, `--gpu-metrics: the URL's parameter "access_token" looks like a secret`},
		{"password in a server's metrics URL", []string{"--instances", "2", "--image", "x", "--server-metrics", "http://me:hunter2@vllm:8000/metrics"}, exitcode.Usage, "--server-metrics: the URL carries a user or password"},
		{"token in a URL fragment", []string{"--instances", "2", "--image", "x", "--base-url", "http://vllm:8000/v1#token=abc"}, exitcode.Usage, `--base-url: the URL's fragment's parameter "token" looks like a secret`},
		{"secret env without secret", []string{"--instances", "2", "--image", "x", "--secret-env", "GITHUB_PAT"}, exitcode.Usage, "--secret-env GITHUB_PAT needs --secret"},
		{"secret env not a name", []string{"--instances", "2", "--image", "x", "--secret", "s", "--secret-env", "A=B"}, exitcode.Usage, `--secret-env "A=B": want a variable's name`},
		{"api key env without secret", []string{"--instances", "2", "--image", "x", "--api-key-env", "MY_KEY"}, exitcode.Usage, "--api-key-env MY_KEY needs --secret"},
		{"a file output", []string{"--instances", "2", "--image", "x", "--out", "json=r.json"}, exitcode.Usage, "--out json=r.json: a file written in a pod is lost with it"},
		{"a segment", []string{"--instances", "2", "--image", "x", "--execution-segment", "0:1/2"}, exitcode.Usage, "--execution-segment: not with kube"},
		{"bad cpu", []string{"--instances", "2", "--image", "x", "--cpu", "lots"}, exitcode.Usage, `cpu "lots": want cores`},
		{"bad name", []string{"--instances", "2", "--image", "x", "--name", "Chat_Test"}, exitcode.Usage, `name "Chat_Test": want lower-case letters`},
		{"a newline in the image", []string{"--instances", "2", "--image", "x\n$(id)"}, exitcode.Usage, `--image "x\n$(id)": holds whitespace or a control character at byte 1`},
		{"a command in the image", []string{"--instances", "2", "--image", "x$(id)"}, exitcode.Usage, `--image "x$(id)": holds $(`},
		{"a backquote in the image", []string{"--instances", "2", "--image", "x`id`"}, exitcode.Usage, "--image \"x`id`\": holds `"},
		{"a quote in the cluster domain", []string{"--instances", "2", "--image", "x", "--cluster-domain", `c"l`}, exitcode.Usage, `--cluster-domain "c\"l": holds "`},
		{"a space in the cluster domain", []string{"--instances", "2", "--image", "x", "--cluster-domain", "cluster.local evil"}, exitcode.Usage, `--cluster-domain "cluster.local evil": holds whitespace`},
		{"a command in the cluster domain", []string{"--instances", "2", "--image", "x", "--cluster-domain", "$(id)"}, exitcode.Usage, `--cluster-domain "$(id)": holds $(`},
		{"a newline in the api key env", []string{"--instances", "2", "--image", "x", "--secret", "s", "--api-key-env", "KEY\nX"}, exitcode.Usage, `--api-key-env "KEY\nX": want a variable's name`},
		{"a command in the api key env", []string{"--instances", "2", "--image", "x", "--secret", "s", "--api-key-env", "$(id)"}, exitcode.Usage, `--api-key-env "$(id)": want a variable's name`},
		{"the environment as a file", []string{"--instances", "2", "--image", "x", "--file", "/proc/self/environ"}, exitcode.Error, "/proc/self/environ: refused: it is under /proc"},
		{"a file outside the script's tree", []string{"--instances", "2", "--image", "x", "--file", outside}, exitcode.Error, outside + ": refused: it lies outside " + dir + ", the script's tree"},
		{"a file too big", []string{"--instances", "2", "--image", "x", "--file", big}, exitcode.Error, big + " is larger than 1000 KiB, the most a ConfigMap holds"},
		{"no deadline", []string{"--instances", "2", "--image", "x", "--active-deadline", "0s"}, exitcode.Usage, "active deadline 0s: want a positive duration"},
		{"no TTL", []string{"--instances", "2", "--image", "x", "--ttl-after-finished", "0s"}, exitcode.Usage, "TTL after finished 0s: want a positive duration"},
		{"a TTL too long", []string{"--instances", "2", "--image", "x", "--ttl-after-finished", "600000h"}, exitcode.Usage, "TTL after finished 600000h0m0s: want a positive duration of at most 596523h14m7s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, t.Context(), nil, append(base, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", code, stderr, tt.code, tt.want)
			}
			if stdout != "" {
				t.Errorf("manifests written after an error:\n%.300s", stdout)
			}
		})
	}
	// A file the script reads by its absolute path would be missing in
	// every pod: it fails here.
	absolute := filepath.Join(dir, "absolute.js")
	if err := os.WriteFile(absolute, []byte(strings.Replace(kubeScript, "./data/prompts.txt", data, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, t.Context(), nil, "kube", absolute, "--seed", "1", "--instances", "2", "--image", "x")
	if code != exitcode.Error || !strings.Contains(stderr, "the script does not load from the ConfigMap's files alone") ||
		!strings.Contains(stderr, "it reads "+data+" by its absolute path") {
		t.Errorf("a file read by its absolute path: exit %d, stderr:\n%s", code, stderr)
	}
	// Nor may the script read the machine's environment into the
	// ConfigMap through "..".
	environ := filepath.Join(dir, "environ.js")
	up := strings.Repeat("../", strings.Count(dir, "/")+1)
	if err := os.WriteFile(environ, []byte(strings.Replace(kubeScript, "./data/prompts.txt", up+"proc/self/environ", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, t.Context(), nil, "kube", environ, "--seed", "1", "--instances", "2", "--image", "x")
	if code != exitcode.Error || !strings.Contains(stderr, "/proc/self/environ: refused: it is under /proc") || stdout != "" {
		t.Errorf("a script reading /proc/self/environ: exit %d, stderr:\n%s", code, stderr)
	}
}

// --tokenizer FILE goes into the ConfigMap beside the script, and reaches
// the pods as given when relative, where they have it when absolute.
func TestKubeCarriesTheTokenizerFile(t *testing.T) {
	t.Parallel()
	dir := kubeDir(t)
	data, err := os.ReadFile("../../internal/tokenizer/testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tok.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := llmrunIn(t, dir, nil, "kube", "chat.js", "--instances", "2", "--image", "llmrun:v1", "--seed", "3", "--tokenizer", "tok.json")
	if code != exitcode.OK {
		t.Fatalf("kube: exit %d\n%s", code, stderr)
	}
	m := kubetest.Decode(t, stdout)
	if files := m.Files(t); !bytes.Equal(files["tok.json"], data) {
		t.Errorf("the ConfigMap's files %v lack tok.json", slices.Collect(maps.Keys(files)))
	}
	if args := strings.Join(m.Container(t).Args, " "); !strings.Contains(args, "--tokenizer=tok.json") {
		t.Errorf("args %q lack --tokenizer=tok.json", args)
	}

	// Given by its absolute path, the file is named where the pods have it.
	code, stdout, stderr = llmrunIn(t, dir, nil, "kube", "chat.js", "--instances", "2", "--image", "llmrun:v1", "--seed", "3", "--tokenizer", filepath.Join(dir, "tok.json"))
	if code != exitcode.OK {
		t.Fatalf("kube --tokenizer ABSOLUTE: exit %d\n%s", code, stderr)
	}
	m = kubetest.Decode(t, stdout)
	if want := "--tokenizer=" + kube.MountDir + "/tok.json"; !slices.Contains(m.Container(t).Args, want) {
		t.Errorf("args %q lack %s", m.Container(t).Args, want)
	}
}

// --secret-env gives the pods a variable of the user's from the Secret,
// by reference: what a secret refused in -e is told to use instead.
func TestKubeSecretEnvByReference(t *testing.T) {
	t.Parallel()
	dir := kubeDir(t)
	code, stdout, stderr := llmrunIn(t, dir, []string{"GITHUB_PAT=ghp_do-not-leak"},
		"kube", "chat.js", "--seed", "1", "--instances", "2", "--image", "x", "--secret", "llmrun-keys", "--secret-env", "GITHUB_PAT", "--secret-env", "OPENAI_API_KEY")
	if code != exitcode.OK {
		t.Fatalf("kube: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stdout, "ghp_do-not-leak") {
		t.Error("the secret's value is in the manifests")
	}
	m := kubetest.Decode(t, stdout)
	var refs []string
	for _, env := range m.Container(t).Env {
		if ref := env.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			if ref.SecretKeyRef.Name != "llmrun-keys" || ref.SecretKeyRef.Key != env.Name {
				t.Errorf("%s from %s's key %s, want llmrun-keys's key %s", env.Name, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key, env.Name)
			}
			refs = append(refs, env.Name)
		}
	}
	if want := []string{"OPENAI_API_KEY", "GITHUB_PAT"}; !slices.Equal(refs, want) {
		t.Errorf("variables from the Secret: %q, want %q", refs, want)
	}
}

// Every script name run takes, kube takes: the file keeps its name in the
// pods, whatever the ConfigMap's keys and the manifests' name are.
func TestKubeScriptNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"a(b).js", "x%y.js", "c#d.js", "é.js", "with space.js"} {
		t.Run(name, func(t *testing.T) {
			dir := kubeDir(t)
			if err := os.Rename(filepath.Join(dir, "chat.js"), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := llmrunIn(t, dir, nil, "kube", name, "--seed", "1", "--instances", "2", "--image", "x")
			if code != exitcode.OK {
				t.Fatalf("kube %s: exit %d\n%s", name, code, stderr)
			}
			m := kubetest.Decode(t, stdout)
			if files := m.Files(t); !bytes.Equal(files[name], []byte(kubeScript)) {
				t.Errorf("the ConfigMap's files %q lack %s", slices.Collect(maps.Keys(files)), name)
			}
			if args := m.Container(t).Args; args[len(args)-1] != kube.MountDir+"/"+name {
				t.Errorf("the pods run %q, want %s", args[len(args)-1], kube.MountDir+"/"+name)
			}
		})
	}
}
