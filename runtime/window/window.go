// Package window aggregates the requests that completed in an interval of
// a run: how many ended, failed (by error class) and asked for how many
// prompt tokens, and the distributions of their latencies and of their
// inter-token gaps. The views of a
// run over time share it: the timeline of the result file, InfluxDB's
// llm_interval points and the live view.
//
// Latencies are held as the summary holds its trends (metrics.Latencies:
// HDR histograms to 3 significant digits, with the exact extremes), so an
// interval's percentiles are, to the bit, those the summary prints for
// the same requests. An interval that is over can be sealed into a
// compact form whose size grows with the number of distinct latencies it
// saw rather than with their range: a long timeline keeps hundreds.
//
// It lives under runtime/, beside the timeline and the outputs that use
// it, rather than in modules/metrics, which takes values only, because it
// reads request records. It does not import the engine, so a view of a
// run needs nothing but the records.
package window

import (
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
)

// Aggregate is the figures of the requests that completed in an interval.
// The zero value is empty. It is not safe for concurrent use: its owner
// locks around it.
type Aggregate struct {
	// Requests counts the requests that ended, ok or failed; Failed the
	// failed ones.
	Requests, Failed int64
	// PromptTokens are the successful requests' prompt tokens.
	PromptTokens int64
	// Errors counts the failed requests by error class (ErrorClass); nil
	// until one failed.
	Errors map[string]int64
	// TTFT, TPOT and E2E are the successful requests' latencies in ms,
	// those measured (not 0).
	TTFT, TPOT, E2E metrics.Latencies
	// ITL is every inter-token gap of the successful requests in ms, as
	// llm_itl counts them (llm.Record.ITLGaps), when CountITL is set:
	// each gap is an add, some 3 µs a request of 128 tokens, which only
	// the views that show ITL (the dashboard) pay.
	ITL      metrics.Latencies
	CountITL bool
}

// Add counts a request that ended.
func (a *Aggregate) Add(r *llm.Record) {
	a.Requests++
	if !r.OK {
		a.Failed++
		if a.Errors == nil {
			a.Errors = map[string]int64{}
		}
		a.Errors[r.Class()]++
		return
	}
	a.PromptTokens += int64(r.PromptTokens)
	addMeasured(&a.TTFT, r.TTFT)
	addMeasured(&a.TPOT, r.TPOT)
	addMeasured(&a.E2E, r.E2E)
	if !a.CountITL {
		return
	}
	for gap, n := range r.ITLGaps() {
		a.ITL.AddN(gap, n)
	}
}

// addMeasured adds a latency to l unless it is 0 (not measured) or not a
// number.
func addMeasured(l *metrics.Latencies, ms float64) {
	if ms > 0 {
		l.Add(ms)
	}
}

// Merge adds the figures of o to a; o stays as it was.
func (a *Aggregate) Merge(o *Aggregate) {
	a.Requests += o.Requests
	a.Failed += o.Failed
	a.PromptTokens += o.PromptTokens
	for class, n := range o.Errors {
		if a.Errors == nil {
			a.Errors = make(map[string]int64, len(o.Errors))
		}
		a.Errors[class] += n
	}
	a.TTFT.Merge(&o.TTFT)
	a.TPOT.Merge(&o.TPOT)
	a.E2E.Merge(&o.E2E)
	a.ITL.Merge(&o.ITL)
}

// Seal puts the latencies into their compact form, for an interval that
// is over; requests added after still count (see metrics.Latencies.Seal).
func (a *Aggregate) Seal() {
	a.TTFT.Seal()
	a.TPOT.Seal()
	a.E2E.Seal()
	a.ITL.Seal()
}

// Reset empties a for the next interval, keeping the storage of its
// latencies' dense histograms.
func (a *Aggregate) Reset() {
	a.Requests, a.Failed, a.PromptTokens = 0, 0, 0
	clear(a.Errors)
	a.TTFT.Reset()
	a.TPOT.Reset()
	a.E2E.Reset()
	a.ITL.Reset()
}

// MemorySize is roughly how many bytes a's latencies hold.
func (a *Aggregate) MemorySize() int {
	return a.TTFT.MemorySize() + a.TPOT.MemorySize() + a.E2E.MemorySize() + a.ITL.MemorySize()
}
