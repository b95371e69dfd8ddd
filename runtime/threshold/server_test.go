package threshold

import (
	"strings"
	"testing"
	"time"
)

// TestValidateServerFigures checks which thresholds on server and GPU
// figures load, what each reads, and the errors of those that do not.
func TestValidateServerFigures(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		key, expr string
		want      ServerQuery
		err       string
	}{
		{"server_kv_cache_usage", "max<0.95", ServerQuery{Figure: "kv_cache_usage", Stat: StatMax}, ""},
		{"server_running", "avg<32", ServerQuery{Figure: "running", Stat: StatMean}, ""},
		{"server_preemptions", "count==0", ServerQuery{Figure: "preemptions", Stat: StatDelta}, ""},
		{"server_queue_time", "p(99)<0.5", ServerQuery{Figure: "queue_time", Stat: StatP99}, ""},
		{"server_ttft", "med<0.2", ServerQuery{Figure: "ttft", Stat: StatP50}, ""},
		{"server_prefill_time", "p(90)<0.1", ServerQuery{Figure: "prefill_time", Stat: StatP90}, ""},
		{"server_e2e", "avg<3", ServerQuery{Figure: "e2e", Stat: StatHistogramMean}, ""},
		{"server_prefix_cache_hit_rate", "rate>0.5", ServerQuery{Figure: "prefix_cache_hit_rate", Stat: StatHitRate}, ""},
		{"gpu_power", "max<600", ServerQuery{Figure: "gpu_power", GPU: true, Stat: StatMax}, ""},
		{"gpu_energy", "count<1e6", ServerQuery{Figure: "gpu_energy", GPU: true, Stat: StatDelta}, ""},
		{"gpu_energy_per_token", "avg<0.5", ServerQuery{Figure: "gpu_energy_per_token", GPU: true, Stat: StatJoulesPerToken}, ""},
		{"server_queue_time", "p(95)<0.5", ServerQuery{}, `thresholds["server_queue_time"][0]: aggregation "p(95)" does not apply to server histogram "server_queue_time": want avg, med, p(50), p(90) or p(99)`},
		{"server_preemptions", "rate<1", ServerQuery{}, `aggregation "rate" does not apply to server counter "server_preemptions": want count`},
		{"server_kv_cache_usage", "value<1", ServerQuery{}, `want avg or max`},
		{"gpu_energy_per_token", "max<1", ServerQuery{}, `want avg`},
		{"server_prefix_cache_hit_rate", "avg>0.5", ServerQuery{}, `want rate`},
		{"server_kv_cache_usage{scenario:default}", "max<0.95", ServerQuery{}, `thresholds["server_kv_cache_usage{scenario:default}"][0]: a server figure takes no tag filter`},
		{"server_kv_cache_usag", "max<0.95", ServerQuery{}, `thresholds["server_kv_cache_usag"]: unknown metric "server_kv_cache_usag" (did you mean "server_kv_cache_usage"?)`},
		{"gpu_powr", "max<600", ServerQuery{}, `(did you mean "gpu_power"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.key+" "+tt.expr, func(t *testing.T) {
			set, err := Parse([]byte(`{"` + tt.key + `": ["` + tt.expr + `"]}`))
			if err != nil {
				t.Fatal(err)
			}
			err = set.Validate(f.reg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Validate: %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got, ok := set.Thresholds()[0].Server()
			if !ok || got != tt.want {
				t.Errorf("Server() = %+v, %v; want %+v", got, ok, tt.want)
			}
		})
	}
}

// TestServerThresholdAbortOnFailRefused: a server figure is judged at
// the end only, so abortOnFail could never act.
func TestServerThresholdAbortOnFailRefused(t *testing.T) {
	set, err := Parse([]byte(`{"server_preemptions": [{"threshold": "count==0", "abortOnFail": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = set.Validate(newFixture(t).reg)
	if err == nil || !strings.Contains(err.Error(), "abortOnFail does not apply to a server figure") {
		t.Fatalf("Validate: %v", err)
	}
}

// TestServerThresholdsWithoutSection: during the run a server threshold
// is not judged; at the end, until JudgeServer gives it a value, it has
// no samples and fails, unless noSamples is 'pass'; the run's own
// thresholds are judged as always.
func TestServerThresholdsWithoutSection(t *testing.T) {
	f := newFixture(t)
	set := f.mustParse(t, `{"server_preemptions": ["count==0"], "gpu_power": [{"threshold": "max<600", "noSamples": "pass"}], "reqs": ["count<5"]}`)
	f.add("reqs", nil, 1, 1)
	live := set.Evaluate(f.agg.Snapshot(), time.Second)
	for _, r := range live[:2] {
		if !r.Passed || r.Evaluated || !strings.Contains(r.Note, "judged at the end of the run") {
			t.Errorf("during the run %s: %+v", r.Key, r)
		}
	}
	end := set.EvaluateEnd(f.agg.Snapshot(), time.Second, End{})
	want := []struct {
		passed bool
		note   string
	}{
		{false, "no samples: the run has no server section (noSamples: 'pass' accepts that)"},
		{true, "no samples: the run has no server section (accepted: noSamples is 'pass')"},
		{true, ""},
	}
	for i, w := range want {
		if r := end[i]; r.Passed != w.passed || r.Note != w.note {
			t.Errorf("at the end %s: passed %v note %q, want %v %q", r.Key, r.Passed, r.Note, w.passed, w.note)
		}
	}
	if !AnyFailed(end) {
		t.Error("AnyFailed: false, want true (server_preemptions has no samples)")
	}
}

// TestJudgeServer: the value read judges a server threshold; a figure
// with no value fails it with why; a run's metric is left alone.
func TestJudgeServer(t *testing.T) {
	f := newFixture(t)
	set := f.mustParse(t, `{"server_kv_cache_usage": ["max<0.95", "avg<0.3"], "server_queue_time": ["p(99)<0.5"], "gpu_power": [{"threshold": "max<600", "noSamples": "pass"}], "reqs": ["count<5"]}`)
	f.add("reqs", nil, 9)
	results := set.EvaluateEnd(f.agg.Snapshot(), time.Second, End{})
	values := map[ServerStat]float64{StatMax: 0.97, StatMean: 0.25}
	JudgeServer(results, func(q ServerQuery) ServerReading {
		if q.Figure != "kv_cache_usage" {
			return ServerReading{Why: "no target gave " + string(q.Figure)}
		}
		return ServerReading{Value: values[q.Stat]}
	})
	want := []struct {
		passed, evaluated bool
		value             float64
		note              string
	}{
		{false, true, 0.97, ""},
		{true, true, 0.25, ""},
		{false, false, 0, "no samples: no target gave queue_time (noSamples: 'pass' accepts that)"},
		{true, false, 0, "no samples: no target gave gpu_power (accepted: noSamples is 'pass')"},
		{false, true, 9, ""},
	}
	for i, w := range want {
		r := results[i]
		if r.Passed != w.passed || r.Evaluated != w.evaluated || r.Value != w.value || r.Note != w.note {
			t.Errorf("%s %s: passed %v evaluated %v value %v note %q; want %+v", r.Key, r.Source, r.Passed, r.Evaluated, r.Value, r.Note, w)
		}
	}
}

// A server quantile known only to an interval is judged by the interval
// where all of it passes or fails, and the note says which; where the
// bound falls inside it, the note says the verdict rests on the
// interpolation.
func TestJudgeReading(t *testing.T) {
	// vLLM's queue time, all in its first bucket (0, 0.3] s, its mean
	// bounding the p99 to 0.01 s, the interpolation kept within: 0.01.
	firstBucket := ServerReading{Value: 0.01, Interval: true, Lower: 0, Upper: 0.01}
	tests := []struct {
		expr    string
		reading ServerReading
		passed  bool
		note    string
	}{
		{"p(99)<0.1", firstBucket, true, "p(99) is known only to lie in (0, 0.01], the server's histogram bucket and the bound its mean gives: all of it passes"},
		{"p(99)>0.05", firstBucket, false, "all of it fails"},
		{"p(99)<0.005", firstBucket, false, "the bound falls inside it, so the verdict rests on the interpolation within the bucket (kept within the interval), 0.01"},
		{"p(99)<0.4", ServerReading{Value: 0.35, Interval: true, Lower: 0.3, Upper: 0.5}, true, "the bound falls inside it"},
		{"p(99)==0.01", firstBucket, true, "the bound falls inside it"},
		{"p(99)<0.1", ServerReading{Value: 0.045}, true, ""},
		{"p(99)<0.04", ServerReading{Value: 0.045}, false, ""},
	}
	for _, tt := range tests {
		e, err := ParseExpression(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		passed, note := e.JudgeReading(tt.reading)
		if passed != tt.passed || !strings.Contains(note, tt.note) || (tt.note == "") != (note == "") {
			t.Errorf("%s on %+v: passed %v note %q; want %v, a note with %q", tt.expr, tt.reading, passed, note, tt.passed, tt.note)
		}
	}
}
