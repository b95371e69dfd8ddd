// Package runner runs a test from its script to its results: it starts
// the built-in simulator when no server is given, loads the script into
// the engine, checks the targets (preflight), starts the outputs, runs the
// engine while each measured request goes to the timeline and the
// outputs, assembles the summary, and hands it to the summary writers (the
// script's handleSummary or the console, and the result files). Run
// returns the Outcome, from which a command takes its exit code.
//
// The console is one of the summary writers (output.SummaryWriter, not an
// --out output): it prints the banner before the run, the live view
// during it and the summary at its end.
package runner

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/output/console"
	"github.com/llmrun/llmrun/runtime/output/dashboard"
	"github.com/llmrun/llmrun/runtime/rendezvous"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
	"github.com/llmrun/llmrun/runtime/timeline"
)

// defaultCommand prefixes every line the runner writes to Config.Stderr
// unless Config.Command names another command.
const defaultCommand = "llmrun run"

// Config is what a run is made of.
type Config struct {
	// Engine loads the script (the runner sets its Requests, and its
	// Modules when nil: StandardModules). With no
	// LLM.BaseURL the run goes to the built-in simulator, started with
	// Engine.Seed; with no LLM.Model, to the first model the server
	// lists.
	Engine engine.Config
	// SeedDrawn says that Engine.Seed was drawn for this run, not given.
	SeedDrawn bool
	// TestID names the test whose runs are compared over time; the
	// script's file name without extension by default.
	TestID string
	// SLO, when set, replaces the script's options.slo in the capacity
	// verdict.
	SLO *summary.SLO
	// Goodput, when any bound is set, replaces the script's
	// options.goodput: the per-request bounds of the summary's goodput.
	Goodput summary.GoodputBounds
	// MetricPercentiles are kept in the summary's meta: the percentiles
	// llmrun bench prints (--metric-percentiles), for its report.
	MetricPercentiles []float64
	// Outputs are the destinations as --out takes them: NAME=VALUE, with
	// json=FILE a result file.
	Outputs []string
	// SummaryExport is a result file to write (--summary-export).
	SummaryExport string
	// Getenv reads the outputs' settings from the environment (tokens);
	// nil reads nothing.
	Getenv func(string) string
	// NoPreflight sends no preflight request before the run.
	NoPreflight bool
	// Stdout gets the banner and the summary, Stderr the live view and
	// what went wrong; nil discards.
	Stdout, Stderr io.Writer
	// Quiet leaves out the banner and the live view; Color paints the
	// console.
	Quiet, Color bool
	// ProgressInterval is how often the live view prints its lines when
	// Stderr is not a terminal (console.DefaultProgressInterval when 0).
	// Stderr may be a *console.Screen, shared with the engine's logger,
	// to keep what the logger writes clear of the view on a terminal.
	ProgressInterval time.Duration
	// Version is llmrun's, for the banner and the summary.
	Version string
	// Command prefixes the lines the runner writes to Stderr ("llmrun
	// run" when empty).
	Command string
	// ServerMetrics are the servers' metrics and GPU telemetry the run
	// reads beside its own figures (the server section of the summary).
	ServerMetrics ServerMetrics
	// Rendezvous, when set, makes the run one instance of a distributed
	// run, which runs its share of the plan (SharePlan): it meets the
	// other instances there (its Plan is the runner's
	// to fill in) for the shared run id, before the outputs start, and for
	// the shared start, once its VUs are initialised and setup() has run.
	// Every sample, record and point is tagged with the instance's index,
	// and the result file's start is the shared start.
	Rendezvous *rendezvous.Config
	// Dashboard, when set, serves the run's live web dashboard
	// (--dashboard): it listens before the run starts, and serves for
	// its Linger after the run ends, or until ctx is cancelled.
	Dashboard *dashboard.Config
}

