package runner_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/promtest"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
	"github.com/llmrun/llmrun/runtime/serverwatch"
	"github.com/llmrun/llmrun/runtime/summary"
)

// noTicks is an interval no test lasts: a target is read only to find
// its engine and at the run's marks, so the test knows which read is
// which.
const noTicks = time.Hour

// The reads of a target named without a preset, in a run without
// warmup: its engine, then the marks before the first VU and after the
// last request; with a warmup, the mark at its end comes between.
const (
	probeRead    = 1
	startRead    = 2
	endRead      = 3
	measuredRead = 3
	endAfterWarm = 4
)

// fiveRequests sends five requests, one at a time.
const fiveRequests = "export const options = { iterations: 5 };\n" + stream

// withServerMetrics points the run at targets read every noTicks and
// writes its result file to path.
func withServerMetrics(sm runner.ServerMetrics, path string) func(*runner.Config) {
	return func(c *runner.Config) {
		if sm.Interval == 0 {
			sm.Interval = noTicks
		}
		c.ServerMetrics = sm
		c.SummaryExport = path
	}
}

// resultOf reads a run's result file back.
func resultOf(t *testing.T, r result, path string) *summary.Summary {
	t.Helper()
	if r.outcome.Verdict != runner.Passed {
		t.Fatalf("verdict %v\nstderr:\n%s", r.outcome.Verdict, r.stderr)
	}
	s, err := summary.ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func figure(t *testing.T, target summary.ServerTarget, f engines.Figure) summary.WindowFigure {
	t.Helper()
	got, ok := target.Figures[string(f)]
	if !ok {
		t.Fatalf("%s: no %s among %v", target.URL, f, target.Figures)
	}
	return got
}

func value(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// A run told to read a vLLM server's metrics writes its figures over the
// measured window into the result file: the engine, the counters' deltas
// between the marks before the first VU and after the last request, the
// histograms' observations, and the warnings they call for.
func TestServerMetricsInTheResultFile(t *testing.T) {
	vllm := promtest.Serve(t, promtest.Recording("vllm.prom"))
	vllm.At(endRead, func(f promtest.Families) {
		f.Add("vllm:request_success_total", 5)
		f.Add("vllm:num_preemptions_total", 2)
		f.Observe("vllm:request_queue_time_seconds", 0.05, 5)
	})
	path := filepath.Join(t.TempDir(), "result.json")
	s := resultOf(t, run(t, fiveRequests, withServerMetrics(runner.ServerMetrics{
		Servers: []serverwatch.Server{{URL: vllm.URL}},
	}, path)), path)
	if s.Server == nil || len(s.Server.Targets) != 1 {
		t.Fatalf("server section %+v, want the one target", s.Server)
	}
	got := s.Server.Targets[0]
	if got.Engine != "vllm" || got.Kind != summary.TargetServer || got.Scrapes.OK != 2 {
		t.Errorf("engine %q kind %q, %d scrapes; want vllm, a server read at its 2 marks", got.Engine, got.Kind, got.Scrapes.OK)
	}
	if d := value(figure(t, got, engines.Requests).Delta); d != 5 {
		t.Errorf("requests over the window %v, want 5", d)
	}
	if d := value(figure(t, got, engines.Preemptions).Delta); d != 2 {
		t.Errorf("preemptions over the window %v, want 2", d)
	}
	if q := figure(t, got, engines.QueueTime); value(q.Count) != 5 || value(q.Sum) != 0.25 || q.P50 == nil {
		t.Errorf("queue time %+v, want the 5 observations of 50 ms", q)
	} else if p50, ok := q.Quantile(0.5); value(q.Mean) != 0.05 || len(q.Buckets) == 0 || q.Buckets[0].Count != 5 || !ok || p50.Upper != 0.1 {
		t.Errorf("queue time: mean %v, buckets %v, p50 %+v; want 0.05 s, all 5 in the first, a p50 at most twice the mean", value(q.Mean), q.Buckets, p50)
	}
	if !strings.Contains(strings.Join(s.Server.Warnings, "\n"), "preempted 2 requests") {
		t.Errorf("warnings %q, want the preemptions said", s.Server.Warnings)
	}
	if s.Serving.OK != 5 {
		t.Errorf("%d requests ok, want 5", s.Serving.OK)
	}
}

// With a warmup, the window starts at its end: what the server counted
// during the warmup is left out.
func TestServerMetricsWindowLeavesOutTheWarmup(t *testing.T) {
	vllm := promtest.Serve(t, promtest.Recording("vllm.prom"))
	vllm.At(measuredRead, func(f promtest.Families) { f.Add("vllm:request_success_total", 100) })
	vllm.At(endAfterWarm, func(f promtest.Families) { f.Add("vllm:request_success_total", 4) })
	path := filepath.Join(t.TempDir(), "result.json")
	script := "export const options = { iterations: 6, warmup: 2 };\n" + stream
	s := resultOf(t, run(t, script, withServerMetrics(runner.ServerMetrics{
		Servers: []serverwatch.Server{{URL: vllm.URL}},
	}, path)), path)
	if d := value(figure(t, s.Server.Targets[0], engines.Requests).Delta); d != 4 {
		t.Errorf("requests over the window %v, want 4: the 100 counted before the warmup's end left out", d)
	}
	if n := vllm.Scrapes(); n != endAfterWarm {
		t.Errorf("%d reads, want %d (engine, start, warmup's end, end)", n, endAfterWarm)
	}
}

// GPU telemetry from a DCGM exporter whose energy counter the test sets
// gives the window's energy and the joules per output token of the run.
func TestGPUEnergyPerToken(t *testing.T) {
	const millijoules = 250_000
	dcgm := promtest.Serve(t, promtest.Recording("dcgm.prom"))
	dcgm.At(endRead, func(f promtest.Families) { f.Add("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", millijoules) })
	path := filepath.Join(t.TempDir(), "result.json")
	s := resultOf(t, run(t, fiveRequests, withServerMetrics(runner.ServerMetrics{GPUs: []string{dcgm.URL}}, path)), path)
	e := s.Server.Energy
	if e == nil || e.Joules != millijoules/1000 || e.Method != summary.EnergyCounter {
		t.Fatalf("energy %+v, want %d J from the counter", e, millijoules/1000)
	}
	want := float64(millijoules/1000) / float64(s.Serving.OutputTokens)
	if s.Serving.OutputTokens == 0 || value(e.JoulesPerOutputToken) != want || e.OutputTokens != s.Serving.OutputTokens {
		t.Errorf("%v J per output token of %d, want %v", value(e.JoulesPerOutputToken), e.OutputTokens, want)
	}
	// The built-in simulator's /metrics is read too: a GPU target named
	// does not stop the server's being found.
	gpus := slices.DeleteFunc(slices.Clone(s.Server.Targets), func(tg summary.ServerTarget) bool { return tg.Kind != summary.TargetGPU })
	if len(gpus) != 1 || gpus[0].URL != dcgm.URL || len(gpus[0].GPUs) != 2 {
		t.Errorf("GPU targets %+v, want the exporter's 2 GPUs alone (not the simulator's)", gpus)
	}
}

// Targets that refuse, stall, answer 500, 50 MiB or garbage leave the
// run's own figures as a run without them has them, and the server
// section says what became of each.
func TestFailingTargetsLeaveTheRunAlone(t *testing.T) {
	kinds := promtest.FailingTargets(t)
	var servers []serverwatch.Server
	for u := range kinds {
		servers = append(servers, serverwatch.Server{URL: u})
	}
	dir := t.TempDir()
	bare := resultOf(t, run(t, fiveRequests, func(c *runner.Config) {
		c.SummaryExport = filepath.Join(dir, "bare.json")
		c.ServerMetrics.Disabled = true
	}), filepath.Join(dir, "bare.json"))
	path := filepath.Join(dir, "watched.json")
	s := resultOf(t, run(t, fiveRequests, withServerMetrics(runner.ServerMetrics{Servers: servers}, path)), path)
	if s.Serving.Requests != bare.Serving.Requests || s.Serving.OK != bare.Serving.OK || s.Serving.OutputTokens != bare.Serving.OutputTokens {
		t.Errorf("with failing targets %d requests, %d ok, %d output tokens; without, %d, %d, %d",
			s.Serving.Requests, s.Serving.OK, s.Serving.OutputTokens, bare.Serving.Requests, bare.Serving.OK, bare.Serving.OutputTokens)
	}
	if bare.Server != nil {
		t.Errorf("a run without targets has a server section: %+v", bare.Server)
	}
	if s.Server == nil || len(s.Server.Targets) != len(kinds) {
		t.Fatalf("server section %+v, want every target", s.Server)
	}
	warnings := strings.Join(s.Server.Warnings, "\n")
	for _, got := range s.Server.Targets {
		kind := kinds[got.URL]
		if got.Scrapes.OK != 0 || got.Scrapes.Failed[kind] != 2 {
			t.Errorf("%s: scrapes %+v, want its 2 marks failed as %s", got.URL, got.Scrapes, kind)
		}
		if !strings.Contains(warnings, "every scrape of "+got.URL+" failed ("+kind+" 2)") {
			t.Errorf("warnings say nothing of %s:\n%s", got.URL, warnings)
		}
	}
}

// servedWith serves the simulator's API at a base URL whose root's
// /metrics is metrics.
func servedWith(t *testing.T, metrics http.Handler) string {
	t.Helper()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.Handle("/", sim.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// With no target named, a run reads the /metrics at its base URL's root
// when a known engine's answers there and says so in its banner; a root
// without /metrics is passed over without a word; --no-server-metrics
// reads nothing.
func TestServerMetricsDiscovery(t *testing.T) {
	vllm := promtest.New(t, promtest.Recording("vllm.prom"))
	withEngine := servedWith(t, vllm)
	withNone := servedWith(t, http.NotFoundHandler())
	dir := t.TempDir()
	at := func(base string, edit func(*runner.Config)) func(*runner.Config) {
		return func(c *runner.Config) {
			c.Engine.LLM.BaseURL = base
			c.Engine.LLM.Model = llmsim.DefaultConfig().Model
			c.Quiet = false
			c.SummaryExport = filepath.Join(dir, "result.json")
			if edit != nil {
				edit(c)
			}
		}
	}

	r := run(t, fiveRequests, at(withEngine, nil))
	s := resultOf(t, r, filepath.Join(dir, "result.json"))
	root := strings.TrimSuffix(withEngine, "/v1") + "/metrics"
	if s.Server == nil || len(s.Server.Targets) != 1 || s.Server.Targets[0].URL != root || s.Server.Targets[0].Engine != "vllm" {
		t.Errorf("server section %+v, want %s read as vLLM's", s.Server, root)
	}
	if !strings.Contains(r.stdout, "server metrics: vLLM at "+root+", every 1s") {
		t.Errorf("the banner does not say the metrics are read:\n%s", r.stdout)
	}

	r = run(t, fiveRequests, at(withNone, nil))
	s = resultOf(t, r, filepath.Join(dir, "result.json"))
	if s.Server != nil || strings.Contains(r.stdout+r.stderr, "server metrics") {
		t.Errorf("a root without /metrics: server section %+v, output:\n%s%s", s.Server, r.stdout, r.stderr)
	}

	// A client of the script's own at another server: the preflight
	// finds it, and its root is looked at too, once.
	r = run(t, `import llm from 'llm';
const other = llm.client({ baseURL: '`+withEngine+`' });
export const options = { iterations: 2 };
export default function () { other.stream({ prompt: 'hi', max_tokens: 2 }); }`, at(withNone, func(c *runner.Config) { c.NoPreflight = false }))
	s = resultOf(t, r, filepath.Join(dir, "result.json"))
	if s.Server == nil || len(s.Server.Targets) != 1 || s.Server.Targets[0].URL != root {
		t.Errorf("with a client of the script's own at %s: server section %+v", withEngine, s.Server)
	}

	before := vllm.Scrapes()
	r = run(t, fiveRequests, at(withEngine, func(c *runner.Config) { c.ServerMetrics.Disabled = true }))
	s = resultOf(t, r, filepath.Join(dir, "result.json"))
	if s.Server != nil || vllm.Scrapes() != before {
		t.Errorf("with reading off: server section %+v, %d reads", s.Server, vllm.Scrapes()-before)
	}
}

// options.serverMetrics names the targets when no flag does, and its bad
// fields are errors that name them.
func TestServerMetricsOption(t *testing.T) {
	vllm := promtest.Serve(t, promtest.Recording("sglang.prom"))
	path := filepath.Join(t.TempDir(), "result.json")
	script := `export const options = { iterations: 2, serverMetrics: { urls: '` + vllm.URL + `', preset: 'sglang', interval: '1h' } };` + stream
	s := resultOf(t, run(t, script, func(c *runner.Config) { c.SummaryExport = path }), path)
	if s.Server == nil || s.Server.Targets[0].Engine != "sglang" || !s.Server.Targets[0].EngineForced {
		t.Errorf("server section %+v, want the url read as SGLang's, forced", s.Server)
	}

	bad := run(t, "export const options = { serverMetrics: { url: 'http://h/metrics' } };"+stream, nil)
	if bad.outcome.Verdict != runner.InvalidConfig || !strings.Contains(bad.stderr, "invalid options: options.serverMetrics.url: unknown field") {
		t.Errorf("a bad options.serverMetrics: verdict %v, stderr:\n%s", bad.outcome.Verdict, bad.stderr)
	}
	for _, c := range []struct{ option, want string }{
		{`{ urls: 'localhost:8000' }`, "options.serverMetrics: server metrics localhost:8000: the scheme must be http or https"},
		{`{ urls: ['http://h/metrics'], preset: 'sglng' }`, `did you mean "sglang"?`},
		{`{ url: 'http://h/metrics' }`, `options.serverMetrics.url: unknown field; want "urls", "preset", "interval" or "gpu"`},
		{`{ urls: 'http://h/metrics', interval: 'soon' }`, "options.serverMetrics.interval"},
		{`{ urls: 'http://h/metrics', interval: '-1s' }`, "options.serverMetrics.interval: must be positive"},
		{`{ urls: 7 }`, "options.serverMetrics.urls: want a URL or a list of URLs"},
		{`{ preset: 'vllm' }`, "options.serverMetrics.preset: a preset reads the urls given beside it"},
		{`'yes'`, "options.serverMetrics: want false, or an object"},
	} {
		_, _, err := runner.WatchConfig(engine.Options{ServerMetrics: jsonOf(t, c.option)}, runner.ServerMetrics{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("serverMetrics: %s: %v, want %q", c.option, err, c.want)
		}
	}
}

// jsonOf is a script's value as the options JSON holds it.
func jsonOf(t *testing.T, js string) []byte {
	t.Helper()
	e, err := engine.Load(context.Background(), engine.Config{ScriptPath: "o.js", Source: []byte("export const options = { serverMetrics: " + js + " };\nexport default function () {}\n")})
	if err != nil {
		t.Fatal(err)
	}
	return e.Options().ServerMetrics
}

// A target that stalls at the window's end mark does not stretch the
// measured window: the engine's end is taken before the mark is read.
func TestStalledMarkDoesNotStretchTheWindow(t *testing.T) {
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	var mu sync.Mutex
	var arrived []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		mu.Unlock()
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "result.json")
	s := resultOf(t, run(t, fiveRequests, withServerMetrics(runner.ServerMetrics{
		Servers: []serverwatch.Server{{URL: srv.URL + "/metrics"}},
	}, path)), path)
	mu.Lock()
	defer mu.Unlock()
	if len(arrived) != endRead {
		t.Fatalf("%d reads, want %d", len(arrived), endRead)
	}
	if !s.Meta.End.Before(arrived[endRead-1]) {
		t.Errorf("the measured window ends at %v, after the end mark's read began at %v: the stalled read is in the run's figures",
			s.Meta.End, arrived[endRead-1])
	}
}

// A run on the built-in simulator reads, with no flag, the simulator's
// own /metrics (in vLLM's names) and its simulated DCGM exporter, whose
// energy gives the energy per output token; --no-server-metrics reads
// neither.
func TestBuiltInSimulatorShowsTheServerAndItsGPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.json")
	r := run(t, fiveRequests, func(c *runner.Config) { c.SummaryExport = path; c.Quiet = false })
	s := resultOf(t, r, path)
	if s.Server == nil || len(s.Server.Targets) != 2 {
		t.Fatalf("server section %+v, want the simulator's /metrics and its DCGM exporter", s.Server)
	}
	byKind := map[string]summary.ServerTarget{}
	for _, tg := range s.Server.Targets {
		byKind[tg.Kind] = tg
	}
	server, gpu := byKind[summary.TargetServer], byKind[summary.TargetGPU]
	if server.Engine != "vllm" || !strings.HasSuffix(server.URL, "/metrics") {
		t.Errorf("server target %+v, want the simulator's /metrics read as vLLM's", server)
	}
	if got := value(figure(t, server, engines.GenerationTokens).Delta); got != float64(s.Serving.OutputTokens) {
		t.Errorf("the server counted %v generated tokens over the window, llmrun %d", got, s.Serving.OutputTokens)
	}
	if !strings.HasSuffix(gpu.URL, llmsim.DCGMPath) || len(gpu.GPUs) != 1 || gpu.Energy == nil || gpu.Energy.Joules <= 0 {
		t.Errorf("gpu target %+v, want one simulated GPU with its energy", gpu)
	}
	if e := s.Server.Energy; e == nil || e.JoulesPerOutputToken == nil || *e.JoulesPerOutputToken <= 0 {
		t.Errorf("energy %+v, want joules per output token", e)
	}
	for _, want := range []string{"server metrics: vLLM at ", "gpu metrics: DCGM exporter at "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the banner lacks %q:\n%s", want, r.stdout)
		}
	}

	r = run(t, fiveRequests, func(c *runner.Config) { c.SummaryExport = path; c.ServerMetrics.Disabled = true })
	if s := resultOf(t, r, path); s.Server != nil {
		t.Errorf("--no-server-metrics: server section %+v", s.Server)
	}
}

// Against the built-in simulator, which serves vLLM's /metrics, requests
// queue for no time and prefill in milliseconds: all in the first bucket
// of vLLM's queue and prefill histograms (0.3 s). The console prints them
// as what the buckets and the exact mean can say, never as Prometheus'
// interpolation within that bucket (150 and 297 ms), and the result file
// keeps the buckets and the mean that say so.
func TestServerQuantilesFromTheFirstBucketPrintAsBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.json")
	r := run(t, fiveRequests, func(c *runner.Config) {
		c.Quiet = false
		c.SummaryExport = path
	})
	s := resultOf(t, r, path)
	// The simulator's /metrics, then its simulated DCGM exporter.
	if s.Server == nil || len(s.Server.Targets) != 2 || s.Server.Targets[0].Kind != summary.TargetServer {
		t.Fatalf("server section %+v, want the simulator's /metrics first", s.Server)
	}
	target := s.Server.Targets[0]
	for _, f := range []engines.Figure{engines.QueueTime, engines.PrefillTime} {
		got := figure(t, target, f)
		if len(got.Buckets) == 0 || got.Buckets[0].Le != 0.3 || got.Mean == nil || value(got.Count) < 5 {
			t.Fatalf("%s %+v, want vLLM's buckets from 0.3 s, the mean, 5 or more observations", f, got)
		}
		if got.Buckets[0].Count != *got.Count {
			t.Fatalf("%s: %v of %v observations in the first bucket, want all (the simulator does not queue)", f, got.Buckets[0].Count, *got.Count)
		}
		p99, ok := got.Quantile(0.99)
		if !ok || p99.Exact() || p99.Upper > 100**got.Mean+1e-12 {
			t.Errorf("%s p99 %+v: want a bound, no more than 100 × the mean %v", f, p99, *got.Mean)
		}
	}
	var table []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "server queue") || strings.Contains(line, "server prefill") {
			table = append(table, line)
		}
	}
	if len(table) != 2 {
		t.Fatalf("want the queue and prefill rows of where TTFT went:\n%s", r.stdout)
	}
	for _, line := range table {
		cells := strings.Split(line, "│")
		if len(cells) != 6 || !strings.Contains(cells[3], "≤") || !strings.Contains(cells[4], "≤") {
			t.Errorf("row %q: want p50 and p99 as bounds (≤)", line)
		}
		if strings.Contains(line, "150.0") || strings.Contains(line, "297.0") {
			t.Errorf("row %q prints the interpolation within the first bucket", line)
		}
	}
}

// ServerMetrics.Check refuses reading nothing and something at once, and
// a server or GPU exporter that cannot be read, naming the flag.
func TestServerMetricsCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		sm      runner.ServerMetrics
		wantErr string
	}{
		{"nothing", runner.ServerMetrics{}, ""},
		{"a server and nvidia-smi", runner.ServerMetrics{Servers: []serverwatch.Server{{URL: "http://vllm:8000/metrics"}}, GPUs: []string{serverwatch.NvidiaSMI}}, ""},
		{"disabled", runner.ServerMetrics{Disabled: true}, ""},
		{"disabled, and a server", runner.ServerMetrics{Disabled: true, Servers: []serverwatch.Server{{URL: "http://vllm:8000/metrics"}}}, "--no-server-metrics reads nothing"},
		{"a server without a scheme", runner.ServerMetrics{Servers: []serverwatch.Server{{URL: "vllm:8000/metrics"}}}, "--server-metrics: "},
		{"a GPU exporter without a scheme", runner.ServerMetrics{GPUs: []string{"dcgm:9400/metrics"}}, "--gpu-metrics: "},
	} {
		err := tc.sm.Check()
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}
