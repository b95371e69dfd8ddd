package prometheus

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/output"
)

// start starts an output on a free port of 127.0.0.1, with a run of the
// given progress.
func start(t *testing.T, cfg Config, p engine.Progress) *Output {
	t.Helper()
	return startReading(t, cfg, func() engine.Progress { return p })
}

// startReading starts an output on a free port of 127.0.0.1, with a run
// whose progress is read with progress.
func startReading(t *testing.T, cfg Config, progress func() engine.Progress) *Output {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	o := New(cfg)
	run := output.Run{ID: "abc123", TestID: "nightly", Progress: progress}
	if err := o.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Finish(context.Background(), nil) })
	return o
}

// scrape GETs the output's /metrics and parses it.
func scrape(t *testing.T, o *Output) map[string]*dto.MetricFamily {
	t.Helper()
	url := strings.TrimPrefix(o.Describe(), "prometheus ")
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// find returns the metric of family name with exactly the labels kv
// (name, value pairs), failing the test when there is none.
func find(t *testing.T, mfs map[string]*dto.MetricFamily, name string, kv ...string) *dto.Metric {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no %s", name)
	}
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel())*2 != len(kv) {
			continue
		}
		match := true
		for i, l := range m.GetLabel() { // sorted by name, as kv
			if l.GetName() != kv[2*i] || l.GetValue() != kv[2*i+1] {
				match = false
			}
		}
		if match {
			return m
		}
	}
	t.Fatalf("no %s%v in %v", name, kv, mf)
	return nil
}

func record(scenario, model string, ok bool) llm.Record {
	r := llm.Record{
		Time: time.Now(),
		Tags: metrics.NewTagSet(map[string]string{"scenario": scenario, "model": model, "user": "tag-" + scenario}),
		OK:   ok, Status: 200, E2E: 2000,
	}
	if !ok {
		r.Status, r.ErrorClass = 503, "http_5xx"
		return r
	}
	r.TTFT, r.TTFO, r.TPOT, r.ITLMean, r.ITLP99 = 100, 100, 20, 25, 40
	r.OutputTokens, r.PromptTokens, r.CachedTokens = 64, 500, 128
	return r
}