// Outcome is how a run ended: its verdict, and what went wrong after it.
type Outcome struct {
	Verdict Verdict
	// ScriptFailed says that the script's handleSummary failed.
	ScriptFailed bool
	// Lost says that the summary, a result file or an output lost data.
	Lost bool
	// Summary is the run's summary; nil when the run did not get to one.
	Summary *summary.Summary
}

// Run runs the test cfg describes. It writes what went wrong to
// cfg.Stderr as it happens, each line prefixed "llmrun run: "; the
// Outcome says what it came to. Cancelling ctx stops the run: requests in
// flight are cut, and the summary is still assembled and written.
func Run(ctx context.Context, cfg Config) Outcome {
	r := &run{cfg: cfg, target: llm.RedactURL(cfg.Engine.LLM.BaseURL)}
	if r.cfg.Getenv == nil {
		r.cfg.Getenv = func(string) string { return "" }
	}
	if r.cfg.Command == "" {
		r.cfg.Command = defaultCommand
	}
	if r.cfg.Stdout == nil {
		r.cfg.Stdout = io.Discard
	}
	if r.cfg.Stderr == nil {
		r.cfg.Stderr = io.Discard
	}
	// Outputs warn from their own goroutines while the live view draws:
	// one Screen keeps their lines whole and clear of the view.
	if _, ok := r.cfg.Stderr.(*console.Screen); !ok {
		r.cfg.Stderr = console.NewScreen(r.cfg.Stderr)
	}
	if err := SharePlan(&r.cfg.Engine, cfg.Rendezvous, cfg.SeedDrawn); err != nil {
		r.printf("%v", err)
		return Outcome{Verdict: InvalidConfig}
	}
	if cfg.Rendezvous != nil {
		r.cfg.Engine.Tags = maps.Clone(cfg.Engine.Tags)
		if r.cfg.Engine.Tags == nil {
			r.cfg.Engine.Tags = map[string]string{}
		}
		r.cfg.Engine.Tags["instance"] = strconv.Itoa(cfg.Rendezvous.Instance)
		defer r.leave()
	}
	if cfg.Engine.LLM.BaseURL == "" {
		stop, err := r.startSimulator(ctx)
		if err != nil {
			r.printf("starting the built-in simulator: %v", err)
			return Outcome{Verdict: Errored}
		}
		defer stop()
	}
	if r.cfg.Engine.LLM.Model == "" {
		r.cfg.Engine.LLM.Model, r.modelNote = r.discoverModel(ctx)
	}
	if verdict, ok := r.prepare(ctx); !ok {
		if r.dashboard != nil {
			r.dashboard.Stop(ctx)
		}
		return Outcome{Verdict: verdict}
	}
	return r.execute(ctx)
}

// Load loads the script cfg describes as Run loads it: with
// StandardModules when cfg.Modules is nil, and with the options the
// runner reads beside the scenarios checked (Criteria, given slo). Its
// errors are ReportLoadError's.
func Load(ctx context.Context, cfg engine.Config, slo *summary.SLO) (*engine.Engine, capacity.Criteria, error) {
	if cfg.Paths == nil {
		cfg.Paths = engine.NewPaths(cfg)
	}
	if cfg.Modules == nil {
		cfg.Modules = StandardModules(cfg)
	}
	e, err := engine.Load(ctx, cfg)
	if err != nil {
		return nil, capacity.Criteria{}, err
	}
	crit, err := Criteria(e.Options(), slo)
	if err != nil {
		return nil, capacity.Criteria{}, err
	}
	if crit.Stops() && !slices.ContainsFunc(e.Scenarios(), func(sc engine.Scenario) bool { return sc.StartAfter != "" }) {
		return nil, capacity.Criteria{}, &engine.ConfigError{Field: "options.capacity.stop",
			Err: fmt.Errorf("%q stops a sweep whose levels are chained with startAfter, and no scenario has startAfter: chain the levels with startAfter, or leave options.capacity.stop out", crit.Stop)}
	}
	return e, crit, nil
}

