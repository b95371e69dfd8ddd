package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/llm/llmsim"
	"github.com/llmrun/llmrun/modules/tokenizer"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/js"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/output/influxdb"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
	"github.com/llmrun/llmrun/runtime/threshold"
	"github.com/llmrun/llmrun/runtime/timeline"
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
	tokenizer     string
	seed          int64
	summaryExport string
	outs          []string
	tags          []string
	testID        string
	slo           string
	quiet         bool
	noColor       bool
	noPreflight   bool
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
	fs.StringVar(&f.tokenizer, "tokenizer", "", "tokenizer ("+strings.Join(tokenizer.Encodings, ", ")+", or a tokenizer.json file) that synthesized prompts are measured with, and that counts output tokens where the server sends no usage and checks its usage where it does")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", llm.DefaultIdleTimeout, "longest silence of a response body once it has started, e.g. between two chunks of a stream (0: none)")
	fs.Int64Var(&f.seed, "seed", 0, "seed for the simulator, each VU's Math.random and the data module's lengths, prompts and samples (default: drawn for each run, printed and stored, so that no run replays the last one's prompts)")
	fs.StringVar(&f.summaryExport, "summary-export", "", "write the end-of-run summary as JSON to this file")
	fs.StringArrayVar(&f.outs, "out", nil, "also send results to NAME=VALUE, e.g. influxdb=http://127.0.0.1:8086?bucket=llmrun (token from $"+influxdb.TokenEnv+"; repeatable)")
	fs.StringArrayVar(&f.tags, "tag", nil, "add KEY=VALUE to every sample and stored point (repeatable)")
	fs.StringVar(&f.slo, "slo", "", "serving-level objective for the capacity verdict of a sweep and the report, e.g. ttft_p99=2000,tpot_p99=50 (ms)")
	fs.StringVar(&f.testID, "testid", "", "name of the test whose runs are compared over time in InfluxDB (default: the script's file name without extension)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no banner and no live progress line")
	fs.BoolVar(&f.noColor, "no-color", false, "no ANSI colours in the output")
	fs.BoolVar(&f.noPreflight, "no-preflight", false, "send no preflight request: by default one small request to each known target checks it answers before any VU starts, and a failure no load can fix stops the run (exit 110)")
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("llmrun run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SetInterspersed(true)
	var f runFlags
	f.register(fs)
	fs.Usage = func() { fmt.Fprintf(stderr, runUsage, stockList()); fs.PrintDefaults() }
	a, code, ok := parseScriptArgs("llmrun run", fs, &f, args, stderr, getenv)
	if !ok {
		return code
	}
	script, llmCfg := a.script, a.llm

	target := llm.RedactURL(llmCfg.BaseURL)
	if llmCfg.BaseURL == "" {
		simCfg := llmsim.DefaultConfig()
		simCfg.Seed = f.seed
		sim, err := llmsim.Listen(ctx, "127.0.0.1:0", simCfg)
		if err != nil {
			fmt.Fprintf(stderr, "llmrun run: starting the built-in simulator: %v\n", err)
			return exitError
		}
		defer sim.Close()
		llmCfg.BaseURL = sim.URL() + "/v1"
		if llmCfg.Model == "" {
			llmCfg.Model = simCfg.Model
		}
		target = "built-in simulator"
	}

	if llmCfg.Model == "" {
		llmCfg.Model = discoverModel(ctx, llmCfg, stderr)
	}

	color := useColor(f.noColor, stdout, getenv)
	a.llm = llmCfg
	exports, outSpecs := resultFiles(f.summaryExport, f.outs)
	outputs, err := newOutputs(outSpecs, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun run: %v\n", err)
		return exitUsage
	}
	// A file that cannot be written fails now, not after the run.
	if code, err := checkOutputFiles(exports, outSpecs); err != nil {
		fmt.Fprintf(stderr, "llmrun run: %v\n", err)
		return code
	}
	runInfo := output.Run{ID: newRunID(), TestID: f.testID, Tags: a.tags}
	if runInfo.TestID == "" {
		runInfo.TestID = defaultTestID(script)
	}
	engineCfg := a.engineConfig(fs, f, stderr)
	sinks := &requestSinks{outputs: outputs}
	engineCfg.Requests = sinks
	engine, err := engine.Load(ctx, engineCfg)
	if err != nil {
		return reportLoadError(stderr, script, err)
	}
	criteria, err := runCriteria(engine.Options(), a.slo, f.slo != "")
	if err != nil {
		return reportLoadError(stderr, script, err)
	}
	var probes []llm.Probe
	if !f.noPreflight {
		probes = engine.Preflight(ctx)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "llmrun run: interrupted before the test started")
			return exitInterrupted
		}
		if !preflightPassed(stderr, probes) {
			return exitPreflight
		}
	}

	runInfo.Start = time.Now()
	runInfo.Progress = func() output.Progress {
		p := engine.Progress()
		return output.Progress{ActiveVUs: int(p.ActiveVUs), MaxVUs: p.MaxVUs, OutputTokens: p.Arrived}
	}
	if err := outputs.start(ctx, runInfo); err != nil {
		fmt.Fprintf(stderr, "llmrun run: --out %v\n", err)
		return exitError
	}
	// After the outputs started: a listener on port 0 knows its port.
	if !f.quiet {
		banner(stdout, script, target, llmCfg, engine, outputs, f.seed, a.seedDrawn)
		for _, p := range probes {
			fmt.Fprintf(stdout, "  preflight: %s\n", console.ProbeLine(p))
		}
	}
	stopProgress := startProgress(engine, stderr, !f.quiet && isTerminal(stderr))
	// The timeline counts from the start of the run proper, after the VUs'
	// initialisation; no request is made before.
	sinks.timeline = timeline.New(time.Now(), engine.Progress)
	timelineCtx, stopTimeline := context.WithCancel(context.Background())
	timelineDone := make(chan struct{})
	go func() {
		sinks.timeline.Run(timelineCtx)
		close(timelineDone)
	}()
	rep, runErr := engine.Run(ctx)
	stopTimeline()
	<-timelineDone
	stopProgress()
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "llmrun run: stopped early; requests in flight were cut and counted as interrupted, not failed")
	}
	if rep == nil {
		return reportLoadError(stderr, script, runErr)
	}

	host, _ := os.Hostname()
	sum := summary.Build(rep, summary.Meta{
		Tool: "llmrun", Version: version(), Script: script, ScriptSHA256: engine.ScriptSHA256(),
		Target: target, BaseURL: llm.RedactURL(llmCfg.BaseURL), Seed: f.seed, SeedDrawn: a.seedDrawn, Host: host,
		OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		RunID: runInfo.ID, TestID: runInfo.TestID, Tags: runInfo.Tags, SLO: criteria.SLO, Options: resolvedOptions(engine),
	})
	sum.Preflight = probes
	sum.Timeline = sinks.timeline.Points(rep.End)
	sum.Capacity = capacity.Assess(sum, criteria)
	sum.Outputs = outputs.finish(sum)
	var after afterRun
	hs := handleSummary(ctx, engine, sum, stdout, stderr, color)
	if hs.printDefault {
		if err := console.Render(stdout, sum, textfmt.Style{Color: color}); err != nil {
			fmt.Fprintf(stderr, "llmrun run: printing the summary: %v\n", err)
			after.lost = true
		}
	}
	if hs.err != nil {
		fmt.Fprintf(stderr, "llmrun run: %v\n", hs.err)
		after.scriptFailed = hs.code == exitScriptError
		after.lost = after.lost || hs.code == exitError
	}
	for _, f := range exports {
		if err := writeResult(f, sum); err != nil {
			fmt.Fprintf(stderr, "llmrun run: %v\n", err)
			after.lost = true
		}
	}
	for _, line := range outputLosses(sum.Outputs) {
		fmt.Fprintf(stderr, "llmrun run: %s\n", line)
		after.lost = true
	}
	return exitCode(runExitCode(ctx, rep, runErr, sum, stderr), after)
}

