package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// ServerMetrics says which servers' own metrics and GPU telemetry a run
// reads beside its own figures (--server-metrics, --gpu-metrics): what
// it sets wins over the script's options.serverMetrics. With neither,
// the run reads the /metrics at its base URL's root when that is a known
// engine's (serverwatch.Discover).
type ServerMetrics struct {
	Servers []serverwatch.Server
	// GPUs are DCGM exporter URLs, or serverwatch.NvidiaSMI.
	GPUs []string
	// Interval between reads; 0 leaves it to the script, else 1 s.
	Interval time.Duration
	// Disabled reads nothing and discovers nothing (--no-server-metrics).
	Disabled bool
}

// Check refuses settings that contradict each other or name a server or
// GPU exporter that cannot be read, naming the flag at fault.
func (sm ServerMetrics) Check() error {
	if sm.Disabled && (len(sm.Servers) > 0 || len(sm.GPUs) > 0) {
		return errors.New("--no-server-metrics reads nothing: leave out --server-metrics and --gpu-metrics, or it")
	}
	if err := serverwatch.Check(serverwatch.Config{Servers: sm.Servers}); err != nil {
		return fmt.Errorf("--server-metrics: %w", err)
	}
	if err := serverwatch.Check(serverwatch.Config{GPUs: sm.GPUs}); err != nil {
		return fmt.Errorf("--gpu-metrics: %w", err)
	}
	return nil
}

// serverMetricsFields are the fields options.serverMetrics takes.
var serverMetricsFields = []string{"urls", "preset", "interval", "gpu"}

// WatchConfig is the run's watch over its servers: the command line's
// targets, else the script's (options.serverMetrics: false, or { urls,
// preset, interval, gpu }, urls and gpu a string or a list); discover
// says the run should look for its base URL's /metrics, as no target was
// named and nothing turned the reading off. Errors are
// *engine.ConfigError naming the field.
func WatchConfig(o engine.Options, flags ServerMetrics) (cfg serverwatch.Config, discover bool, err error) {
	if flags.Disabled {
		return serverwatch.Config{}, false, nil
	}
	script, disabled, err := serverMetricsOption(o.ServerMetrics)
	if err != nil {
		return serverwatch.Config{}, false, err
	}
	if disabled && len(flags.Servers) == 0 && len(flags.GPUs) == 0 {
		return serverwatch.Config{}, false, nil
	}
	cfg = script
	if len(flags.Servers) > 0 {
		cfg.Servers = flags.Servers
	}
	if len(flags.GPUs) > 0 {
		cfg.GPUs = flags.GPUs
	}
	if flags.Interval > 0 {
		cfg.Interval = flags.Interval
	}
	return cfg, !disabled && len(cfg.Servers) == 0, nil
}

// serverMetricsOption reads options.serverMetrics; disabled when it is
// false.
func serverMetricsOption(raw json.RawMessage) (cfg serverwatch.Config, disabled bool, err error) {
	const field = "options.serverMetrics"
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("true")) {
		return cfg, false, nil
	}
	if bytes.Equal(raw, []byte("false")) {
		return cfg, true, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return cfg, false, &engine.ConfigError{Field: field, Err: errors.New("want false, or an object such as { urls: ['http://HOST:8000/metrics'], preset: 'vllm', interval: '1s', gpu: ['http://HOST:9400/metrics'] }")}
	}
	var urls []string
	var preset string
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		value := fields[key]
		var err error
		switch key {
		case "urls":
			urls, err = stringList(value)
		case "gpu":
			cfg.GPUs, err = stringList(value)
		case "preset":
			if json.Unmarshal(value, &preset) != nil {
				err = errors.New("want a preset's name, such as 'vllm'")
			}
		case "interval":
			var d executor.Duration
			if err = json.Unmarshal(value, &d); err == nil && d.D <= 0 {
				err = fmt.Errorf("must be positive, not %v", d.D)
			}
			cfg.Interval = d.D
		default:
			err = fmt.Errorf("unknown field; want %q, %q, %q or %q", serverMetricsFields[0], serverMetricsFields[1], serverMetricsFields[2], serverMetricsFields[3])
		}
		if err != nil {
			return serverwatch.Config{}, false, &engine.ConfigError{Field: field + "." + key, Err: err}
		}
	}
	if preset != "" && len(urls) == 0 {
		return serverwatch.Config{}, false, &engine.ConfigError{Field: field + ".preset", Err: errors.New("a preset reads the urls given beside it, and none is")}
	}
	for _, u := range urls {
		cfg.Servers = append(cfg.Servers, serverwatch.Server{URL: u, Preset: preset})
	}
	if err := serverwatch.Check(cfg); err != nil {
		return serverwatch.Config{}, false, &engine.ConfigError{Field: field, Err: err}
	}
	return cfg, false, nil
}

