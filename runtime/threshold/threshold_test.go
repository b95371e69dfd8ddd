package threshold

import (
	"errors"
	"testing"
	"time"
)

func TestParseForms(t *testing.T) {
	set, err := Parse([]byte(`{
		"llm_ttft{scenario:chat}": [
			"p(95)<500",
			{ "threshold": "rate<0.01", "abortOnFail": true, "delayAbortEval": "10s" },
			{ "threshold": "avg < 300" }
		],
		"reqs": "count>=10",
		"failed": { "threshold": "rate<0.1", "abortOnFail": false, "delayAbortEval": 1500 },
		"lat": [],
		"inflight": ["value<5", {"threshold": "value>0", "delayAbortEval": null}],
		"gone": [{"threshold": "p(99)<1", "noSamples": "pass"}, {"threshold": "count<1", "noSamples": "fail"}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		key, metric, tags string
		index             int
		source, expr      string
		abort             bool
		delay             time.Duration
		noSamples         string
	}
	want := []row{
		{"llm_ttft{scenario:chat}", "llm_ttft", "scenario:chat", 0, "p(95)<500", "p(95)<500", false, 0, ""},
		{"llm_ttft{scenario:chat}", "llm_ttft", "scenario:chat", 1, "rate<0.01", "rate<0.01", true, 10 * time.Second, ""},
		{"llm_ttft{scenario:chat}", "llm_ttft", "scenario:chat", 2, "avg < 300", "avg<300", false, 0, ""},
		{"reqs", "reqs", "", 0, "count>=10", "count>=10", false, 0, ""},
		{"failed", "failed", "", 0, "rate<0.1", "rate<0.1", false, 1500 * time.Millisecond, ""},
		{"inflight", "inflight", "", 0, "value<5", "value<5", false, 0, ""},
		{"inflight", "inflight", "", 1, "value>0", "value>0", false, 0, ""},
		{"gone", "gone", "", 0, "p(99)<1", "p(99)<1", false, 0, NoSamplesPass},
		{"gone", "gone", "", 1, "count<1", "count<1", false, 0, NoSamplesFail},
	}
	got := set.Thresholds()
	if len(got) != len(want) || set.Len() != len(want) {
		t.Fatalf("%d thresholds, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		r := row{g.Key, g.Metric, g.Tags.Key(), g.Index, g.Source, g.Expr.String(), g.AbortOnFail, g.DelayAbortEval, g.NoSamples}
		if r != w {
			t.Errorf("threshold %d = %+v\nwant %+v", i, r, w)
		}
	}
	if !set.HasAbortOnFail() {
		t.Error("HasAbortOnFail = false")
	}
}

func TestDelayAbortEvalForms(t *testing.T) {
	for js, want := range map[string]time.Duration{
		`"10s"`:   10 * time.Second,
		`"1m30s"`: 90 * time.Second,
		`"250ms"`: 250 * time.Millisecond,
		`"1500"`:  1500 * time.Millisecond,
		`1500`:    1500 * time.Millisecond,
		`0.5`:     500 * time.Microsecond,
		`"0"`:     0,
		`null`:    0,
	} {
		set, err := Parse([]byte(`{"lat": [{"threshold": "avg<1", "abortOnFail": true, "delayAbortEval": ` + js + `}]}`))
		if err != nil {
			t.Errorf("delayAbortEval %s: %v", js, err)
			continue
		}
		if got := set.Thresholds()[0].DelayAbortEval; got != want {
			t.Errorf("delayAbortEval %s = %v, want %v", js, got, want)
		}
	}
}

func TestParseEmpty(t *testing.T) {
	for _, js := range []string{"", "  ", "null", "{}", `{"lat": []}`} {
		set, err := Parse([]byte(js))
		if err != nil {
			t.Errorf("Parse(%q): %v", js, err)
			continue
		}
		if set.Len() != 0 || set.HasAbortOnFail() || len(set.Evaluate(nil, time.Second)) != 0 {
			t.Errorf("Parse(%q) is not empty", js)
		}
	}
	var nilSet *Set
	if nilSet.Len() != 0 || nilSet.Thresholds() != nil || len(nilSet.Evaluate(nil, 0)) != 0 || nilSet.Validate(nil) != nil {
		t.Error("a nil Set must behave as an empty one")
	}
}

func TestParseErrors(t *testing.T) {
	const wantAgg = "want avg, min, max, med, count, rate, value or p(N)"
	tests := []struct{ js, err string }{
		// the whole option
		{`[]`, `thresholds: must be an object of metric names to thresholds, got an array`},
		{`"p(95)<5"`, `thresholds: must be an object of metric names to thresholds, got a string`},
		{`42`, `thresholds: must be an object of metric names to thresholds, got a number`},
		{`{"lat": ["avg<1"]`, `thresholds: invalid JSON: unexpected EOF`},
		{`{"lat": ["avg<1"]} x`, `thresholds: invalid JSON: text after the object`},
		// a key
		{`{"lat": 5}`, `thresholds["lat"]: must be a threshold or an array of thresholds, got a number`},
		{`{"lat": true}`, `thresholds["lat"]: must be a threshold or an array of thresholds, got a boolean`},
		{`{"lat": null}`, `thresholds["lat"]: must be a threshold or an array of thresholds, got null`},
		{`{"lat": ["avg<1"], "lat": ["avg<2"]}`, `thresholds["lat"]: listed twice`},
		{`{"": ["avg<1"]}`, `thresholds[""]: missing metric name: want name or name{tag:value}`},
		{`{"llm-ttft": ["avg<1"]}`, `thresholds["llm-ttft"]: invalid metric name "llm-ttft": use letters, digits, '_' and '.', starting with a letter or '_', at most 128 characters`},
		{`{"llm_ttft{scenario}": ["avg<1"]}`, `thresholds["llm_ttft{scenario}"]: tag "scenario" has no value: want {scenario:value}`},
		{`{"llm_ttft{scenario:chat": ["avg<1"]}`, `thresholds["llm_ttft{scenario:chat"]: the tag selector of "llm_ttft{scenario:chat" does not end with '}': want name{tag:value}`},
		// an entry: the exact example of the issue
		{`{"llm_ttft{scenario:chat}": ["p(95)<500", "p95<500"]}`, `thresholds["llm_ttft{scenario:chat}"][1]: unknown aggregation "p95", ` + wantAgg},
		{`{"lat": "p95<500"}`, `thresholds["lat"][0]: unknown aggregation "p95", ` + wantAgg},
		{`{"lat": [""]}`, `thresholds["lat"][0]: empty threshold expression`},
		{`{"lat": [500]}`, `thresholds["lat"][0]: must be an expression string or an object, got a number`},
		{`{"lat": [null]}`, `thresholds["lat"][0]: must be an expression string or an object, got null`},
		{`{"lat": [["avg<1"]]}`, `thresholds["lat"][0]: must be an expression string or an object, got an array`},
		{`{"lat": ["avg<1", "avg<"]}`, `thresholds["lat"][1]: missing number after "<" in "avg<": want a number, like 500 or 0.01`},
		{`{"lat": ["p(101)<1"]}`, `thresholds["lat"][0]: invalid percentile "p(101)": want p(N) with N a number from 0 to 100, like p(95) or p(99.9)`},
		// the object form
		{`{"lat": [{}]}`, `thresholds["lat"][0]: missing "threshold": want {threshold: "p(95)<500", abortOnFail: true}`},
		{`{"lat": [{"abortOnFail": true}]}`, `thresholds["lat"][0]: missing "threshold": want {threshold: "p(95)<500", abortOnFail: true}`},
		{`{"lat": [{"threshold": 5}]}`, `thresholds["lat"][0]: "threshold" must be a string, got a number`},
		{`{"lat": [{"threshold": "avg<1", "abortOnfail": true}]}`, `thresholds["lat"][0]: unknown field "abortOnfail": want threshold, abortOnFail, delayAbortEval or noSamples`},
		{`{"lat": [{"threshold": "avg<1", "z": 1, "a": 2}]}`, `thresholds["lat"][0]: unknown field "a": want threshold, abortOnFail, delayAbortEval or noSamples`},
		{`{"lat": [{"threshold": "avg<1", "noSamples": "ok"}]}`, `thresholds["lat"][0]: "noSamples" must be "pass" or "fail", got "ok"`},
		{`{"lat": [{"threshold": "avg<1", "noSamples": true}]}`, `thresholds["lat"][0]: "noSamples" must be "pass" or "fail", got true`},
		{`{"lat": [{"threshold": "avg<1", "noSamples": null}]}`, `thresholds["lat"][0]: "noSamples" must be "pass" or "fail", got null`},
		{`{"lat": [{"threshold": "avg<1", "abortOnFail": "yes"}]}`, `thresholds["lat"][0]: "abortOnFail" must be true or false, got a string`},
		{`{"lat": [{"threshold": "avg<1", "abortOnFail": null}]}`, `thresholds["lat"][0]: "abortOnFail" must be true or false, got null`},
		{`{"lat": [{"threshold": "avg<1", "abortOnFail": 1}]}`, `thresholds["lat"][0]: "abortOnFail" must be true or false, got a number`},
		{`{"lat": [{"threshold": "avg<1", "delayAbortEval": "10 s"}]}`, `thresholds["lat"][0]: "delayAbortEval": invalid duration "10 s": use a number with a unit, like "30s", "2m" or "1h30m"`},
		{`{"lat": [{"threshold": "avg<1", "delayAbortEval": true}]}`, `thresholds["lat"][0]: "delayAbortEval": invalid duration true: use a string like "30s" or a number of milliseconds`},
		{`{"lat": [{"threshold": "avg<1", "delayAbortEval": "-5s"}]}`, `thresholds["lat"][0]: "delayAbortEval" must not be negative, got -5s`},
		{`{"lat": [{"threshold": "avg<1", "delayAbortEval": "NaN"}]}`, `thresholds["lat"][0]: "delayAbortEval": invalid duration "NaN": use a number with a unit, like "30s", "2m" or "1h30m"`},
		{`{"lat": [{"threshold": "avg<1", "delayAbortEval": 1e300}]}`, `thresholds["lat"][0]: "delayAbortEval": invalid duration 1e+300 ms: too long`},
		{`{"lat": [{"threshold": "avg<1", "delayAbortEval": 1e999}]}`, `thresholds["lat"][0]: "delayAbortEval": invalid duration 1e999: json: cannot unmarshal number 1e999 into Go value of type float64`},
		{`{"lat": [{"threshold": "avg<1", "delayAbortEval": -1}]}`, `thresholds["lat"][0]: "delayAbortEval" must not be negative, got -1ms`},
		{`{"lat": [{"threshold": "avg<>1", "abortOnFail": true}]}`, `thresholds["lat"][0]: unknown operator "<>" in "avg<>1": want <, <=, >, >=, ==, === or !=`},
	}
	for _, tt := range tests {
		set, err := Parse([]byte(tt.js))
		if err == nil {
			t.Errorf("Parse(%s): no error (%d thresholds), want %q", tt.js, set.Len(), tt.err)
			continue
		}
		if err.Error() != tt.err {
			t.Errorf("Parse(%s):\n got %s\nwant %s", tt.js, err, tt.err)
		}
		var te *Error
		if !errors.As(err, &te) {
			t.Errorf("Parse(%s): error %T is not an *Error", tt.js, err)
		}
	}
}

func TestErrorField(t *testing.T) {
	_, err := Parse([]byte(`{"llm_ttft{scenario:chat}": ["p(95)<500", "p95<500"]}`))
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("%T is not an *Error", err)
	}
	if te.Key != "llm_ttft{scenario:chat}" || te.Index != 1 || te.Whole {
		t.Errorf("Error = %+v", te)
	}
	if got := te.Field(); got != `thresholds["llm_ttft{scenario:chat}"][1]` {
		t.Errorf("Field() = %s", got)
	}
	if got := te.Err.Error(); got != `unknown aggregation "p95", want avg, min, max, med, count, rate, value or p(N)` {
		t.Errorf("Err = %s", got)
	}
	// A key with a quote is quoted as Go and JSON would.
	e := &Error{Key: `a"b`, Index: -1, Err: errors.New("x")}
	if e.Error() != `thresholds["a\"b"]: x` {
		t.Errorf("Error() = %s", e.Error())
	}
}
