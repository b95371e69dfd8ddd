package llmjs

import (
	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
)

// Hooks are where a run's llm module reports its scripts' requests beyond
// their metric samples; each may be nil. The requests of a warmup
// iteration (modules.State.Warmup) reach only Observer: they count in no
// result of the run.
type Hooks struct {
	// Requests receives a record of each measured request that ended,
	// for the outputs that store every request.
	Requests llm.RequestSink
	// Observer sees how every request ended, warmup included (the run's
	// early stop watches them, and paces the VUs whose requests do not
	// reach the target).
	Observer RequestObserver
	// Errors receives the messages of the measured failed requests, for
	// the summary.
	Errors llm.ErrorRecorder
	// Arrivals counts the output tokens of the measured requests as they
	// arrive, by scenario and model, for the run's live figures
	// (progress line, timeline, Prometheus, InfluxDB).
	Arrivals llm.ArrivalCounters
	// Results receives the Result of each measured request that ended,
	// as Requests receives its record: for a consumer that needs what
	// the record leaves out (the start, the gaps, the text), as Go
	// values, without a round trip through the script's object.
	Results ResultSink
}

// RequestObserver sees how each request ended, and which VU sent it: ok,
// or failed with an error class and a message (already free of secrets).
// Requests the run itself stopped (llm.ErrCanceled) are not observed.
// ObserveRequest is called from every VU's goroutine (the one of the VU
// named), must be safe for concurrent use and must not block.
type RequestObserver interface {
	ObserveRequest(vu modules.VU, ok bool, class, message string)
}

// ResultSink receives the Result of each measured request that ended
// (Hooks.Results). AddResult is called from every VU's goroutine, must be
// safe for concurrent use, and must not block for long. The Result, its
// ITL and its other slices are reused once AddResult returns: a sink that
// keeps any of them keeps a copy.
type ResultSink interface {
	AddResult(res *llm.Result)
}

// vuArrivals is one VU's llm.TokenArrivals in one scenario: its shard of the
// scenario's counters. It remembers the last model's, so that a VU sending
// to one model looks its counter up once. Like its VU, it is used by one
// goroutine at a time.
type vuArrivals struct {
	all      llm.ArrivalCounters
	scenario string
	shard    int

	model string
	last  *metrics.CounterShard
}

// Counter implements llm.TokenArrivals.
func (v *vuArrivals) Counter(model string) *metrics.CounterShard {
	if v.last == nil || v.model != model {
		v.model, v.last = model, v.all.Counter(v.scenario, model).Shard(v.shard)
	}
	return v.last
}
