package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/llm/llmjs"
	"github.com/llmrun/llmrun/runtime/executor"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// EarlyStop is options.earlyStop: two rules that stop a run whose requests
// fail in a way no load explains, rather than let it send thousands of
// requests that measure nothing, and the backoff of the VUs whose requests
// no longer reach the target. It is on by default; earlyStop: false turns
// all of it off.
//
//   - The first requests: when the first Requests requests of the run
//     (warmup included) all fail with one and the same class among
//     Classes (the target is down, misnamed or refuses the request), the
//     run stops at once.
//   - The whole run (MidRun): when no request was answered for MidRun.For
//     and at least MidRun.Requests requests in a row failed with a class
//     among MidRun.Classes (the server stopped answering), the run stops.
//
// A run that ends with fewer than MinSuccessRate of its requests ok (and
// some ok) warns (the summary's LowSuccess).
//
// In options it is false, true (the defaults), or an object
//
//	{ requests: 10, classes: ['connect', 'dns', 'tls', 'http_4xx'],
//	  midRun: { for: '5s', requests: 10, classes: ['connect', 'dns', 'tls'] },
//	  backoff: '1s', minSuccessRate: 0.9 }
//
// whose missing fields take these defaults; midRun: false turns the
// second rule off, backoff: false the backoff, minSuccessRate: 0 the
// warning.
type EarlyStop struct {
	Off      bool
	Requests int
	Classes  []string
	MidRun   MidRunStop
	// Backoff is the longest pause of a closed-loop VU before its next
	// iteration while its requests fail without reaching the target
	// (UnreachableClasses); 0 is no pause. See vuBackoff.
	Backoff time.Duration
	// MinSuccessRate is the success rate (0 to 1) below which the run's
	// end warns; 0 is no warning.
	MinSuccessRate float64
}

// SuccessFloor is the success rate below which the run's end warns: 0
// when the early stop is off.
func (s EarlyStop) SuccessFloor() float64 {
	if s.Off {
		return 0
	}
	return s.MinSuccessRate
}

// MidRunStop is the rule of EarlyStop that watches the whole run: no
// request answered for For, and the last Requests requests, at least, all
// failed with a class among Classes. By default Classes are those of a
// server that does not answer at all (UnreachableClasses): the failures of
// a server under load (429, 5xx, timeouts) stop a run only when the
// options list them.
type MidRunStop struct {
	Off      bool
	For      time.Duration
	Requests int
	Classes  []string
}

// UnreachableClasses are the classes of a request that never reached the
// target: it could not be connected to, named or spoken TLS with.
var UnreachableClasses = []string{string(llm.ErrConnect), string(llm.ErrDNS), string(llm.ErrTLS)}

// DefaultEarlyStop is the early stop of a run whose options say nothing.
func DefaultEarlyStop() EarlyStop {
	return EarlyStop{
		Requests: 10,
		Classes:  append(slices.Clone(UnreachableClasses), string(llm.ErrHTTP4xx)),
		MidRun:   MidRunStop{For: 5 * time.Second, Requests: 10, Classes: slices.Clone(UnreachableClasses)},
		Backoff:  time.Second,
		// Below 90 % the figures describe failures as much as the server.
		MinSuccessRate: 0.9,
	}
}

// earlyStopForm is the object form of options.earlyStop.
const earlyStopForm = "{ requests: 10, classes: [...], midRun: { for: '5s', requests: 10, classes: [...] }, backoff: '1s', minSuccessRate: 0.9 }"

