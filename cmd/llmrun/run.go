package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/llmconfig"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/scripts"
)

const runUsage = `Usage: llmrun run [flags] SCRIPT

Runs a scenario script (.js or .ts) and prints a serving summary: requests,
throughput, TTFT, TPOT, ITL and end-to-end latency percentiles, errors by
class and checks.

The target is --base-url, else $LLMRUN_BASE_URL, else $OPENAI_BASE_URL, else
the built-in simulator started in-process. -u, -d, -i and -s replace the
script's scenarios with one (k6 rules: -d alone → constant-vus, -i →
shared-iterations, -s → ramping-vus starting at -u VUs).

SCRIPT may name a stock scenario built into llmrun, configured with -e:
%s

Flags:
`

// runFlags are the flags of "llmrun run".
type runFlags struct {
	vus           int
	duration      time.Duration
	iterations    int
	stages        stageFlag
	env           []string
	systemEnv     bool
	baseURL       string
	apiKeyEnv     string
	model         string
	timeout       time.Duration
	idleTimeout   time.Duration
	initTimeout   time.Duration
	tokenizer     string
	seed          int64
	segment       string
	sequence      string
	summaryExport string
	outs          []string
	tags          []string
	testID        string
	slo           string
	goodput       string
	quiet         bool
	progressEvery time.Duration
	noColor       bool
	noPreflight   bool
	// The servers' metrics and GPU telemetry read beside the run.
	serverMetrics         []string
	serverMetricsPreset   string
	serverMetricsInterval time.Duration
	noServerMetrics       bool
	gpuMetrics            []string
	// sendsNothing is set by a command that sends no request (inspect):
	// an --api-key-env naming an unset variable is then not an error.
	sendsNothing bool
}

