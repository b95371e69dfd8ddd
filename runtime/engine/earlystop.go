package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// EarlyStop is options.earlyStop: a run whose first Requests requests
// (warmup included) all fail with one and the same class among Classes —
// failures no load explains: the target is down, misnamed or refuses the
// request — stops at once, rather than send thousands of requests that
// measure nothing. It is on by default; earlyStop: false turns it off.
//
// In options it is false, true (the defaults), or an object
// { requests: 10, classes: ['connect', 'dns', 'tls', 'http_4xx'] } whose
// missing fields take the defaults.
type EarlyStop struct {
	Off      bool
	Requests int
	Classes  []string
}

// DefaultEarlyStop is the early stop of a run whose options say nothing.
func DefaultEarlyStop() EarlyStop {
	return EarlyStop{Requests: 10, Classes: []string{
		string(llm.ErrConnect), string(llm.ErrDNS), string(llm.ErrTLS), string(llm.ErrHTTP4xx)}}
}

// UnmarshalJSON reads the forms above; an unknown class or a count below 1
// is an error that names it.
func (s *EarlyStop) UnmarshalJSON(b []byte) error {
	*s = DefaultEarlyStop()
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("false")):
		s.Off = true
		return nil
	case bytes.Equal(b, []byte("true")), bytes.Equal(b, []byte("null")):
		return nil
	case len(b) == 0 || b[0] != '{':
		return fmt.Errorf("earlyStop takes false, true or { requests: 10, classes: [...] }; got %s", b)
	}
	var o struct {
		Requests *int     `json:"requests"`
		Classes  []string `json:"classes"`
	}
	if err := decodeStrict(b, &o); err != nil {
		return fmt.Errorf("earlyStop takes { requests: 10, classes: [...] }: %s%w", fieldPrefix(err), jsonReason(err))
	}
	if o.Requests != nil {
		if *o.Requests < 1 {
			return fmt.Errorf("earlyStop.requests must be at least 1, got %d", *o.Requests)
		}
		s.Requests = *o.Requests
	}
	if o.Classes != nil {
		for _, c := range o.Classes {
			if !slices.Contains(llm.ErrorClasses, llm.ErrorClass(c)) || c == string(llm.ErrCanceled) {
				return fmt.Errorf("earlyStop.classes: unknown error class %q; want some of %s", c, failureClasses())
			}
		}
		s.Classes = o.Classes
	}
	return nil
}

// MarshalJSON writes the early stop as options take it.
func (s EarlyStop) MarshalJSON() ([]byte, error) {
	if s.Off {
		return []byte("false"), nil
	}
	return json.Marshal(struct {
		Requests int      `json:"requests"`
		Classes  []string `json:"classes"`
	}{s.Requests, s.Classes})
}

// failureClasses lists the classes of failed requests, for messages.
func failureClasses() string {
	var names []string
	for _, c := range llm.ErrorClasses {
		if c != llm.ErrCanceled {
			names = append(names, string(c))
		}
	}
	return strings.Join(names, ", ")
}

// EarlyStopped says why a run stopped early: its first Requests requests
// all failed with Class; Message is the first one's error.
type EarlyStopped struct {
	Requests int
	Class    string
	Message  string
}

// String is the reason in words.
func (e *EarlyStopped) String() string {
	return fmt.Sprintf("the first %s all failed with %s, which load does not explain (%s); the run was stopped: fix the target, or set options.earlyStop to false to run anyway",
		textfmt.Count(e.Requests, "request"), e.Class, e.Message)
}

// earlyStopper watches the first requests of a run and stops it as its
// EarlyStop says. Once it has seen enough requests it costs one atomic
// load per request.
type earlyStopper struct {
	cfg  EarlyStop
	stop func()

	decided atomic.Bool
	mu      sync.Mutex
	seen    int
	class   string // of every failure seen so far; "" after a success or a mix
	message string
	stopped *EarlyStopped
}

// newEarlyStopper returns a watcher that calls stop when the run must
// stop.
func newEarlyStopper(cfg EarlyStop, stop func()) *earlyStopper {
	w := &earlyStopper{cfg: cfg, stop: stop}
	w.decided.Store(cfg.Off)
	return w
}

// ObserveRequest implements llm.RequestObserver.
func (w *earlyStopper) ObserveRequest(ok bool, class, message string) {
	if w.decided.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.decided.Load() {
		return
	}
	switch {
	case ok || !slices.Contains(w.cfg.Classes, class) || (w.seen > 0 && class != w.class):
		w.decided.Store(true)
		return
	case w.seen == 0:
		w.class, w.message = class, message
	}
	w.seen++
	if w.seen >= w.cfg.Requests {
		w.decided.Store(true)
		w.stopped = &EarlyStopped{Requests: w.seen, Class: w.class, Message: w.message}
		w.stop()
	}
}

// earlyStopSlot is the llm module's RequestObserver (Hooks.Observer): it
// passes what it observes to the early stop it watches for, none outside
// the scenarios (setup and teardown are not watched).
type earlyStopSlot struct{ stopper atomic.Pointer[earlyStopper] }

var _ llm.RequestObserver = (*earlyStopSlot)(nil)

// watch makes the slot pass to w from now on; nil to none.
func (s *earlyStopSlot) watch(w *earlyStopper) { s.stopper.Store(w) }

// ObserveRequest implements llm.RequestObserver.
func (s *earlyStopSlot) ObserveRequest(ok bool, class, message string) {
	if w := s.stopper.Load(); w != nil {
		w.ObserveRequest(ok, class, message)
	}
}

// result is why the run stopped early, nil when it did not.
func (w *earlyStopper) result() *EarlyStopped {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}
