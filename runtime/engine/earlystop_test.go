package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/internal/refused"
)

func TestEarlyStopOptions(t *testing.T) {
	def := DefaultEarlyStop()
	with := func(change func(*EarlyStop)) EarlyStop {
		s := DefaultEarlyStop()
		change(&s)
		return s
	}
	tests := []struct {
		json string
		want EarlyStop
		err  string
	}{
		{json: `false`, want: with(func(s *EarlyStop) { s.Off = true })},
		{json: `true`, want: def},
		{json: `{"requests": 3}`, want: with(func(s *EarlyStop) { s.Requests = 3 })},
		{json: `{"classes": ["http_5xx"]}`, want: with(func(s *EarlyStop) { s.Classes = []string{"http_5xx"} })},
		{json: `{"midRun": false}`, want: with(func(s *EarlyStop) { s.MidRun.Off = true })},
		{json: `{"midRun": {"for": "30s"}}`, want: with(func(s *EarlyStop) { s.MidRun.For = 30 * time.Second })},
		{json: `{"midRun": {"requests": 50, "classes": ["connect", "http_5xx"]}}`, want: with(func(s *EarlyStop) {
			s.MidRun.Requests, s.MidRun.Classes = 50, []string{"connect", "http_5xx"}
		})},
		{json: `{"backoff": false}`, want: with(func(s *EarlyStop) { s.Backoff = 0 })},
		{json: `{"backoff": "250ms"}`, want: with(func(s *EarlyStop) { s.Backoff = 250 * time.Millisecond })},
		{json: `{"minSuccessRate": 0.5}`, want: with(func(s *EarlyStop) { s.MinSuccessRate = 0.5 })},
		{json: `{"minSuccessRate": 0}`, want: with(func(s *EarlyStop) { s.MinSuccessRate = 0 })},
		{json: `{"minSuccessRate": 1.5}`, err: "earlyStop.minSuccessRate is a share of the requests, from 0 (no warning) to 1, got 1.5"},
		{json: `{"minSuccessRate": "90%"}`, err: "minSuccessRate"},
		{json: `{"requests": 0}`, err: "earlyStop.requests must be at least 1"},
		{json: `{"classes": ["boom"]}`, err: `earlyStop.classes: unknown error class "boom"`},
		{json: `{"classes": ["canceled"]}`, err: `unknown error class "canceled"`},
		{json: `{"after": 3}`, err: "after: unknown field"},
		{json: `5`, err: "earlyStop takes false, true or"},
		{json: `{"midRun": 3}`, err: "earlyStop.midRun takes false, true or"},
		{json: `{"midRun": {"for": "0s"}}`, err: "earlyStop.midRun.for must be positive"},
		{json: `{"midRun": {"for": "soon"}}`, err: `earlyStop.midRun.for: invalid duration "soon"`},
		{json: `{"midRun": {"requests": 0}}`, err: "earlyStop.midRun.requests must be at least 1"},
		{json: `{"midRun": {"classes": ["boom"]}}`, err: `earlyStop.midRun.classes: unknown error class "boom"`},
		{json: `{"midRun": {"window": 3}}`, err: "window: unknown field"},
		{json: `{"backoff": "soon"}`, err: `earlyStop.backoff takes false or the longest pause, like '1s': invalid duration "soon"`},
		{json: `{"backoff": "-1s"}`, err: "earlyStop.backoff must not be negative"},
	}
	for _, tc := range tests {
		var got EarlyStop
		err := json.Unmarshal([]byte(tc.json), &got)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.json, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.json, err)
		case !sameEarlyStop(got, tc.want):
			t.Errorf("%s: %+v, want %+v", tc.json, got, tc.want)
		default:
			// Options are written back (the result file's meta.options):
			// what is written reads back the same.
			b, err := json.Marshal(got)
			var again EarlyStop
			if err == nil {
				err = json.Unmarshal(b, &again)
			}
			if err != nil || !sameEarlyStop(again, got) {
				t.Errorf("%s: written as %s, read back as %+v (%v)", tc.json, b, again, err)
			}
		}
	}
	if _, err := ParseOptions([]byte(`{"earlyStop": {"requests": -1}}`)); err == nil || !strings.Contains(err.Error(), "earlyStop.requests") {
		t.Errorf("options error %v, want it to name earlyStop.requests", err)
	}
}

// The warning's floor is the option's, and none when the early stop is
// off.
func TestSuccessFloor(t *testing.T) {
	for _, tc := range []struct {
		json string
		want float64
	}{{`true`, 0.9}, {`{"minSuccessRate": 0.5}`, 0.5}, {`false`, 0}} {
		var s EarlyStop
		if err := json.Unmarshal([]byte(tc.json), &s); err != nil || s.SuccessFloor() != tc.want {
			t.Errorf("%s: floor %g (%v), want %g", tc.json, s.SuccessFloor(), err, tc.want)
		}
	}
}

