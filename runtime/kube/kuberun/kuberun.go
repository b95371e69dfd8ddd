// Package kuberun is what llmrun kube makes of a run's command line before
// package kube writes the manifests: the run settings a pod cannot use or
// that would put a secret in the manifests, the warnings of the URLs a pod
// cannot reach as given, and the files the pods need, found by loading
// the script as a run loads it and checked by loading it again from those
// files alone.
package kuberun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/kube"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/scripts"
)

// Run is the run each pod runs, as its flags give it.
type Run struct {
	BaseURL   string   // --base-url
	APIKeyEnv string   // --api-key-env
	Outs      []string // --out
	Env       []string // -e
	Tags      []string // --tag
	// ServerMetrics and GPUMetrics are --server-metrics and
	// --gpu-metrics, which instance 0's pod reads.
	ServerMetrics, GPUMetrics []string
}

// SecretEnv refuses the run settings a pod cannot use or that would put a
// secret in the manifests, and returns the variables the pods get from
// the Secret secret: the API key's, the InfluxDB token's with --out
// influxdb, and extra (--secret-env); none without a Secret.
func (r Run) SecretEnv(secret string, extra []string) ([]string, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if secret == "" {
		if r.APIKeyEnv != "" {
			return nil, fmt.Errorf("--api-key-env %s needs --secret: the pods get %s only from a Secret", r.APIKeyEnv, r.APIKeyEnv)
		}
		if len(extra) > 0 {
			return nil, fmt.Errorf("--secret-env %s needs --secret: the pods get it only from a Secret", extra[0])
		}
		return nil, nil
	}
	env := []string{llmconfig.Settings{APIKeyEnv: r.APIKeyEnv}.KeyEnv()}
	if r.HasOut("influxdb") {
		env = append(env, influxdb.TokenEnv)
	}
	for _, name := range extra {
		if err := kube.CheckEnvName("--secret-env", name); err != nil {
			return nil, err
		}
		if !slices.Contains(env, name) {
			env = append(env, name)
		}
	}
	return env, nil
}

// check refuses the run settings a pod cannot use or that would put a
// secret in the manifests.
func (r Run) check() error {
	if r.APIKeyEnv != "" {
		if err := kube.CheckEnvName("--api-key-env", r.APIKeyEnv); err != nil {
			return err
		}
	}
	if err := kube.CheckURL("--base-url", r.BaseURL); err != nil {
		return err
	}
	for _, target := range r.metricsTargets() {
		if err := kube.CheckURL(target.flag, target.url); err != nil {
			return err
		}
	}
	for _, spec := range r.Outs {
		name, value, _ := strings.Cut(spec, "=")
		switch {
		case name == "json" && value == runner.StdoutResult:
			return fmt.Errorf("--out %s: kube adds it", spec)
		case runner.WritesFile(name, value):
			return fmt.Errorf("--out %s: a file written in a pod is lost with it: the pods print their result files to their logs (--out json=-), or use --out influxdb", spec)
		}
		if err := kube.CheckURL("--out "+name, value); err != nil {
			return err
		}
	}
	for _, kv := range r.Env {
		if err := kube.CheckSetting("-e", kv); err != nil {
			return err
		}
	}
	for _, kv := range r.Tags {
		if err := kube.CheckSetting("--tag", kv); err != nil {
			return err
		}
	}
	return nil
}

// Warnings warn of the URLs given to the pods (--base-url, --out,
// --server-metrics, --gpu-metrics) that name this machine's loopback,
// which in a pod is the pod, and of nvidia-smi, which a pod runs on its
// own node.
func (r Run) Warnings() []string {
	var warnings []string
	if w := kube.LoopbackWarning("--base-url "+r.BaseURL, r.BaseURL); w != "" {
		warnings = append(warnings, w)
	}
	for _, spec := range r.Outs {
		_, value, _ := strings.Cut(spec, "=")
		if w := kube.LoopbackWarning("--out "+spec, value); w != "" {
			warnings = append(warnings, w)
		}
	}
	for _, target := range r.metricsTargets() {
		if w := kube.LoopbackWarning(target.flag+" "+target.url, target.url); w != "" {
			warnings = append(warnings, w)
		}
	}
	if slices.Contains(r.GPUMetrics, serverwatch.NvidiaSMI) {
		warnings = append(warnings, "--gpu-metrics nvidia-smi: instance 0's pod runs nvidia-smi on its own node, which has it only when the pod is given GPUs, "+
			"not the server's: give the DCGM exporter's URL the pods reach (http://HOST:9400/metrics)")
	}
	return warnings
}

// metricsTarget is a URL a flag names for the pods to read metrics at.
type metricsTarget struct{ flag, url string }

