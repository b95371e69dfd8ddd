package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/refused"
)

func TestEarlyStopOptions(t *testing.T) {
	def := DefaultEarlyStop()
	tests := []struct {
		json string
		want EarlyStop
		err  string
	}{
		{json: `false`, want: EarlyStop{Off: true, Requests: def.Requests, Classes: def.Classes}},
		{json: `true`, want: def},
		{json: `{"requests": 3}`, want: EarlyStop{Requests: 3, Classes: def.Classes}},
		{json: `{"classes": ["http_5xx"]}`, want: EarlyStop{Requests: def.Requests, Classes: []string{"http_5xx"}}},
		{json: `{"requests": 0}`, err: "earlyStop.requests must be at least 1"},
		{json: `{"classes": ["boom"]}`, err: `earlyStop.classes: unknown error class "boom"`},
		{json: `{"classes": ["canceled"]}`, err: `unknown error class "canceled"`},
		{json: `{"after": 3}`, err: "after: unknown field"},
		{json: `5`, err: "earlyStop takes false, true or"},
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
		case got.Off != tc.want.Off || got.Requests != tc.want.Requests || !slices.Equal(got.Classes, tc.want.Classes):
			t.Errorf("%s: %+v, want %+v", tc.json, got, tc.want)
		}
	}
	if _, err := ParseOptions([]byte(`{"earlyStop": {"requests": -1}}`)); err == nil || !strings.Contains(err.Error(), "earlyStop.requests") {
		t.Errorf("options error %v, want it to name earlyStop.requests", err)
	}
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
			w := newEarlyStopper(cfg, func() { stops++ })
			for _, o := range tc.outcomes {
				w.ObserveRequest(o.ok, o.class, "msg "+o.class)
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
	w := newEarlyStopper(EarlyStop{Off: true, Requests: 1, Classes: []string{"connect"}}, func() { t.Error("stopped while off") })
	w.ObserveRequest(false, "connect", "refused")
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
