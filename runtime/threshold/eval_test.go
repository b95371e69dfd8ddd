package threshold

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"
)

// TestEveryAggregationAndOperator checks each aggregation's observed value
// on real samples, then every operator with the bound below, at and above it.
func TestEveryAggregationAndOperator(t *testing.T) {
	f := newFixture(t)
	// lat: 0.01 … 2.00 ms, 200 samples in four batches. Below 2.048 ms the
	// HDR histogram is exact, so the percentiles are exact too.
	for b := range 4 {
		var vs []float64
		for i := b*50 + 1; i <= (b+1)*50; i++ {
			vs = append(vs, float64(i)/100)
		}
		f.add("lat", map[string]string{"batch": fmt.Sprint(b)}, vs...)
	}
	f.add("reqs", nil, 1, 2)
	f.add("reqs", map[string]string{"scenario": "chat"}, 3, 4) // count 10
	f.add("inflight", nil, 5, 9)
	f.add("inflight", nil, 3) // the last value
	f.add("failed", nil, 1, 0, 1, 1)
	const elapsed = 4 * time.Second

	aggs := []struct {
		key, agg string
		want     float64
		tol      float64
	}{
		{"lat", "avg", 1.005, 1e-9},
		{"lat", "min", 0.01, 0},
		{"lat", "max", 2, 0},
		{"lat", "med", 1, 0},
		{"lat", "p(95)", 1.9, 0},
		{"lat", "p(99.9)", 2, 0},
		{"lat", "p(12.5)", 0.25, 0},
		{"lat", "p(0)", 0.01, 0},
		{"lat", "p(100)", 2, 0},
		{"reqs", "count", 10, 0},
		{"reqs", "rate", 2.5, 0}, // 10 per 4 s
		{"inflight", "value", 3, 0},
		{"failed", "rate", 0.75, 0},
	}
	// Observed values first, with a bound that always holds.
	thresholds := map[string][]string{}
	var order []string
	for _, a := range aggs {
		if thresholds[a.key] == nil {
			order = append(order, a.key)
		}
		thresholds[a.key] = append(thresholds[a.key], a.agg+">-1e300")
	}
	snap := f.agg.Snapshot()
	results := f.mustParse(t, orderedJSON(order, thresholds)).Evaluate(snap, elapsed)
	observed := make([]float64, len(aggs))
	for i, a := range aggs {
		r := results[i]
		if r.Key != a.key || r.Source != a.agg+">-1e300" || !r.Evaluated || !r.Passed || r.NoSamples {
			t.Fatalf("result %d = %+v", i, r)
		}
		if math.Abs(r.Value-a.want) > a.tol {
			t.Errorf("%s %s = %v, want %v", a.key, a.agg, r.Value, a.want)
		}
		observed[i] = r.Value
	}

	// Every operator against bounds below, at and above the observed value.
	truth := map[Operator][3]bool{ // observed < bound, ==, >
		OpLess:         {true, false, false},
		OpLessEqual:    {true, true, false},
		OpGreater:      {false, false, true},
		OpGreaterEqual: {false, true, true},
		OpEqual:        {false, true, false},
		OpStrictEqual:  {false, true, false},
		OpNotEqual:     {true, false, true},
	}
	ops := []Operator{OpLess, OpLessEqual, OpGreater, OpGreaterEqual, OpEqual, OpStrictEqual, OpNotEqual}
	type check struct {
		key, src string
		want     bool
	}
	var checks []check
	thresholds = map[string][]string{}
	for i, a := range aggs {
		for _, op := range ops {
			for rel, bound := range []float64{observed[i] + 1, observed[i], observed[i] - 1} {
				src := fmt.Sprintf("%s %s %s", a.agg, op, formatNumber(bound))
				thresholds[a.key] = append(thresholds[a.key], src)
				checks = append(checks, check{a.key, src, truth[op][rel]})
			}
		}
	}
	// Results are grouped by key in the options' order.
	var want []check
	for _, k := range order {
		for _, c := range checks {
			if c.key == k {
				want = append(want, c)
			}
		}
	}
	results = f.mustParse(t, orderedJSON(order, thresholds)).Evaluate(snap, elapsed)
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for i, r := range results {
		w := want[i]
		if r.Key != w.key || r.Source != w.src {
			t.Fatalf("result %d is %s %s, want %s %s", i, r.Key, r.Source, w.key, w.src)
		}
		if !r.Evaluated || r.Passed != w.want {
			t.Errorf("%s %s: passed %v (evaluated %v, observed %v), want %v", r.Key, r.Source, r.Passed, r.Evaluated, r.Value, w.want)
		}
	}
	if !AnyFailed(results) {
		t.Error("AnyFailed = false with failing thresholds")
	}
}