func TestScrapeShowsTheRequests(t *testing.T) {
	arrived := []engine.TokenCount{{Scenario: "chat", Model: "m1", Tokens: 150}, {Scenario: "rag", Model: "m2", Tokens: 40}}
	o := start(t, Config{}, engine.Progress{ActiveVUs: 3, MaxVUs: 8, Arrived: arrived})
	if strings.HasSuffix(o.Describe(), ":0/metrics") {
		t.Errorf("Describe %q does not show the port", o.Describe())
	}
	ok, failed, other := record("chat", "m1", true), record("chat", "m1", false), record("rag", "m2", true)
	other.TPOT, other.ITLMean = 0, 0 // one token: not measured
	for range 3 {
		o.AddRequest(&ok)
	}
	o.AddRequest(&failed)
	o.AddRequest(&other)

	mfs := scrape(t, o)
	chat := []string{"model", "m1", "scenario", "chat"}
	rag := []string{"model", "m2", "scenario", "rag"}
	for _, tc := range []struct {
		name     string
		labels   []string
		count    uint64
		sum      float64
		le       float64 // a bucket bound and how many it holds
		inBucket uint64
	}{
		{"llmrun_ttft_seconds", chat, 3, 0.3, 0.1, 0},
		{"llmrun_ttft_seconds", rag, 1, 0.1, 0.2, 1},
		{"llmrun_e2e_seconds", chat, 3, 6, 121, 3},
		{"llmrun_tpot_seconds", chat, 3, 0.06, 0.03, 3},
		{"llmrun_tpot_seconds", rag, 0, 0, 121, 0},
		{"llmrun_itl_mean_seconds", chat, 3, 0.075, 0.05, 3},
	} {
		h := find(t, mfs, tc.name, tc.labels...).GetHistogram()
		if h.GetSampleCount() != tc.count || math.Abs(h.GetSampleSum()-tc.sum) > 1e-9 {
			t.Errorf("%s%v: count %d sum %g, want %d and %g", tc.name, tc.labels, h.GetSampleCount(), h.GetSampleSum(), tc.count, tc.sum)
		}
		if len(h.GetBucket()) != len(latencyBuckets)+1 { // and +Inf
			t.Errorf("%s: %d buckets, want %d", tc.name, len(h.GetBucket()), len(latencyBuckets)+1)
		}
		var got uint64
		for _, b := range h.GetBucket() {
			if b.GetUpperBound() < tc.le || math.Abs(b.GetUpperBound()-tc.le) < 1e-9 {
				got = b.GetCumulativeCount()
			}
		}
		if got != tc.inBucket {
			t.Errorf("%s%v: %d at or below %g s, want %d", tc.name, tc.labels, got, tc.le, tc.inBucket)
		}
	}
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"llmrun_requests_total", append(chat[:4:4], "status", "ok"), 3},
		{"llmrun_requests_total", append(chat[:4:4], "status", "failed"), 1},
		{"llmrun_requests_total", append(rag[:4:4], "status", "ok"), 1},
		{"llmrun_errors_total", []string{"error_class", "http_5xx", "model", "m1", "scenario", "chat"}, 1},
		{"llmrun_output_tokens_total", chat, 150}, // the tokens arrived, not the records'
		{"llmrun_output_tokens_total", rag, 40},
		{"llmrun_input_tokens_total", chat, 1500},
		{"llmrun_cached_tokens_total", rag, 128},
	} {
		if got := find(t, mfs, tc.name, tc.labels...).GetCounter().GetValue(); got != tc.want {
			t.Errorf("%s%v = %g, want %g", tc.name, tc.labels, got, tc.want)
		}
	}
	for name, want := range map[string]float64{"llmrun_active_vus": 3, "llmrun_max_vus": 8} {
		if got := find(t, mfs, name).GetGauge().GetValue(); got != want {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	if got := find(t, mfs, "llmrun_run_info", "run_id", "abc123", "testid", "nightly").GetGauge().GetValue(); got != 1 {
		t.Errorf("llmrun_run_info = %g", got)
	}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "user" {
					t.Errorf("%s carries the user tag %q", name, l.GetName())
				}
			}
		}
	}
	if rep := o.Finish(context.Background(), nil); rep.Written != 5 || rep.Err != "" || rep.Output != o.Describe() {
		t.Errorf("report %+v", rep)
	}
}

// llmrun_output_tokens_total is read from the run's progress at each
// scrape: it shows the tokens of requests still streaming, before any
// ended, and grows with them.
func TestOutputTokensAsTheyArrive(t *testing.T) {
	var mu sync.Mutex
	arrived := []engine.TokenCount{{Scenario: "chat", Model: "m1", Tokens: 5}}
	o := startReading(t, Config{}, func() engine.Progress {
		mu.Lock()
		defer mu.Unlock()
		return engine.Progress{Arrived: slices.Clone(arrived)}
	})
	chat := []string{"model", "m1", "scenario", "chat"}
	for _, tokens := range []int64{5, 12, 40} {
		mu.Lock()
		arrived[0].Tokens = tokens
		mu.Unlock()
		mfs := scrape(t, o)
		if got := find(t, mfs, "llmrun_output_tokens_total", chat...).GetCounter().GetValue(); got != float64(tokens) {
			t.Errorf("llmrun_output_tokens_total = %g, want %d", got, tokens)
		}
		if mfs["llmrun_requests_total"] != nil {
			t.Errorf("llmrun_requests_total before any request ended: %v", mfs["llmrun_requests_total"])
		}
	}
}

// Requests observed from many goroutines while scrapes go on are all
// counted.
func TestConcurrentRequestsAndScrapes(t *testing.T) {
	const goroutines, each = 50, 400
	o := start(t, Config{}, engine.Progress{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := record(fmt.Sprintf("s%d", g%4), "m", true)
			for range each {
				o.AddRequest(&r)
			}
		})
	}
	done := make(chan struct{})
	scrapes := make(chan int)
	go func() {
		n := 0
		defer func() { scrapes <- n }()
		for {
			select {
			case <-done:
				return
			default:
			}
			resp, err := http.Get(strings.TrimPrefix(o.Describe(), "prometheus "))
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			n++
		}
	}()
	wg.Wait()
	close(done)
	if n := <-scrapes; n == 0 {
		t.Error("no scrape succeeded meanwhile")
	}
	mfs := scrape(t, o)
	var total uint64
	for s := range 4 {
		total += find(t, mfs, "llmrun_e2e_seconds", "model", "m", "scenario", fmt.Sprintf("s%d", s)).GetHistogram().GetSampleCount()
	}
	if total != goroutines*each {
		t.Errorf("%d observed, want %d", total, goroutines*each)
	}
	if rep := o.Finish(context.Background(), nil); rep.Written != goroutines*each {
		t.Errorf("report %+v", rep)
	}
}