// runExitCode is the exit code a finished run's outcome calls for, by
// precedence: interrupted (105), invalid options (104) or a script error
// (107), stopped by the early stop (111), aborted by a threshold (108), no
// successful request (111), a failed threshold (99); exitOK otherwise. It
// says on stderr why a run did not pass, where the summary does not.
func runExitCode(ctx context.Context, rep *engine.Report, runErr error, sum *summary.Summary, stderr io.Writer) int {
	switch {
	case ctx.Err() != nil:
		for _, err := range besidesInterruption(runErr) {
			fmt.Fprintf(stderr, "\nllmrun run: %v\n", err)
		}
		return exitInterrupted
	case runErr != nil:
		fmt.Fprintf(stderr, "\nllmrun run: %v\n", runErr)
		var cfgErr *engine.ConfigError
		if errors.As(runErr, &cfgErr) {
			return exitInvalidConfig
		}
		return exitScriptError
	case rep.EarlyStopped != nil:
		fmt.Fprintf(stderr, "\nllmrun run: stopped early: %s\n", rep.EarlyStopped)
		return exitNoSuccess
	case rep.AbortedBy != nil:
		return exitThresholdAbort
	}
	if why := sum.NoSuccess(); why != "" {
		fmt.Fprintf(stderr, "\nllmrun run: %s: a run without a successful request does not pass (see the errors in the summary)\n", why)
		return exitNoSuccess
	}
	if threshold.AnyFailed(rep.Thresholds) {
		return exitThresholds
	}
	return exitOK
}