// run is one run under way.
type run struct {
	cfg       Config
	target    string
	simulated bool
	engine    *engine.Engine
	criteria  capacity.Criteria
	probes    []summary.Probe
	console   *console.Console
	outputs   outputSet
	results   []output.FileFlag
	info      output.Run
	sinks     fanOut
	// meeting is the rendezvous this instance arrived at; startErr why
	// the instances did not start together, sharedStart when they did.
	meeting     *rendezvous.Meeting
	startErr    error
	sharedStart time.Time
	// modelNote says why no model was found for requests that name none;
	// "" when one was, or none was looked for.
	modelNote string
	// watchCfg is what the run reads of its servers, watchDiscover
	// whether it looks for its base URL's /metrics; watch reads them
	// from before the first VU to after the last request, its window from
	// the mark watchFrom; timelineStart is when the run's charts begin.
	watchCfg      serverwatch.Config
	watchDiscover bool
	watch         *serverwatch.Watch
	watchFrom     string
	timelineStart time.Time

	// searcher runs the capacity search (options.capacity.search); nil
	// when the run is none.
	searcher *capacity.Searcher
	// searchPlan describes the search in the banner; nil without one.
	searchPlan *capacity.SearchPlan

	// dashboard serves the run's live web dashboard; nil without one.
	dashboard *dashboard.Dashboard
	// instances, on instance 0 of a distributed run with a dashboard,
	// take the others' figures; figures, on another instance, sends its
	// own when instance 0 asked (figures.go).
	instances *dashboard.Instances
	figures   *figuresSender
}

func (r *run) printf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Stderr, r.cfg.Command+": "+format+"\n", args...)
}

// startSimulator starts the built-in simulator and points the run at it.
func (r *run) startSimulator(ctx context.Context) (stop func() error, err error) {
	simCfg := llmsim.DefaultConfig()
	simCfg.Seed = r.cfg.Engine.Seed
	sim, err := llmsim.Listen(ctx, "127.0.0.1:0", simCfg)
	if err != nil {
		return nil, err
	}
	r.cfg.Engine.LLM.BaseURL = sim.URL() + "/v1"
	if r.cfg.Engine.LLM.Model == "" {
		r.cfg.Engine.LLM.Model = simCfg.Model
	}
	r.target, r.simulated = "built-in simulator", true
	return sim.Close, nil
}

