package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/runner"
)

// watched is a run's stdout or stderr that the test reads while the run
// goes: seen is closed once what was written matches want.
type watched struct {
	mu   sync.Mutex
	buf  strings.Builder
	want *regexp.Regexp
	seen chan struct{}
	done bool
}

func newWatched(want string) *watched {
	return &watched{want: regexp.MustCompile(want), seen: make(chan struct{})}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && w.want.MatchString(w.buf.String()) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// holdScript keeps 2 VUs' requests in flight for as long as the test
// lasts: each asks for 10,000 tokens at 100 ms a step.
const holdScript = `
import llm from 'llm';
export const options = { scenarios: { chat: { executor: 'constant-vus', vus: 2, duration: '30m' } } };
export default function () {
  llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 10000, ignore_eos: true });
}
`

// A run against the simulator, whose /metrics at its root it finds on
// its own, with its DCGM endpoint named, shows a line per target in the
// live view and serves their gauges on its Prometheus output. The
// simulator runs one sequence at a time and each request holds it: with
// 2 VUs, one request runs and one waits, which the test waits to see
// read (no timing window), then stops the run.
func TestLiveViewAndPrometheusShowTheServer(t *testing.T) {
	cfg := llmsim.DefaultConfig()
	cfg.MaxNumSeqs, cfg.DecodeBase, cfg.GPUs = 1, 100*time.Millisecond, 2
	sim, err := llmsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	host := regexp.QuoteMeta(strings.TrimPrefix(srv.URL, "http://"))
	// GPU power: 70 W idle + 2.5 W for the running sequence, on each of 2.
	stderr := newWatched(`(?m)^\[\d+s\] server vLLM ` + host + `: running 1, waiting 1, KV \d+ %, preemptions \+0\n` +
		`\[\d+s\] gpu DCGM exporter ` + host + `: 2 GPUs, util 100 %, 145 W$`)
	// The banner is written a line at a time: the test reads it once the
	// server metrics' line, which comes after the outputs', is written.
	stdout := newWatched(`output: +prometheus http://\S+/metrics\n(?s:.*)server metrics: vLLM at ` + regexp.QuoteMeta(srv.URL+"/metrics"))

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ended := make(chan runner.Outcome, 1)
	go func() {
		ended <- runner.Run(ctx, runner.Config{
			Engine: engine.Config{ScriptPath: "hold.js", Source: []byte(holdScript), Seed: 1,
				LLM: llm.Config{BaseURL: srv.URL + "/v1", Model: cfg.Model}},
			NoPreflight:      true,
			Stdout:           stdout,
			Stderr:           stderr,
			Version:          "test",
			ProgressInterval: 50 * time.Millisecond,
			Outputs:          []string{"prometheus=127.0.0.1:0"},
			ServerMetrics:    runner.ServerMetrics{GPUs: []string{srv.URL + "/dcgm/metrics"}, Interval: 50 * time.Millisecond},
		})
	}()

	select {
	case <-stdout.seen:
	case o := <-ended:
		t.Fatalf("the run ended (%v) before its banner named its Prometheus output and said the simulator's /metrics is read:\n%s\n%s", o.Verdict, stdout, stderr)
	}
	url := regexp.MustCompile(`output: +prometheus (http://\S+/metrics)`).FindStringSubmatch(stdout.String())[1]

	// The Prometheus output: scraped until its gauges show the request
	// that runs and the one that waits.
	server := fmt.Sprintf(`target="%s/metrics"`, srv.URL)
	var families map[string]*dto.MetricFamily
	for ctx.Err() == nil {
		families = scrapeFamilies(ctx, url)
		if gaugeOf(families, "llmrun_server_running", server) == 1 && gaugeOf(families, "llmrun_server_waiting", server) == 1 &&
			gaugeOf(families, "llmrun_gpu_power_watts", `gpu="1"`) == 72.5 {
			break
		}
		wait.Sleep(ctx, 50*time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Errorf("the Prometheus output never showed 1 request running and 1 waiting, 72.5 W on GPU 1; last scrape:\n%v", families)
	}
	if got := gaugeOf(families, "llmrun_server_up", server); got != 1 {
		t.Errorf("llmrun_server_up{%s} = %v, want 1", server, got)
	}

	select {
	case <-stderr.seen:
	case <-ctx.Done():
		t.Errorf("the live view never showed the server and its GPUs with 1 request running, 1 waiting:\n%s", stderr)
	}
	cancel()
	if o := <-ended; o.Verdict != runner.Interrupted {
		t.Errorf("verdict %v, want interrupted (the test stopped the run)\n%s", o.Verdict, stderr)
	}
}

// scrapeFamilies GETs a /metrics URL and parses it with expfmt; nil when
// that fails.
func scrapeFamilies(ctx context.Context, url string) map[string]*dto.MetricFamily {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil
	}
	return families
}

// gaugeOf is the value of family name's series with a label written as
// `name="value"`; -1 when there is none.
func gaugeOf(families map[string]*dto.MetricFamily, name, label string) float64 {
	for _, m := range families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if fmt.Sprintf(`%s=%q`, l.GetName(), l.GetValue()) == label {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}