// orderedJSON writes a thresholds object with keys in the given order.
func orderedJSON(order []string, m map[string][]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(m[k])
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
	}
	b.WriteByte('}')
	return b.String()
}

func TestSubMetricsAcrossScenarios(t *testing.T) {
	f := newFixture(t)
	chat := map[string]string{"scenario": "chat", "group": "::chat"}
	rag := map[string]string{"scenario": "rag", "group": "::rag"}
	f.add("lat", chat, 10, 20)
	f.add("lat", rag, 100)
	f.add("lat", chat, 30)
	f.add("lat", rag, 200)
	f.add("reqs", chat, 1, 1, 1)
	f.add("reqs", rag, 1)
	f.add("failed", chat, 0, 0, 0, 1)
	f.add("failed", rag, 1, 1)

	set := f.mustParse(t, `{
		"lat": ["min==10", "max==200", "avg==72"],
		"lat{scenario:chat}": ["min==10", "max==30", "avg==20", "max<50"],
		"lat{scenario:rag}": ["min==100", "avg==150", "max<50"],
		"lat{group:::chat}": ["max==30"],
		"lat{ scenario : chat , group : ::chat }": ["avg==20"],
		"lat{scenario:chat,group:::rag}": ["max<1"],
		"lat{scenario:code}": ["avg<1"],
		"reqs{scenario:chat}": ["count==3"],
		"reqs{scenario:rag}": ["count==1"],
		"reqs": ["count==4"],
		"failed{scenario:chat}": ["rate==0.25"],
		"failed{scenario:rag}": ["rate==1"],
		"failed": ["rate==0.5"]
	}`)
	results := set.Evaluate(f.agg.Snapshot(), 10*time.Second)
	for _, r := range results {
		wantPass := r.Source != "max<50" || r.Key != "lat{scenario:rag}"
		noSamples := r.Key == "lat{scenario:chat,group:::rag}" || r.Key == "lat{scenario:code}"
		if r.Passed != wantPass {
			t.Errorf("%s", r)
		}
		if r.NoSamples != noSamples || r.Evaluated == noSamples {
			t.Errorf("%s: NoSamples %v, Evaluated %v", r, r.NoSamples, r.Evaluated)
		}
		if noSamples && r.Note != "no samples yet" {
			t.Errorf("%s: Note %q", r, r.Note)
		}
	}
	if !AnyFailed(results) {
		t.Error("AnyFailed = false, want true for lat{scenario:rag} max<50")
	}
}

func TestAbortOnFail(t *testing.T) {
	f := newFixture(t)
	f.add("lat", nil, 100, 200, 300)
	tests := []struct {
		name      string
		threshold string
		elapsed   time.Duration
		passed    bool
		abort     bool
	}{
		{"failing, before the delay", `{"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": "10s"}`, 5 * time.Second, false, false},
		{"failing, at the delay", `{"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": "10s"}`, 10 * time.Second, false, true},
		{"failing, after the delay", `{"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": "10s"}`, time.Minute, false, true},
		{"failing, no delay", `{"threshold": "avg<100", "abortOnFail": true}`, time.Millisecond, false, true},
		{"failing, delay in milliseconds", `{"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": 2500}`, 2400 * time.Millisecond, false, false},
		{"failing, delay in milliseconds, reached", `{"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": 2500}`, 2500 * time.Millisecond, false, true},
		{"passing", `{"threshold": "avg>100", "abortOnFail": true, "delayAbortEval": "10s"}`, time.Minute, true, false},
		{"failing without abortOnFail", `{"threshold": "avg<100", "delayAbortEval": "10s"}`, time.Minute, false, false},
		{"failing string form", `"avg<100"`, time.Minute, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := f.mustParse(t, `{"lat": [`+tt.threshold+`]}`)
			results := set.Evaluate(f.agg.Snapshot(), tt.elapsed)
			r := results[0]
			if r.Value != 200 || r.Passed != tt.passed || r.Abort != tt.abort {
				t.Errorf("%s: value %v passed %v abort %v, want 200 %v %v", tt.threshold, r.Value, r.Passed, r.Abort, tt.passed, tt.abort)
			}
			got, ok := ShouldAbort(results)
			if ok != tt.abort || (ok && got.Source != "avg<100") {
				t.Errorf("ShouldAbort = %+v, %v; want %v", got, ok, tt.abort)
			}
			if AnyFailed(results) == tt.passed {
				t.Errorf("AnyFailed = %v, want %v", !tt.passed, !tt.passed)
			}
		})
	}
}