// prepare makes the outputs, loads the script and checks the targets; ok
// is false, with the verdict, when the run cannot start.
func (r *run) prepare(ctx context.Context) (Verdict, bool) {
	results, specs := resultFiles(r.cfg.SummaryExport, r.cfg.Outputs)
	outputs, err := newOutputs(specs, r.cfg.Getenv)
	if err != nil {
		r.printf("%v", err)
		return InvalidOutputs, false
	}
	// A file that cannot be written fails now, not after the run.
	if verdict, err := checkOutputFiles(results, specs); err != nil {
		r.printf("%v", err)
		return verdict, false
	}
	r.outputs, r.results = outputs, results
	if c := r.cfg.Dashboard; c != nil {
		if r.dashboard, err = dashboard.Listen(*c); err != nil {
			// The error names what failed: the address (--dashboard) or
			// the recording (--dashboard-record).
			r.printf("%v", err)
			return Errored, false
		}
		if w := dashboard.ExposureWarning("--dashboard", c.Addr); c.Addr != "" && w != "" {
			r.printf("%s", w)
		}
	}
	r.console = &console.Console{Stdout: r.cfg.Stdout, Stderr: r.cfg.Stderr, Style: textfmt.Style{Color: r.cfg.Color}, Quiet: r.cfg.Quiet,
		ProgressInterval: r.cfg.ProgressInterval}
	r.sinks.console = r.console
	r.info = output.Run{ID: newRunID(), TestID: r.cfg.TestID, Tags: r.cfg.Engine.Tags,
		Warn: func(message string) { r.printf("%s", message) }}
	if r.info.TestID == "" {
		r.info.TestID = defaultTestID(r.cfg.Engine.ScriptPath)
	}
	engineCfg := r.cfg.Engine
	r.sinks.outputs = outputs
	engineCfg.Requests = &r.sinks
	engineCfg.StopChain = r.stopSweep
	engineCfg.BeforeStart, engineCfg.MeasuredStart, engineCfg.ScenariosEnded = r.beforeStart, r.measuredStart, r.scenariosEnded
	if r.engine, r.criteria, err = Load(ctx, engineCfg, r.cfg.SLO); err != nil {
		return ReportLoadError(r.cfg.Stderr, r.cfg.Command, engineCfg.ScriptPath, err), false
	}
	bounds, err := Goodput(r.engine.Options(), r.cfg.Goodput)
	if err != nil {
		return ReportLoadError(r.cfg.Stderr, r.cfg.Command, engineCfg.ScriptPath, err), false
	}
	if r.watchCfg, r.watchDiscover, err = WatchConfig(r.engine.Options(), r.cfg.ServerMetrics); err != nil {
		return ReportLoadError(r.cfg.Stderr, r.cfg.Command, engineCfg.ScriptPath, err), false
	}
	if !bounds.IsZero() {
		r.sinks.goodput = &goodputCounter{bounds: bounds}
	}
	search, err := SearchOptions(r.engine, r.criteria, !bounds.IsZero())
	if err == nil && search != nil {
		err = searchAlone(r.cfg.Engine.Overrides.Segment)
	}
	if err == nil && search != nil {
		r.searcher = capacity.NewSearcher(*search, r.criteria.SLO)
		r.console.Search = r.searcher.Progress
		r.searchPlan = searchPlan(r.engine, *search)
		err = r.engine.SetSearch(&engine.Search{Variable: search.Variable, Next: r.nextRound})
	}
	if err != nil {
		return ReportLoadError(r.cfg.Stderr, r.cfg.Command, engineCfg.ScriptPath, err), false
	}
	if !r.cfg.NoPreflight {
		r.probes = summarize.Probes(r.engine.Preflight(ctx))
		if ctx.Err() != nil {
			r.printf("interrupted before the test started")
			return Interrupted, false
		}
		if !preflightPassed(r.cfg.Stderr, r.cfg.Command, r.probes, r.modelNote) {
			return PreflightFailed, false
		}
	}
	if r.modelNote != "" {
		r.printf("%s", r.modelNote)
	}
	return r.arrive(ctx)
}

// arrive meets the other instances of a distributed run for the run's
// id, which the outputs carry from their start.
func (r *run) arrive(ctx context.Context) (Verdict, bool) {
	rc := r.cfg.Rendezvous
	if rc == nil {
		return Passed, true
	}
	cfg := *rc
	plan, err := r.wholePlan()
	if err != nil {
		r.printf("%v", err)
		return Errored, false
	}
	cfg.Plan = plan
	r.askFigures(&cfg)
	m, err := rendezvous.Arrive(ctx, cfg)
	if err != nil {
		r.printf("%v", err)
		if ctx.Err() != nil {
			return Interrupted, false
		}
		return Errored, false
	}
	r.meeting, r.info.ID = m, m.RunID
	return Passed, true
}

// wholePlan is the hash of the test plan the instances of a distributed
// run must share: the script, and the scenarios as resolved before the
// execution segment takes this process's part of them (each instance has
// its own part), with the segment sequence they are cut by.
func (r *run) wholePlan() (string, error) {
	whole := r.cfg.Engine.Overrides
	whole.Segment = segment.Part{}
	opts := r.engine.Options()
	scs, err := engine.ResolveScenarios(&opts, whole)
	if err != nil {
		return "", fmt.Errorf("resolving the whole test plan for the rendezvous: %w", err)
	}
	var seq string
	if part := r.cfg.Engine.Overrides.Segment; !part.Whole() {
		seq = part.Sequence().String()
	}
	return rendezvous.PlanHash([]byte(r.engine.ScriptSHA256()), resolvedOptions(scs), []byte(seq)), nil
}

