// Package runflags reads the command line of a run, which llmrun run,
// inspect and kube share: its flags, the script and its environment, the
// target, the tags, the objectives, the server metrics, the execution
// segment and the instance flags, into the configuration runner.Run and
// runner.Load take.
package runflags

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
	"github.com/llmrun/llmrun/runtime/spelling"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/scripts"
)

// Flags are the flags of "llmrun run", which inspect and kube share.
type Flags struct {
	VUs           int
	Duration      time.Duration
	Iterations    int
	Stages        stageFlag
	Env           []string
	SystemEnv     bool
	BaseURL       string
	APIKeyEnv     string
	Model         string
	Timeout       time.Duration
	IdleTimeout   time.Duration
	InitTimeout   time.Duration
	Tokenizer     string
	Seed          int64
	Segment       string
	Sequence      string
	SummaryExport string
	Outs          []string
	Tags          []string
	TestID        string
	SLO           string
	Goodput       string
	Quiet         bool
	ProgressEvery time.Duration
	NoColor       bool
	NoPreflight   bool
	// The servers' metrics and GPU telemetry read beside the run.
	ServerMetrics         []string
	ServerMetricsPreset   string
	ServerMetricsInterval time.Duration
	NoServerMetrics       bool
	GPUMetrics            []string
	// SendsNothing is set by a command that sends no request (inspect,
	// kube): an --api-key-env naming an unset variable is then not an
	// error, and a run with no target loads against a placeholder
	// (llmconfig.Placeholder) rather than start the simulator.
	SendsNothing bool
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.IntVarP(&f.VUs, "vus", "u", 1, "number of VUs (concurrent users); with -d or -i, replaces the script's scenarios; with -s, the VUs at the start")
	fs.DurationVarP(&f.Duration, "duration", "d", 0, "test duration, e.g. 30s or 5m (constant-vus)")
	fs.IntVarP(&f.Iterations, "iterations", "i", 0, "total iterations shared by the VUs (shared-iterations)")
	fs.VarP(&f.Stages, "stage", "s", "add a stage DURATION:TARGET, e.g. 30s:10 (repeatable; ramping-vus starting at -u)")
	fs.StringArrayVarP(&f.Env, "env", "e", nil, "set KEY=VALUE in the script's __ENV (repeatable)")
	fs.BoolVar(&f.SystemEnv, "include-system-env-vars", true, "expose the process environment in __ENV")
	fs.StringVar(&f.BaseURL, "base-url", "", "OpenAI-compatible server, e.g. http://127.0.0.1:8000 or .../v1 (default $LLMRUN_BASE_URL, $OPENAI_BASE_URL, else the built-in simulator)")
	fs.StringVar(&f.APIKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (default OPENAI_API_KEY)")
	fs.StringVar(&f.Model, "model", "", "model for requests that name none (default $LLMRUN_MODEL, else the first model the server lists at /v1/models)")
	fs.DurationVar(&f.Timeout, "timeout", llm.DefaultTimeout, "total timeout of one request")
	fs.StringVar(&f.Tokenizer, "tokenizer", "", "tokenizer ("+strings.Join(tokenizer.Encodings, ", ")+", a Hugging Face model id ORG/NAME[@REVISION], or a tokenizer.json file) that synthesized prompts are measured with, and that counts output tokens where the server sends no usage and checks its usage where it does")
	fs.DurationVar(&f.IdleTimeout, "idle-timeout", llm.DefaultIdleTimeout, "longest silence of a response body once it has started, e.g. between two chunks of a stream (0: none)")
	fs.DurationVar(&f.InitTimeout, "init-timeout", engine.DefaultInitTimeout, "longest the init code of one VU may run, module calls included; longer init code fails the run (exit 107; 0: no limit)")
	fs.StringVar(&f.Segment, "execution-segment", "", "run only this part of the test plan, e.g. 1/3:2/3 (also 0:1/3, 50%:100%, 0.5:1): one process of several that together run it all; needs --seed (see docs/distributed.md)")
	fs.StringVar(&f.Sequence, "execution-segment-sequence", "", "the points that cut the plan among the processes, e.g. 0,1/3,2/3,1; --execution-segment is one of its segments (default: the segment and the gaps on either side)")
	fs.Int64Var(&f.Seed, "seed", 0, "seed for the simulator, each VU's Math.random and the data module's lengths, prompts and samples (default: drawn for each run, printed and stored, so that no run replays the last one's prompts)")
	fs.StringVar(&f.SummaryExport, "summary-export", "", "write the end-of-run summary as JSON to this file")
	fs.StringArrayVar(&f.Outs, "out", nil, "also send results to NAME=VALUE (repeatable): json=FILE (the result file), jsonl=FILE or csv=FILE (a record per request), "+
		"html=FILE (the report), prometheus=HOST:PORT (live metrics), influxdb=URL (e.g. http://127.0.0.1:8086?bucket=llmrun; token from $"+influxdb.TokenEnv+")")
	fs.StringArrayVar(&f.Tags, "tag", nil, "add KEY=VALUE to every sample and stored point (repeatable)")
	fs.StringVar(&f.SLO, "slo", "", "serving-level objective for the capacity verdict of a sweep or search and the report, e.g. ttft_p99=2000,tpot_p99=50 (ms)")
	fs.StringVar(&f.Goodput, "goodput", "", "per-request bounds of goodput as vLLM's KEY:MS pairs, e.g. ttft:500,tpot:50,e2el:10000: the summary counts the requests that met every bound given")
	fs.StringVar(&f.TestID, "testid", "", "name of the test whose runs are compared over time in InfluxDB (default: the script's file name without extension)")
	fs.BoolVarP(&f.Quiet, "quiet", "q", false, "no banner and no live view")
	fs.DurationVar(&f.ProgressEvery, "progress-interval", console.DefaultProgressInterval, "how often the live view prints a line per scenario when stderr is not a terminal (a CI log)")
	fs.BoolVar(&f.NoColor, "no-color", false, "no ANSI colours in the output")
	fs.StringArrayVar(&f.ServerMetrics, "server-metrics", nil, "also read this server's own Prometheus metrics, e.g. http://HOST:8000/metrics (repeatable): its queue, KV cache, preemptions and TTFT histograms over the measured window go in the summary's server block (default: the /metrics at --base-url's root, when a known engine's)")
	fs.StringVar(&f.ServerMetricsPreset, "server-metrics-preset", "", "read --server-metrics as this engine's ("+strings.Join(engines.Names(), ", ")+"; default: detected from the names it exposes)")
	fs.DurationVar(&f.ServerMetricsInterval, "server-metrics-interval", 0, "how often the server and GPU metrics are read (default 1s, or options.serverMetrics.interval)")
	fs.BoolVar(&f.NoServerMetrics, "no-server-metrics", false, "read no server or GPU metrics, and do not look for the base URL's /metrics")
	fs.StringArrayVar(&f.GPUMetrics, "gpu-metrics", nil, "also read GPU telemetry: a DCGM exporter's URL (http://HOST:9400/metrics) or nvidia-smi on this host (repeatable): utilisation, memory, power and energy per output token")
	fs.BoolVar(&f.NoPreflight, "no-preflight", false, "send no preflight request: by default one small request to each known target checks it answers before any VU starts, and a failure no load can fix stops the run (exit 110)")
}

// RunConfig is the run the parsed command line asks for: the engine's
// configuration with this process's share of the plan (its instance's, or
// its --execution-segment's), and what the runner does with the results.
// The script's console output and the run's warnings go through screen,
// which keeps them clear of the live view; instance 0 says on stderr
// where it listens. The caller sets what only the process knows: Color
// and Version. An error is a bad command line.
func (a Args) RunConfig(inst Instances, getenv func(string) string, stdout, stderr, screen io.Writer) (runner.Config, error) {
	f := a.flags
	engineCfg := a.EngineConfig(screen)
	rendezvousCfg, err := inst.Config(a.fs, getenv, stderr)
	if err == nil {
		err = runner.SharePlan(&engineCfg, rendezvousCfg, a.SeedDrawn)
	}
	if err != nil {
		return runner.Config{}, err
	}
	if f.ProgressEvery <= 0 {
		return runner.Config{}, fmt.Errorf("--progress-interval must be positive, got %s", f.ProgressEvery)
	}
	return runner.Config{
		Engine:           engineCfg,
		SeedDrawn:        a.SeedDrawn,
		TestID:           f.TestID,
		SLO:              a.SLO,
		Goodput:          a.Goodput,
		Outputs:          f.Outs,
		SummaryExport:    f.SummaryExport,
		Getenv:           getenv,
		NoPreflight:      f.NoPreflight,
		Stdout:           stdout,
		Stderr:           screen,
		Quiet:            f.Quiet,
		ProgressInterval: f.ProgressEvery,
		Rendezvous:       rendezvousCfg,
		ServerMetrics:    a.ServerMetrics,
	}, nil
}

// serverMetricsFlags reads --server-metrics, --server-metrics-preset,
// --server-metrics-interval, --gpu-metrics and --no-server-metrics.
func serverMetricsFlags(fs *pflag.FlagSet, f Flags) (runner.ServerMetrics, error) {
	sm := runner.ServerMetrics{GPUs: f.GPUMetrics, Interval: f.ServerMetricsInterval, Disabled: f.NoServerMetrics}
	for _, u := range f.ServerMetrics {
		sm.Servers = append(sm.Servers, serverwatch.Server{URL: u, Preset: f.ServerMetricsPreset})
	}
	switch {
	case fs.Changed("server-metrics-interval") && f.ServerMetricsInterval <= 0:
		return sm, fmt.Errorf("--server-metrics-interval must be positive, got %s", f.ServerMetricsInterval)
	case f.ServerMetricsPreset != "" && len(f.ServerMetrics) == 0:
		return sm, errors.New("--server-metrics-preset reads the --server-metrics URLs, and none is given")
	}
	return sm, sm.Check()
}

// Args is what run and inspect take from their command lines.
type Args struct {
	Script string
	Source []byte // a stock scenario's source; nil for a file
	Env    map[string]string
	LLM    llm.Config
	Tags   map[string]string // --tag
	SLO    *summary.SLO      // --slo; nil when not given
	// Goodput are the --goodput bounds; zero when not given.
	Goodput summary.GoodputBounds
	// ServerMetrics are the --server-metrics, --gpu-metrics and
	// --no-server-metrics flags.
	ServerMetrics runner.ServerMetrics
	// SeedDrawn says that the run's seed was drawn, not given with --seed.
	SeedDrawn bool
	// Segment is the --execution-segment's part of the plan; the zero
	// Part runs it all.
	Segment segment.Part
	// The command line they were parsed from.
	fs    *pflag.FlagSet
	flags *Flags
}

// Parse parses a run-style command line into f. When ok is false
// it has printed why (or the help) and code is the exit code.
func Parse(ctx context.Context, cmd string, fs *pflag.FlagSet, f *Flags, args []string, stderr io.Writer, getenv func(string) string) (a Args, code int, ok bool) {
	fail := func(format string, args ...any) (Args, int, bool) {
		fmt.Fprintf(stderr, cmd+": "+format+"\n", args...)
		return Args{}, exitcode.Usage, false
	}
	err := fs.Parse(args)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return Args{}, exitcode.OK, false
		}
		return fail("%v\nRun '%s --help' for usage.", spelling.FlagHint(err, fs), cmd)
	}
	if fs.NArg() != 1 {
		return fail("expected one script, got %d arguments\nRun '%s --help' for usage.", fs.NArg(), cmd)
	}
	a.Script, a.fs, a.flags = fs.Arg(0), fs, f
	if f.InitTimeout < 0 {
		return fail("--init-timeout must not be negative, got %s", f.InitTimeout)
	}
	if a.Segment, err = parseSegment(*f); err != nil {
		return fail("%v", err)
	}
	if !fs.Changed("seed") {
		f.Seed, a.SeedDrawn = runner.DrawSeed(), true
	}
	if a.Source, err = loadScript(a.Script); err != nil {
		return fail("%v", err)
	}
	if a.Env, err = scriptEnv(*f, getenv); err != nil {
		return fail("%v", err)
	}
	if a.LLM, err = llmconfig.Resolve(ctx, f.target(), getenv); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return Args{}, llmconfig.ExitCode(ctx, err), false
	}
	if a.Tags, err = ParseTags(f.Tags); err != nil {
		return fail("%v", err)
	}
	if err := a.objectives(fs, *f); err != nil {
		return fail("%v", err)
	}
	if a.ServerMetrics, err = serverMetricsFlags(fs, *f); err != nil {
		return fail("%v", err)
	}
	return a, exitcode.OK, true
}

