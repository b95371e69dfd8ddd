package llmsim

import (
	"net/http"
	"slices"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// GET /metrics speaks vLLM's Prometheus metrics: the names, types, help
// texts, label names and histogram buckets of PrometheusStatLogger in
// vLLM's vllm/v1/metrics/loggers.py (github.com/vllm-project/vllm at
// 005a810bc40faa25b8870fbc8559c3462581eee3, plus the v0.11 line's
// vllm:inter_token_latency_seconds, which observes what the deprecated
// vllm:time_per_output_token_seconds does, with its buckets). vLLM
// declares its counters without the suffix (vllm:prompt_tokens) and
// Python's prometheus_client exposes them as NAME_total in the text
// format, which is what is written here; vLLM serves its metrics in the
// client's multiprocess mode, which writes no NAME_created series, so
// none is written either. Every series carries model_name (Config.Model,
// vLLM's served model name) and engine ("0": one engine core).

// finishReasons are vLLM's FinishReason values in their order: every
// one has its vllm:request_success series from the start.
var finishReasons = []string{"stop", "length", "abort"}

// vLLM's histogram buckets.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	interTokenBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	iterationTokensBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
)

// buckets125 returns 1, 2, 5, 10, 20, 50, ... up to max, vLLM's
// build_1_2_5_buckets for its token-count histograms.
func buckets125(max int) []float64 {
	var b []float64
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p > max {
				return b
			}
			b = append(b, float64(m*p))
		}
	}
}

