package llmsim

import (
	"bufio"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads path from r and parses it with Prometheus' own text parser.
func scrape(t *testing.T, r *Running, path string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := testClient(t).Get(r.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", path, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	return parseFamilies(t, resp.Body)
}

func parseFamilies(t *testing.T, in io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(in)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// family returns the family name of families, checking its type.
func family(t *testing.T, families map[string]*dto.MetricFamily, name string, typ dto.MetricType) *dto.MetricFamily {
	t.Helper()
	f := families[name]
	if f == nil {
		t.Fatalf("no family %s", name)
	}
	if f.GetType() != typ {
		t.Fatalf("%s is a %s, want a %s", name, f.GetType(), typ)
	}
	return f
}

// vllmValue returns the value of the one series of a vLLM gauge or
// counter, checking its labels.
func vllmValue(t *testing.T, families map[string]*dto.MetricFamily, name string, typ dto.MetricType) float64 {
	t.Helper()
	f := family(t, families, name, typ)
	if len(f.Metric) != 1 {
		t.Fatalf("%s has %d series, want 1", name, len(f.Metric))
	}
	m := f.Metric[0]
	checkLabels(t, name, m, map[string]string{"model_name": "llmsim-1", "engine": "0"})
	if typ == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func checkLabels(t *testing.T, name string, m *dto.Metric, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, l := range m.Label {
		got[l.GetName()] = l.GetValue()
	}
	if len(got) != len(want) {
		t.Fatalf("%s labels %v, want %v", name, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s labels %v, want %v", name, got, want)
		}
	}
}

// vllmHistogram returns the one series of a vLLM histogram, checking its
// labels and its buckets against vLLM's.
func vllmHistogram(t *testing.T, families map[string]*dto.MetricFamily, name string, buckets []float64) *dto.Histogram {
	t.Helper()
	f := family(t, families, name, dto.MetricType_HISTOGRAM)
	if len(f.Metric) != 1 {
		t.Fatalf("%s has %d series, want 1", name, len(f.Metric))
	}
	checkLabels(t, name, f.Metric[0], map[string]string{"model_name": "llmsim-1", "engine": "0"})
	h := f.Metric[0].GetHistogram()
	var bounds []float64
	for _, b := range h.Bucket {
		bounds = append(bounds, b.GetUpperBound())
	}
	if want := append(slices.Clone(buckets), math.Inf(1)); !slices.Equal(bounds, want) {
		t.Fatalf("%s buckets %v, want %v", name, bounds, want)
	}
	if inf := h.Bucket[len(h.Bucket)-1].GetCumulativeCount(); inf != h.GetSampleCount() {
		t.Fatalf("%s: +Inf bucket %d, count %d", name, inf, h.GetSampleCount())
	}
	return h
}

// TestMetricsAgreeWithStats sends a known set of streams and reads
// /metrics with Prometheus' parser: vLLM's names, types, labels and
// buckets, counters equal to what the client saw and to /stats, one
// observation per request in each per-request histogram, one per later
// token in the inter-token one.
func TestMetricsAgreeWithStats(t *testing.T) {
	cfg := fastConfig()
	cfg.OutputMean = 8
	r := listen(t, cfg)
	system := strings.Repeat("You are a careful assistant who answers in plain words. ", 20)
	var promptTokens, outputTokens, interTokens int
	reasons := map[string]int{}
	const n = 8
	for i := range n {
		extra := map[string]any{"max_tokens": 200, "stream_options": map[string]any{"include_usage": true}}
		if i%2 == 0 {
			extra["max_tokens"], extra["ignore_eos"] = 6, true
		}
		body := map[string]any{"messages": []map[string]any{
			{"role": "system", "content": system},
			{"role": "user", "content": "question " + itoa(i)},
		}}
		for k, v := range extra {
			body[k] = v
		}
		s := mustStream(t, r, "/v1/chat/completions", body)
		u := s.chunks[len(s.chunks)-1].Usage
		if u == nil {
			t.Fatal("no usage chunk")
		}
		promptTokens += u.PromptTokens
		outputTokens += u.CompletionTokens
		interTokens += u.CompletionTokens - 1
		reasons[s.finishReason()]++
	}
	eventually(t, 10*time.Second, "the engine to release every request", func() bool { return r.Server().Stats().Completed == n })
	st := r.Server().Stats()
	fams := scrape(t, r, "/metrics")

	counters := []struct {
		name string
		want float64
	}{
		{"vllm:prompt_tokens_total", float64(promptTokens)},
		{"vllm:generation_tokens_total", float64(outputTokens)},
		{"vllm:generation_tokens_total", float64(st.Tokens)},
		{"vllm:prefix_cache_queries_total", float64(st.PrefixCacheQueries)},
		{"vllm:prefix_cache_hits_total", float64(st.PrefixCacheHits)},
		{"vllm:num_preemptions_total", 0},
	}
	for _, c := range counters {
		if got := vllmValue(t, fams, c.name, dto.MetricType_COUNTER); got != c.want {
			t.Errorf("%s = %g, want %g", c.name, got, c.want)
		}
	}
	if st.PrefixCacheHits == 0 {
		t.Error("no prefix cache hits: the shared system prompt was not cached")
	}
	gauges := []struct {
		name string
		want float64
	}{
		{"vllm:num_requests_running", float64(st.Running)},
		{"vllm:num_requests_waiting", float64(st.Waiting)},
		{"vllm:kv_cache_usage_perc", 0},
	}
	for _, g := range gauges {
		if got := vllmValue(t, fams, g.name, dto.MetricType_GAUGE); got != g.want {
			t.Errorf("%s = %g, want %g", g.name, got, g.want)
		}
	}

	success := family(t, fams, "vllm:request_success_total", dto.MetricType_COUNTER)
	var successes float64
	for i, reason := range []string{"stop", "length", "abort"} {
		if i >= len(success.Metric) {
			t.Fatalf("vllm:request_success_total has %d series, want 3", len(success.Metric))
		}
		m := success.Metric[i]
		checkLabels(t, "vllm:request_success_total", m, map[string]string{"model_name": "llmsim-1", "engine": "0", "finished_reason": reason})
		if got := m.GetCounter().GetValue(); got != float64(reasons[reason]) {
			t.Errorf("vllm:request_success_total{finished_reason=%q} = %g, want %d", reason, got, reasons[reason])
		}
		successes += m.GetCounter().GetValue()
	}
	if successes != float64(st.Completed) {
		t.Errorf("%g successes, /stats completed %d", successes, st.Completed)
	}

	tokenBuckets := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000}
	histograms := []struct {
		name    string
		buckets []float64
		count   int
		sum     float64 // checked when positive
	}{
		{"vllm:time_to_first_token_seconds", ttftBuckets, n, 0},
		{"vllm:inter_token_latency_seconds", interTokenBuckets, interTokens, 0},
		{"vllm:time_per_output_token_seconds", interTokenBuckets, interTokens, 0},
		{"vllm:e2e_request_latency_seconds", requestLatencyBuckets, n, 0},
		{"vllm:request_queue_time_seconds", requestLatencyBuckets, n, 0},
		{"vllm:request_inference_time_seconds", requestLatencyBuckets, n, 0},
		{"vllm:request_prefill_time_seconds", requestLatencyBuckets, n, 0},
		{"vllm:request_decode_time_seconds", requestLatencyBuckets, n, 0},
		{"vllm:request_prompt_tokens", tokenBuckets, n, float64(promptTokens)},
		{"vllm:request_generation_tokens", tokenBuckets, n, float64(outputTokens)},
	}
	for _, h := range histograms {
		got := vllmHistogram(t, fams, h.name, h.buckets)
		if got.GetSampleCount() != uint64(h.count) {
			t.Errorf("%s counts %d, want %d", h.name, got.GetSampleCount(), h.count)
		}
		if h.sum > 0 && got.GetSampleSum() != h.sum {
			t.Errorf("%s sums %g, want %g", h.name, got.GetSampleSum(), h.sum)
		}
	}
	// Every step's tokens: the prompts prefilled and the tokens made.
	iter := vllmHistogram(t, fams, "vllm:iteration_tokens_total", iterationTokensBuckets)
	if want := float64(promptTokens + outputTokens); iter.GetSampleSum() != want {
		t.Errorf("vllm:iteration_tokens_total sums %g, want %g", iter.GetSampleSum(), want)
	}
	if got, want := iter.GetSampleCount(), st.PrefillSteps+st.DecodeSteps; got != want {
		t.Errorf("vllm:iteration_tokens_total counts %d steps, /stats %d", got, want)
	}
}

// hold sends a streamed completions request that runs until ctx ends,
// reading its stream.
func hold(ctx context.Context, t *testing.T, r *Running, prompt string, wg *sync.WaitGroup) {
	body := completionsBody(prompt, map[string]any{"max_tokens": 20000, "ignore_eos": true, "stream": true})
	wg.Go(func() {
		resp, err := post(ctx, testClient(t), r.URL(), "/v1/completions", body)
		if err != nil {
			return // canceled at the test's end
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
	})
}

// TestMetricsRunningWaitingKV holds requests in flight and reads the
// scheduler's gauges: running and waiting as /stats has them, and the KV
// cache's usage rising with the batch by at least the blocks of the
// joining prompt, back to 0 when the requests are gone. It runs in a
// bubble and reads once every goroutine is blocked, each running request
// past its first token, so it reads the state the engine's steps give.
func TestMetricsRunningWaitingKV(t *testing.T) {
	cfg := fastConfig()
	cfg.Tokenizer = TokenizerBytes // ceil(bytes/4) tokens: known prompt sizes
	cfg.MaxNumSeqs = 2
	cfg.DecodeBase = 20 * time.Millisecond
	cfg.KVCacheBlocks = 1000
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		gauges := func(running, waiting int) (kv float64, fams map[string]*dto.MetricFamily) {
			t.Helper()
			synctest.Wait()
			if st := r.Server().Stats(); st.Running != running || st.Waiting != waiting {
				t.Fatalf("stats: %d running, %d waiting; want %d, %d", st.Running, st.Waiting, running, waiting)
			}
			fams = metricsNow(t, r.Server())
			run := vllmValue(t, fams, "vllm:num_requests_running", dto.MetricType_GAUGE)
			wait := vllmValue(t, fams, "vllm:num_requests_waiting", dto.MetricType_GAUGE)
			if run != float64(running) || wait != float64(waiting) {
				t.Fatalf("/metrics: %g running, %g waiting; want %d, %d as /stats has them", run, wait, running, waiting)
			}
			return vllmValue(t, fams, "vllm:kv_cache_usage_perc", dto.MetricType_GAUGE), fams
		}

		holdPastFirstToken(ctx, t, r, "hi", &wg)
		kv1, _ := gauges(1, 0)
		if kv1 <= 0 {
			t.Fatalf("one request: KV usage %g, want > 0", kv1)
		}

		const longPrompt = 1600 * 4 // 1,600 tokens: 100 blocks
		holdPastFirstToken(ctx, t, r, strings.Repeat("abcd", longPrompt/4), &wg)
		kv2, _ := gauges(2, 0)
		if kv2 < kv1+100.0/1000 {
			t.Fatalf("two requests: KV usage %g, want at least %g", kv2, kv1+0.1)
		}

		hold(ctx, t, r, "hello", &wg)
		kv3, fams := gauges(2, 1)
		if kv3 < kv2 {
			t.Fatalf("three requests: KV usage %g, want at least %g", kv3, kv2)
		}
		if got := vllmHistogram(t, fams, "vllm:time_to_first_token_seconds", ttftBuckets).GetSampleCount(); got != 2 {
			t.Errorf("%d first tokens, want the running requests' 2", got)
		}
		if got := vllmHistogram(t, fams, "vllm:e2e_request_latency_seconds", requestLatencyBuckets).GetSampleCount(); got != 0 {
			t.Errorf("%d requests finished, want 0", got)
		}

		cancel()
		wg.Wait()
		// The engine finds the clients gone at its next pass: let the
		// bubble's clock run past the decode step it is in.
		time.Sleep(2 * cfg.DecodeBase)
		if kv, _ := gauges(0, 0); kv != 0 {
			t.Fatalf("requests gone: KV usage %g, want 0", kv)
		}
	})
}

// TestBuckets125 checks vLLM's build_1_2_5_buckets, its docstring's
// example among them.
func TestBuckets125(t *testing.T) {
	for _, c := range []struct {
		max  int
		want []float64
	}{
		{100, []float64{1, 2, 5, 10, 20, 50, 100}},
		{1, []float64{1}},
		{4, []float64{1, 2}},
		{32768, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000}},
	} {
		if got := buckets125(c.max); !slices.Equal(got, c.want) {
			t.Errorf("buckets125(%d) = %v, want %v", c.max, got, c.want)
		}
	}
}

// TestHistogramObserve: a value counts in the first bucket whose upper
// bound is at least the value (Prometheus' le), past the last in +Inf.
func TestHistogramObserve(t *testing.T) {
	for _, c := range []struct {
		v          float64
		cumulative []uint64 // for le 0.3, 0.5, 0.8
	}{
		{0, []uint64{1, 1, 1}},
		{0.3, []uint64{1, 1, 1}},
		{0.30001, []uint64{0, 1, 1}},
		{0.8, []uint64{0, 0, 1}},
		{9, []uint64{0, 0, 0}},
	} {
		h := newHistogram([]float64{0.3, 0.5, 0.8})
		h.observe(c.v)
		m := h.metric()
		var got []uint64
		for _, b := range m.Bucket {
			got = append(got, b.GetCumulativeCount())
		}
		if !slices.Equal(got, c.cumulative) || m.GetSampleCount() != 1 || m.GetSampleSum() != c.v {
			t.Errorf("observe(%g): buckets %v, count %d, sum %g; want %v, 1, %g", c.v, got, m.GetSampleCount(), m.GetSampleSum(), c.cumulative, c.v)
		}
	}
}

// TestMetricsKVSharesPrefixBlocks: two running requests with the same
// long prompt hold its cached blocks once, as vLLM's block pool shares
// them, so the second adds only the block its own tokens fill. It runs
// in a bubble and reads /metrics once every goroutine is blocked, each
// request past its first token: the engine's state is then the one the
// steps so far give, however loaded the host.
func TestMetricsKVSharesPrefixBlocks(t *testing.T) {
	cfg := fastConfig()
	cfg.KVCacheBlocks = 1000
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		prompt := strings.Repeat(" hello world", 800) // 1,600 tokens: 100 blocks
		kvUsage := func(running int) float64 {
			t.Helper()
			holdPastFirstToken(ctx, t, r, prompt, &wg)
			synctest.Wait()
			if got := r.Server().Stats().Running; got != running {
				t.Fatalf("%d requests running, want %d", got, running)
			}
			return vllmValue(t, metricsNow(t, r.Server()), "vllm:kv_cache_usage_perc", dto.MetricType_GAUGE)
		}

		// The first holds its 100 prompt blocks and one for its first
		// tokens; the second shares the 100 and holds one of its own.
		if one := kvUsage(1); one != 101.0/1000 {
			t.Fatalf("one request of 100 prompt blocks past its first token: KV usage %g, want 0.101", one)
		}
		if two := kvUsage(2); two != 102.0/1000 {
			t.Fatalf("two requests sharing 100 prompt blocks, each past its first token: KV usage %g, want 0.102", two)
		}
	})
}

