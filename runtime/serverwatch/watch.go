// Package serverwatch is a run's watch over its servers: it reads the
// inference servers' own Prometheus metrics (runtime/servermetrics) and
// their GPUs' telemetry (a DCGM exporter's /metrics, or nvidia-smi through
// runtime/gpumetrics) from goroutines of its own while the run goes on,
// takes a snapshot of every target when the run marks its edges (before
// the first VU, the end of warmup, after the last request), and turns what
// it read into the result file's server section (summary.ServerTarget):
// per server the engine (runtime/servermetrics/engines) and every
// canonical figure it exposes over the measured window, per GPU target the
// GPUs, their total and their energy.
//
// A target that refuses, stalls or answers garbage never delays a request
// nor fails the run: its failures are counted and reported with its
// figures.
package serverwatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/servermetrics"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
)

// NvidiaSMI is the GPU target that samples the local GPUs with
// nvidia-smi instead of reading a DCGM exporter.
const NvidiaSMI = "nvidia-smi"

// The marks a run takes, in order.
const (
	// MarkStart is taken once setup() has run, just before the scenarios
	// start.
	MarkStart = "start"
	// MarkMeasured is taken when the first scenario's measured part
	// begins, the end of its warmup.
	MarkMeasured = "measured"
	// MarkEnd is taken after the last request of the scenarios, before
	// teardown().
	MarkEnd = "end"
)

// Server is an inference server's metrics URL, with the preset that
// reads it ("" to detect the engine from the names it exposes).
type Server struct {
	URL    string
	Preset string
}

// Config says what a Watch reads and how often.
type Config struct {
	Servers []Server
	// GPUs are DCGM exporter URLs, or NvidiaSMI.
	GPUs []string
	// Interval between reads of a target; servermetrics.DefaultInterval
	// when zero.
	Interval time.Duration
	// Timeout bounds one read of a URL; zero, the smaller of
	// servermetrics.DefaultTimeout and the interval.
	Timeout time.Duration
	// Client sends the scrapes; nil, servermetrics' own.
	Client *http.Client
	// SMICommand is the nvidia-smi to run for NvidiaSMI ("" looks it up
	// in PATH).
	SMICommand string
}

// target is one target of the watch.
type target struct {
	kind   string // summary.TargetServer or summary.TargetGPU
	url    string // as given; NvidiaSMI for the local GPUs
	engine *engines.Engine
	forced bool
	probe  error // why the first read found no engine; nil when it did
}

// isDCGM says that a server target is a DCGM exporter, read as GPU
// telemetry.
func (t *target) isDCGM() bool {
	return t.engine != nil && t.engine.Name == dcgmEngine
}

// dcgmEngine is the DCGM exporter's preset (engines.Preset).
const dcgmEngine = "dcgm"

// Watch reads its targets from Start to Stop.
type Watch struct {
	interval time.Duration
	timeout  time.Duration
	targets  []*target
	scraper  *servermetrics.Scraper
	smi      *smiWatch
	pending  sync.WaitGroup // marks taken in the background
}

// Check checks cfg without reading anything: each URL is http or https
// with a host, each preset known, nvidia-smi named as a GPU target only.
// Its errors name the target.
func Check(cfg Config) error {
	if cfg.Interval < 0 || cfg.Timeout < 0 {
		return fmt.Errorf("server metrics: the interval and timeout cannot be negative (%v, %v)", cfg.Interval, cfg.Timeout)
	}
	for _, s := range cfg.Servers {
		if err := checkURL(s.URL); err != nil {
			return fmt.Errorf("server metrics %s: %w", llm.RedactURL(s.URL), err)
		}
		if s.Preset != "" {
			if _, err := engines.Preset(s.Preset); err != nil {
				return fmt.Errorf("server metrics %s: %w", llm.RedactURL(s.URL), err)
			}
		}
	}
	for _, g := range cfg.GPUs {
		if g == NvidiaSMI {
			continue
		}
		if err := checkURL(g); err != nil {
			return fmt.Errorf("gpu metrics %s: %w (or %q for the local GPUs)", llm.RedactURL(g), err, NvidiaSMI)
		}
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("the scheme must be http or https, not %q", u.Scheme)
	case u.Host == "":
		return errors.New("the URL has no host")
	}
	return nil
}

