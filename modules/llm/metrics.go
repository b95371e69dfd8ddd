package llm

import (
	"sync"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Metrics are the built-in metrics of the llm module.
type Metrics struct {
	Requests     *metrics.Metric // llm_requests: requests that ended, ok or failed
	Failed       *metrics.Metric // llm_failed: 1 per failed request, 0 per ok one
	Errors       *metrics.Metric // llm_errors: failed requests, tagged error_class
	Interrupted  *metrics.Metric // llm_interrupted: requests the run stopped
	Retries      *metrics.Metric // llm_retries: failed attempts that were retried, tagged error_class
	TTFT         *metrics.Metric // llm_ttft
	TPOT         *metrics.Metric // llm_tpot
	ITL          *metrics.Metric // llm_itl: one sample per inter-token gap
	E2E          *metrics.Metric // llm_e2e
	TTFB         *metrics.Metric // llm_ttfb
	OutputTokens *metrics.Metric // llm_output_tokens
	// ReasoningTokens counts the reasoning share of the output tokens:
	// usage's reasoning_tokens when given, else the reasoning-only chunks.
	ReasoningTokens *metrics.Metric // llm_reasoning_tokens
	PromptTokens    *metrics.Metric // llm_prompt_tokens
	// CachedTokens is a Trend of the prompt tokens served from the
	// server's prefix cache, sampled only for requests whose server
	// reported them (Result.CachedTokens).
	CachedTokens *metrics.Metric // llm_cached_tokens
	// CheckTokens (llm_output_tokens_check) counts the output tokens of
	// the requests counted by usage that have a second count
	// (Result.CheckTokens), both ways: tagged source "usage" and
	// check (tokenizer or chunks), and tagged source and check both the
	// second count's source. The summary compares the sums.
	CheckTokens *metrics.Metric
	// PromptCheck (llm_prompt_tokens_check) counts the prompt tokens of
	// the successful requests that gave their prompt's length
	// (Result.RequestedPromptTokens) and got the server's count, both
	// ways: tagged source=requested and source=usage.
	PromptCheck *metrics.Metric
	// UniqueCache (llm_unique_prompt_tokens) counts the prompt tokens of
	// the successful requests whose script declared their prompt unique
	// (Result.UniquePrompt) and whose server reported its prefix cache's
	// share: tagged source=usage, their prompt tokens, and source=cached,
	// the share served from the cache (one sample per request, 0
	// included). The summary warns when a server served such prompts
	// from its cache.
	UniqueCache *metrics.Metric
	// Documents (llm_documents) counts the documents of successful
	// rerank requests (Result.Documents): its rate is the documents
	// reranked per second.
	Documents *metrics.Metric

	// checkTags, promptTags and uniqueTags cache the tags of the last
	// CheckTokens, PromptCheck and UniqueCache samples, so that a VU
	// sending requests with the same tags allocates none.
	checkTags, promptTags, uniqueTags tagPair
}

// tagPair caches two tag sets derived from a base one and a variant.
type tagPair struct {
	sync.Mutex
	base    *metrics.TagSet
	variant string
	a, b    *metrics.TagSet
}

// get returns the pair for base and variant, made by derive on a miss.
func (p *tagPair) get(base *metrics.TagSet, variant string, derive func() (a, b *metrics.TagSet)) (a, b *metrics.TagSet) {
	p.Lock()
	defer p.Unlock()
	if p.a == nil || p.base != base || p.variant != variant {
		p.base, p.variant = base, variant
		p.a, p.b = derive()
	}
	return p.a, p.b
}

// checkTagSets returns tags with source=usage and with source=check, both
// with check=check.
func (m *Metrics) checkTagSets(tags *metrics.TagSet, check TokenSource) (usage, other *metrics.TagSet) {
	return m.checkTags.get(tags, string(check), func() (a, b *metrics.TagSet) {
		return tags.With("source", string(TokensFromUsage), "check", string(check)),
			tags.With("source", string(check), "check", string(check))
	})
}

// promptTagSets returns tags with source=requested and with source=usage.
func (m *Metrics) promptTagSets(tags *metrics.TagSet) (requested, usage *metrics.TagSet) {
	return m.promptTags.get(tags, "", func() (a, b *metrics.TagSet) {
		return tags.With("source", "requested"), tags.With("source", string(TokensFromUsage))
	})
}

// uniqueTagSets returns tags with source=usage and with source=cached.
func (m *Metrics) uniqueTagSets(tags *metrics.TagSet) (usage, cached *metrics.TagSet) {
	return m.uniqueTags.get(tags, "", func() (a, b *metrics.TagSet) {
		return tags.With("source", string(TokensFromUsage)), tags.With("source", "cached")
	})
}

// RegisterMetrics registers the llm module's metrics in reg (or gets them,
// when they are registered already).
func RegisterMetrics(reg *metrics.Registry) *Metrics {
	trend := func(name, desc string) *metrics.Metric {
		return reg.MustRegister(metrics.Metric{Name: name, Type: metrics.Trend, Contains: metrics.Time, Desc: desc, Unit: "ms"})
	}
	counter := func(name, unit, desc string) *metrics.Metric {
		return reg.MustRegister(metrics.Metric{Name: name, Type: metrics.Counter, Desc: desc, Unit: unit})
	}
	return &Metrics{
		Requests: counter("llm_requests", "requests",
			"LLM requests that ended, ok or failed"),
		Failed: reg.MustRegister(metrics.Metric{Name: "llm_failed", Type: metrics.Rate,
			Desc: "share of LLM requests that failed", Unit: "ratio"}),
		Errors: counter("llm_errors", "requests",
			"failed LLM requests, tagged error_class"),
		Interrupted: counter("llm_interrupted", "requests",
			"LLM requests cut by the end of a graceful stop or Ctrl-C; in no other metric"),
		Retries: counter("llm_retries", "attempts",
			"failed attempts of LLM requests that the retry policy sent again, tagged error_class; in no other metric"),
		TTFT: trend("llm_ttft", "time to first token: request start to the first chunk with text, reasoning or a tool call"),
		TPOT: trend("llm_tpot", "time per output token after the first, per streamed request: (e2e - ttft) / (output tokens - 1)"),
		ITL:  trend("llm_itl", "inter-token latency: each gap between consecutive token-bearing chunks"),
		E2E:  trend("llm_e2e", "end-to-end latency: request start to the end of the response"),
		TTFB: trend("llm_ttfb", "time to first byte: request start to the first byte of the response headers"),
		ReasoningTokens: counter("llm_reasoning_tokens", "tokens",
			"reasoning (thinking) tokens among the output tokens of successful requests: usage's reasoning_tokens, else the reasoning-only chunks"),
		OutputTokens: counter("llm_output_tokens", "tokens",
			"tokens generated by successful requests"),
		PromptTokens: counter("llm_prompt_tokens", "tokens",
			"prompt tokens of successful requests, as the server counted them"),
		CachedTokens: reg.MustRegister(metrics.Metric{Name: "llm_cached_tokens", Type: metrics.Trend,
			Desc: "prompt tokens the server reports as served from its prefix cache, per successful request that reports them", Unit: "tokens"}),
		CheckTokens: counter("llm_output_tokens_check", "tokens",
			"output tokens of successful requests counted twice: by the server's usage (source=usage) and by the tokenizer or the chunks (source=check=tokenizer|chunks)"),
		PromptCheck: counter("llm_prompt_tokens_check", "tokens",
			"prompt tokens of successful requests that gave their prompt's length (promptTokens), as asked (source=requested) and as the server counted them (source=usage)"),
		UniqueCache: counter("llm_unique_prompt_tokens", "tokens",
			"prompt tokens of successful requests declared unique (uniquePrompt) whose server reports its prefix cache: all of them (source=usage) and those served from the cache (source=cached)"),
		Documents: counter("llm_documents", "documents",
			"documents sent by successful rerank requests"),
	}
}

// AppendSamples appends the samples of one request to dst and returns the
// extended slice, so that a caller can send them to a Sink in one call
// with a reused slice. A request the run stopped (ErrCanceled) counts in
// llm_interrupted only. Any other request counts in llm_requests and
// llm_failed, each attempt it retried in llm_retries (tagged error_class),
// and a failed one in llm_errors (tagged error_class). Only a successful
// request gives latencies and token counts: TTFT when a token arrived,
// TPOT and ITL when it was streamed with more than one token, E2E and TTFB
// always, token counts when known (llm_cached_tokens when the server
// reported them, 0 included; llm_prompt_tokens_check when the request gave
// its prompt's length and the server its count; llm_unique_prompt_tokens
// when the script declared the prompt unique and the server reported its
// cache). Samples are timed at the
// end of the request.
func (m *Metrics) AppendSamples(dst []metrics.Sample, tags *metrics.TagSet, r *Result) []metrics.Sample {
	s := sampleBatch{dst: dst, tags: tags, at: r.End()}
	if r.Class == ErrCanceled {
		s.add(m.Interrupted, 1)
		return s.dst
	}
	for _, class := range r.Retried {
		s.put(m.Retries, tags.With("error_class", string(class)), 1, 0)
	}
	s.add(m.Requests, 1)
	if !r.OK {
		s.add(m.Failed, 1)
		s.put(m.Errors, tags.With("error_class", string(r.Class)), 1, 0)
		return s.dst
	}
	s.add(m.Failed, 0)
	s.add(m.E2E, r.E2E)
	s.add(m.TTFB, r.Timings.TTFB)
	if r.Chunks > 0 {
		s.add(m.TTFT, r.TTFT)
	}
	if r.Stream && r.Chunks > 0 && r.OutputTokens > 1 {
		s.add(m.TPOT, r.TPOT)
	}
	for _, gap := range r.ITL {
		s.add(m.ITL, gap)
	}
	for gap, n := range r.foldedGaps() {
		s.put(m.ITL, tags, gap, n)
	}
	if r.OutputTokens > 0 {
		s.add(m.OutputTokens, float64(r.OutputTokens))
	}
	if reasoning := r.reasoningTokens(); reasoning > 0 {
		s.add(m.ReasoningTokens, float64(reasoning))
	}
	if r.PromptTokens > 0 {
		s.add(m.PromptTokens, float64(r.PromptTokens))
	}
	if r.cachedReported {
		s.add(m.CachedTokens, float64(r.CachedTokens))
	}
	if r.RequestedPromptTokens > 0 && r.PromptTokens > 0 {
		requested, usage := m.promptTagSets(tags)
		s.put(m.PromptCheck, requested, float64(r.RequestedPromptTokens), 0)
		s.put(m.PromptCheck, usage, float64(r.PromptTokens), 0)
	}
	if r.UniquePrompt && r.cachedReported && r.PromptTokens > 0 {
		usage, cached := m.uniqueTagSets(tags)
		s.put(m.UniqueCache, usage, float64(r.PromptTokens), 0)
		s.put(m.UniqueCache, cached, float64(r.CachedTokens), 0)
	}
	if r.CheckSource != "" {
		usage, other := m.checkTagSets(tags, r.CheckSource)
		s.put(m.CheckTokens, usage, float64(r.OutputTokens), 0)
		s.put(m.CheckTokens, other, float64(r.CheckTokens), 0)
	}
	if r.Documents > 0 {
		s.add(m.Documents, float64(r.Documents))
	}
	return s.dst
}

// sampleBatch appends the samples of one request, all timed at, most
// tagged tags. Its put is never inlined: inlined, each call of it put a
// sample of its own in the frame of AppendSamples (1.9 KB then), on the
// stack of every VU at the end of every request.
type sampleBatch struct {
	dst  []metrics.Sample
	tags *metrics.TagSet
	at   time.Time
}

// add appends a sample of metric tagged b.tags.
func (b *sampleBatch) add(metric *metrics.Metric, value float64) {
	b.put(metric, b.tags, value, 0)
}

// put appends a sample of metric tagged tags, standing for weight samples
// of value (0: one).
//
//go:noinline
func (b *sampleBatch) put(metric *metrics.Metric, tags *metrics.TagSet, value float64, weight int64) {
	b.dst = append(b.dst, metrics.Sample{Metric: metric, Tags: tags, Time: b.at, Value: value, Weight: weight})
}