func sameEarlyStop(a, b EarlyStop) bool {
	return a.Off == b.Off && a.Requests == b.Requests && slices.Equal(a.Classes, b.Classes) && a.Backoff == b.Backoff && a.MinSuccessRate == b.MinSuccessRate &&
		a.MidRun.Off == b.MidRun.Off && (a.MidRun.Off || a.MidRun.For == b.MidRun.For && a.MidRun.Requests == b.MidRun.Requests &&
		slices.Equal(a.MidRun.Classes, b.MidRun.Classes))
}

// The stopper stops only when the first N requests all fail with one class
// of its list; anything else among them decides for the run going on.
func TestEarlyStopper(t *testing.T) {
	type outcome struct {
		ok    bool
		class string
	}
	fail := func(class string) outcome { return outcome{class: class} }
	ok := outcome{ok: true}
	tests := []struct {
		name     string
		outcomes []outcome
		stopped  bool
	}{
		{"all refused", []outcome{fail("connect"), fail("connect"), fail("connect")}, true},
		{"more after the verdict change nothing", []outcome{fail("connect"), fail("connect"), fail("connect"), ok}, true},
		{"a success first", []outcome{ok, fail("connect"), fail("connect"), fail("connect")}, false},
		{"a success among them", []outcome{fail("http_4xx"), ok, fail("http_4xx"), fail("http_4xx")}, false},
		{"two classes", []outcome{fail("dns"), fail("connect"), fail("connect"), fail("connect")}, false},
		{"a class load explains", []outcome{fail("http_5xx"), fail("http_5xx"), fail("http_5xx")}, false},
		{"too few", []outcome{fail("tls"), fail("tls")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultEarlyStop()
			cfg.Requests = 3
			stops := 0
			w := newEarlyStopper(cfg, time.Now(), func() { stops++ })
			for _, o := range tc.outcomes {
				w.observe(o.ok, o.class, "msg "+o.class)
			}
			got := w.result()
			if (got != nil) != tc.stopped || stops != map[bool]int{true: 1, false: 0}[tc.stopped] {
				t.Fatalf("stopped %+v after %d stop calls, want stopped %t", got, stops, tc.stopped)
			}
			if got != nil && (got.Requests != 3 || got.Class != tc.outcomes[0].class || got.Message != "msg "+got.Class) {
				t.Errorf("stopped %+v", got)
			}
		})
	}
	w := newEarlyStopper(EarlyStop{Off: true, Requests: 1, Classes: []string{"connect"}}, time.Now(), func() { t.Error("stopped while off") })
	w.observe(false, "connect", "refused")
	if w.result() != nil {
		t.Error("an early stop that is off stopped the run")
	}
}

