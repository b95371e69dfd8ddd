package serverwatch

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/promtest"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/summary"
)

// noTicks is an interval no test lasts: the only reads are the first one
// (the engine's detection) and the marks, so the n-th scrape is known.
const noTicks = time.Hour

// The scrapes of a watch started without a preset and marked twice.
const (
	probeScrape = 1
	startScrape = 2
	endScrape   = 3
)

// watchOnce starts a watch of cfg, marks start and end, stops it and
// returns its targets over the window between the marks.
func watchOnce(t *testing.T, cfg Config) []summary.ServerTarget {
	t.Helper()
	if cfg.Interval == 0 {
		cfg.Interval = noTicks
	}
	ctx := t.Context()
	origin := time.Now()
	w, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w.Mark(ctx, MarkStart)
	w.Mark(ctx, MarkEnd)
	end := time.Now()
	w.Stop()
	return w.Targets(Window{From: MarkStart, To: MarkEnd, Start: start, End: end, Origin: origin})
}

func num(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Over real sockets, a recorded vLLM exposition whose values the test
// changes between the marks gives the window's figures the test set: the
// counters' deltas, the gauges' time-weighted mean and maximum, the
// histograms' observations and quantiles.
func TestVLLMWindowFigures(t *testing.T) {
	srv := promtest.Serve(t, promtest.Recording("vllm.prom"))
	srv.At(startScrape, func(f promtest.Families) { f.Set("vllm:num_requests_running", 8) })
	srv.At(endScrape, func(f promtest.Families) {
		f.Set("vllm:num_requests_running", 2)
		f.Add("vllm:num_preemptions_total", 4)
		f.Add("vllm:request_success_total", 25)
		f.Add("vllm:generation_tokens_total", 1000)
		f.Add("vllm:prefix_cache_queries_total", 800)
		f.Add("vllm:prefix_cache_hits_total", 200)
		f.Observe("vllm:time_to_first_token_seconds", 0.3, 10)
	})
	targets := watchOnce(t, Config{Servers: []Server{{URL: srv.URL}}})
	if len(targets) != 1 {
		t.Fatalf("%d targets, want 1", len(targets))
	}
	got := targets[0]
	if got.Engine != "vllm" || got.EngineForced || got.Kind != summary.TargetServer {
		t.Fatalf("engine %q forced %v kind %q, want vllm detected, a server", got.Engine, got.EngineForced, got.Kind)
	}
	if got.Scrapes.OK != 2 || got.Scrapes.Failures() != 0 {
		t.Errorf("scrapes %+v, want the two marks", got.Scrapes)
	}
	for _, c := range []struct {
		figure engines.Figure
		field  func(summary.WindowFigure) *float64
		want   float64
	}{
		{engines.Preemptions, deltaOf, 4},
		{engines.Requests, deltaOf, 25},
		{engines.GenerationTokens, deltaOf, 1000},
		{engines.PrefixCacheQueries, deltaOf, 800},
		{engines.PrefixCacheHits, deltaOf, 200},
		{engines.Running, func(f summary.WindowFigure) *float64 { return f.Mean }, 5},
		{engines.Running, func(f summary.WindowFigure) *float64 { return f.Max }, 8},
		{engines.TTFT, func(f summary.WindowFigure) *float64 { return f.Count }, 10},
		{engines.TTFT, func(f summary.WindowFigure) *float64 { return f.Sum }, 3},
		// Ten observations in the bucket (0.25, 0.5]: the median is
		// interpolated halfway, the 99th percentile at 99 %.
		{engines.TTFT, func(f summary.WindowFigure) *float64 { return f.P50 }, 0.375},
		{engines.TTFT, func(f summary.WindowFigure) *float64 { return f.P99 }, 0.25 + 0.25*0.99},
		// Nothing queued in the window: no observation, no quantile.
		{engines.QueueTime, func(f summary.WindowFigure) *float64 { return f.Count }, 0},
	} {
		f, ok := got.Figures[string(c.figure)]
		if !ok {
			t.Errorf("%s: missing", c.figure)
			continue
		}
		if v := num(c.field(f)); !near(v, c.want) {
			t.Errorf("%s = %v, want %v (%+v)", c.figure, v, c.want, f)
		}
	}
	if p := got.Figures[string(engines.QueueTime)].P50; p != nil {
		t.Errorf("queue_time p50 = %v of no observation, want none", *p)
	}
	if kv := got.Figures[string(engines.KVCacheUsage)]; kv.Unit != string(engines.UnitFraction) || !near(num(kv.Mean), 0.4375) {
		t.Errorf("kv_cache_usage %+v, want the recorded 0.4375 as a fraction", kv)
	}
	if len(got.Series) != 2 || !near(num(got.Series[0].Running), 8) || !near(num(got.Series[1].Running), 2) {
		t.Errorf("series %+v, want the two marks' running requests 8 then 2", got.Series)
	}
}

func deltaOf(f summary.WindowFigure) *float64 { return f.Delta }

// Every figure of vLLM's, SGLang's and TGI's presets that the recorded
// exposition has is read, from the family the preset names, in the
// figure's unit: each counter's delta, gauge's value and histogram's
// observations as the test set them.
func TestReadsEveryPresetField(t *testing.T) {
	for _, file := range []string{"vllm.prom", "sglang.prom", "tgi.prom"} {
		t.Run(file, func(t *testing.T) {
			srv := promtest.Serve(t, promtest.Recording(file))
			families := promtest.Parse(t, promtest.Recording(file))
			eng := engines.Detect(families)
			if eng == nil {
				t.Fatal("no engine detected")
			}
			type expect struct {
				def engines.Definition
				src engines.Source
				n   int // the series of the figure
			}
			var want []expect
			edited := map[string]bool{}
			for _, def := range engines.Definitions {
				sel, ok := eng.Lookup(families, def.Figure, nil)
				if def.GPU || !ok {
					continue
				}
				want = append(want, expect{def, sel.Source, len(sel.Series)})
				name := sel.Source.Name
				if edited[name] {
					continue
				}
				edited[name] = true
				switch sel.Source.Kind {
				case engines.Gauge:
					srv.At(startScrape, func(f promtest.Families) { f.Set(name, 3) })
				case engines.Counter:
					srv.At(endScrape, func(f promtest.Families) { f.Add(name, 7) })
				case engines.Histogram:
					srv.At(endScrape, func(f promtest.Families) { f.Observe(name, 5, 4) })
				}
			}
			if len(want) < 8 {
				t.Fatalf("only %d figures of %s found in its recording", len(want), eng.Name)
			}
			got := watchOnce(t, Config{Servers: []Server{{URL: srv.URL}}})[0]
			if got.Engine != eng.Name {
				t.Fatalf("engine %q, want %q", got.Engine, eng.Name)
			}
			for _, w := range want {
				f, ok := got.Figures[string(w.def.Figure)]
				if !ok {
					t.Errorf("%s (%s): missing", w.def.Figure, w.src.Name)
					continue
				}
				var v, expected float64
				switch {
				case w.src.Kind == engines.Gauge:
					v, expected = num(f.Mean), 3*w.src.Scale
					if w.def.Combine != engines.Mean {
						expected *= float64(w.n)
					}
				case w.src.Kind == engines.Counter:
					v, expected = num(f.Delta), 7*w.src.Scale
				case w.src.HistogramSum:
					v, expected = num(f.Delta), 20*w.src.Scale
				default:
					v, expected = num(f.Count), 4
					if s := num(f.Sum); !near(s, 20*w.src.Scale) {
						t.Errorf("%s sum = %v, want %v", w.def.Figure, s, 20*w.src.Scale)
					}
				}
				if !near(v, expected) {
					t.Errorf("%s (%s) = %v, want %v (%+v)", w.def.Figure, w.src.Name, v, expected, f)
				}
				if f.Unit != string(w.def.Unit) {
					t.Errorf("%s unit %q, want %q", w.def.Figure, f.Unit, w.def.Unit)
				}
			}
		})
	}
}

// A DCGM exposition whose power and energy counter the test sets gives
// each GPU's power and the window's energy from the counter: the rise of
// its millijoules, in joules, summed over the GPUs.
func TestDCGMEnergy(t *testing.T) {
	const (
		gpu0 = 450_000 // mJ the first GPU's counter rises in the window
		uuid = "GPU-5d2b9f3a-8c41-4e0b-9a7e-1f2c3d4e5f60"
	)
	srv := promtest.Serve(t, promtest.Recording("dcgm.prom"))
	srv.At(startScrape, func(f promtest.Families) { f.Set("DCGM_FI_DEV_POWER_USAGE", 300) })
	srv.At(endScrape, func(f promtest.Families) {
		f.Set("DCGM_FI_DEV_POWER_USAGE", 500)
		f.Add("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", gpu0)
	})
	targets := watchOnce(t, Config{GPUs: []string{srv.URL}})
	got := targets[0]
	if got.Kind != summary.TargetGPU || got.Engine != "dcgm" || len(got.GPUs) != 2 {
		t.Fatalf("kind %q engine %q, %d GPUs; want a GPU target of dcgm with 2 GPUs", got.Kind, got.Engine, len(got.GPUs))
	}
	if got.Energy == nil || !near(got.Energy.Joules, gpu0/1000.0) || got.Energy.Method != summary.EnergyCounter {
		t.Fatalf("energy %+v, want %v J from the counter", got.Energy, gpu0/1000.0)
	}
	g := got.GPUs[0]
	if g.UUID != uuid || g.ID != "0" {
		t.Errorf("first GPU %q %q, want 0 %s", g.ID, g.UUID, uuid)
	}
	if p := g.Figures[string(engines.GPUPower)]; !near(num(p.Mean), 400) || !near(num(p.Max), 500) {
		t.Errorf("GPU 0 power %+v, want mean 400 W, max 500 W", p)
	}
	if e := g.Figures[string(engines.GPUEnergy)]; !near(num(e.Delta), gpu0/1000.0) {
		t.Errorf("GPU 0 energy %+v, want %v J", e, gpu0/1000.0)
	}
	if total := got.GPUTotal; total == nil || !near(num(total.Figures[string(engines.GPUPower)].Max), 1000) {
		t.Errorf("total %+v, want the two GPUs' power summed, 1000 W at most", total)
	}
	if len(got.Series) != 2 || !near(num(got.Series[1].GPUPower), 1000) {
		t.Errorf("series %+v, want the marks' summed power", got.Series)
	}
}

// A target that refuses, stalls, answers 500, 50 MiB or what is not
// Prometheus text gives no figures, and its failed scrapes are counted by
// kind; the good target beside it is read whole.
func TestFailingTargets(t *testing.T) {
	urls := promtest.FailingTargets(t)
	good := promtest.Serve(t, promtest.Recording("vllm.prom"))
	good.At(endScrape, func(f promtest.Families) { f.Add("vllm:request_success_total", 9) })
	cfg := Config{Servers: []Server{{URL: good.URL}}}
	for u := range urls {
		cfg.Servers = append(cfg.Servers, Server{URL: u})
	}
	targets := watchOnce(t, cfg)
	if d := num(targets[0].Figures[string(engines.Requests)].Delta); d != 9 {
		t.Errorf("the good target's requests = %v, want 9", d)
	}
	for _, got := range targets[1:] {
		kind := urls[got.URL]
		if got.Scrapes.OK != 0 || got.Scrapes.Failed[kind] != 2 || got.Figures != nil || got.Engine != "" {
			t.Errorf("%s target: scrapes %+v, engine %q, %d figures; want the 2 marks failed as %s and nothing read",
				kind, got.Scrapes, got.Engine, len(got.Figures), kind)
		}
	}
}

// A target named twice, or by several base URLs, is read once.
func TestTargetReadOnce(t *testing.T) {
	srv := promtest.Serve(t, promtest.Recording("vllm.prom"))
	targets := watchOnce(t, Config{Servers: []Server{{URL: srv.URL}, {URL: srv.URL}}})
	if len(targets) != 1 || srv.Scrapes() != endScrape {
		t.Errorf("%d targets, %d scrapes; want 1 target read %d times (its engine, two marks)", len(targets), srv.Scrapes(), endScrape)
	}
}

// A DCGM exporter named as a server is read as GPU telemetry, once
// however often it is named.
func TestDCGMNamedAsServer(t *testing.T) {
	srv := promtest.Serve(t, promtest.Recording("dcgm.prom"))
	targets := watchOnce(t, Config{Servers: []Server{{URL: srv.URL}}, GPUs: []string{srv.URL}})
	for _, got := range targets {
		if got.Kind != summary.TargetGPU || len(got.GPUs) != 2 {
			t.Errorf("target %+v, want the exporter's 2 GPUs", got)
		}
	}
	if n := srv.Scrapes(); n != endScrape {
		t.Errorf("%d reads, want %d: the first read and the two marks, once for both kinds", n, endScrape)
	}
}

// A preset forces the engine: the target is not read to detect it.
func TestPresetForcesEngine(t *testing.T) {
	srv := promtest.Serve(t, promtest.Recording("llm-d-inference-sim.prom"))
	got := watchOnce(t, Config{Servers: []Server{{URL: srv.URL, Preset: "vllm"}}})[0]
	if got.Engine != "vllm" || !got.EngineForced || srv.Scrapes() != 2 {
		t.Errorf("engine %q forced %v after %d scrapes, want vllm forced, the two marks only", got.Engine, got.EngineForced, srv.Scrapes())
	}
}

// Bad targets are errors that name them and what is wrong.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Servers: []Server{{URL: "localhost:8000/metrics"}}}, "server metrics localhost:8000/metrics: the scheme must be http or https"},
		{Config{Servers: []Server{{URL: "http://h/metrics", Preset: "vlm"}}}, `unknown server-metrics preset "vlm": did you mean "vllm"?`},
		{Config{GPUs: []string{"nvidia_smi"}}, `gpu metrics nvidia_smi: the scheme must be http or https, not "" (or "nvidia-smi" for the local GPUs)`},
		{Config{Interval: -time.Second}, "the interval and timeout cannot be negative"},
	} {
		err := Check(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// Discovery reads the root's /metrics of each base URL once, without the
// base URL's credentials, and keeps those of a known engine; a root that
// answers 404 or other metrics is left out.
func TestDiscover(t *testing.T) {
	engine := promtest.Serve(t, promtest.Recording("vllm.prom"))
	var authorized atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			authorized.Add(1)
		}
		if r.URL.Path == "/metrics" {
			w.Write([]byte("# TYPE go_goroutines gauge\ngo_goroutines 7\n"))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(other.Close)
	missing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(missing.Close)
	root := strings.TrimSuffix(engine.URL, "/metrics")
	withCredentials := strings.Replace(root, "http://", "http://user:secret@", 1) + "/v1"
	got := Discover(t.Context(), nil, []string{withCredentials, root + "/v1", other.URL + "/v1", missing.URL + "/v1", strings.Replace(other.URL, "http://", "http://u:p@", 1)})
	if len(got) != 1 || got[0].URL != engine.URL || got[0].Preset != "" {
		t.Errorf("Discover = %+v, want %s alone", got, engine.URL)
	}
	if engine.Scrapes() != 1 || authorized.Load() != 0 {
		t.Errorf("the engine's root read %d times, %d reads with credentials; want once, none", engine.Scrapes(), authorized.Load())
	}
}

// A target whose last mark failed gives its gauges from the points it
// has, and no counter or histogram, though periodic points came between:
// they would count from another time than the window's end.
func TestFailedMarkLeavesOutCounts(t *testing.T) {
	const periodic = 3
	vllm := promtest.New(t, promtest.Recording("vllm.prom"))
	var reads atomic.Int32
	var failing atomic.Bool
	enough := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		vllm.ServeHTTP(w, r)
		if reads.Add(1) == startScrape+periodic {
			close(enough)
		}
	}))
	t.Cleanup(srv.Close)
	ctx := t.Context()
	w, err := Start(ctx, Config{Servers: []Server{{URL: srv.URL + "/metrics"}}, Interval: 5 * time.Millisecond, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w.Mark(ctx, MarkStart)
	<-enough
	failing.Store(true)
	w.Mark(ctx, MarkEnd)
	w.Stop()
	got := w.Targets(Window{From: MarkStart, To: MarkEnd, Start: start, End: time.Now(), Origin: start})[0]
	if got.Engine != "vllm" || got.Scrapes.Failed["status"] == 0 || len(got.Scrapes.Failed) != 1 || got.Scrapes.OK < periodic {
		// The last periodic read served may be cut by Stop; those before
		// it were recorded before it started.
		t.Fatalf("engine %q scrapes %+v, want vllm, the start mark and %d periodic reads, then the end mark failed", got.Engine, got.Scrapes, periodic-1)
	}
	if _, ok := got.Figures[string(engines.Running)]; !ok {
		t.Errorf("no running requests from the points it has: %v", got.Figures)
	}
	for _, f := range []engines.Figure{engines.Requests, engines.Preemptions, engines.TTFT} {
		if v, ok := got.Figures[string(f)]; ok {
			t.Errorf("%s = %+v over a window without its end", f, v)
		}
	}
}

// nvidia-smi on this host is sampled at the marks: its GPUs' figures are
// those of the readings between them, and its energy is the power
// integrated (nvidia-smi has no energy counter). One that is not there
// is counted and said, and the run has no GPU figures from it.
func TestNvidiaSMI(t *testing.T) {
	dir := t.TempDir()
	smi := filepath.Join(dir, "nvidia-smi")
	script := "#!/bin/sh\necho '0, GPU-11111111-2222-3333-4444-555555555555, NVIDIA H100 80GB HBM3, 90, 70000, 81559, 300.00, 60, 1980, 0x0000000000000000'\n"
	if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{GPUs: []string{NvidiaSMI}, SMICommand: smi}
	got := watchOnce(t, cfg)[0]
	if got.URL != NvidiaSMI || got.Kind != summary.TargetGPU || len(got.GPUs) != 1 || got.GPUs[0].UUID != "GPU-11111111-2222-3333-4444-555555555555" {
		t.Fatalf("target %+v, want nvidia-smi's one GPU", got)
	}
	g := got.GPUs[0].Figures
	if p := g[string(engines.GPUPower)]; !near(num(p.Mean), 300) || !near(num(p.Max), 300) {
		t.Errorf("power %+v, want 300 W", p)
	}
	if u := g[string(engines.GPUUtilization)]; !near(num(u.Mean), 0.9) {
		t.Errorf("utilisation %+v, want 0.9 (a fraction)", u)
	}
	if m := g[string(engines.GPUMemoryUsed)]; !near(num(m.Max), 70000<<20) {
		t.Errorf("memory used %+v, want 70000 MiB in bytes", m)
	}
	if got.Energy == nil || got.Energy.Method != summary.EnergyIntegrated || got.Energy.Joules <= 0 {
		t.Errorf("energy %+v, want the power integrated over the marks' readings", got.Energy)
	}
	if got.Scrapes.OK < 2 || got.Scrapes.Failures() != 0 {
		t.Errorf("scrapes %+v, want a reading at each mark at least", got.Scrapes)
	}

	cfg.SMICommand = filepath.Join(dir, "missing")
	w, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	missing := w.Targets(Window{From: MarkStart, To: MarkEnd})[0]
	if missing.Scrapes.Failed["not_found"] != 1 || missing.GPUs != nil {
		t.Errorf("a missing nvidia-smi: %+v, want it counted as not found, no GPU", missing)
	}
	if line := w.Describe()[0]; !strings.HasPrefix(line, "gpu metrics: the local GPUs (gpu metrics: ") || !strings.Contains(line, "cannot be run") {
		t.Errorf("banner line %q, want why nvidia-smi cannot be read", line)
	}
}