// objectives reads --slo and --goodput.
func (a *Args) objectives(fs *pflag.FlagSet, f Flags) error {
	if f.SLO != "" {
		slo, err := runner.ParseSLO(f.SLO)
		if err != nil {
			return fmt.Errorf("--slo: %w", err)
		}
		a.SLO = &slo
	}
	if fs.Changed("goodput") {
		var err error
		if a.Goodput, err = runner.ParseGoodput(f.Goodput); err != nil {
			return fmt.Errorf("--goodput: %w", err)
		}
	}
	return nil
}

// parseSegment reads --execution-segment and --execution-segment-sequence
// into the part of the plan this process runs (which needs --seed:
// runner.SharePlan).
func parseSegment(f Flags) (segment.Part, error) {
	if f.Segment == "" {
		if f.Sequence != "" {
			return segment.Part{}, errors.New("--execution-segment-sequence needs --execution-segment: the segment of the sequence this process runs")
		}
		return segment.Part{}, nil
	}
	seg, err := segment.Parse(f.Segment)
	if err != nil {
		return segment.Part{}, fmt.Errorf("--execution-segment: %w", err)
	}
	var seq segment.Sequence
	if f.Sequence != "" {
		if seq, err = segment.ParseSequence(f.Sequence); err != nil {
			return segment.Part{}, fmt.Errorf("--execution-segment-sequence: %w", err)
		}
	}
	part, err := segment.NewPart(seq, seg)
	if err != nil {
		return segment.Part{}, fmt.Errorf("--execution-segment %s: %w", f.Segment, err)
	}
	return part, nil
}