// besidesInterruption lists the errors of an interrupted run other than
// the interruption itself (a teardown() cut after its grace period).
func besidesInterruption(runErr error) []error {
	errs := []error{runErr}
	if joined, ok := runErr.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	return slices.DeleteFunc(errs, func(err error) bool { return err == nil || errors.Is(err, context.Canceled) })
}

// scriptArgs is what run and inspect take from their command lines.
type scriptArgs struct {
	script string
	source []byte // a stock scenario's source; nil for a file
	env    map[string]string
	llm    llm.Config
	tags   map[string]string // --tag
	slo    summary.SLO       // --slo
	// seedDrawn says that the run's seed was drawn, not given with --seed.
	seedDrawn bool
}

// parseScriptArgs parses a run-style command line into f. When ok is false
// it has printed why (or the help) and code is the exit code.
func parseScriptArgs(cmd string, fs *pflag.FlagSet, f *runFlags, args []string, stderr io.Writer, getenv func(string) string) (a scriptArgs, code int, ok bool) {
	fail := func(format string, args ...any) (scriptArgs, int, bool) {
		fmt.Fprintf(stderr, cmd+": "+format+"\n", args...)
		return scriptArgs{}, exitUsage, false
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return scriptArgs{}, exitOK, false
		}
		return fail("%v\nRun '%s --help' for usage.", err, cmd)
	}
	if fs.NArg() != 1 {
		return fail("expected one script, got %d arguments\nRun '%s --help' for usage.", fs.NArg(), cmd)
	}
	a.script = fs.Arg(0)
	if !fs.Changed("seed") {
		f.seed, a.seedDrawn = drawSeed(), true
	}
	var err error
	if a.source, err = loadScript(a.script); err != nil {
		return fail("%v", err)
	}
	if a.env, err = scriptEnv(*f, getenv); err != nil {
		return fail("%v", err)
	}
	if a.llm, err = llmConfig(*f, getenv); err != nil {
		return fail("%v", err)
	}
	if a.tags, err = parseTags(f.tags); err != nil {
		return fail("%v", err)
	}
	if f.slo != "" {
		if a.slo, err = parseSLO(f.slo); err != nil {
			return fail("--slo: %v", err)
		}
	}
	return a, exitOK, true
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
		Overrides:   overrides(fs, f),
		LLM:         a.llm,
		Seed:        f.seed,
		Tags:        a.tags,
		Logger:      consoleLogger(stderr),
		TextSummary: renderSummaryJSON,
	}
}