// metricsTargets are the URLs of --server-metrics and --gpu-metrics
// (nvidia-smi apart), which instance 0's pod reads.
func (r Run) metricsTargets() []metricsTarget {
	var out []metricsTarget
	for _, u := range r.ServerMetrics {
		out = append(out, metricsTarget{"--server-metrics", u})
	}
	for _, u := range r.GPUMetrics {
		if u != serverwatch.NvidiaSMI {
			out = append(out, metricsTarget{"--gpu-metrics", u})
		}
	}
	return out
}

// HasOut reports whether the --out flags include the output kind.
func (r Run) HasOut(kind string) bool {
	for _, spec := range r.Outs {
		if name, _, _ := strings.Cut(spec, "="); name == kind {
			return true
		}
	}
	return false
}

// Script is the script the pods run, loaded as a run loads it.
type Script struct {
	// Path is the script as given; Stock says it is a stock scenario,
	// built into llmrun.
	Path  string
	Stock bool
	// Engine is the configuration it was loaded with, Loaded the engine
	// and Read the files it read as it loaded (FilesRead).
	Engine engine.Config
	Loaded *engine.Engine
	Read   []string
	// Files are the files given with --file; Tokenizer is --tokenizer.
	Files     []string
	Tokenizer string
}

// Placed is where the pods have the script and its files.
type Placed struct {
	Layout *kube.Layout
	// Script is the script as the pods name it.
	Script string
	// InPod are the flags whose values name a file, with the file where
	// the pods have it (an absolute path; a relative one is the pods'
	// too, their working directory being this one's place among the
	// files).
	InPod map[string]string
}

// Place lays out the ConfigMap's files (the script, its imports, the
// files it read, each --file and a --tokenizer file) and checks that the
// script loads from them alone: a file the pods would miss fails here
// rather than in every pod.
func Place(ctx context.Context, s Script) (*Placed, error) {
	files := slices.Concat(s.Loaded.ScriptFiles(), s.Read, s.Files)
	tokenizerFile := false
	if info, err := os.Stat(s.Tokenizer); err == nil && info.Mode().IsRegular() {
		// --tokenizer FILE: the file goes with the pods.
		files, tokenizerFile = append(files, s.Tokenizer), true
	}
	scriptFile := s.Path
	if s.Stock {
		scriptFile = ""
	}
	layout, err := kube.NewLayout(".", scriptFile, files)
	if err != nil {
		return nil, err
	}
	p := &Placed{Layout: layout, Script: s.Path, InPod: map[string]string{}}
	if tokenizerFile && filepath.IsAbs(s.Tokenizer) {
		p.InPod["tokenizer"] = layout.InPod(s.Tokenizer)
	}
	if !s.Stock {
		p.Script = layout.InPod(s.Path)
		if err := loadsFromFiles(ctx, s.Engine, layout, s.Path); err != nil {
			return nil, fmt.Errorf("the script does not load from the ConfigMap's files alone (the script, its imports, the files it read and each --file): %w", err)
		}
	}
	return p, nil
}

// loadsFromFiles loads the script as the pods will, from a copy of the
// ConfigMap's files alone.
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
	// Its own resolver of paths, reading from the copy; the first load
	// told the script's output and warnings already.
	cfg.Modules, cfg.Paths, cfg.Logger = nil, nil, slog.New(slog.DiscardHandler)
	// A relative path is the pods' too: their working directory is this
	// one's place among the files. An absolute one outside the copy is a
	// file of this machine's.
	var read FilesRead
	cfg.FileRead = read.Add
	if _, _, err := runner.Load(ctx, cfg, nil); err != nil {
		// Named as the pods will name it.
		return errors.New(strings.ReplaceAll(err.Error(), dir, kube.MountDir))
	}
	for _, path := range read.List() {
		if filepath.IsAbs(path) && !kube.Within(path, dir) {
			return fmt.Errorf("it reads %s by its absolute path, which the pods do not have: name it relative to the script", path)
		}
	}
	return nil
}

// FilesRead collects the files a script reads as it loads
// (engine.Config.FileRead).
type FilesRead struct {
	mu    sync.Mutex
	paths []string
}

// Add is engine.Config.FileRead.
func (r *FilesRead) Add(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, path)
}

// List is the files read so far.
func (r *FilesRead) List() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.paths)
}

// nonName are the characters a Kubernetes name cannot have.
var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// DefaultName names the manifests after the script: llmrun-chat for
// chat.js or stock:chat.
func DefaultName(script string) string {
	base := filepath.Base(strings.TrimPrefix(script, scripts.Prefix))
	base = strings.TrimSuffix(base, filepath.Ext(base))
	name := "llmrun-" + strings.Trim(nonName.ReplaceAllString(strings.ToLower(base), "-"), "-")
	return strings.TrimSuffix(name[:min(len(name), 40)], "-")
}