func TestShouldAbortPicksTheFirst(t *testing.T) {
	f := newFixture(t)
	f.add("lat", nil, 100)
	f.add("failed", nil, 1)
	set := f.mustParse(t, `{
		"lat": ["avg<1", {"threshold": "max<50", "abortOnFail": true, "delayAbortEval": "1m"}, {"threshold": "min<50", "abortOnFail": true}],
		"failed": [{"threshold": "rate<0.5", "abortOnFail": true}]
	}`)
	results := set.Evaluate(f.agg.Snapshot(), 30*time.Second)
	r, ok := ShouldAbort(results)
	if !ok || r.Key != "lat" || r.Source != "min<50" || r.Threshold != set.Thresholds()[2] {
		t.Fatalf("ShouldAbort = %+v, %v", r, ok)
	}
	if got := r.String(); got != "lat min<50: failed, observed 100" {
		t.Errorf("String() = %q", got)
	}
	if _, ok := ShouldAbort(nil); ok {
		t.Error("ShouldAbort(nil) = true")
	}
	if AnyFailed(nil) {
		t.Error("AnyFailed(nil) = true")
	}
}

func TestCounterRateOverElapsed(t *testing.T) {
	f := newFixture(t)
	f.add("reqs", nil, 10, 10, 10) // 30 in all
	set := f.mustParse(t, `{"reqs": ["rate>=3", "count==30"]}`)
	snap := f.agg.Snapshot()
	tests := []struct {
		elapsed   time.Duration
		value     float64
		passed    bool
		evaluated bool
	}{
		{10 * time.Second, 3, true, true},
		{20 * time.Second, 1.5, false, true},
		{1500 * time.Millisecond, 20, true, true},
		{time.Minute, 0.5, false, true},
		{0, 0, true, false}, // no time to divide by
		{-time.Second, 0, true, false},
	}
	for _, tt := range tests {
		results := set.Evaluate(snap, tt.elapsed)
		r := results[0]
		if r.Value != tt.value || r.Passed != tt.passed || r.Evaluated != tt.evaluated {
			t.Errorf("elapsed %v: %s (value %v, evaluated %v), want value %v passed %v evaluated %v",
				tt.elapsed, r, r.Value, r.Evaluated, tt.value, tt.passed, tt.evaluated)
		}
		if !tt.evaluated && r.Note != "no elapsed time to compute a rate per second" {
			t.Errorf("elapsed %v: Note %q", tt.elapsed, r.Note)
		}
		if c := results[1]; c.Value != 30 || !c.Passed {
			t.Errorf("elapsed %v: %s, count does not depend on elapsed", tt.elapsed, c)
		}
	}
}

// noSamplesThresholds are thresholds on metrics and sub-metrics of every
// type without samples, for TestNoSamplesDuringRun and TestNoSamplesAtEnd.
const noSamplesThresholds = `{
	"reqs": ["count<10", "count>0", "rate<1", "rate>0"],
	"failed": [{"threshold": "rate>0.9", "abortOnFail": true}, "rate<0.01"],
	"inflight": ["value>100"],
	"llm_ttft": [{"threshold": "p(95)<1", "abortOnFail": true}],
	"lat{scenario:rag}": ["avg<1", {"threshold": "max>1000", "noSamples": "pass"}],
	"reqs{scenario:rag}": ["count==0", {"threshold": "count<1", "noSamples": "fail"}]
}`

type noSamplesWant struct {
	passed, evaluated bool
	note              string
}

// checkNoSamples evaluates noSamplesThresholds on a snapshot with one
// sample of another sub-metric, and on none, with eval.
func checkNoSamples(t *testing.T, eval func(*Set, *metrics.Snapshot) []Result, wants []noSamplesWant) {
	t.Helper()
	f := newFixture(t)
	f.add("lat", map[string]string{"scenario": "chat"}, 5)
	set := f.mustParse(t, noSamplesThresholds)
	for _, snap := range []*metrics.Snapshot{f.agg.Snapshot(), nil} {
		results := eval(set, snap)
		if len(results) != len(wants) {
			t.Fatalf("%d results, want %d", len(results), len(wants))
		}
		for i, r := range results {
			w := wants[i]
			if r.Passed != w.passed || r.Evaluated != w.evaluated || r.Value != 0 || r.Note != w.note || !r.NoSamples || r.Abort || r.Skipped {
				t.Errorf("%s: %+v, want %+v", r, r, w)
			}
		}
	}
}