// overrides turns the load-shape flags the user set into engine overrides.
func overrides(fs *pflag.FlagSet, f runFlags) engine.Overrides {
	var o engine.Overrides
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

func (s *stageFlag) String() string {
	parts := make([]string, len(*s))
	for i, st := range *s {
		parts[i] = st.String()
	}
	return strings.Join(parts, ",")
}

func (s *stageFlag) Set(v string) error {
	st, err := executor.ParseStage(v)
	if err != nil {
		return err
	}
	*s = append(*s, st)
	return nil
}

func (s *stageFlag) Type() string { return "DURATION:TARGET" }

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
	for _, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-e %q: expected KEY=VALUE", kv)
		}
		env[k] = v
	}
	return env, nil
}

// llmConfig resolves the llm module's defaults from flags and environment.
func llmConfig(f runFlags, getenv func(string) string) (llm.Config, error) {
	cfg := llm.Config{BaseURL: f.baseURL, Model: f.model, Timeout: f.timeout, Tokenizer: f.tokenizer}
	if cfg.Tokenizer != "" {
		if _, err := tokenizer.Load(cfg.Tokenizer); err != nil {
			return cfg, fmt.Errorf("--tokenizer: %w", err)
		}
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = getenv("LLMRUN_BASE_URL")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = getenv("OPENAI_BASE_URL")
	}
	if cfg.Model == "" {
		cfg.Model = getenv("LLMRUN_MODEL")
	}
	keyEnv := f.apiKeyEnv
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	cfg.APIKey = getenv(keyEnv)
	if f.apiKeyEnv != "" && cfg.APIKey == "" {
		return cfg, fmt.Errorf("--api-key-env %s: the environment variable %s is empty or unset", f.apiKeyEnv, f.apiKeyEnv)
	}
	if f.timeout <= 0 {
		return cfg, fmt.Errorf("--timeout must be positive, got %s", f.timeout)
	}
	switch {
	case f.idleTimeout < 0:
		return cfg, fmt.Errorf("--idle-timeout must not be negative, got %s", f.idleTimeout)
	case f.idleTimeout == 0:
		cfg.IdleTimeout = llm.NoIdleTimeout
	default:
		cfg.IdleTimeout = f.idleTimeout
	}
	return cfg, nil
}

func reportLoadError(stderr io.Writer, script string, err error) int {
	return reportLoadErrorAs(stderr, "llmrun run", script, err)
}

// reportLoadErrorAs prints a load error under the command's name (cmd) and
// returns its exit code.
func reportLoadErrorAs(stderr io.Writer, cmd, script string, err error) int {
	var scriptErr *js.ScriptError
	var cfgErr *engine.ConfigError
	switch {
	case errors.As(err, &cfgErr):
		fmt.Fprintf(stderr, "%s: %s: %v\n", cmd, script, err)
		return exitInvalidConfig
	case errors.As(err, &scriptErr):
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitScriptError
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "%s: interrupted before the test started\n", cmd)
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitScriptError
	}
}