func (f *runFlags) register(fs *pflag.FlagSet) {
	fs.IntVarP(&f.vus, "vus", "u", 1, "number of VUs (concurrent users); with -d or -i, replaces the script's scenarios; with -s, the VUs at the start")
	fs.DurationVarP(&f.duration, "duration", "d", 0, "test duration, e.g. 30s or 5m (constant-vus)")
	fs.IntVarP(&f.iterations, "iterations", "i", 0, "total iterations shared by the VUs (shared-iterations)")
	fs.VarP(&f.stages, "stage", "s", "add a stage DURATION:TARGET, e.g. 30s:10 (repeatable; ramping-vus starting at -u)")
	fs.StringArrayVarP(&f.env, "env", "e", nil, "set KEY=VALUE in the script's __ENV (repeatable)")
	fs.BoolVar(&f.systemEnv, "include-system-env-vars", true, "expose the process environment in __ENV")
	fs.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible server, e.g. http://127.0.0.1:8000 or .../v1 (default $LLMRUN_BASE_URL, $OPENAI_BASE_URL, else the built-in simulator)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (default OPENAI_API_KEY)")
	fs.StringVar(&f.model, "model", "", "model for requests that name none (default $LLMRUN_MODEL, else the first model the server lists at /v1/models)")
	fs.DurationVar(&f.timeout, "timeout", llm.DefaultTimeout, "total timeout of one request")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "tokenizer ("+strings.Join(tokenizer.Encodings, ", ")+", a Hugging Face model id ORG/NAME[@REVISION], or a tokenizer.json file) that synthesized prompts are measured with, and that counts output tokens where the server sends no usage and checks its usage where it does")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", llm.DefaultIdleTimeout, "longest silence of a response body once it has started, e.g. between two chunks of a stream (0: none)")
	fs.DurationVar(&f.initTimeout, "init-timeout", engine.DefaultInitTimeout, "longest the init code of one VU may run, module calls included; longer init code fails the run (exit 107; 0: no limit)")
	fs.StringVar(&f.segment, "execution-segment", "", "run only this part of the test plan, e.g. 1/3:2/3 (also 0:1/3, 50%:100%, 0.5:1): one process of several that together run it all; needs --seed (see docs/distributed.md)")
	fs.StringVar(&f.sequence, "execution-segment-sequence", "", "the points that cut the plan among the processes, e.g. 0,1/3,2/3,1; --execution-segment is one of its segments (default: the segment and the gaps on either side)")
	fs.Int64Var(&f.seed, "seed", 0, "seed for the simulator, each VU's Math.random and the data module's lengths, prompts and samples (default: drawn for each run, printed and stored, so that no run replays the last one's prompts)")
	fs.StringVar(&f.summaryExport, "summary-export", "", "write the end-of-run summary as JSON to this file")
	fs.StringArrayVar(&f.outs, "out", nil, "also send results to NAME=VALUE (repeatable): json=FILE (the result file), jsonl=FILE or csv=FILE (a record per request), "+
		"html=FILE (the report), prometheus=HOST:PORT (live metrics), influxdb=URL (e.g. http://127.0.0.1:8086?bucket=llmrun; token from $"+influxdb.TokenEnv+")")
	fs.StringArrayVar(&f.tags, "tag", nil, "add KEY=VALUE to every sample and stored point (repeatable)")
	fs.StringVar(&f.slo, "slo", "", "serving-level objective for the capacity verdict of a sweep and the report, e.g. ttft_p99=2000,tpot_p99=50 (ms)")
	fs.StringVar(&f.goodput, "goodput", "", "per-request bounds of goodput as vLLM's KEY:MS pairs, e.g. ttft:500,tpot:50,e2el:10000: the summary counts the requests that met every bound given")
	fs.StringVar(&f.testID, "testid", "", "name of the test whose runs are compared over time in InfluxDB (default: the script's file name without extension)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no banner and no live view")
	fs.DurationVar(&f.progressEvery, "progress-interval", console.DefaultProgressInterval, "how often the live view prints a line per scenario when stderr is not a terminal (a CI log)")
	fs.BoolVar(&f.noColor, "no-color", false, "no ANSI colours in the output")
	fs.StringArrayVar(&f.serverMetrics, "server-metrics", nil, "also read this server's own Prometheus metrics, e.g. http://HOST:8000/metrics (repeatable): its queue, KV cache, preemptions and TTFT histograms over the measured window go in the summary's server block (default: the /metrics at --base-url's root, when a known engine's)")
	fs.StringVar(&f.serverMetricsPreset, "server-metrics-preset", "", "read --server-metrics as this engine's ("+strings.Join(engines.Names(), ", ")+"; default: detected from the names it exposes)")
	fs.DurationVar(&f.serverMetricsInterval, "server-metrics-interval", 0, "how often the server and GPU metrics are read (default 1s, or options.serverMetrics.interval)")
	fs.BoolVar(&f.noServerMetrics, "no-server-metrics", false, "read no server or GPU metrics, and do not look for the base URL's /metrics")
	fs.StringArrayVar(&f.gpuMetrics, "gpu-metrics", nil, "also read GPU telemetry: a DCGM exporter's URL (http://HOST:9400/metrics) or nvidia-smi on this host (repeatable): utilisation, memory, power and energy per output token")
	fs.BoolVar(&f.noPreflight, "no-preflight", false, "send no preflight request: by default one small request to each known target checks it answers before any VU starts, and a failure no load can fix stops the run (exit 110)")
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("llmrun run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SetInterspersed(true)
	var f runFlags
	f.register(fs)
	var inst instanceFlags
	inst.register(fs)
	fs.Usage = func() { printHelp(stdout, fmt.Sprintf(runUsage, stockList()), fs) }
	a, code, ok := parseScriptArgs(ctx, "llmrun run", fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	// The script's console output and the run's warnings go through the
	// screen, which keeps them clear of the live view.
	screen := console.NewScreen(stderr)
	engineCfg := a.engineConfig(fs, f, screen)
	rendezvousCfg, err := inst.config(fs, getenv, stderr)
	if err == nil {
		err = runner.SharePlan(&engineCfg, rendezvousCfg, a.seedDrawn)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmrun run: %v\n", err)
		return exitcode.Usage
	}
	if f.progressEvery <= 0 {
		fmt.Fprintf(stderr, "llmrun run: --progress-interval must be positive, got %s\n", f.progressEvery)
		return exitcode.Usage
	}
	return runner.Run(ctx, runner.Config{
		Engine:           engineCfg,
		SeedDrawn:        a.seedDrawn,
		TestID:           f.testID,
		SLO:              a.slo,
		Goodput:          a.goodput,
		Outputs:          f.outs,
		SummaryExport:    f.summaryExport,
		Getenv:           getenv,
		NoPreflight:      f.noPreflight,
		Stdout:           stdout,
		Stderr:           screen,
		Quiet:            f.quiet,
		ProgressInterval: f.progressEvery,
		Color:            useColor(f.noColor, stdout, getenv),
		Version:          version(),
		Rendezvous:       rendezvousCfg,
		ServerMetrics:    a.serverMetrics,
	}).ExitCode()
}

// serverMetricsFlags reads --server-metrics, --server-metrics-preset,
// --server-metrics-interval, --gpu-metrics and --no-server-metrics.
func serverMetricsFlags(fs *pflag.FlagSet, f runFlags) (runner.ServerMetrics, error) {
	sm := runner.ServerMetrics{GPUs: f.gpuMetrics, Interval: f.serverMetricsInterval, Disabled: f.noServerMetrics}
	for _, u := range f.serverMetrics {
		sm.Servers = append(sm.Servers, serverwatch.Server{URL: u, Preset: f.serverMetricsPreset})
	}
	switch {
	case fs.Changed("server-metrics-interval") && f.serverMetricsInterval <= 0:
		return sm, fmt.Errorf("--server-metrics-interval must be positive, got %s", f.serverMetricsInterval)
	case f.serverMetricsPreset != "" && len(f.serverMetrics) == 0:
		return sm, errors.New("--server-metrics-preset reads the --server-metrics URLs, and none is given")
	}
	return sm, sm.Check()
}

// scriptArgs is what run and inspect take from their command lines.
type scriptArgs struct {
	script string
	source []byte // a stock scenario's source; nil for a file
	env    map[string]string
	llm    llm.Config
	tags   map[string]string // --tag
	slo    *summary.SLO      // --slo; nil when not given
	// goodput are the --goodput bounds; zero when not given.
	goodput summary.GoodputBounds
	// serverMetrics are the --server-metrics, --gpu-metrics and
	// --no-server-metrics flags.
	serverMetrics runner.ServerMetrics
	// seedDrawn says that the run's seed was drawn, not given with --seed.
	seedDrawn bool
	// segment is the --execution-segment's part of the plan; the zero
	// Part runs it all.
	segment segment.Part
}

// parseScriptArgs parses a run-style command line into f. When ok is false
// it has printed why (or the help) and code is the exit code.
func parseScriptArgs(ctx context.Context, cmd string, fs *pflag.FlagSet, f *runFlags, args []string, stderr io.Writer, getenv func(string) string) (a scriptArgs, code int, ok bool) {
	fail := func(format string, args ...any) (scriptArgs, int, bool) {
		fmt.Fprintf(stderr, cmd+": "+format+"\n", args...)
		return scriptArgs{}, exitcode.Usage, false
	}
	err := fs.Parse(args)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return scriptArgs{}, exitcode.OK, false
		}
		return fail("%v\nRun '%s --help' for usage.", err, cmd)
	}
	if fs.NArg() != 1 {
		return fail("expected one script, got %d arguments\nRun '%s --help' for usage.", fs.NArg(), cmd)
	}
	a.script = fs.Arg(0)
	if f.initTimeout < 0 {
		return fail("--init-timeout must not be negative, got %s", f.initTimeout)
	}
	if a.segment, err = parseSegment(*f); err != nil {
		return fail("%v", err)
	}
	if !fs.Changed("seed") {
		f.seed, a.seedDrawn = runner.DrawSeed(), true
	}
	if a.source, err = loadScript(a.script); err != nil {
		return fail("%v", err)
	}
	if a.env, err = scriptEnv(*f, getenv); err != nil {
		return fail("%v", err)
	}
	if a.llm, err = llmconfig.Resolve(ctx, f.target(), getenv); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return scriptArgs{}, llmConfigCode(ctx, err), false
	}
	if a.tags, err = parseTags(f.tags); err != nil {
		return fail("%v", err)
	}
	if err := a.objectives(fs, *f); err != nil {
		return fail("%v", err)
	}
	if a.serverMetrics, err = serverMetricsFlags(fs, *f); err != nil {
		return fail("%v", err)
	}
	return a, exitcode.OK, true
}