// holdPastFirstToken streams prompt for as long as ctx lasts, as hold
// does, and returns once the client has read the stream's first token.
func holdPastFirstToken(ctx context.Context, t *testing.T, r *Running, prompt string, wg *sync.WaitGroup) {
	t.Helper()
	body := completionsBody(prompt, map[string]any{"max_tokens": 20000, "ignore_eos": true, "stream": true})
	first := make(chan struct{})
	firstRead := sync.OnceFunc(func() { close(first) })
	wg.Go(func() {
		defer firstRead()
		resp, err := post(ctx, testClient(t), r.URL(), "/v1/completions", body)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Errorf("the stream ended before its first token: %v", err)
				return
			}
			if strings.HasPrefix(line, "data: ") {
				break
			}
		}
		firstRead()
		io.Copy(io.Discard, br)
	})
	<-first
}

// stepping is a Server whose engine goroutine is not started: the test
// takes the engine's steps itself, as run takes them, and reads /metrics
// between them.
func stepping() (*Server, *engine) {
	cfg := fastConfig()
	e := newEngine(cfg)
	return &Server{cfg: cfg, engine: e}, e
}

// metricsNow is what GET /metrics would answer now, parsed.
func metricsNow(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	writeFamilies(rec, s.vllmFamilies())
	return parseFamilies(t, rec.Body)
}