// Start checks cfg, reads each target once to find its engine (each read
// bounded by the scrape timeout, all at once), and starts reading them on
// the interval until Stop. A target named twice is read once. A target
// that does not answer is no error: it is read on, and its failures
// counted.
func Start(ctx context.Context, cfg Config) (*Watch, error) {
	if err := Check(cfg); err != nil {
		return nil, err
	}
	w := &Watch{interval: cfg.Interval, timeout: cfg.Timeout}
	if w.interval == 0 {
		w.interval = servermetrics.DefaultInterval
	}
	if w.timeout == 0 {
		w.timeout = min(servermetrics.DefaultTimeout, w.interval)
	}
	var scrapeTargets []servermetrics.Target
	seen := map[string]bool{}
	add := func(kind, raw string, preset string) {
		if seen[kind+"\x00"+raw] {
			return
		}
		seen[kind+"\x00"+raw] = true
		t := &target{kind: kind, url: raw}
		if preset != "" {
			t.engine, _ = engines.Preset(preset)
			t.forced = true
		}
		w.targets = append(w.targets, t)
		if raw != NvidiaSMI && !seen[raw] {
			seen[raw] = true // a URL both kinds name is read once
			scrapeTargets = append(scrapeTargets, servermetrics.Target{URL: raw})
		}
	}
	for _, s := range cfg.Servers {
		add(summary.TargetServer, s.URL, s.Preset)
	}
	for _, g := range cfg.GPUs {
		add(summary.TargetGPU, g, "")
	}
	w.probe(ctx, cfg.Client)
	var err error
	if w.scraper, err = servermetrics.Start(context.WithoutCancel(ctx), servermetrics.Config{
		Targets: scrapeTargets, Interval: w.interval, Timeout: w.timeout, Client: cfg.Client,
	}); err != nil {
		return nil, err
	}
	if seen[summary.TargetGPU+"\x00"+NvidiaSMI] {
		w.smi = startSMI(ctx, cfg.SMICommand, w.interval)
	}
	return w, nil
}

// probe reads each URL target once, all at once (a URL both kinds name
// once), and names its engine when the preset did not.
func (w *Watch) probe(ctx context.Context, client *http.Client) {
	type answer struct {
		engine *engines.Engine
		err    error
	}
	answers := map[string]*answer{}
	var wg sync.WaitGroup
	for _, t := range w.targets {
		if t.url == NvidiaSMI || t.forced || answers[t.url] != nil {
			continue
		}
		a := &answer{}
		answers[t.url] = a
		wg.Go(func() {
			snap, err := servermetrics.Scrape(ctx, client, t.url, w.timeout)
			if err != nil {
				a.err = err
				return
			}
			a.engine = engines.Detect(snap.Families)
		})
	}
	wg.Wait()
	for _, t := range w.targets {
		if a := answers[t.url]; a != nil && !t.forced {
			t.engine, t.probe = a.engine, a.err
		}
	}
}

// Describe says what the watch reads, a line per target, for the
// banner: "server metrics: vLLM at http://127.0.0.1:8000/metrics, every
// 1s", "gpu metrics: DCGM exporter at http://…:9400/metrics, every 1s".
func (w *Watch) Describe() []string {
	lines := make([]string, 0, len(w.targets))
	for _, t := range w.targets {
		label, what := "gpu metrics", "GPU telemetry"
		if t.kind == summary.TargetServer {
			label, what = "server metrics", "no known engine yet"
		}
		switch {
		case t.url == NvidiaSMI:
			what = "the local GPUs"
			if w.smi != nil && w.smi.err != nil {
				what += " (" + w.smi.err.Error() + ")"
			}
		case t.engine != nil && t.forced:
			what = t.engine.Title + " (preset)"
		case t.engine != nil:
			what = t.engine.Title
		case t.probe != nil:
			what += " (its first read: " + probeCause(t.probe) + "; it is read on, and its failures counted)"
		}
		lines = append(lines, fmt.Sprintf("%s: %s at %s, every %v", label, what, llm.RedactURL(t.url), w.interval))
	}
	return lines
}

