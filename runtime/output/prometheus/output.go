// Package prometheus is the --out prometheus=HOST:PORT output: it serves
// the run's live figures at http://HOST:PORT/metrics for Prometheus (or
// any scraper of its text format) to collect while the run goes, with
// github.com/prometheus/client_golang and a registry of its own.
//
// The metrics, documented in docs/outputs.md:
//
//	llmrun_ttft_seconds        histogram  {scenario, model}
//	llmrun_tpot_seconds        histogram  {scenario, model}
//	llmrun_itl_mean_seconds    histogram  {scenario, model}
//	llmrun_e2e_seconds         histogram  {scenario, model}
//	llmrun_requests_total      counter    {scenario, model, status="ok|failed"}
//	llmrun_errors_total        counter    {scenario, model, error_class}
//	llmrun_output_tokens_total counter    {scenario, model}
//	llmrun_input_tokens_total  counter    {scenario, model}
//	llmrun_cached_tokens_total counter    {scenario, model}
//	llmrun_active_vus          gauge
//	llmrun_max_vus             gauge
//	llmrun_run_info            gauge      {run_id, testid}, always 1
//
// and, when the run reads scrape targets (output.Run.Servers), their last
// reads (serverGauges):
//
//	llmrun_server_up             gauge  {target, kind}
//	llmrun_server_running        gauge  {target, engine}
//	llmrun_server_waiting        gauge  {target, engine}
//	llmrun_server_kv_cache_usage gauge  {target, engine}
//	llmrun_server_preemptions    gauge  {target, engine}
//	llmrun_gpu_utilization       gauge  {target, gpu}
//	llmrun_gpu_memory_used_bytes gauge  {target, gpu}
//	llmrun_gpu_power_watts       gauge  {target, gpu}
//
// The histograms have 20 exponential buckets from 5 ms to 120 s and count
// completed requests only, each figure where it was measured. Labels are
// the scenario and the model only, never the user's tags, which would
// multiply the series.
//
// AddRequest updates the metrics in place (atomic counters and histogram
// buckets; the children of each scenario and model are looked up once),
// so it never waits. llmrun_output_tokens_total and the VU gauges are read
// from the run's progress at each scrape: output tokens count as they
// arrive, so the counter grows while answers stream. Finish keeps serving for Config.Linger, then shuts
// the server down.
package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// shutdownTimeout bounds Finish's wait for scrapes in progress once the
// linger is over; then the server closes their connections.
const shutdownTimeout = 5 * time.Second

// readHeaderTimeout bounds how long a scraper may take to send a request's
// headers.
const readHeaderTimeout = 10 * time.Second

// Output serves a run's metrics over HTTP. New makes one; Start, then
// AddRequest from any number of goroutines, then Finish.
type Output struct {
	cfg      Config
	m        *collectors
	observed atomic.Int64

	// Set by Start.
	addr     string
	startErr error
	srv      *http.Server
	// served receives Serve's error when the server stops.
	served chan error

	finishOnce sync.Once
	report     summary.OutputReport
}

var _ output.Output = (*Output)(nil)

// New returns an output that serves as cfg says.
func New(cfg Config) *Output {
	return &Output{cfg: cfg, m: newCollectors(), addr: cfg.Addr}
}

// Describe names the output and its URL: "prometheus
// http://127.0.0.1:9464/metrics", with the port the system chose once
// Start has listened on port 0.
func (o *Output) Describe() string {
	return "prometheus http://" + o.addr + "/metrics"
}

// Start listens on the address and serves /metrics from then on; it fails,
// naming the address, when it cannot listen.
func (o *Output) Start(ctx context.Context, run output.Run) error {
	reg := prom.NewRegistry()
	if err := o.m.register(reg, run); err != nil {
		o.startErr = fmt.Errorf("registering the metrics: %w", err)
		return o.startErr
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.cfg.Addr)
	if err != nil {
		o.startErr = fmt.Errorf("cannot listen on %s: %w", o.cfg.Addr, err)
		return o.startErr
	}
	o.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	base := context.WithoutCancel(ctx)
	o.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	o.served = make(chan error, 1)
	go func() { o.served <- o.srv.Serve(ln) }()
	return nil
}

// AddRequest counts and observes r; it never waits.
func (o *Output) AddRequest(r *llm.Record) {
	if r == nil {
		return
	}
	o.m.add(r)
	o.observed.Add(1)
}

// Finish keeps serving for the configured linger (less when ctx ends
// first), then shuts the server down, waiting for scrapes in progress up
// to shutdownTimeout or until ctx ends, and reports the requests observed. A second call
// returns the first's report.
func (o *Output) Finish(ctx context.Context, _ *summary.Summary) summary.OutputReport {
	o.finishOnce.Do(func() { o.report = o.finish(ctx) })
	return o.report
}

// finish is Finish, once.
func (o *Output) finish(ctx context.Context) summary.OutputReport {
	rep := summary.OutputReport{Output: o.Describe(), Written: o.observed.Load()}
	if o.srv == nil {
		if o.startErr != nil {
			rep.Err = o.startErr.Error()
		}
		return rep
	}
	if o.cfg.Linger > 0 {
		t := time.NewTimer(o.cfg.Linger)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	sctx, cancel := context.WithTimeout(ctx, shutdownTimeout)
	defer cancel()
	var errs []error
	if o.srv.Shutdown(sctx) != nil {
		// Scrapes still in progress when time is up: cut them.
		if err := o.srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the server: %w", err))
		}
	}
	if err := <-o.served; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("serving: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		rep.Err = err.Error()
	}
	rep.Written = o.observed.Load()
	return rep
}