// objectives reads --slo and --goodput.
func (a *scriptArgs) objectives(fs *pflag.FlagSet, f runFlags) error {
	if f.slo != "" {
		slo, err := runner.ParseSLO(f.slo)
		if err != nil {
			return fmt.Errorf("--slo: %w", err)
		}
		a.slo = &slo
	}
	if fs.Changed("goodput") {
		var err error
		if a.goodput, err = runner.ParseGoodput(f.goodput); err != nil {
			return fmt.Errorf("--goodput: %w", err)
		}
	}
	return nil
}

// parseSegment reads --execution-segment and --execution-segment-sequence
// into the part of the plan this process runs (which needs --seed:
// runner.SharePlan).
func parseSegment(f runFlags) (segment.Part, error) {
	if f.segment == "" {
		if f.sequence != "" {
			return segment.Part{}, errors.New("--execution-segment-sequence needs --execution-segment: the segment of the sequence this process runs")
		}
		return segment.Part{}, nil
	}
	seg, err := segment.Parse(f.segment)
	if err != nil {
		return segment.Part{}, fmt.Errorf("--execution-segment: %w", err)
	}
	var seq segment.Sequence
	if f.sequence != "" {
		if seq, err = segment.ParseSequence(f.sequence); err != nil {
			return segment.Part{}, fmt.Errorf("--execution-segment-sequence: %w", err)
		}
	}
	part, err := segment.NewPart(seq, seg)
	if err != nil {
		return segment.Part{}, fmt.Errorf("--execution-segment %s: %w", f.segment, err)
	}
	return part, nil
}