// probeCause says why a first read found no engine without repeating
// the target's URL, which the banner line names once: the failure's kind
// and its cause ("refused: connect: connection refused").
func probeCause(err error) string {
	var se *servermetrics.ScrapeError
	if !errors.As(err, &se) {
		return err.Error()
	}
	return fmt.Sprintf("%s: %v", se.Kind, se.Err)
}

// Mark takes a snapshot of every target now, under name, and returns when
// each has answered or failed (within the scrape timeout); marks taken in
// the background (MarkLater) end first. A failed snapshot is counted with
// the target's failures.
func (w *Watch) Mark(ctx context.Context, name string) {
	w.pending.Wait()
	w.mark(ctx, name)
}

// MarkLater takes the mark in the background and returns at once: for a
// mark taken while requests run, on a VU's goroutine.
func (w *Watch) MarkLater(name string) {
	w.pending.Add(1)
	go func() {
		defer w.pending.Done()
		w.mark(context.Background(), name)
	}()
}

func (w *Watch) mark(ctx context.Context, name string) {
	var wg sync.WaitGroup
	wg.Go(func() { w.scraper.Mark(ctx, name) }) // its failures are counted with the target's
	if w.smi != nil {
		wg.Go(func() { w.smi.mark(ctx, name) })
	}
	wg.Wait()
}

// Stop ends the reads, once the marks under way have ended.
func (w *Watch) Stop() {
	w.pending.Wait()
	w.scraper.Stop()
	if w.smi != nil {
		w.smi.stop()
	}
}

// Window is the measured window the figures are over.
type Window struct {
	// From and To name the marks that bound it.
	From, To string
	// Start and End are the window as the engine measured it, for a
	// target whose mark failed: its gauges and GPU figures are then read
	// from the points it has between them, its counters and histograms
	// not at all.
	Start, End time.Time
	// Origin is the time the series count from: the run's start.
	Origin time.Time
}

// Targets are what each target said over the window, in the order of the
// Config (servers, then GPUs), for summarize.AttachServer. Call it after
// Stop.
func (w *Watch) Targets(win Window) []summary.ServerTarget {
	results := w.scraper.Stop()
	byURL := make(map[string]servermetrics.TargetResult, len(results))
	for _, r := range results {
		byURL[r.Target.URL] = r
	}
	out := make([]summary.ServerTarget, 0, len(w.targets))
	for _, t := range w.targets {
		switch {
		case t.url == NvidiaSMI:
			out = append(out, w.smi.target(win))
		case t.kind == summary.TargetServer && !t.isDCGM():
			out = append(out, serverTarget(t, byURL[t.url], win))
		default:
			out = append(out, dcgmTarget(byURL[t.url], win))
		}
	}
	return out
}

// scrapes are a scrape target's counts as the result file keeps them.
func scrapes(c servermetrics.Counts) summary.Scrapes {
	s := summary.Scrapes{OK: int64(c.Scrapes), Skipped: int64(c.Skipped)}
	for kind, n := range c.Failures {
		if s.Failed == nil {
			s.Failed = map[string]int64{}
		}
		s.Failed[string(kind)] += int64(n)
	}
	return s
}

// bounds are the snapshots and times that bound the window for one
// target: its marks where they succeeded, else the engine's times.
type bounds struct {
	from, to     servermetrics.Snapshot
	fromOK, toOK bool
	start, end   time.Time
}

func windowOf(r servermetrics.TargetResult, win Window) bounds {
	b := bounds{start: win.Start, end: win.End}
	b.from, b.fromOK = r.Mark(win.From)
	b.to, b.toOK = r.Mark(win.To)
	if b.fromOK {
		b.start = b.from.Time
	}
	if b.toOK {
		b.end = b.to.Time
	}
	return b
}

// seconds is t in seconds since origin.
func seconds(t, origin time.Time) float64 { return t.Sub(origin).Seconds() }