// startTogether is the engine's BeforeStart in a distributed run: it
// waits for every instance to be ready and for the shared start.
func (r *run) startTogether(ctx context.Context) error {
	run, err := r.meeting.Start(ctx)
	if err != nil {
		r.startErr = err
		return err
	}
	r.sharedStart = run.Start
	r.sendFigures(run.Figures)
	if run.Ignored != "" {
		r.printf("rendezvous: %s", run.Ignored)
	}
	return nil
}

// leave leaves the rendezvous, if the run arrived at one.
func (r *run) leave() {
	if r.meeting != nil {
		r.meeting.Close()
	}
}

// execute starts the outputs, runs the engine and the timeline, and
// finishes the run.
func (r *run) execute(ctx context.Context) Outcome {
	if r.dashboard != nil {
		// Last: it serves the final figures for its linger after the
		// summary is written.
		defer func() {
			r.dashboard.Stop(ctx)
			if w := r.dashboard.RecordWarning(); w != "" {
				r.printf("warning: %s", w)
			}
			if w := r.dashboard.ExportWarning(); w != "" {
				r.printf("warning: %s", w)
			}
		}()
	}
	r.info.Start = time.Now()
	r.info.Progress = r.engine.Progress
	// Before the outputs: they and the live view show what it reads.
	r.startWatch(ctx)
	defer r.stopWatch()
	if r.watch != nil {
		r.info.Servers, r.console.Servers = r.watch.Now, r.watch.Now
	}
	if err := r.outputs.start(ctx, r.info); err != nil {
		r.printf("--out %v", err)
		return Outcome{Verdict: Errored}
	}
	// After the outputs started: a listener on port 0 knows its port.
	stopConsole := r.console.Start(r.banner(), r.engine.Progress)
	if r.dashboard != nil {
		var servers func() []serverwatch.Now
		if r.watch != nil {
			servers = r.watch.Now
		}
		collector := dashboard.NewCollector(time.Now(), r.engine.Progress, servers).WithInstances(r.instances)
		collector.ReadThresholds(r.engine.ThresholdsSoFar)
		r.sinks.dashboard.Store(collector)
		r.dashboard.Start(collector)
		r.dashboard.Open(func(w string) { r.printf("warning: %s", w) })
	}
	// The timeline counts from here: the VUs' initialisation, setup() and
	// the collection before the measured window come first (no request
	// of the run is made before the window, only setup()'s).
	r.timelineStart = time.Now()
	r.sinks.timeline = timeline.New(r.timelineStart, r.engine.Progress)
	if len(r.engine.Scenarios()) > 1 || r.searcher != nil {
		r.sinks.timeline.SplitByScenario()
	}
	timelineCtx, stopTimeline := context.WithCancel(context.Background())
	timelineDone := make(chan struct{})
	go func() {
		r.sinks.timeline.Run(timelineCtx)
		close(timelineDone)
	}()
	rep, runErr := r.engine.Run(ctx)
	r.stopFigures()
	r.noteDashboard(ctx, rep, runErr)
	stopTimeline()
	<-timelineDone
	stopConsole()
	if ctx.Err() != nil {
		r.printf("stopped early; requests in flight were cut and counted as interrupted, not failed")
	}
	if rep == nil {
		r.outputs.finish(nil) // what they hold is flushed, their goroutines end
		return Outcome{Verdict: ReportLoadError(r.cfg.Stderr, r.cfg.Command, r.cfg.Engine.ScriptPath, runErr)}
	}
	if r.startErr != nil && ctx.Err() == nil {
		r.outputs.finish(nil)
		r.printf("%v", runErr)
		return Outcome{Verdict: Errored}
	}
	sum := r.assemble(rep)
	o := r.writeSummary(ctx, sum)
	o.Verdict = verdict(ctx, rep, runErr, sum, r.cfg.Stderr, r.cfg.Command)
	return o
}

