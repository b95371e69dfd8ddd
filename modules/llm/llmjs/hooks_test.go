package llmjs

import (
	"slices"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
)

// recorded keeps everything a module's hooks are given, for tests. Its
// zero value is ready; it is safe for concurrent use.
type recorded struct {
	mu       sync.Mutex
	errors   []recordedError
	observed []recordedError
	// observedBy are the IDs of the VUs of the observed requests.
	observedBy []int64
	records    []llm.Record
	results    []llm.Result
	counts     map[[2]string]*metrics.ShardedCounter
}

// recordedError is a class and a message given to an ErrorRecorder or a
// RequestObserver (class "" for a request that succeeded).
type recordedError struct{ Class, Message string }

// hooks returns hooks that record into r.
func (r *recorded) hooks() Hooks {
	return Hooks{Requests: r, Observer: r, Errors: r, Arrivals: r, Results: r}
}

// AddRequest implements RequestSink: it keeps a copy.
func (r *recorded) AddRequest(rec *llm.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, *rec)
}

// AddResult implements ResultSink: it keeps a copy, its gaps' own.
func (r *recorded) AddResult(res *llm.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := *res
	kept.ITL = slices.Clone(res.ITL)
	r.results = append(r.results, kept)
}

// Results returns the results received so far.
func (r *recorded) Results() []llm.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.results)
}

// Record implements llm.ErrorRecorder.
func (r *recorded) Record(class, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, recordedError{class, message})
}

// ObserveRequest implements RequestObserver.
func (r *recorded) ObserveRequest(vu modules.VU, ok bool, class, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observed = append(r.observed, recordedError{class, message})
	r.observedBy = append(r.observedBy, vu.ID())
}

// Counter implements ArrivalCounters, with counters of one shard.
func (r *recorded) Counter(scenario, model string) *metrics.ShardedCounter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[[2]string]*metrics.ShardedCounter{}
	}
	k := [2]string{scenario, model}
	if r.counts[k] == nil {
		r.counts[k] = metrics.NewShardedCounter(1)
	}
	return r.counts[k]
}

// Records returns the records received so far.
func (r *recorded) Records() []llm.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}

// Errors returns the error messages received so far.
func (r *recorded) Errors() []recordedError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errors)
}

// Observed returns the outcomes observed so far.
func (r *recorded) Observed() []recordedError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.observed)
}

// ObservedBy returns the IDs of the VUs of the outcomes observed so far.
func (r *recorded) ObservedBy() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.observedBy)
}

// Tokens returns the output tokens of model counted so far in scenario.
func (r *recorded) Tokens(scenario, model string) int64 {
	return r.Counter(scenario, model).Total()
}

// newRecordedModule returns a module of cfg whose hooks record
// everything.
func newRecordedModule(t *testing.T, cfg llm.Config) (*Module, *recorded) {
	t.Helper()
	rec := &recorded{}
	m, err := NewModule(cfg, rec.hooks())
	if err != nil {
		t.Fatal(err)
	}
	return m, rec
}