// During the run, a metric without samples yet fails nothing but a
// counter's comparison with 0, and aborts nothing.
func TestNoSamplesDuringRun(t *testing.T) {
	checkNoSamples(t, func(s *Set, snap *metrics.Snapshot) []Result { return s.Evaluate(snap, 10*time.Second) }, []noSamplesWant{
		{true, true, ""},  // count<10: nothing counted is 0
		{false, true, ""}, // count>0
		{true, true, ""},  // rate<1
		{false, true, ""}, // rate>0
		{true, false, "no samples yet"},
		{true, false, "no samples yet"},
		{true, false, "no samples yet"},
		{true, false, "no samples yet"},
		{true, false, "no samples yet"},
		{true, false, "no samples yet"},
		{true, true, ""}, // a sub-metric of a counter without samples
		{true, true, ""},
	})
	r := newFixture(t).mustParse(t, noSamplesThresholds).Evaluate(nil, time.Second)[4]
	if got := r.String(); got != "failed rate>0.9: passed (no samples yet)" {
		t.Errorf("String() = %q", got)
	}
}

// At the end, counters and rates without samples count 0, gauges and
// trends fail, and noSamples overrides both.
func TestNoSamplesAtEnd(t *testing.T) {
	const zero = "no samples, counted as 0"
	checkNoSamples(t, func(s *Set, snap *metrics.Snapshot) []Result { return s.EvaluateEnd(snap, 10*time.Second, End{}) }, []noSamplesWant{
		{true, true, zero},  // count<10
		{false, true, zero}, // count>0
		{true, true, zero},  // rate<1
		{false, true, zero}, // rate>0
		{false, true, zero}, // failed rate>0.9: no request failed, none passed either
		{true, true, zero},  // failed rate<0.01: no request failed
		{false, false, "no samples: no value to judge (noSamples: 'pass' accepts that)"},
		{false, false, "no samples: no p(95) to judge (noSamples: 'pass' accepts that)"},
		{false, false, "no samples: no avg to judge (noSamples: 'pass' accepts that)"},
		{true, false, "no samples (accepted: noSamples is 'pass')"},
		{true, true, zero},
		{false, false, "no samples (noSamples is 'fail')"},
	})
}

// At the end, a threshold on a scenario that never started is skipped,
// whatever its type and noSamples; one with samples is judged.
func TestNoSamplesOfAScenarioThatDidNotRun(t *testing.T) {
	f := newFixture(t)
	f.add("lat", map[string]string{"scenario": "c1"}, 5)
	set := f.mustParse(t, `{
		"lat{scenario:c1}": ["p(99)<10"],
		"lat{scenario:c2}": ["p(99)<10", {"threshold": "avg<1", "noSamples": "fail"}],
		"reqs{scenario:c2}": ["count>5"],
		"lat{scenario:c3}": ["p(99)<10"],
		"lat": ["max<10"]
	}`)
	end := End{NotRun: map[string]string{"c2": "its chain stopped after c1", "c1": "never"}}
	results := set.EvaluateEnd(f.agg.Snapshot(), time.Second, end)
	const skip = "skipped: scenario c2 did not run (its chain stopped after c1)"
	want := []struct {
		passed, skipped bool
		note            string
	}{
		{true, false, ""}, // c1 has samples: judged, whatever NotRun says
		{true, true, skip},
		{true, true, skip},
		{true, true, skip},
		{false, false, "no samples: no p(99) to judge (noSamples: 'pass' accepts that)"},
		{true, false, ""},
	}
	for i, r := range results {
		if w := want[i]; r.Passed != w.passed || r.Skipped != w.skipped || r.Note != w.note {
			t.Errorf("%s: passed %v skipped %v note %q, want %+v", r, r.Passed, r.Skipped, r.Note, w)
		}
	}
	if !AnyFailed(results) {
		t.Error("AnyFailed = false: lat{scenario:c3} had no samples and did not count as skipped")
	}
}