// noteDashboard tells the dashboard why the run ended before its plan
// did, if it did: its last event says so, and its exported report says
// that it shows the run only up to then. The order is verdict's.
func (r *run) noteDashboard(ctx context.Context, rep *engine.Report, runErr error) {
	if r.dashboard == nil {
		return
	}
	var why string
	switch {
	case ctx.Err() != nil:
		why = "interrupted (Ctrl-C or a signal)"
	case runErr != nil:
		r.dashboard.End("ended on an error of its script")
		r.dashboard.Note("The run ended on an error of its script (the run's output names it): this report shows it up to then.")
		return
	case rep.EarlyStopped != nil:
		// Its class, not its message: that may echo the server's answer.
		why = "stopped early by options.earlyStop (its requests all failed with " + rep.EarlyStopped.Class + ")"
	case rep.AbortedBy != nil:
		why = "aborted by its threshold " + rep.AbortedBy.Key + " " + rep.AbortedBy.Source + " (abortOnFail)"
	default:
		return
	}
	r.dashboard.End(why)
	r.dashboard.Note("The run was " + why + " before its end: this report shows it up to then.")
}

// banner is what the console says of the run before it starts.
func (r *run) banner() console.Banner {
	b := console.Banner{
		Version: r.cfg.Version, Script: r.cfg.Engine.ScriptPath, Simulated: r.simulated,
		BaseURL: r.cfg.Engine.LLM.BaseURL, Model: r.cfg.Engine.LLM.Model, Seed: r.cfg.Engine.Seed, SeedDrawn: r.cfg.SeedDrawn,
		Scenarios: r.engine.Scenarios(), MaxVUs: r.engine.MaxVUs(), Probes: r.probes, Search: r.searchPlan,
	}
	for _, o := range r.outputs {
		b.Outputs = append(b.Outputs, o.Describe())
	}
	if r.dashboard != nil && r.dashboard.URL() != "" {
		b.Outputs = append(b.Outputs, "dashboard "+r.dashboard.URL())
	}
	if c := r.cfg.Dashboard; c != nil && c.Record != "" {
		b.Outputs = append(b.Outputs, "dashboard recording "+c.Record)
	}
	if c := r.cfg.Dashboard; c != nil && c.Export != "" {
		b.Outputs = append(b.Outputs, "dashboard report "+c.Export+" (at the end)")
	}
	if r.watch != nil {
		b.ServerMetrics = r.watch.Describe()
	}
	return b
}