func banner(w io.Writer, script, target string, cfg llm.Config, e *engine.Engine, outputs outputSet, seed int64, seedDrawn bool) {
	fmt.Fprintf(w, "llmrun %s\n", version())
	fmt.Fprintf(w, "  script:    %s\n", script)
	if target == "built-in simulator" {
		fmt.Fprintf(w, "  target:    built-in simulator (%s); set --base-url to benchmark a real server\n", llm.RedactURL(cfg.BaseURL))
	} else {
		fmt.Fprintf(w, "  target:    %s\n", target)
	}
	if cfg.Model != "" {
		fmt.Fprintf(w, "  model:     %s (default for requests that name none)\n", cfg.Model)
	}
	if seedDrawn {
		fmt.Fprintf(w, "  seed:      %d (drawn for this run; --seed %d repeats it)\n", seed, seed)
	} else {
		fmt.Fprintf(w, "  seed:      %d\n", seed)
	}
	fmt.Fprintf(w, "  scenarios: %d, up to %d VUs\n", len(e.Scenarios()), e.MaxVUs())
	for i := range e.Scenarios() {
		sc := &e.Scenarios()[i]
		start := ""
		if sc.StartTime > 0 {
			start = fmt.Sprintf(", from %s", sc.StartTime)
		}
		fmt.Fprintf(w, "    * %s: %s, exec %s()%s [%s]\n", sc.Name, sc.Describe(), sc.Exec, start, sc.Executor)
	}
	for _, o := range outputs {
		fmt.Fprintf(w, "  output:    %s\n", o.Describe())
	}
}

// startProgress prints a live progress line on a terminal until stopped,
// its output tok/s over the last few seconds (console.ProgressWindow).
func startProgress(e *engine.Engine, w io.Writer, enabled bool) func() {
	if !enabled {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		var meter console.ProgressMeter
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				fmt.Fprintf(w, "\r\x1b[K%s", meter.Line(e.Progress()))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// preflightPassed reports whether the run may start after its preflight:
// no probe failed in a way no load can fix. It says on stderr what failed
// and what to fix, and warns of the failures the run may get past.
func preflightPassed(stderr io.Writer, probes []llm.Probe) bool {
	passed := true
	for _, p := range probes {
		switch {
		case p.Fatal:
			passed = false
			fmt.Fprintf(stderr, "llmrun run: preflight: %s (model %s) failed with %s: %s\n  fix: %s\n", p.Target, orNone(p.Model), p.Class, p.Error, p.Fix)
		case !p.OK:
			fmt.Fprintf(stderr, "llmrun run: preflight: warning: %s (model %s) failed with %s: %s; the run goes on, as load may get past it\n", p.Target, orNone(p.Model), p.Class, p.Error)
		}
	}
	if !passed {
		fmt.Fprintln(stderr, "llmrun run: no load was sent; --no-preflight skips this check")
	}
	return passed
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// modelListTimeout bounds the GET /v1/models that finds the default model.
const modelListTimeout = 10 * time.Second

// discoverModel returns the first model the server lists, for requests
// that name none; "" (after saying why on stderr) when it cannot tell. A
// configuration the client refuses (a bad base URL) is left for the
// engine, which reports it as invalid options.
func discoverModel(ctx context.Context, cfg llm.Config, stderr io.Writer) string {
	client, err := llm.NewClient(cfg)
	if err != nil {
		return ""
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	models, err := client.Models(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "llmrun run: no --model given, and the server's model could not be found (%v); requests that name no model are sent without one\n", err)
		return ""
	}
	return models[0]
}

// renderSummaryJSON renders a summary exported as JSON the way the
// console prints it: textSummary(data) in handleSummary scripts.
func renderSummaryJSON(summaryJSON []byte, color bool) (string, error) {
	var s summary.Summary
	if err := json.Unmarshal(summaryJSON, &s); err != nil {
		return "", fmt.Errorf("reading the summary: %w", err)
	}
	var b strings.Builder
	if err := console.Render(&b, &s, textfmt.Style{Color: color}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// consoleLogger prints the script's console output as "level=INFO msg=...
// vu=3" lines, without timestamps.
func consoleLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// loadScript returns the source of a stock scenario, or nil after checking
// that a script file can be read (the engine reads it).
func loadScript(script string) ([]byte, error) {
	if strings.HasPrefix(script, scripts.Prefix) {
		return scripts.Source(script)
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("cannot open script %s: %v", script, unwrapPathError(err))
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

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