// A request is in /metrics as soon as its last token is made: its handler
// answers the client then, and a reader who scrapes once the response
// has ended (llmrun's mark after the last request) must find the request
// and its tokens, not wait for the engine to release its slot at its
// next pass.
func TestMetricsCountARequestWhenItsLastTokenIsMade(t *testing.T) {
	srv, e := stepping()
	seq := newSequence(t.Context(), 4, 2).from(time.Now(), "length")
	if err := e.submit(seq); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the prefill step, then one decode step
		e.release()
		e.admit(time.Now())
		e.emit(e.running, time.Now())
	}
	if !seq.finished() {
		t.Fatalf("%d tokens made, want 2", seq.produced.Load())
	}
	fams := metricsNow(t, srv)
	if got := vllmValue(t, fams, "vllm:generation_tokens_total", dto.MetricType_COUNTER); got != 2 {
		t.Errorf("vllm:generation_tokens_total = %g, want 2", got)
	}
	for _, m := range family(t, fams, "vllm:request_success_total", dto.MetricType_COUNTER).Metric {
		want := 0.0
		if slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == "finished_reason" && l.GetValue() == "length" }) {
			want = 1
		}
		if got := m.GetCounter().GetValue(); got != want {
			t.Errorf("vllm:request_success_total%v = %g, want %g", m.GetLabel(), got, want)
		}
	}
	for _, name := range []string{"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
		"vllm:request_decode_time_seconds", "vllm:request_inference_time_seconds"} {
		if got := vllmHistogram(t, fams, name, requestLatencyBuckets).GetSampleCount(); got != 1 {
			t.Errorf("%s counts %d requests, want 1", name, got)
		}
	}
}