func TestEvaluateWithoutValidate(t *testing.T) {
	f := newFixture(t)
	f.add("reqs", nil, 4)
	set, err := Parse([]byte(`{"reqs": ["count==4", "avg<1"], "lat": ["avg<1"]}`))
	if err != nil {
		t.Fatal(err)
	}
	results := set.Evaluate(f.agg.Snapshot(), time.Second)
	// The type comes from the samples when Validate did not run.
	if r := results[0]; !r.Passed || !r.Evaluated || r.Value != 4 {
		t.Errorf("%s", r)
	}
	// An aggregation that does not apply fails, loudly, rather than pass.
	if r := results[1]; r.Passed || r.Evaluated || r.Note != "aggregation avg does not apply to a counter metric" {
		t.Errorf("%s", r)
	}
	// Without samples or a definition, there is nothing to judge.
	if r := results[2]; !r.Passed || r.Evaluated || !r.NoSamples {
		t.Errorf("%s", r)
	}
}

// TestEvaluateDuringRun evaluates while samples keep arriving, as the engine
// does every few seconds: each evaluation sees the snapshot it is given.
func TestEvaluateDuringRun(t *testing.T) {
	f := newFixture(t)
	set := f.mustParse(t, `{"failed": [{"threshold": "rate<0.5", "abortOnFail": true, "delayAbortEval": "2s"}]}`)
	steps := []struct {
		add     []float64
		elapsed time.Duration
		passed  bool
		abort   bool
	}{
		{nil, 0, true, false}, // nothing yet
		{[]float64{0, 0, 0}, time.Second, true, false},
		{[]float64{1, 1, 1}, 2 * time.Second, false, true}, // 0.5: fails at the delay
		{[]float64{0, 0, 0, 0}, 3 * time.Second, true, false},
	}
	for i, s := range steps {
		if s.add != nil {
			f.add("failed", nil, s.add...)
		}
		r := set.Evaluate(f.agg.Snapshot(), s.elapsed)[0]
		if r.Passed != s.passed || r.Abort != s.abort {
			t.Errorf("step %d: %s abort %v, want passed %v abort %v", i, r, r.Abort, s.passed, s.abort)
		}
	}
}

// A threshold that names no scenario is skipped only when no scenario
// ran at all (an execution segment with no VU of any).
func TestNoSamplesWhenNoScenarioRan(t *testing.T) {
	f := newFixture(t)
	set := f.mustParse(t, `{"lat": ["p(99)<10"], "reqs": ["count>0"]}`)
	const why = "this execution segment has no VU of it"
	tests := []struct {
		name    string
		end     End
		skipped bool
	}{
		{"none ran", End{Scenarios: []string{"a", "b"}, NotRun: map[string]string{"a": why, "b": why}}, true},
		{"one ran", End{Scenarios: []string{"a", "b"}, NotRun: map[string]string{"b": why}}, false},
		{"no scenario known", End{NotRun: map[string]string{"b": why}}, false},
	}
	for _, tt := range tests {
		for _, r := range set.EvaluateEnd(f.agg.Snapshot(), time.Second, tt.end) {
			if r.Skipped != tt.skipped || r.Passed != tt.skipped {
				t.Errorf("%s: %s: skipped %v, want %v", tt.name, r, r.Skipped, tt.skipped)
			}
			if tt.skipped && r.Note != "skipped: no scenario ran (a: "+why+")" {
				t.Errorf("%s: %s: note %q", tt.name, r, r.Note)
			}
		}
	}
}

// A result's value carries its unit, as the summary prints it: the
// metric's, per second for a counter's rate, none for a rate's ratio.
func TestResultsCarryTheirValuesUnit(t *testing.T) {
	f := newFixture(t)
	f.add("lat", nil, 120, 80)
	f.add("reqs", nil, 1, 1)
	f.add("failed", nil, 0, 1)
	set := f.mustParse(t, `{"lat":["p(99)<500"],"reqs":["count>0","rate>0"],"failed":["rate<0.5"]}`)
	want := map[string]string{"p(99)<500": "ms", "count>0": "requests", "rate>0": "requests/s", "rate<0.5": ""}
	for _, r := range set.Evaluate(f.agg.Snapshot(), time.Second) {
		if w, ok := want[r.Source]; !ok || r.Unit != w {
			t.Errorf("%s %s: unit %q, want %q", r.Key, r.Source, r.Unit, w)
		}
	}
}