// Finish serves for the linger, then shuts the server down.
func TestFinishLingersThenShutsDown(t *testing.T) {
	const linger = 300 * time.Millisecond
	o := start(t, Config{Linger: linger}, engine.Progress{})
	url := strings.TrimPrefix(o.Describe(), "prometheus ")
	began := time.Now()
	finished := make(chan struct{})
	go func() {
		o.Finish(context.Background(), nil)
		close(finished)
	}()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("a scrape during the linger: %v", err)
	}
	resp.Body.Close()
	<-finished
	if d := time.Since(began); d < linger {
		t.Errorf("Finish returned after %s, before the %s linger", d, linger)
	}
	client := http.Client{Timeout: 2 * time.Second}
	if resp, err := client.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("GET %s after Finish answered %s", url, resp.Status)
	}
}

// A linger ends early when Finish's context does.
func TestFinishLingerEndsWithTheContext(t *testing.T) {
	o := start(t, Config{Linger: time.Hour}, engine.Progress{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	o.Finish(ctx, nil)
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("Finish took %s", d)
	}
}

func TestStartFailsOnABadAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{busy.Addr().String(), "192.0.2.1:9464"} {
		o := New(Config{Addr: addr})
		err := o.Start(context.Background(), output.Run{})
		if err == nil || !strings.Contains(err.Error(), addr) {
			t.Errorf("Start on %s: %v, want an error naming it", addr, err)
		}
		if rep := o.Finish(context.Background(), nil); rep.Err == "" {
			t.Errorf("report %+v has no error", rep)
		}
	}
}

func TestParseConfig(t *testing.T) {
	for value, want := range map[string]Config{
		"127.0.0.1:9464":              {Addr: "127.0.0.1:9464"},
		"127.0.0.1:0":                 {Addr: "127.0.0.1:0"},
		"[::1]:9464?linger=5s":        {Addr: "[::1]:9464", Linger: 5 * time.Second},
		"localhost:09464?linger=0s":   {Addr: "localhost:9464"},
		"0.0.0.0:9464?linger=1m30s":   {Addr: "0.0.0.0:9464", Linger: 90 * time.Second},
		"metrics.internal:9464":       {Addr: "metrics.internal:9464"},
		"127.0.0.1:9464?linger=250ms": {Addr: "127.0.0.1:9464", Linger: 250 * time.Millisecond},
	} {
		got, err := ParseConfig(value)
		if err != nil || got != want {
			t.Errorf("ParseConfig(%q) = %+v, %v; want %+v", value, got, err, want)
		}
	}
	for value, want := range map[string]string{
		"":                          "want HOST:PORT",
		":9464":                     "a host is required",
		"127.0.0.1":                 "want HOST:PORT",
		"127.0.0.1:http":            "not a number",
		"127.0.0.1:70000":           "not a number",
		"127.0.0.1:9464?linger=5":   "linger=5",
		"127.0.0.1:9464?linger=-1s": "negative",
		"127.0.0.1:9464?port=1":     `unknown option "port"`,
	} {
		if _, err := ParseConfig(value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%q): %v, want an error with %q", value, err, want)
		}
	}
}

// BenchmarkAddRequest measures what a VU pays per request, alone and
// from many goroutines at once, over a few scenarios and models, one
// request in eight failed.
func BenchmarkAddRequest(b *testing.B) {
	o := New(Config{Addr: "127.0.0.1:0"})
	if err := o.Start(context.Background(), output.Run{}); err != nil {
		b.Fatal(err)
	}
	defer o.Finish(context.Background(), nil)
	recs := []llm.Record{record("chat", "m1", true), record("rag", "m1", true), record("chat", "m2", true), record("chat", "m1", true)}
	for _, ok := range []bool{true, true, true, false} {
		recs = append(recs, record("chat", "m1", ok))
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			o.AddRequest(&recs[i%len(recs)])
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				o.AddRequest(&recs[i%len(recs)])
			}
		})
	})
}
