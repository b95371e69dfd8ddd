// Package modules defines what a Go-native module sees of the engine: the VU
// it runs in. Each module (llm, metrics, llmrun, ...) is a plain Go package
// with a thin JavaScript binding that depends on this package only, never on
// the engine, so dependencies point one way: runtime → modules/* → modules.
package modules

import (
	"context"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Module is a Go-native module that scripts import by name
// (`import llm from 'llm'`). The engine calls NewInstance once per VU, in the
// VU's init context.
type Module interface {
	NewInstance(vu VU) (Instance, error)
}

// Instance is one VU's instance of a module.
type Instance interface {
	// Exports returns the module's exports: an object whose properties are
	// the named exports, and which is also the default export.
	Exports() *goja.Object
}

// VU is the virtual user a module instance belongs to.
type VU interface {
	// Runtime is the VU's goja runtime. It is not safe for concurrent use:
	// modules call into it only from the VU's own goroutine.
	Runtime() *goja.Runtime
	// Context is canceled when the current iteration must stop (the end of
	// a graceful stop, or an aborted run). In the init context it is the
	// run's context.
	Context() context.Context
	// State is the VU's state while it runs iterations (and setup and
	// teardown); nil in the init context.
	State() *State
	// Registry holds the run's metric definitions; modules register their
	// built-in and custom metrics here, in the init context or later.
	Registry() *metrics.Registry
	// InitContext reports whether the VU is running the script's init code,
	// where only registration and file loading are allowed.
	InitContext() bool
	// ID is the VU's number, from 1; the VU that reads the options and
	// runs setup and teardown is 0. Modules seed per-VU random streams
	// with it, so that a run is reproducible under its seed.
	ID() int64
}

// State is what a VU knows while it runs iterations.
type State struct {
	// VUID is the VU's number, from 1; setup and teardown run as VU 0.
	VUID int64
	// Iteration counts this VU's iterations in its current scenario, from 0.
	Iteration int64
	// Scenario is the name of the scenario the VU is running.
	Scenario string
	// Tags are the tags every sample of this VU carries now (scenario,
	// group and the user's tags); modules add their own on top.
	Tags *metrics.TagSet
	// Samples receives the VU's samples; it never blocks for long.
	Samples metrics.Sink
	// Group is the current group path ("::outer::inner"), "" outside groups.
	Group string
	// Errors receives the messages of the VU's failed requests, for the
	// summary; nil when they are not collected (a warmup iteration).
	Errors ErrorRecorder
	// Requests receives a record of each of the VU's measured LLM
	// requests, for outputs that store every request; nil when no output
	// takes them, and in warmup iterations.
	Requests RequestSink
	// Observer sees the outcome of every LLM request that ended, warmup
	// included (the run's early stop watches the first ones); nil when
	// none watches.
	Observer RequestObserver
	// Arrivals counts the output tokens of the VU's LLM requests as they
	// arrive, for the run's live figures (progress line, timeline,
	// Prometheus, InfluxDB); nil when they are not counted (a warmup
	// iteration).
	Arrivals TokenArrivals
}

// TokenArrivals hands a VU the counters of its scenario's output tokens,
// one per model. Counter is called once per request, from the VU's
// goroutine, never per token; the shard it returns is the VU's own or
// shared with few others, so that counting each token as it arrives costs
// one uncontended atomic add.
type TokenArrivals interface {
	Counter(model string) *metrics.CounterShard
}

// RequestObserver sees how each LLM request ended: ok, or failed with an
// error class and a message (already free of secrets). Requests the run
// itself stopped are not observed. ObserveRequest is called from every
// VU's goroutine, must be safe for concurrent use and must not block.
type RequestObserver interface {
	ObserveRequest(ok bool, class, message string)
}

// RequestRecord is what outputs keep of one LLM request that ended (ok or
// failed; interrupted requests are in no output). Times are milliseconds,
// 0 where not measured (a failed request has only E2E).
type RequestRecord struct {
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
	ReasoningTokens int
}

// RequestSink receives request records. AddRequest is called from every
// VU's goroutine, must be safe for concurrent use, and must never block for
// long: an output that cannot keep up drops and counts.
type RequestSink interface {
	AddRequest(r *RequestRecord)
}

// ErrorRecorder collects the messages of failed requests, by error class,
// for the end-of-run summary, which shows the first few distinct messages
// of each class. Implementations keep bounded memory however many errors
// they are given, and are safe for concurrent use. Messages must already
// be free of secrets (API keys, credential headers).
type ErrorRecorder interface {
	Record(class, message string)
}