// UnmarshalJSON reads the forms above; an unknown class, a count below 1
// or a duration that is not one is an error that names its field.
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
		return fmt.Errorf("earlyStop takes false, true or %s; got %s", earlyStopForm, b)
	}
	var o struct {
		Requests *int            `json:"requests"`
		Classes  []string        `json:"classes"`
		MidRun   json.RawMessage `json:"midRun"`
		Backoff  json.RawMessage `json:"backoff"`
		MinRate  *float64        `json:"minSuccessRate"`
	}
	if err := decodeStrict(b, &o); err != nil {
		return fmt.Errorf("earlyStop takes %s: %s%w", earlyStopForm, fieldPrefix(err), jsonReason(err))
	}
	if o.MinRate != nil {
		if *o.MinRate < 0 || *o.MinRate > 1 {
			return fmt.Errorf("earlyStop.minSuccessRate is a share of the requests, from 0 (no warning) to 1, got %g", *o.MinRate)
		}
		s.MinSuccessRate = *o.MinRate
	}
	var err error
	if s.Requests, err = stopRequests("earlyStop.requests", o.Requests, s.Requests); err != nil {
		return err
	}
	if s.Classes, err = stopClasses("earlyStop.classes", o.Classes, s.Classes); err != nil {
		return err
	}
	if err := s.MidRun.parse(o.MidRun); err != nil {
		return err
	}
	return parseBackoff(o.Backoff, &s.Backoff)
}

// parse reads earlyStop.midRun, absent (nil: the defaults kept), false,
// true or an object, into r.
func (r *MidRunStop) parse(b json.RawMessage) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0, bytes.Equal(b, []byte("true")), bytes.Equal(b, []byte("null")):
		return nil
	case bytes.Equal(b, []byte("false")):
		r.Off = true
		return nil
	case b[0] != '{':
		return fmt.Errorf("earlyStop.midRun takes false, true or { for: '5s', requests: 10, classes: [...] }; got %s", b)
	}
	var o struct {
		For      json.RawMessage `json:"for"`
		Requests *int            `json:"requests"`
		Classes  []string        `json:"classes"`
	}
	if err := decodeStrict(b, &o); err != nil {
		return fmt.Errorf("earlyStop.midRun takes { for: '5s', requests: 10, classes: [...] }: %s%w", fieldPrefix(err), jsonReason(err))
	}
	if o.For != nil {
		var d executor.Duration
		if err := json.Unmarshal(o.For, &d); err != nil {
			return fmt.Errorf("earlyStop.midRun.for: %w", err)
		}
		if d.D <= 0 {
			return fmt.Errorf("earlyStop.midRun.for must be positive, got %s", d.D)
		}
		r.For = d.D
	}
	var err error
	if r.Requests, err = stopRequests("earlyStop.midRun.requests", o.Requests, r.Requests); err != nil {
		return err
	}
	r.Classes, err = stopClasses("earlyStop.midRun.classes", o.Classes, r.Classes)
	return err
}

// parseBackoff reads earlyStop.backoff, absent (the default kept), false
// (no backoff) or a duration, into d.
func parseBackoff(b json.RawMessage, d *time.Duration) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0, bytes.Equal(b, []byte("true")), bytes.Equal(b, []byte("null")):
		return nil
	case bytes.Equal(b, []byte("false")):
		*d = 0
		return nil
	}
	var v executor.Duration
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("earlyStop.backoff takes false or the longest pause, like '1s': %w", err)
	}
	if v.D < 0 {
		return fmt.Errorf("earlyStop.backoff must not be negative, got %s", v.D)
	}
	*d = v.D
	return nil
}

// stopRequests is a rule's count of requests: n when given (at least 1),
// else def; field names it in the error.
func stopRequests(field string, n *int, def int) (int, error) {
	switch {
	case n == nil:
		return def, nil
	case *n < 1:
		return 0, fmt.Errorf("%s must be at least 1, got %d", field, *n)
	}
	return *n, nil
}

// stopClasses is a rule's classes: classes when given (each a failure
// class), else def; field names it in the error.
func stopClasses(field string, classes, def []string) ([]string, error) {
	if classes == nil {
		return def, nil
	}
	for _, c := range classes {
		if !slices.Contains(llm.ErrorClasses, llm.ErrorClass(c)) || c == string(llm.ErrCanceled) {
			return nil, fmt.Errorf("%s: unknown error class %q; want some of %s", field, c, failureClasses())
		}
	}
	return classes, nil
}