// A run against a port nothing listens on stops after its first requests,
// saying why; with earlyStop: false it runs its course.
func TestEarlyStopStopsARunAgainstADeadTarget(t *testing.T) {
	dead := refused.URL(t) + "/v1"
	for _, tc := range []struct {
		option  string
		stopped bool
	}{
		{"", true},
		{"earlyStop: false,", false},
	} {
		cfg := testConfig(t, `import llm from 'llm';
export const options = { `+tc.option+` scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 40 } } };
export default function () { llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }); }`, nil, nil)
		cfg.LLM.BaseURL = dead
		e, err := Load(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		failed := rep.Snapshot.Stats("llm_failed", nil)
		switch {
		case tc.stopped && (rep.EarlyStopped == nil || rep.EarlyStopped.Class != "connect" || !rep.Interrupted):
			t.Errorf("%q: early stop %+v, interrupted %t", tc.option, rep.EarlyStopped, rep.Interrupted)
		case tc.stopped && failed.Count >= 40:
			t.Errorf("%q: %d requests failed: the run was not stopped", tc.option, failed.Count)
		case !tc.stopped && (rep.EarlyStopped != nil || failed.Count != 40):
			t.Errorf("%q: early stop %+v after %d requests, want none after 40", tc.option, rep.EarlyStopped, failed.Count)
		}
	}
}

// The mid-run rule stops a run once no request was answered for its
// duration and at least its count of requests failed in a row with one of
// its classes; a shorter blip, an answer in between, or the failures of a
// server under load (by default) do not stop it.
func TestEarlyStopMidRun(t *testing.T) {
	// step is one request: after the wait, ok or failed with class.
	type step struct {
		wait  time.Duration
		ok    bool
		class string
		n     int // repeated n times (1 when 0)
	}
	ok := func(n int) step { return step{wait: 100 * time.Millisecond, ok: true, n: n} }
	fail := func(class string, every time.Duration, n int) step { return step{wait: every, class: class, n: n} }
	tests := []struct {
		name   string
		option string
		steps  []step
		// stopped: after how many steps' requests (0: never), and since
		// and at when into the run.
		stopped   int
		since, at time.Duration
	}{
		{name: "the server dies", steps: []step{ok(20), fail("connect", 500*time.Millisecond, 30)},
			// 2 s of answers, then a refusal every 0.5 s: the 11th, 5 s
			// after the first, stops the run.
			stopped: 31, since: 2500 * time.Millisecond, at: 7500 * time.Millisecond},
		{name: "dns and tls count alike", steps: []step{ok(1), fail("dns", time.Second, 3), fail("tls", time.Second, 3), fail("connect", time.Second, 10)},
			stopped: 11, since: 1100 * time.Millisecond, at: 10100 * time.Millisecond},
		{name: "many failures, not for long enough", steps: []step{ok(1), fail("connect", 10*time.Millisecond, 400), ok(1)}},
		{name: "long enough, too few failures", steps: []step{ok(1), fail("connect", 2*time.Second, 9), ok(1)}},
		{name: "a blip, twice", steps: []step{ok(5), fail("connect", 400*time.Millisecond, 12), ok(1), fail("connect", 400*time.Millisecond, 12), ok(5)}},
		{name: "an overloaded server's failures", steps: []step{ok(1), fail("http_5xx", time.Second, 20), fail("timeout", time.Second, 20), fail("http_429", time.Second, 20)}},
		{name: "an overloaded server's failures, when the options list them", option: `{"midRun": {"classes": ["http_5xx", "timeout"], "requests": 4}}`,
			steps: []step{ok(1), fail("http_5xx", time.Second, 3), fail("timeout", time.Second, 10)}, stopped: 7, since: 1100 * time.Millisecond, at: 6100 * time.Millisecond},
		{name: "midRun false", option: `{"midRun": false}`, steps: []step{ok(1), fail("connect", time.Second, 30)}},
		{name: "earlyStop false", option: `false`, steps: []step{ok(1), fail("connect", time.Second, 30)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := DefaultEarlyStop()
				if tc.option != "" {
					if err := json.Unmarshal([]byte(tc.option), &cfg); err != nil {
						t.Fatal(err)
					}
				}
				stopAt := 0
				requests := 0
				w := newEarlyStopper(cfg, time.Now(), func() { stopAt = requests })
				for _, s := range tc.steps {
					for range max(s.n, 1) {
						time.Sleep(s.wait)
						requests++
						w.observe(s.ok, s.class, "message of "+s.class)
					}
				}
				got := w.result()
				switch {
				case tc.stopped == 0 && got != nil:
					t.Fatalf("stopped after %d requests: %s", stopAt, got)
				case tc.stopped == 0:
				case got == nil || stopAt != tc.stopped || !got.MidRun || got.Since != tc.since || got.At != tc.at:
					t.Fatalf("stopped after %d requests: %+v; want after %d, since %v, at %v", stopAt, got, tc.stopped, tc.since, tc.at)
				case !strings.Contains(got.String(), "from "+seconds(tc.since)+" into the run") ||
					!strings.Contains(got.String(), "stopped at "+seconds(tc.at)) || !strings.Contains(got.String(), "message of "+got.Class):
					t.Errorf("the reason does not say since and when, or the first failure: %s", got)
				}
			})
		})
	}
}

// A VU pauses 10 ms after its first iteration whose requests all failed
// before reaching the target, twice as long after each next, up to the
// cap; an answer (ok or not) ends the backoff, an iteration without a
// request leaves it as it was.
func TestVUBackoff(t *testing.T) {
	var b vuBackoff
	iteration := func(outcomes ...string) time.Duration {
		for _, o := range outcomes {
			b.observe(o == "ok", o)
		}
		b.endIteration()
		return b.pause(time.Second)
	}
	var got []time.Duration
	for range 9 {
		got = append(got, iteration("connect"))
	}
	ms := func(n ...int) []time.Duration {
		var d []time.Duration
		for _, v := range n {
			d = append(d, time.Duration(v)*time.Millisecond)
		}
		return d
	}
	if want := ms(10, 20, 40, 80, 160, 320, 640, 1000, 1000); !slices.Equal(got, want) {
		t.Errorf("pauses %v, want %v", got, want)
	}
	steps := []struct {
		outcomes []string
		want     time.Duration
	}{
		{nil, time.Second},
		{[]string{"connect", "http_5xx"}, 0},
		{[]string{"dns"}, 10 * time.Millisecond},
		{[]string{"tls", "connect"}, 20 * time.Millisecond},
		{[]string{"connect", "ok"}, 0},
		{[]string{"timeout"}, 0},
	}
	for i, s := range steps {
		if got := iteration(s.outcomes...); got != s.want {
			t.Errorf("step %d %v: pause %v, want %v", i, s.outcomes, got, s.want)
		}
	}
	b.observe(false, "connect")
	b.endIteration()
	if d := b.pause(0); d != 0 {
		t.Errorf("a backoff turned off pauses %v", d)
	}
	if d := b.pause(5 * time.Millisecond); d != 5*time.Millisecond {
		t.Errorf("a cap below the first pause pauses %v, want the cap", d)
	}
}