// histogram counts observations in fixed buckets, as a Prometheus
// histogram does. It is not safe for concurrent use: requestMetrics
// guards its histograms.
type histogram struct {
	bounds []float64 // upper bounds, increasing
	counts []uint64  // per bucket, not cumulative; the last is +Inf's
	sum    float64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// observe counts v in the first bucket whose bound is at least v.
func (h *histogram) observe(v float64) {
	lo, hi := 0, len(h.bounds)
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); h.bounds[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	h.counts[lo]++
	h.sum += v
}

// metric returns h as a Prometheus histogram with cumulative buckets.
func (h *histogram) metric() *dto.Histogram {
	var total uint64
	buckets := make([]*dto.Bucket, len(h.bounds))
	for i, le := range h.bounds {
		total += h.counts[i]
		buckets[i] = &dto.Bucket{UpperBound: ptr(le), CumulativeCount: ptr(total)}
	}
	total += h.counts[len(h.bounds)]
	return &dto.Histogram{SampleCount: ptr(total), SampleSum: ptr(h.sum), Bucket: buckets}
}

// requestMetrics are the per-request and per-step histograms of
// /metrics and the successes by finished_reason, written by the engine
// goroutine and read by scrapes.
type requestMetrics struct {
	mu sync.Mutex
	// Per token: the first's time from arrival, the others' from the
	// sequence's previous token.
	ttft, interToken histogram
	// Per finished request, from the timeline vLLM keeps: e2e from
	// arrival to the last token; queue from queued to scheduled; prefill
	// from scheduled to the first token; decode from the first token to
	// the last; inference from scheduled to the last; and its token
	// counts.
	e2e, queue, prefill, decode, inference histogram
	promptLen, generationLen               histogram
	// Per step: the prompt tokens of the sequences it prefilled and the
	// tokens it generated.
	iterationTokens histogram
	success         []uint64 // by finishReasons' index
}

func newRequestMetrics(maxModelLen int) *requestMetrics {
	tokenBuckets := buckets125(maxModelLen)
	return &requestMetrics{
		ttft:            newHistogram(ttftBuckets),
		interToken:      newHistogram(interTokenBuckets),
		e2e:             newHistogram(requestLatencyBuckets),
		queue:           newHistogram(requestLatencyBuckets),
		prefill:         newHistogram(requestLatencyBuckets),
		decode:          newHistogram(requestLatencyBuckets),
		inference:       newHistogram(requestLatencyBuckets),
		promptLen:       newHistogram(tokenBuckets),
		generationLen:   newHistogram(tokenBuckets),
		iterationTokens: newHistogram(iterationTokensBuckets),
		success:         make([]uint64, len(finishReasons)),
	}
}

// finished records a sequence that generated all its tokens, under m.mu.
func (m *requestMetrics) finished(s *sequence) {
	m.e2e.observe((s.lastToken - s.arrival).Seconds())
	m.queue.observe((s.scheduled - s.queued).Seconds())
	m.prefill.observe((s.firstToken - s.scheduled).Seconds())
	m.decode.observe((s.lastToken - s.firstToken).Seconds())
	m.inference.observe((s.lastToken - s.scheduled).Seconds())
	m.promptLen.observe(float64(s.promptTokens))
	m.generationLen.observe(float64(s.outputTokens))
	if i := slices.Index(finishReasons, s.finish); i >= 0 {
		m.success[i]++
	}
}

// tokenMade records the token s is being given at (since the engine's
// epoch), and the request when it is its last, under e.requests.mu,
// before s.advance makes it seen; it returns the prompt tokens it
// prefilled: all of its prompt for its first token, as vLLM counts them,
// else none.
func (e *engine) tokenMade(s *sequence, at time.Duration) (prefilled int) {
	m := e.requests
	n := int(s.produced.Load()) + 1
	if n == 1 {
		s.firstToken = at
		m.ttft.observe((at - s.arrival).Seconds())
		e.promptTokens.Add(uint64(s.promptTokens))
		prefilled = s.promptTokens
	} else {
		m.interToken.observe((at - s.lastToken).Seconds())
	}
	s.lastToken = at
	e.kvGrow(s, n)
	if n == s.outputTokens {
		m.finished(s)
	}
	return prefilled
}

// vllmFamilies returns the server's state as vLLM's metric families.
func (s *Server) vllmFamilies() []*dto.MetricFamily {
	e := s.engine
	labels := []*dto.LabelPair{label("engine", "0"), label("model_name", s.cfg.Model)}
	families := []*dto.MetricFamily{
		gauge("vllm:num_requests_running", "Number of requests in model execution batches.", labels, float64(e.nRunning.Load())),
		gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels, float64(e.queued())),
		gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels,
			float64(e.kvBlocks.Load())/float64(s.cfg.KVCacheBlocks)),
		counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", labels, float64(e.prefixQueries.Load())),
		counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", labels, float64(e.prefixHits.Load())),
		counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", labels, 0),
		counter("vllm:prompt_tokens", "Number of prefill tokens processed.", labels, float64(e.promptTokens.Load())),
		counter("vllm:generation_tokens", "Number of generation tokens processed.", labels, float64(e.tokens.Load())),
	}
	m := e.requests
	m.mu.Lock()
	defer m.mu.Unlock()
	success := &dto.MetricFamily{Name: ptr("vllm:request_success_total"), Help: ptr("Count of successfully processed requests."), Type: dto.MetricType_COUNTER.Enum()}
	for i, reason := range finishReasons {
		success.Metric = append(success.Metric, &dto.Metric{
			Label:   []*dto.LabelPair{labels[0], label("finished_reason", reason), labels[1]},
			Counter: &dto.Counter{Value: ptr(float64(m.success[i]))},
		})
	}
	return append(families, success,
		histogramFamily("vllm:request_prompt_tokens", "Number of prefill tokens processed.", labels, &m.promptLen),
		histogramFamily("vllm:request_generation_tokens", "Number of generation tokens processed.", labels, &m.generationLen),
		histogramFamily("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", labels, &m.iterationTokens),
		histogramFamily("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels, &m.ttft),
		histogramFamily("vllm:time_per_output_token_seconds",
			"Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.", labels, &m.interToken),
		histogramFamily("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels, &m.interToken),
		histogramFamily("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", labels, &m.e2e),
		histogramFamily("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", labels, &m.queue),
		histogramFamily("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", labels, &m.inference),
		histogramFamily("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", labels, &m.prefill),
		histogramFamily("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", labels, &m.decode),
	)
}

// writeFamilies answers families in the Prometheus text format (0.0.4).
func writeFamilies(w http.ResponseWriter, families []*dto.MetricFamily) {
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return // the client has gone
		}
	}
}

func ptr[T any](v T) *T { return &v }

func label(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: ptr(name), Value: ptr(value)}
}

// gauge returns a family of one gauge.
func gauge(name, help string, labels []*dto.LabelPair, v float64) *dto.MetricFamily {
	return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{Label: labels, Gauge: &dto.Gauge{Value: ptr(v)}}}}
}

// counter returns a family of one counter declared as name, exposed as
// name_total as Python's prometheus_client does.
func counter(name, help string, labels []*dto.LabelPair, v float64) *dto.MetricFamily {
	return &dto.MetricFamily{Name: ptr(name + "_total"), Help: ptr(help), Type: dto.MetricType_COUNTER.Enum(),
		Metric: []*dto.Metric{{Label: labels, Counter: &dto.Counter{Value: ptr(v)}}}}
}

// histogramFamily returns a family of one histogram.
func histogramFamily(name, help string, labels []*dto.LabelPair, h *histogram) *dto.MetricFamily {
	return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_HISTOGRAM.Enum(),
		Metric: []*dto.Metric{{Label: labels, Histogram: h.metric()}}}
}
