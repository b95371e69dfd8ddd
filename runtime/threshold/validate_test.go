package threshold

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// TestValidateTypeTable checks every aggregation against every metric type,
// against k6's table.
func TestValidateTypeTable(t *testing.T) {
	f := newFixture(t)
	metricOf := map[metrics.Type]string{
		metrics.Counter: "reqs", metrics.Gauge: "inflight", metrics.Rate: "failed", metrics.Trend: "lat",
	}
	allowed := map[metrics.Type]string{
		metrics.Counter: "count rate",
		metrics.Gauge:   "value",
		metrics.Rate:    "rate",
		metrics.Trend:   "avg min max med p(95)",
	}
	wantList := map[metrics.Type]string{
		metrics.Counter: "count or rate",
		metrics.Gauge:   "value",
		metrics.Rate:    "rate",
		metrics.Trend:   "avg, min, max, med or p(N)",
	}
	for typ, name := range metricOf {
		for _, agg := range []string{"avg", "min", "max", "med", "count", "rate", "value", "p(95)"} {
			set, err := Parse([]byte(`{"` + name + `": ["` + agg + `<1"]}`))
			if err != nil {
				t.Fatal(err)
			}
			err = set.Validate(f.reg)
			ok := strings.Contains(" "+allowed[typ]+" ", " "+agg+" ")
			if ok && err != nil {
				t.Errorf("%s on a %s: %v", agg, typ, err)
			}
			if !ok {
				want := `thresholds["` + name + `"][0]: aggregation "` + agg + `" does not apply to ` + typ.String() +
					` metric "` + name + `": want ` + wantList[typ]
				if err == nil || err.Error() != want {
					t.Errorf("%s on a %s:\n got %v\nwant %s", agg, typ, err, want)
				}
			}
		}
	}
	for typ, want := range allowed {
		var got []string
		for _, m := range MethodsFor(typ) {
			got = append(got, (Expression{Method: m, P: 95}).Aggregation())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("MethodsFor(%s) = %v, want %s", typ, got, want)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	f := newFixture(t)
	tests := []struct{ js, err string }{
		{`{"llm_ttf": ["p(95)<1"]}`, `thresholds["llm_ttf"]: unknown metric "llm_ttf" (did you mean "llm_ttft"?)`},
		{`{"llm_ttft_ms{scenario:chat}": ["p(95)<1"]}`, `thresholds["llm_ttft_ms{scenario:chat}"]: unknown metric "llm_ttft_ms" (did you mean "llm_ttft"?)`},
		{`{"http_req_duration": ["p(95)<1"]}`, `thresholds["http_req_duration"]: unknown metric "http_req_duration"`},
		// once per key, whatever the number of entries
		{`{"nope": ["avg<1", "max<2"]}`, `thresholds["nope"]: unknown metric "nope"`},
		{`{"reqs{scenario:chat}": ["count<1", "p(99)<1"]}`, `thresholds["reqs{scenario:chat}"][1]: aggregation "p(99)" does not apply to counter metric "reqs": want count or rate`},
		{`{"lat": ["count>0"]}`, `thresholds["lat"][0]: aggregation "count" does not apply to trend metric "lat": want avg, min, max, med or p(N)`},
		{`{"failed": ["value<1"]}`, `thresholds["failed"][0]: aggregation "value" does not apply to rate metric "failed": want rate`},
		{`{"inflight": ["max<1"]}`, `thresholds["inflight"][0]: aggregation "max" does not apply to gauge metric "inflight": want value`},
		// every problem, in the options' order
		{`{"lat": ["avg<1", "rate<1"], "nope": ["avg<1"], "reqs": ["med<1"], "llm_ttft": ["p(99.9)<1"]}`,
			`thresholds["lat"][1]: aggregation "rate" does not apply to trend metric "lat": want avg, min, max, med or p(N)` + "\n" +
				`thresholds["nope"]: unknown metric "nope"` + "\n" +
				`thresholds["reqs"][0]: aggregation "med" does not apply to counter metric "reqs": want count or rate`},
	}
	for _, tt := range tests {
		set, err := Parse([]byte(tt.js))
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.js, err)
		}
		err = set.Validate(f.reg)
		if err == nil {
			t.Errorf("Validate(%s): no error, want %q", tt.js, tt.err)
			continue
		}
		if err.Error() != tt.err {
			t.Errorf("Validate(%s):\n got %s\nwant %s", tt.js, err, tt.err)
		}
		var te *Error
		if !errors.As(err, &te) {
			t.Errorf("Validate(%s): %T holds no *Error", tt.js, err)
		}
	}
}

// TestValidateCustomMetricsAfterInit is the engine's order: thresholds are
// parsed with the options, custom metrics are registered by the init
// context, then Validate runs.
func TestValidateCustomMetricsAfterInit(t *testing.T) {
	reg := metrics.NewRegistry()
	set, err := Parse([]byte(`{"my_tokens": ["count>0"], "my_latency{scenario:chat}": ["p(90)<100"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(reg); err == nil {
		t.Fatal("Validate before the metrics exist: no error")
	}
	reg.MustRegister(metrics.Metric{Name: "my_tokens", Type: metrics.Counter})
	reg.MustRegister(metrics.Metric{Name: "my_latency", Type: metrics.Trend, Contains: metrics.Time})
	if err := set.Validate(reg); err != nil {
		t.Fatalf("Validate after init: %v", err)
	}
	// Bound to the counter's definition, a counter without samples is
	// evaluated as 0.
	r := set.Evaluate(metrics.NewAggregator(1).Snapshot(), time.Second)[0]
	if !r.Evaluated || r.Passed || r.Value != 0 {
		t.Errorf("%s", r)
	}
	if err := set.Validate(nil); err == nil || !strings.Contains(err.Error(), `unknown metric "my_tokens"`) {
		t.Errorf("Validate(nil) = %v", err)
	}
}