// parseTags reads the --tag KEY=VALUE flags.
func parseTags(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	tags := make(map[string]string, len(kvs))
	return tags, addKeyValues(tags, "--tag", kvs)
}

// addKeyValues adds each KEY=VALUE of kvs to m; an error names flag.
func addKeyValues(m map[string]string, flag string, kvs []string) error {
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%s %q: expected KEY=VALUE", flag, kv)
		}
		m[k] = v
	}
	return nil
}

// sourceFS is where a stock scenario's imports are found; nil for a file.
func (a scriptArgs) sourceFS() fs.FS {
	if a.source == nil {
		return nil
	}
	return scripts.Files()
}

// engineConfig is the engine's configuration for the parsed command line.
func (a scriptArgs) engineConfig(fs *pflag.FlagSet, f runFlags, stderr io.Writer) engine.Config {
	return engine.Config{
		ScriptPath:  a.script,
		Source:      a.source,
		SourceFS:    a.sourceFS(),
		Env:         a.env,
		Overrides:   overrides(fs, f, a.segment),
		LLM:         a.llm,
		Seed:        f.seed,
		Tags:        a.tags,
		Logger:      console.Logger(stderr),
		InitTimeout: f.initTimeout,
	}
}

// overrides turns the load-shape flags the user set, and the execution
// segment, into engine overrides.
func overrides(fs *pflag.FlagSet, f runFlags, part segment.Part) engine.Overrides {
	o := engine.Overrides{Segment: part}
	if fs.Changed("vus") {
		o.VUs = &f.vus
	}
	if fs.Changed("duration") {
		o.Duration = &f.duration
	}
	if fs.Changed("iterations") {
		o.Iterations = &f.iterations
	}
	if fs.Changed("stage") {
		o.Stages = f.stages
	}
	return o
}

// stageFlag collects the repeatable --stage DURATION:TARGET.
type stageFlag []executor.Stage

func (s *stageFlag) String() string { return strings.Join(s.GetSlice(), ",") }

func (s *stageFlag) Set(v string) error {
	st, err := executor.ParseStage(v)
	if err != nil {
		return err
	}
	*s = append(*s, st)
	return nil
}

func (s *stageFlag) Type() string { return "DURATION:TARGET" }

// GetSlice implements pflag.SliceValue: the stages one by one, as --stage
// takes them (llmrun kube passes them on).
func (s *stageFlag) GetSlice() []string {
	out := make([]string, len(*s))
	for i, st := range *s {
		out[i] = st.String()
	}
	return out
}

// Append implements pflag.SliceValue.
func (s *stageFlag) Append(v string) error { return s.Set(v) }

// Replace implements pflag.SliceValue.
func (s *stageFlag) Replace(vs []string) error {
	*s = nil
	for _, v := range vs {
		if err := s.Set(v); err != nil {
			return err
		}
	}
	return nil
}

// scriptEnv builds __ENV: the process environment (unless disabled), then
// each -e KEY=VALUE.
func scriptEnv(f runFlags, getenv func(string) string) (map[string]string, error) {
	env := make(map[string]string)
	if f.systemEnv {
		for _, kv := range os.Environ() {
			if k, _, ok := strings.Cut(kv, "="); ok {
				env[k] = getenv(k)
			}
		}
	}
	return env, addKeyValues(env, "-e", f.env)
}

// llmConfigCode is the exit code of llmconfig.Resolve's error: a signal
// stopped the download of --tokenizer's model, an invalid base URL is an
// invalid configuration (as the engine would find it), any other a bad
// flag.
func llmConfigCode(ctx context.Context, err error) int {
	var invalid *engine.ConfigError
	switch {
	case ctx.Err() != nil:
		return exitcode.Interrupted
	case errors.As(err, &invalid):
		return exitcode.InvalidConfig
	}
	return exitcode.Usage
}

// target are the flags of the run's target.
func (f runFlags) target() llmconfig.Settings {
	return llmconfig.Settings{BaseURL: f.baseURL, Model: f.model, APIKeyEnv: f.apiKeyEnv, Tokenizer: f.tokenizer,
		Timeout: f.timeout, IdleTimeout: f.idleTimeout, SendsNothing: f.sendsNothing}
}

// loadScript returns the source of a stock scenario, or nil after checking
// that a script file can be read (the engine reads it).
func loadScript(script string) ([]byte, error) {
	if strings.HasPrefix(script, scripts.Prefix) {
		return scripts.Source(script)
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("cannot open script %s: %v", script, output.WithoutPath(err))
	}
	return nil, nil
}

func stockList() string {
	var b strings.Builder
	for _, n := range scripts.Names() {
		fmt.Fprintf(&b, "  %s%s\n", scripts.Prefix, n)
	}
	return b.String()
}