// assemble builds the run's summary from its parts: the engine's report
// and the run's facts, the preflight's probes, the timeline, the capacity
// verdict on those, and last what each output reports of the summary so
// far; the thresholds on server figures are judged on the server section.
func (r *run) assemble(rep *engine.Report) *summary.Summary {
	host, _ := os.Hostname()
	sum := summarize.Build(rep, summary.Meta{
		Tool: "llmrun", Version: r.cfg.Version, Script: r.cfg.Engine.ScriptPath, ScriptSHA256: r.engine.ScriptSHA256(),
		Target: r.target, BaseURL: llm.RedactURL(r.cfg.Engine.LLM.BaseURL), Seed: r.cfg.Engine.Seed, SeedDrawn: r.cfg.SeedDrawn, Host: host,
		OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		RunID: r.info.ID, TestID: r.info.TestID, Tags: r.info.Tags, SLO: r.criteria.SLO, Options: resolvedOptions(r.engine.Scenarios()),
	})
	if seg := r.cfg.Engine.Overrides.Segment; !seg.Whole() {
		sum.Meta.ExecutionSegment, sum.Meta.ExecutionSegmentSequence = seg.Segment().String(), seg.Sequence().String()
	}
	if rc := r.cfg.Rendezvous; rc != nil && rc.Instances > 1 {
		sum.Meta.Instances = rc.Instances
	}
	if !r.sharedStart.IsZero() {
		sum.Meta.Start = r.sharedStart
	}
	sum.Meta.MetricPercentiles = r.cfg.MetricPercentiles
	sum.Preflight = r.probes
	sum.Timeline = r.sinks.timeline.Points(rep.End)
	byScenario := r.sinks.timeline.ScenarioPoints(rep.End)
	for i := range sum.Scenarios {
		sum.Scenarios[i].Timeline = byScenario[sum.Scenarios[i].Name]
	}
	if r.sinks.goodput != nil {
		r.sinks.goodput.set(sum)
	}
	r.attachServer(rep, sum)
	summarize.JudgeServerThresholds(sum, rep.Thresholds)
	sum.Capacity = capacity.Assess(sum, r.criteria)
	if r.searcher != nil {
		sum.Capacity = capacity.SearchVerdict(sum, r.searcher.Result(), r.criteria.SLO)
	}
	r.showLevels(sum)
	sum.Outputs = r.outputs.finish(sum)
	return sum
}

// stopSweep is the engine's StopChain: the reason the run's sweep stops
// (options.capacity.stop) after the levels that ended, "" to go on.
func (r *run) stopSweep(sofar *engine.Report) string {
	if !r.criteria.Stops() && r.sinks.dashboard.Load() == nil {
		return ""
	}
	sum := summarize.Build(sofar, summary.Meta{SLO: r.criteria.SLO})
	sum.Scenarios = slices.DeleteFunc(sum.Scenarios, func(sc summary.ScenarioSummary) bool {
		_, ended := sofar.Windows[sc.Name]
		return !ended
	})
	r.showLevels(sum)
	return capacity.StopReason(sum, r.criteria)
}

// showLevels gives the dashboard, if the run has one, the levels of its
// sweep or capacity search that sum, the summary of the levels ended so
// far, holds, judged as the run's verdict judges them.
func (r *run) showLevels(sum *summary.Summary) {
	c := r.sinks.dashboard.Load()
	if c == nil {
		return
	}
	if r.searcher != nil {
		c.SetLevels(capacity.SearchVerdict(sum, r.searcher.Result(), r.criteria.SLO))
		return
	}
	if variable, levels := capacity.Levels(sum, r.criteria); len(levels) > 0 {
		c.SetLevels(&summary.Capacity{Variable: variable, Levels: levels, SLO: r.criteria.SLO})
	}
}

// writeSummary hands the summary to each summary writer in turn: the
// script's handleSummary, or else the console, then the result files. It
// says on stderr what each failed to write, and then what each output
// lost.
func (r *run) writeSummary(ctx context.Context, sum *summary.Summary) Outcome {
	var view output.SummaryWriter = r.console
	if r.engine.HasHandleSummary() {
		view = scriptSummary{engine: r.engine, fallback: r.console, stdout: r.cfg.Stdout, stderr: r.cfg.Stderr, color: r.cfg.Color}
	}
	writers := []output.SummaryWriter{view}
	for _, f := range r.results {
		writers = append(writers, resultFile{f, r.cfg.Stdout})
	}
	o := Outcome{Summary: sum}
	for _, w := range writers {
		for _, err := range failures(w.WriteSummary(ctx, sum)) {
			r.printf("%v", err)
			if _, ok := err.(*scriptFailure); ok {
				o.ScriptFailed = true
			} else {
				o.Lost = true
			}
		}
	}
	for _, line := range outputLosses(sum.Outputs) {
		r.printf("%s", line)
		o.Lost = true
	}
	return o
}

// failures are the errors err joins (one level down), or err alone.
func failures(err error) []error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return []error{err}
}