// stringList is a JSON string or list of strings.
func stringList(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("want a URL or a list of URLs")
	}
	return list, nil
}

// startWatch starts the run's watch over its servers, when it has any:
// those named, or the /metrics at the root of its base URL and of the
// clients' the preflight found, when that is a known engine's. In a distributed run only the first instance reads
// them: a server's figures are the server's, not one per instance. A
// watch that cannot start says why and the run goes on without it.
func (r *run) startWatch(ctx context.Context) {
	if rc := r.cfg.Rendezvous; rc != nil && rc.Instance != 0 {
		return
	}
	if r.watchDiscover {
		// The base URL, and those of the clients the script's init code
		// made, as the preflight found them.
		bases := []string{r.cfg.Engine.LLM.BaseURL}
		for _, p := range r.probes {
			bases = append(bases, p.Target)
		}
		r.watchCfg.Servers = serverwatch.Discover(ctx, nil, bases)
		// The built-in simulator also simulates a DCGM exporter, so that
		// the energy figures show on a machine without a GPU.
		if r.simulated && len(r.watchCfg.GPUs) == 0 {
			r.watchCfg.GPUs = []string{strings.TrimSuffix(r.cfg.Engine.LLM.BaseURL, "/v1") + llmsim.DCGMPath}
		}
	}
	if len(r.watchCfg.Servers) == 0 && len(r.watchCfg.GPUs) == 0 {
		return
	}
	w, err := serverwatch.Start(ctx, r.watchCfg)
	if err != nil {
		r.printf("server metrics: %v; the run goes on without them", err)
		return
	}
	r.watch = w
	for _, sc := range r.engine.Scenarios() {
		if sc.Warmup.Iterations > 0 || sc.Warmup.Duration > 0 {
			r.watchFrom = serverwatch.MarkMeasured
		}
	}
	if r.watchFrom == "" {
		r.watchFrom = serverwatch.MarkStart
	}
}

// beforeStart is the engine's BeforeStart: the instances of a distributed
// run wait for each other, then the watch takes its first mark.
func (r *run) beforeStart(ctx context.Context) error {
	if r.cfg.Rendezvous != nil {
		if err := r.startTogether(ctx); err != nil {
			return err
		}
	}
	if r.watch != nil {
		r.watch.Mark(ctx, serverwatch.MarkStart)
	}
	return nil
}

// measuredStart is the engine's MeasuredStart: after a warmup, the
// window's first mark is taken as the measured part begins, in the
// background (a VU is about to send its request).
func (r *run) measuredStart() {
	if r.watch != nil && r.watchFrom == serverwatch.MarkMeasured {
		r.watch.MarkLater(serverwatch.MarkMeasured)
	}
}

// scenariosEnded is the engine's ScenariosEnded: the window's last mark,
// after the last request, before teardown.
func (r *run) scenariosEnded() {
	if r.watch != nil {
		r.watch.Mark(context.Background(), serverwatch.MarkEnd)
	}
}

// attachServer puts what the watch read over the measured window into
// the summary, once its client figures are final.
func (r *run) attachServer(rep *engine.Report, sum *summary.Summary) {
	if r.watch == nil {
		return
	}
	r.watch.Stop()
	summarize.AttachServer(sum, r.watch.Targets(serverwatch.Window{
		From: r.watchFrom, To: serverwatch.MarkEnd, Start: rep.Start, End: rep.End, Origin: r.timelineStart,
	}))
}

// stopWatch ends the watch's reads, if it has any.
func (r *run) stopWatch() {
	if r.watch != nil {
		r.watch.Stop()
	}
}