// MarshalJSON writes the early stop as options take it.
func (s EarlyStop) MarshalJSON() ([]byte, error) {
	if s.Off {
		return []byte("false"), nil
	}
	var midRun any = false
	if !s.MidRun.Off {
		midRun = struct {
			For      string   `json:"for"`
			Requests int      `json:"requests"`
			Classes  []string `json:"classes"`
		}{s.MidRun.For.String(), s.MidRun.Requests, s.MidRun.Classes}
	}
	var backoff any = false
	if s.Backoff > 0 {
		backoff = s.Backoff.String()
	}
	return json.Marshal(struct {
		Requests       int      `json:"requests"`
		Classes        []string `json:"classes"`
		MidRun         any      `json:"midRun"`
		Backoff        any      `json:"backoff"`
		MinSuccessRate float64  `json:"minSuccessRate"`
	}{s.Requests, s.Classes, midRun, backoff, s.MinSuccessRate})
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

// EarlyStopped says why a run stopped early. By the first requests' rule
// (MidRun false): its first Requests requests all failed with Class. By
// the whole run's (MidRun): from Since into the run, the Requests requests
// sent all failed with a class among Classes, the first with Class.
// Message is that first failure's error, At how long into the run it was
// stopped.
type EarlyStopped struct {
	MidRun   bool
	Requests int
	Class    string
	Classes  []string
	Message  string
	Since    time.Duration
	At       time.Duration
}

// String is the reason in words.
func (e *EarlyStopped) String() string {
	if e.MidRun {
		why := ""
		if !slices.ContainsFunc(e.Classes, func(c string) bool { return !slices.Contains(UnreachableClasses, c) }) {
			why = "the server stopped answering: "
		}
		return fmt.Sprintf("%sfrom %s into the run, the %s sent all failed with one of %s (the first with %s: %s); the run was stopped at %s: fix the target, or set options.earlyStop.midRun to false to run anyway",
			why, seconds(e.Since), textfmt.Count(e.Requests, "request"), strings.Join(e.Classes, ", "), e.Class, e.Message, seconds(e.At))
	}
	return fmt.Sprintf("the first %s all failed with %s, which load does not explain (%s); the run was stopped at %s: fix the target, or set options.earlyStop to false to run anyway",
		textfmt.Count(e.Requests, "request"), e.Class, e.Message, seconds(e.At))
}

// seconds writes d as seconds with one decimal, "7.0 s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// earlyStopper watches a run's requests and stops it as its EarlyStop
// says. Once the first requests are decided, a request answered while no
// failure streak is going on costs two atomic loads.
type earlyStopper struct {
	cfg   EarlyStop
	start time.Time
	stop  func()

	// done: stopped (or off); firstDecided: the first requests' rule has
	// decided; failing: a streak of the mid-run rule is going on.
	done, firstDecided, failing atomic.Bool

	mu sync.Mutex
	// The first requests' rule.
	seen    int
	class   string // of every failure seen so far
	message string
	// The mid-run rule: the failures in a row since the last answer, when
	// the first of them ended, its class and message.
	streak        int
	streakStart   time.Time
	streakClass   string
	streakMessage string
	stopped       *EarlyStopped
}

// newEarlyStopper returns a watcher of a run that started at start, which
// calls stop when the run must stop.
func newEarlyStopper(cfg EarlyStop, start time.Time, stop func()) *earlyStopper {
	w := &earlyStopper{cfg: cfg, start: start, stop: stop}
	w.done.Store(cfg.Off)
	return w
}

// observe takes the outcome of one request.
func (w *earlyStopper) observe(ok bool, class, message string) {
	if w.done.Load() {
		return
	}
	failing := !ok && !w.cfg.MidRun.Off && slices.Contains(w.cfg.MidRun.Classes, class)
	if !failing && w.firstDecided.Load() && !w.failing.Load() {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done.Load() {
		return
	}
	if !w.firstDecided.Load() && w.observeFirst(ok, class, message, now) {
		return
	}
	w.observeMidRun(failing, class, message, now)
}

// observeFirst applies the first requests' rule, and says whether it
// stopped the run.
func (w *earlyStopper) observeFirst(ok bool, class, message string, now time.Time) bool {
	switch {
	case ok || !slices.Contains(w.cfg.Classes, class) || (w.seen > 0 && class != w.class):
		w.firstDecided.Store(true)
		return false
	case w.seen == 0:
		w.class, w.message = class, message
	}
	w.seen++
	if w.seen < w.cfg.Requests {
		return false
	}
	w.firstDecided.Store(true)
	w.halt(&EarlyStopped{Requests: w.seen, Class: w.class, Message: w.message, At: now.Sub(w.start)})
	return true
}

// observeMidRun applies the mid-run rule to a request that failed with a
// class of its list (failing) or not.
func (w *earlyStopper) observeMidRun(failing bool, class, message string, now time.Time) {
	if !failing {
		w.streak = 0
		w.failing.Store(false)
		return
	}
	if w.streak == 0 {
		w.streakStart, w.streakClass, w.streakMessage = now, class, message
		w.failing.Store(true)
	}
	w.streak++
	if w.streak >= w.cfg.MidRun.Requests && now.Sub(w.streakStart) >= w.cfg.MidRun.For {
		w.halt(&EarlyStopped{MidRun: true, Requests: w.streak, Class: w.streakClass, Classes: w.cfg.MidRun.Classes, Message: w.streakMessage,
			Since: w.streakStart.Sub(w.start), At: now.Sub(w.start)})
	}
}

// halt stops the run for why; w.mu is held.
func (w *earlyStopper) halt(why *EarlyStopped) {
	w.stopped = why
	w.done.Store(true)
	w.stop()
}

// result is why the run stopped early, nil when it did not.
func (w *earlyStopper) result() *EarlyStopped {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// earlyStopSlot is the llm module's RequestObserver (Hooks.Observer): it
// passes what it observes to the early stop it watches for, and to the
// backoff of the VU whose request it was; to none outside the scenarios
// (setup and teardown are not watched).
type earlyStopSlot struct{ stopper atomic.Pointer[earlyStopper] }

var _ llmjs.RequestObserver = (*earlyStopSlot)(nil)

// watch makes the slot pass to w from now on; nil to none.
func (s *earlyStopSlot) watch(w *earlyStopper) { s.stopper.Store(w) }

// ObserveRequest implements llmjs.RequestObserver.
func (s *earlyStopSlot) ObserveRequest(of modules.VU, ok bool, class, message string) {
	w := s.stopper.Load()
	if w == nil {
		return
	}
	w.observe(ok, class, message)
	if v, isVU := of.(*vu); isVU {
		v.backoff.observe(ok, class)
	}
}

// backoffCap is the longest pause of a VU whose requests do not reach the
// target: 0 outside the scenarios and when the options turn it off.
func (s *earlyStopSlot) backoffCap() time.Duration {
	w := s.stopper.Load()
	if w == nil || w.cfg.Off {
		return 0
	}
	return w.cfg.Backoff
}

// BackoffStart is the first pause of a VU whose requests do not reach
// the target; each next one doubles, up to EarlyStop.Backoff.
const BackoffStart = 10 * time.Millisecond

// vuBackoff paces one VU while its requests fail before they reach the
// target (UnreachableClasses): after each iteration whose requests all
// failed so, the VU pauses before its next iteration, BackoffStart after
// the first such iteration, twice as long after each next one, at most
// the cap; an iteration with a request the target answered (ok or not)
// ends it. It is no retry: every failed request is recorded as it was.
// The VU's own goroutine uses it.
type vuBackoff struct {
	// reached and unreached: this iteration had a request the target
	// answered, one that did not reach it.
	reached, unreached bool
	// streak counts the iterations in a row whose requests all failed to
	// reach the target.
	streak int
}

// observe takes the outcome of a request of the VU's current iteration.
func (b *vuBackoff) observe(ok bool, class string) {
	if !ok && slices.Contains(UnreachableClasses, class) {
		b.unreached = true
	} else {
		b.reached = true
	}
}

// endIteration closes the VU's iteration; one without a request leaves
// the streak as it was.
func (b *vuBackoff) endIteration() {
	switch {
	case b.reached:
		b.streak = 0
	case b.unreached:
		b.streak++
	}
	b.reached, b.unreached = false, false
}

// pause is how long the VU waits before its next iteration, given the
// cap (0: never).
func (b *vuBackoff) pause(limit time.Duration) time.Duration {
	if b.streak == 0 || limit <= 0 {
		return 0
	}
	// BackoffStart << 20 is over 2 hours, past any cap worth setting.
	return min(BackoffStart<<min(b.streak-1, 20), limit)
}