// A request queued after the engine read the clock for its pass, and
// admitted in that pass, waited for no time: never for a negative one,
// which would make the server's mean queue time over a window negative.
func TestQueueTimeIsNeverNegative(t *testing.T) {
	srv, e := stepping()
	now := time.Now()
	for !time.Now().After(now) {
		// the request arrives once the clock has moved on from now
	}
	seq := newSequence(t.Context(), 4, 1).from(time.Now(), "length")
	if err := e.submit(seq); err != nil {
		t.Fatal(err)
	}
	e.admit(now) // the engine read now at the top of its pass, before submit
	e.emit(e.running, time.Now())
	e.release()
	h := vllmHistogram(t, metricsNow(t, srv), "vllm:request_queue_time_seconds", requestLatencyBuckets)
	if h.GetSampleCount() != 1 || h.GetSampleSum() < 0 {
		t.Errorf("queue time: %d requests summing %g s, want 1 request and no negative time", h.GetSampleCount(), h.GetSampleSum())
	}
}

// A reader who finds a request completed in /stats finds its slot and
// its KV blocks free in /metrics: the engine frees them before it counts
// the request, not at a later point of its pass.
func TestMetricsFreeARequestsBlocksWhenItCounts(t *testing.T) {
	srv, e := stepping()
	seq := newSequence(t.Context(), 4, 1).from(time.Now(), "length")
	if err := e.submit(seq); err != nil {
		t.Fatal(err)
	}
	e.admit(time.Now())
	e.emit(e.running, time.Now())
	if got := vllmValue(t, metricsNow(t, srv), "vllm:kv_cache_usage_perc", dto.MetricType_GAUGE); got == 0 {
		t.Fatal("KV usage 0 with a request holding its prompt's block")
	}
	e.release() // run's next pass starts here
	if st := srv.Stats(); st.Completed != 1 {
		t.Fatalf("%d requests completed, want 1", st.Completed)
	}
	fams := metricsNow(t, srv)
	for _, name := range []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"} {
		if got := vllmValue(t, fams, name, dto.MetricType_GAUGE); got != 0 {
			t.Errorf("%s = %g with the one request completed, want 0", name, got)
		}
	}
}