// ParseTags reads the --tag KEY=VALUE flags (of a run, and of trend).
func ParseTags(kvs []string) (map[string]string, error) {
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
func (a Args) sourceFS() fs.FS {
	if a.Source == nil {
		return nil
	}
	return scripts.Files()
}

// EngineConfig is the engine's configuration for the parsed command line;
// with SendsNothing, its target is at least the placeholder.
func (a Args) EngineConfig(stderr io.Writer) engine.Config {
	f := a.flags
	cfg := engine.Config{
		ScriptPath:  a.Script,
		Source:      a.Source,
		SourceFS:    a.sourceFS(),
		Env:         a.Env,
		Overrides:   overrides(a.fs, *f, a.Segment),
		LLM:         a.LLM,
		Seed:        f.Seed,
		Tags:        a.Tags,
		Logger:      console.Logger(stderr),
		InitTimeout: f.InitTimeout,
	}
	if f.SendsNothing {
		llmconfig.Placeholder(&cfg.LLM)
	}
	return cfg
}

// overrides turns the load-shape flags the user set, and the execution
// segment, into engine overrides.
func overrides(fs *pflag.FlagSet, f Flags, part segment.Part) engine.Overrides {
	o := engine.Overrides{Segment: part}
	if fs.Changed("vus") {
		o.VUs = &f.VUs
	}
	if fs.Changed("duration") {
		o.Duration = &f.Duration
	}
	if fs.Changed("iterations") {
		o.Iterations = &f.Iterations
	}
	if fs.Changed("stage") {
		o.Stages = f.Stages
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
func scriptEnv(f Flags, getenv func(string) string) (map[string]string, error) {
	env := make(map[string]string)
	if f.SystemEnv {
		for _, kv := range os.Environ() {
			if k, _, ok := strings.Cut(kv, "="); ok {
				env[k] = getenv(k)
			}
		}
	}
	return env, addKeyValues(env, "-e", f.Env)
}

// target are the flags of the run's target.
func (f Flags) target() llmconfig.Settings {
	return llmconfig.Settings{BaseURL: f.BaseURL, Model: f.Model, APIKeyEnv: f.APIKeyEnv, Tokenizer: f.Tokenizer,
		Timeout: f.Timeout, IdleTimeout: f.IdleTimeout, SendsNothing: f.SendsNothing}
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

// StockList lists the stock scenarios, one a line, as a command line
// names them.
func StockList() string {
	var b strings.Builder
	for _, n := range scripts.Names() {
		fmt.Fprintf(&b, "  %s%s\n", scripts.Prefix, n)
	}
	return b.String()
}
