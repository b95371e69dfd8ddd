package llm

import (
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Record is what a run keeps of one request that ended (ok or failed;
// canceled requests are in no output): the one record every consumer of
// single requests reads — the per-request files (JSONL, CSV), InfluxDB's
// llm_request points and intervals, Prometheus, the timeline. It is made
// from the request's Result by Result.record. Times are milliseconds, 0
// where not measured: a failed request has only E2E, and no tokens.
type Record struct {
	// Time is when the request ended.
	Time time.Time
	// Tags are the request's sample tags: scenario, model, group,
	// workload, turn and the script's own.
	Tags *metrics.TagSet
	OK   bool
	// ErrorClass is the failure's class ("" when OK); Status the HTTP
	// status (0 when there was no response).
	ErrorClass            string
	Status                int
	TTFT, TTFO, TPOT, E2E float64
	// ITLMean and ITLP99 summarise the request's inter-token gaps (0 with
	// fewer than two token-bearing chunks).
	ITLMean, ITLP99 float64
	OutputTokens    int
	PromptTokens    int
	CachedTokens    int
	// ReasoningTokens is the reasoning share of OutputTokens: the
	// server's count when it gave one, else the reasoning-only chunks.
	ReasoningTokens int
}

// record fills rec with what outputs keep of the request, tagged tags;
// scratch is reused to find the ITL p99 and returned for the next call.
func (r *Result) record(rec *Record, tags *metrics.TagSet, scratch []float64) []float64 {
	*rec = Record{Time: r.End(), Tags: tags, OK: r.OK, ErrorClass: string(r.Class), Status: r.Status, E2E: r.E2E}
	if !r.OK {
		return scratch
	}
	rec.TTFT, rec.TTFO, rec.TPOT = r.TTFT, r.TTFO, r.TPOT
	rec.OutputTokens, rec.PromptTokens, rec.CachedTokens, rec.ReasoningTokens = r.OutputTokens, r.PromptTokens, r.CachedTokens, r.reasoningTokens()
	if r.itlCount() > 0 {
		rec.ITLMean = r.itlMean()
		rec.ITLP99, scratch = r.itlP99(scratch)
	}
	return scratch
}

// Hooks are where a run's llm module reports its scripts' requests beyond
// their metric samples; each may be nil. The requests of a warmup
// iteration (modules.State.Warmup) reach only Observer: they count in no
// result of the run.
type Hooks struct {
	// Requests receives a record of each measured request that ended,
	// for the outputs that store every request.
	Requests RequestSink
	// Observer sees how every request ended, warmup included (the run's
	// early stop watches the first ones).
	Observer RequestObserver
	// Errors receives the messages of the measured failed requests, for
	// the summary.
	Errors ErrorRecorder
	// Arrivals counts the output tokens of the measured requests as they
	// arrive, by scenario and model, for the run's live figures
	// (progress line, timeline, Prometheus, InfluxDB).
	Arrivals ArrivalCounters
}

// RequestSink receives request records. AddRequest is called from every
// VU's goroutine, must be safe for concurrent use, and must never block for
// long: an output that cannot keep up drops and counts. The record is
// reused once AddRequest returns: a sink that keeps it keeps a copy.
type RequestSink interface {
	AddRequest(r *Record)
}

// RequestObserver sees how each request ended: ok, or failed with an
// error class and a message (already free of secrets). Requests the run
// itself stopped (ErrCanceled) are not observed. ObserveRequest is called
// from every VU's goroutine, must be safe for concurrent use and must not
// block.
type RequestObserver interface {
	ObserveRequest(ok bool, class, message string)
}

// ErrorRecorder collects the messages of failed requests, by error class,
// for the end-of-run summary, which shows the first few distinct messages
// of each class. Implementations keep bounded memory however many errors
// they are given, and are safe for concurrent use. Messages are already
// free of secrets (API keys, credential headers).
type ErrorRecorder interface {
	Record(class, message string)
}

// ArrivalCounters are a run's counters of arriving output tokens, one per
// scenario and model, sharded so that each VU counts into a shard of its
// own (by its ID) or shared with few others. Counter is safe for
// concurrent use; the module calls it only when a VU's scenario or model
// changes, never per token.
type ArrivalCounters interface {
	Counter(scenario, model string) *metrics.ShardedCounter
}

// TokenArrivals hands a request the counter of its model's output tokens
// (Request.Arrivals). Counter is called once per request, never per
// token, from the goroutine that sends it.
type TokenArrivals interface {
	Counter(model string) *metrics.CounterShard
}

// vuArrivals is one VU's TokenArrivals in one scenario: its shard of the
// scenario's counters. It remembers the last model's, so that a VU sending
// to one model looks its counter up once. Like its VU, it is used by one
// goroutine at a time.
type vuArrivals struct {
	all      ArrivalCounters
	scenario string
	shard    int

	model string
	last  *metrics.CounterShard
}

// Counter implements TokenArrivals.
func (v *vuArrivals) Counter(model string) *metrics.CounterShard {
	if v.last == nil || v.model != model {
		v.model, v.last = model, v.all.Counter(v.scenario, model).Shard(v.shard)
	}
	return v.last
}
