package summary_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/health"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/threshold"
)

// mergeThresholds are evaluated on the whole run and on its halves: the
// request rate passes on the whole and fails on each half.
const mergeThresholds = `{
	"llm_ttft": ["p(95)<150", "avg<100"],
	"llm_ttft{scenario:chat}": ["p(99)<100"],
	"llm_requests": ["rate>1.2", "count>=14"],
	"llm_failed": ["rate<0.3"],
	"my_rate": ["rate>0.7"],
	"my_unused": ["count<1"],
	"llm_itl": ["max<=10", "med<6"]
}`

// evaluateThresholds evaluates thresholds at the end of a report's run, as
// the engine does.
func evaluateThresholds(t *testing.T, rep *engine.Report, src string) {
	t.Helper()
	set, err := threshold.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(rep.Registry); err != nil {
		t.Fatal(err)
	}
	rep.Thresholds = set.EvaluateEnd(rep.Snapshot, rep.Duration(), threshold.End{})
}

// sumDerived says whether a figure is computed from a floating-point sum
// (a mean, a standard deviation), which may differ in its last bits when
// the same values are added in another order; every other figure of a
// merge is exactly the whole's.
func sumDerived(key string) bool {
	return key == "avg" || strings.HasPrefix(key, "mean_") || strings.HasPrefix(key, "std_")
}

func sameFigures(t *testing.T, where string, got, want map[string]float64, skip ...string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if slices.Contains(skip, k) {
			continue
		}
		g, ok := got[k]
		if !ok || (sumDerived(k) && !summarytest.Near(g, want[k])) || (!sumDerived(k) && g != want[k]) {
			t.Errorf("%s: %s = %v, want %v", where, k, g, want[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: keys %v, want %v", where, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}

func sameServing(t *testing.T, where string, got, want summary.Serving) {
	t.Helper()
	sameFigures(t, where+" headline", got.Headline, want.Headline)
	got.Headline, want.Headline = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s serving\n got %+v\nwant %+v", where, got, want)
	}
}

func sameRows(t *testing.T, where string, got, want []summary.LatencyRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d latency rows, want %d", where, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !summarytest.Near(g.Mean, w.Mean) {
			t.Errorf("%s %s: mean %v, want %v", where, w.Metric, g.Mean, w.Mean)
		}
		g.Mean = w.Mean
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s latency row\n got %+v\nwant %+v", where, g, w)
		}
	}
}

func sameMetrics(t *testing.T, where string, got, want map[string]summary.MetricSummary) {
	t.Helper()
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
		t.Errorf("%s: metrics %v, want %v", where, g, w)
	}
	for name, w := range want {
		g := got[name]
		var skip []string
		if w.Type == "gauge" {
			// The gauge's latest sample is in one half, which ended
			// with the other: the merged value is the last result's.
			skip = []string{"value"}
		}
		sameFigures(t, where+" "+name, g.Values, w.Values, skip...)
		if g.Type != w.Type || g.Contains != w.Contains || g.Unit != w.Unit || g.Desc != w.Desc || g.Custom != w.Custom {
			t.Errorf("%s %s: definition %s/%s/%s/%s custom %t, want %s/%s/%s/%s custom %t", where, name,
				g.Type, g.Contains, g.Unit, g.Desc, g.Custom, w.Type, w.Contains, w.Unit, w.Desc, w.Custom)
		}
		if (g.Histogram == nil) != (w.Histogram == nil) {
			t.Errorf("%s %s: histogram %v, want %v", where, name, g.Histogram, w.Histogram)
			continue
		}
		if w.Histogram == nil {
			continue
		}
		gh, wh := *g.Histogram, *w.Histogram
		if !summarytest.Near(gh.Sum, wh.Sum) || !summarytest.Near(gh.SumSquares, wh.SumSquares) {
			t.Errorf("%s %s: sum %v squares %v, want %v %v", where, name, gh.Sum, gh.SumSquares, wh.Sum, wh.SumSquares)
		}
		gh.Sum, gh.SumSquares = wh.Sum, wh.SumSquares
		// The merged histograms are the whole's, to the byte.
		if gh != wh {
			t.Errorf("%s %s: histogram\n got %+v\nwant %+v", where, name, gh, wh)
		}
	}
}

// The merge of the results of two halves of a run is the result of the
// whole run: the serving blocks, headlines, latency rows and metrics of the
// whole run and of each scenario, the errors, checks and thresholds.
func TestMergeOfTwoHalvesEqualsTheWhole(t *testing.T) {
	whole := summarytest.TwoScenarioReport(t)
	evaluateThresholds(t, whole, mergeThresholds)
	halves := []*engine.Report{
		summarytest.TwoScenarioPart(t, func(call int) bool { return call%2 == 0 }),
		summarytest.TwoScenarioPart(t, func(call int) bool { return call%2 == 1 }),
	}
	// The whole's error messages, shared out in turn among the halves
	// that have failures of their class, and its script errors.
	for _, h := range halves {
		h.RequestErrors = map[string][]engine.ErrorCount{}
	}
	for class, msgs := range whole.RequestErrors {
		var have []*engine.Report
		for _, h := range halves {
			if slices.Contains(h.Snapshot.TagValues("llm_errors", "error_class"), class) {
				have = append(have, h)
			}
		}
		for i, msg := range msgs {
			h := have[i%len(have)]
			h.RequestErrors[class] = append(h.RequestErrors[class], msg)
		}
	}
	halves[0].ScriptErrors, halves[0].OtherScriptErrors = []engine.ErrorCount{{Message: "script.js:3:9: Error: boom", Count: 1}}, 1
	halves[1].ScriptErrors, halves[1].OtherScriptErrors = []engine.ErrorCount{{Message: "script.js:3:9: Error: boom", Count: 1}}, 2
	var parts []*summary.Summary
	for i, h := range halves {
		evaluateThresholds(t, h, mergeThresholds)
		meta := summarytest.Meta
		meta.RunID, meta.Host = fmt.Sprintf("half-%d", i), fmt.Sprintf("host-%d", i)
		parts = append(parts, summarize.Build(h, meta))
	}
	want := summarize.Build(whole, summarytest.Meta)
	if parts[0].Serving.OK == 0 || parts[1].Serving.OK == 0 || parts[0].Serving.OK+parts[1].Serving.OK != want.Serving.OK {
		t.Fatalf("the halves' completed requests %d and %d, want two shares of %d", parts[0].Serving.OK, parts[1].Serving.OK, want.Serving.OK)
	}

	got, err := summary.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	sameServing(t, "whole run", got.Serving, want.Serving)
	sameRows(t, "whole run", got.Latency, want.Latency)
	sameMetrics(t, "whole run", got.Metrics, want.Metrics)
	if len(got.Scenarios) != len(want.Scenarios) {
		t.Fatalf("%d scenarios, want %d", len(got.Scenarios), len(want.Scenarios))
	}
	for i, w := range want.Scenarios {
		g := got.Scenarios[i]
		where := "scenario " + w.Name
		if g.Name != w.Name {
			t.Fatalf("%s is %s", where, g.Name)
		}
		sameServing(t, where, g.Serving, w.Serving)
		sameRows(t, where, g.Latency, w.Latency)
		sameMetrics(t, where, g.Metrics, w.Metrics)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"errors", got.Errors, want.Errors},
		{"retries", got.Retries, want.Retries},
		{"checks", got.Checks, want.Checks},
		{"script errors", got.ScriptErrors, want.ScriptErrors},
		{"other script errors", got.OtherScriptErrors, want.OtherScriptErrors},
		{"token checks", got.TokenChecks, want.TokenChecks},
		{"prompt check", got.PromptCheck, want.PromptCheck},
		{"thresholds", got.Thresholds, want.Thresholds},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s\n got %+v\nwant %+v", c.name, c.got, c.want)
		}
	}
	// The halves' thresholds differ from the whole's: they were
	// evaluated again.
	if reflect.DeepEqual(parts[0].Thresholds, want.Thresholds) {
		t.Errorf("the halves' thresholds are the whole's: the test proves nothing")
	}

	m := got.Meta
	if !slices.Equal(m.Merged, []string{"half-0", "half-1"}) || m.Host != "host-0, host-1" || m.RunID != "" ||
		!m.Start.Equal(want.Meta.Start) || !m.End.Equal(want.Meta.End) || !slices.Equal(m.Models, want.Meta.Models) {
		t.Errorf("meta %+v", m)
	}
	for i, sh := range m.LoadShape {
		if sh.MaxVUs != 2*want.Meta.LoadShape[i].MaxVUs {
			t.Errorf("scenario %s: max VUs %d, want both processes' %d", sh.Name, sh.MaxVUs, 2*want.Meta.LoadShape[i].MaxVUs)
		}
	}
}

// result builds a small result: one scenario, one request per TTFT value,
// over [start, start+dur).
func result(t *testing.T, runID string, start time.Time, dur time.Duration, ttfts ...float64) *summary.Summary {
	t.Helper()
	f := summarytest.NewFixture()
	for _, ttft := range ttfts {
		f.Request(summarytest.Tags("scenario", "default"), summarytest.Completed("m", ttft, ttft+100, 10, 5))
	}
	rep := &engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Scenarios: summarytest.Scenarios(t, `{"vus": 1, "duration": "1s"}`),
		Start: start, End: start.Add(dur)}
	meta := summarytest.Meta
	meta.RunID = runID
	return summarize.Build(rep, meta)
}

// Results of different windows: the merged window spans them, throughputs
// and counter rates are over it, and the latencies are those of all the
// requests.
func TestMergeWindows(t *testing.T) {
	a := result(t, "a", summarytest.T0, 10*time.Second, 10, 20, 30)
	b := result(t, "b", summarytest.T0.Add(5*time.Second), 10*time.Second, 40, 50)
	all := result(t, "all", summarytest.T0, 15*time.Second, 10, 20, 30, 40, 50)
	got, err := summary.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Serving.DurationSeconds != 15 || got.Serving.OK != 5 || !summarytest.Near(got.Serving.RequestThroughput, 5.0/15) {
		t.Errorf("serving %+v, want 5 requests over 15 s", got.Serving)
	}
	if r := got.Metrics["llm_requests"].Values; r["count"] != 5 || !summarytest.Near(r["rate"], 5.0/15) {
		t.Errorf("llm_requests %v, want count 5 rate 1/3", r)
	}
	sameServing(t, "merged", got.Serving, all.Serving)
	sameRows(t, "merged", got.Latency, all.Latency)
	if !got.Meta.Start.Equal(summarytest.T0) || !got.Meta.End.Equal(summarytest.T0.Add(15*time.Second)) {
		t.Errorf("window %s–%s, want %s–%s", got.Meta.Start, got.Meta.End, summarytest.T0, summarytest.T0.Add(15*time.Second))
	}
	// A merged result merges again, and names every part.
	c := result(t, "c", summarytest.T0, 15*time.Second, 60)
	again, err := summary.Merge(got, c)
	if err != nil {
		t.Fatal(err)
	}
	if again.Serving.OK != 6 || !slices.Equal(again.Meta.Merged, []string{"a", "b", "c"}) {
		t.Errorf("merge of a merge: %d completed, merged from %v", again.Serving.OK, again.Meta.Merged)
	}
}

func TestMergeRules(t *testing.T) {
	a := result(t, "a", summarytest.T0, 10*time.Second, 10)
	b := result(t, "b", summarytest.T0, 12*time.Second, 20)
	a.Errors = []summary.ErrorClassCount{{Class: "http_5xx", Count: 3, Messages: []summary.ErrorCount{{Message: "m1", Count: 2}, {Message: "m2 chatcmpl-1", Count: 1}}}}
	b.Errors = []summary.ErrorClassCount{
		{Class: "timeout", Count: 5},
		{Class: "http_5xx", Count: 3, Messages: []summary.ErrorCount{{Message: "m2 chatcmpl-7", Count: 1}, {Message: "m3", Count: 1}, {Message: "m4", Count: 1}}},
	}
	// b is as a file from before the custom mark.
	a.Metrics["g"] = summary.MetricSummary{Type: "gauge", Contains: "default", Custom: true, Values: map[string]float64{"value": 7, "min": 1, "max": 9}}
	b.Metrics["g"] = summary.MetricSummary{Type: "gauge", Contains: "default", Values: map[string]float64{"value": 4, "min": 2, "max": 12}}
	a.Client = health.Report{CPU: 0.5, Procs: 8, SchedDelayP99: 1, SchedDelayMax: 3, Warnings: []string{"busy"},
		Machine: &health.Machine{CPUs: 8, Others: 0.7}, Cause: "other processes on this machine took the CPU"}
	b.Client = health.Report{CPU: 0.9, Procs: 4, SchedDelayP99: 2, SchedDelayMax: 2, MachineError: "not measured on darwin"}
	a.Timeline = []summary.TimelinePoint{{T: 1, Seconds: 1, Requests: 1, TTFTP99: 10}, {T: 2, Seconds: 1, Requests: 2}}
	b.Timeline = []summary.TimelinePoint{{T: 2, Seconds: 1, Requests: 3, TTFTP99: 30}, {T: 2.5, Seconds: 0.5, Requests: 1}}
	a.Timeline = append(a.Timeline, summary.TimelinePoint{T: 2.75, Seconds: 0.75, Requests: 1})
	a.Outputs = []summary.OutputReport{{Output: "influxdb", Written: 10, Dropped: 1, Reasons: map[string]int64{"full": 1}, Err: "down"}}
	b.Outputs = []summary.OutputReport{{Output: "influxdb", Written: 5, Reasons: map[string]int64{"full": 2}}, {Output: "csv", Written: 3}}
	a.AbortedBy = "llm_ttft p(99)<10: failed"
	a.Meta.Interrupted = true

	got, err := summary.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"errors: counts add, messages deduplicated (ids aside: the first seen stays) and capped at 3, most frequent first", got.Errors, []summary.ErrorClassCount{
			{Class: "http_5xx", Count: 6, Messages: []summary.ErrorCount{{Message: "m1", Count: 2}, {Message: "m2 chatcmpl-1", Count: 2}, {Message: "m3", Count: 1}}},
			{Class: "timeout", Count: 5},
		}},
		{"gauge: the value of the result that ended last", got.Metrics["g"].Values, map[string]float64{"value": 4, "min": 1, "max": 12}},
		{"a metric is the script's when a result marks it so", got.CustomMetrics(), []string{"g"}},
		{"client: the worst figures, every cause and warning, no one machine's figures", got.Client, health.Report{CPU: 0.9, Procs: 8, SchedDelayP99: 2, SchedDelayMax: 3,
			Cause: "a: other processes on this machine took the CPU", Warnings: []string{"a: busy"}}},
		{"timeline: points ending in the same second add", got.Timeline, []summary.TimelinePoint{
			{T: 1, Seconds: 1, Requests: 1, TTFTP99: 10}, {T: 2, Seconds: 1, Requests: 5, TTFTP99: 30}, {T: 2.75, Seconds: 0.75, Requests: 2}}},
		{"outputs add by name", got.Outputs, []summary.OutputReport{
			{Output: "influxdb", Written: 15, Dropped: 1, Reasons: map[string]int64{"full": 3}, Err: "down"}, {Output: "csv", Written: 3}}},
		{"aborted", got.AbortedBy, a.AbortedBy},
		{"interrupted", got.Meta.Interrupted, true},
		{"window", got.Serving.DurationSeconds, 12.0},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s\n got %+v\nwant %+v", c.name, c.got, c.want)
		}
	}
	// The gauge's value follows the end, not the order of the arguments.
	if again, err := summary.Merge(b, a); err != nil || again.Metrics["g"].Values["value"] != 4 {
		t.Errorf("merge in the other order: gauge %v, error %v", again.Metrics["g"].Values, err)
	}
}

// Files of versions 2 and 3 read back with their version, and merge into
// a version-4 result whose timeline adds their points' output tokens (a
// version 2 file's, of the requests completed in each interval, are the
// nearest it has to the tokens that arrived then).
func TestVersions2And3ReadAndMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s *summary.Summary) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := s.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old, cur := result(t, "old", summarytest.T0, 2*time.Second, 10), result(t, "cur", summarytest.T0, 2*time.Second, 20)
	old.SchemaVersion = 2
	cur.SchemaVersion = 3
	old.Timeline = []summary.TimelinePoint{{T: 1, Seconds: 1}, {T: 2, Seconds: 1, Requests: 1, OutputTokens: 10}}
	cur.Timeline = []summary.TimelinePoint{{T: 1, Seconds: 1, OutputTokens: 6}, {T: 2, Seconds: 1, Requests: 1, OutputTokens: 4}}
	var read []*summary.Summary
	for _, s := range []*summary.Summary{old, cur} {
		got, err := summary.ReadJSON(write(s.Meta.RunID+".json", s))
		if err != nil {
			t.Fatal(err)
		}
		if got.SchemaVersion != s.SchemaVersion || !reflect.DeepEqual(got.Timeline, s.Timeline) {
			t.Errorf("%s read back as version %d with timeline %+v", s.Meta.RunID, got.SchemaVersion, got.Timeline)
		}
		read = append(read, got)
	}
	merged, err := summary.Merge(read...)
	if err != nil {
		t.Fatal(err)
	}
	want := []summary.TimelinePoint{{T: 1, Seconds: 1, OutputTokens: 6}, {T: 2, Seconds: 1, Requests: 2, OutputTokens: 14}}
	if merged.SchemaVersion != summary.SchemaVersion || summary.SchemaVersion != 4 || !reflect.DeepEqual(merged.Timeline, want) {
		t.Errorf("merged: version %d, timeline %+v; want version 4, %+v", merged.SchemaVersion, merged.Timeline, want)
	}
	if again, err := summary.ReadJSON(write("merged.json", merged)); err != nil || again.SchemaVersion != 4 {
		t.Errorf("the merged file read back: %v, %v", again, err)
	}
}

func TestMergeErrors(t *testing.T) {
	good := func(id string) *summary.Summary { return result(t, id, summarytest.T0, time.Second, 10) }
	tests := []struct {
		name  string
		edit  func(a, b *summary.Summary) []*summary.Summary
		index int
		want  string
	}{
		{"another script", func(a, b *summary.Summary) []*summary.Summary {
			b.Meta.ScriptSHA256 = "def"
			return []*summary.Summary{a, b}
		}, 1, "result 2 ran a script of sha256 def, result 1 one of sha256 abc"},
		{"the same run twice", func(a, b *summary.Summary) []*summary.Summary {
			return []*summary.Summary{a, good("a")}
		}, 1, `the same run as result 1 (run_id "a")`},
		{"the same result twice", func(a, b *summary.Summary) []*summary.Summary {
			a.Meta.RunID = ""
			return []*summary.Summary{a, b, a}
		}, 2, "the same run as result 1"},
		{"an older schema", func(a, b *summary.Summary) []*summary.Summary {
			b.SchemaVersion = 1
			return []*summary.Summary{a, b}
		}, 1, "schema_version 1, want 2 to 4"},
		{"a newer schema", func(a, b *summary.Summary) []*summary.Summary {
			a.SchemaVersion = 5
			return []*summary.Summary{a, b}
		}, 0, "schema_version 5, want 2 to 4"},
		{"a trend without its histogram", func(a, b *summary.Summary) []*summary.Summary {
			m := b.Metrics["iteration_duration_x"]
			m.Type, m.Values = "trend", map[string]float64{"count": 1}
			b.Metrics["iteration_duration_x"] = m
			return []*summary.Summary{a, b}
		}, 1, "metric iteration_duration_x: a trend without its histogram"},
		{"a latency row without its histogram", func(a, b *summary.Summary) []*summary.Summary {
			delete(b.Metrics, "llm_ttft")
			return []*summary.Summary{a, b}
		}, 1, "the llm_ttft latency row has no histogram"},
		{"a metric of two types", func(a, b *summary.Summary) []*summary.Summary {
			a.Metrics["x"] = summary.MetricSummary{Type: "counter", Values: map[string]float64{"count": 1}}
			b.Metrics["x"] = summary.MetricSummary{Type: "rate", Values: map[string]float64{"passes": 1}}
			return []*summary.Summary{a, b}
		}, 1, "metric x is a rate, a counter in the results before"},
		{"a corrupt histogram", func(a, b *summary.Summary) []*summary.Summary {
			m := b.Metrics["llm_ttft"]
			h := *m.Histogram
			h.Encoded = "bm90IGEgaGlzdG9ncmFt"
			m.Histogram = &h
			b.Metrics["llm_ttft"] = m
			return []*summary.Summary{a, b}
		}, 1, "metric llm_ttft: decoding the histogram"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := summary.Merge(tc.edit(good("a"), good("b"))...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			var ie *summary.InputError
			var hm *summary.HashMismatchError
			switch {
			case errors.As(err, &ie):
				if ie.Index != tc.index {
					t.Errorf("about result %d, want %d", ie.Index, tc.index)
				}
			case errors.As(err, &hm):
				if hm.Index != tc.index || hm.Hash != "def" || hm.FirstHash != "abc" {
					t.Errorf("hash mismatch %+v", hm)
				}
			default:
				t.Errorf("error %T, want one naming its result", err)
			}
		})
	}
	if _, err := summary.Merge(); err == nil {
		t.Error("a merge of nothing succeeded")
	}
}

// Goodput counts add up, and the merged goodput is over the merged
// window; a result without bounds adds nothing.
func TestMergeGoodput(t *testing.T) {
	bounds := summary.GoodputBounds{TTFT: 500}
	a := result(t, "a", summarytest.T0, 10*time.Second, 10, 20, 30)
	a.Serving.SetGoodput(bounds, 2, 3)
	b := result(t, "b", summarytest.T0.Add(5*time.Second), 10*time.Second, 40, 50)
	b.Serving.SetGoodput(bounds, 1, 2)
	none := result(t, "c", summarytest.T0, 15*time.Second, 60)
	got, err := summary.Merge(a, b, none)
	if err != nil {
		t.Fatal(err)
	}
	g := got.Serving.Goodput
	if g == nil || g.Bounds != bounds || g.Good != 3 || g.Requests != 5 || !summarytest.Near(g.RequestGoodput, 3.0/15) {
		t.Errorf("merged goodput %+v, want 3 of 5 good over 15 s", g)
	}
	if a.Serving.Goodput.RequestGoodput != 0.2 {
		t.Errorf("goodput of one result %+v, want 2 good over 10 s", a.Serving.Goodput)
	}
}

// The instances of one distributed run share its run_id and start; their
// instance tags tell them apart, so they merge.
func TestMergeInstancesOfOneRun(t *testing.T) {
	a, b := result(t, "r", summarytest.T0, time.Second, 10), result(t, "r", summarytest.T0, time.Second, 10)
	if _, err := summary.Merge(a, b); err == nil {
		t.Fatal("the same run twice merged")
	}
	a.Meta.Tags, b.Meta.Tags = map[string]string{"instance": "0"}, map[string]string{"instance": "1"}
	merged, err := summary.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Meta.RunID != "r" || merged.Metrics["llm_requests"].Values["count"] != 2*a.Metrics["llm_requests"].Values["count"] {
		t.Errorf("merged run %q with %v requests, want run r with twice %v", merged.Meta.RunID, merged.Metrics["llm_requests"].Values, a.Metrics["llm_requests"].Values)
	}
}

// A merge of some of a distributed run's instances says which are
// missing, lists the instances it has, and names each input by its
// instance; a complete merge misses none.
func TestMergeSaysWhichInstancesAreMissing(t *testing.T) {
	instance := func(i string) *summary.Summary {
		s := result(t, "r", summarytest.T0, time.Second, 10)
		s.Meta.Instances, s.Meta.Tags = 4, map[string]string{"instance": i}
		return s
	}
	merged, err := summary.Merge(instance("2"), instance("0"))
	if err != nil {
		t.Fatal(err)
	}
	m := merged.Meta
	if m.Instances != 4 || !slices.Equal(m.MissingInstances, []int{1, 3}) || m.Tags["instance"] != "0, 2" {
		t.Errorf("instances %d, missing %v, tag %q; want 4, [1 3], \"0, 2\"", m.Instances, m.MissingInstances, m.Tags["instance"])
	}
	if want := []string{"r instance 2", "r instance 0"}; !slices.Equal(m.Merged, want) {
		t.Errorf("merged_from %q, want %q", m.Merged, want)
	}
	all, err := summary.Merge(instance("0"), instance("1"), instance("2"), instance("3"))
	if err != nil {
		t.Fatal(err)
	}
	if all.Meta.MissingInstances != nil {
		t.Errorf("every instance given, yet missing %v", all.Meta.MissingInstances)
	}
}

// Merged results merge again: their instances count as given, and an
// instance in two of them is the same result twice.
func TestMergeMergedInstances(t *testing.T) {
	instance := func(i string) *summary.Summary {
		s := result(t, "r", summarytest.T0, time.Second, 10)
		s.Meta.Instances, s.Meta.Tags = 4, map[string]string{"instance": i}
		return s
	}
	merge := func(parts ...*summary.Summary) *summary.Summary {
		t.Helper()
		m, err := summary.Merge(parts...)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	all := merge(merge(instance("0"), instance("1")), merge(instance("2"), instance("3")))
	if m := all.Meta; m.MissingInstances != nil || m.Tags["instance"] != "0, 1, 2, 3" {
		t.Errorf("two merged halves: missing %v, tag %q; want none, \"0, 1, 2, 3\"", m.MissingInstances, m.Tags["instance"])
	}
	if _, err := summary.Merge(merge(instance("0"), instance("1")), instance("1")); err == nil {
		t.Error("instance 1 merged twice, once inside a merged result")
	}
}

// outcomes builds a small result of ok requests that succeeded and bad
// ones that failed with http_5xx, of a run that warns below 90 %.
func outcomes(t *testing.T, runID string, ok, bad int) *summary.Summary {
	t.Helper()
	return outcomesWarningBelow(t, runID, ok, bad, 0.9)
}

// outcomesWarningBelow is outcomes of a run that warns below floor.
func outcomesWarningBelow(t *testing.T, runID string, ok, bad int, floor float64) *summary.Summary {
	t.Helper()
	f := summarytest.NewFixture()
	for range ok {
		f.Request(summarytest.Tags("scenario", "default"), summarytest.Completed("m", 10, 110, 10, 5))
	}
	for range bad {
		f.Request(summarytest.Tags("scenario", "default"), summarytest.FailedWith("m", llm.ErrHTTP5xx))
	}
	rep := &engine.Report{Snapshot: f.Agg.Snapshot(), Registry: f.Reg, Scenarios: summarytest.Scenarios(t, `{"vus": 1, "duration": "1s"}`),
		Start: summarytest.T0, End: summarytest.T0.Add(10 * time.Second), MinSuccessRate: floor}
	meta := summarytest.Meta
	meta.RunID = runID
	return summarize.Build(rep, meta)
}

// A run, or a merge of runs, with fewer than 90 % of its requests ok
// carries a warning that says so, thresholds or not; one without a
// success leaves it to NoSuccess. A merged result stopped early says the
// earliest time.
func TestLowSuccessWarning(t *testing.T) {
	for _, tc := range []struct {
		ok, bad int
		warns   bool
	}{{9, 1, false}, {89, 11, true}, {123, 55827, true}, {0, 5, false}, {5, 0, false}} {
		s := outcomes(t, "r", tc.ok, tc.bad)
		if (s.LowSuccess != "") != tc.warns {
			t.Errorf("%d ok, %d failed: warning %q, want one %t", tc.ok, tc.bad, s.LowSuccess, tc.warns)
		}
	}
	if w := outcomes(t, "r", 123, 55827).LowSuccess; !strings.Contains(w, "only 123 of 55950 requests succeeded (success rate 0.22 %, below 90 %)") {
		t.Errorf("warning %q does not give the figures", w)
	}
	a, b := outcomes(t, "a", 9, 1), outcomes(t, "b", 5, 5)
	a.EarlyStopAt, b.EarlyStopAt = 7.5, 3.25
	got, err := summary.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.LowSuccess, "only 14 of 20 requests succeeded") || got.EarlyStopAt != 3.25 {
		t.Errorf("merged: warning %q, early stop at %v s; want 14 of 20 and 3.25 s", got.LowSuccess, got.EarlyStopAt)
	}
}

// A merged result's early stop is the earliest of the results that the
// early stop stopped; a result it did not stop (0) has no say.
func TestMergeEarliestEarlyStop(t *testing.T) {
	for _, tc := range []struct{ a, b, want float64 }{
		{7.5, 3.25, 3.25}, {3.25, 7.5, 3.25}, {0, 4, 4}, {4, 0, 4}, {0, 0, 0},
	} {
		a, b := outcomes(t, "a", 9, 1), outcomes(t, "b", 5, 5)
		a.EarlyStopAt, b.EarlyStopAt = tc.a, tc.b
		got, err := summary.Merge(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if got.EarlyStopAt != tc.want {
			t.Errorf("early stops at %v s and %v s: merged at %v s, want %v s", tc.a, tc.b, got.EarlyStopAt, tc.want)
		}
	}
}

// options.earlyStop.minSuccessRate moves the warning's floor, 0 turns it
// off; the result keeps the floor, so that a merge warns as the run did,
// and a result written before it was kept warns below 90 %.
func TestLowSuccessWarningFloor(t *testing.T) {
	for _, tc := range []struct {
		ok, bad int
		floor   float64
		want    string
	}{
		{5, 5, 0.4, ""},
		{3, 7, 0.4, "only 3 of 10 requests succeeded (success rate 30.00 %, below 40 %)"},
		{1, 99, 0, ""},
	} {
		s := outcomesWarningBelow(t, "r", tc.ok, tc.bad, tc.floor)
		if !strings.Contains(s.LowSuccess, tc.want) || (tc.want == "") != (s.LowSuccess == "") {
			t.Errorf("%d ok, %d failed, floor %g: warning %q, want %q", tc.ok, tc.bad, tc.floor, s.LowSuccess, tc.want)
		}
		if s.Meta.MinSuccessRate == nil || *s.Meta.MinSuccessRate != tc.floor {
			t.Errorf("floor %g: the result keeps %v", tc.floor, s.Meta.MinSuccessRate)
		}
	}
	a, b := outcomesWarningBelow(t, "a", 5, 5, 0.4), outcomesWarningBelow(t, "b", 4, 6, 0.4)
	if got, err := summary.Merge(a, b); err != nil || got.LowSuccess != "" {
		t.Errorf("merged at floor 40 %%, 45 %% ok: warning %q (%v), want none", got.LowSuccess, err)
	}
	a.Meta.MinSuccessRate, b.Meta.MinSuccessRate = nil, nil
	if got, err := summary.Merge(a, b); err != nil || !strings.Contains(got.LowSuccess, "below 90 %") {
		t.Errorf("merged results without a floor: warning %q (%v), want the default 90 %%", got.LowSuccess, err)
	}
}

// A threshold skipped in every result (the scenario it names ran in none)
// stays skipped; one that a result judged on samples is judged again on
// the merged metrics, not skipped; one that failed for want of samples in
// a result and was skipped in another (given first) stays failed, with
// the failing result's note.
func TestMergeSkippedThresholds(t *testing.T) {
	const key = "llm_ttft{scenario:default}"
	skipped := summary.ThresholdResult{Metric: "llm_ttft{scenario:c2}", Threshold: "p(99)<100", Passed: true, Skipped: true, Note: "skipped: scenario c2 did not run (x)"}
	empty := summary.ThresholdResult{Metric: "llm_ttft{scenario:c3}", Threshold: "p(99)<100", Note: "no samples: no p(99) to judge (noSamples: 'pass' accepts that)"}
	a := result(t, "a", summarytest.T0, 10*time.Second, 10)
	b := result(t, "b", summarytest.T0, 10*time.Second)
	a.Metrics[key] = a.Metrics["llm_ttft"]
	a.Thresholds = []summary.ThresholdResult{{Metric: key, Threshold: "p(99)<100", Value: 10, Passed: true}, skipped, empty}
	b.Thresholds = []summary.ThresholdResult{{Metric: key, Threshold: "p(99)<100", Passed: true, Skipped: true, Note: "skipped: x"}, skipped, skipped}
	b.Thresholds[2].Metric = empty.Metric
	got, err := summary.Merge(b, a)
	if err != nil {
		t.Fatal(err)
	}
	want := []summary.ThresholdResult{{Metric: key, Threshold: "p(99)<100", Value: 10, Passed: true}, skipped, empty}
	if !reflect.DeepEqual(got.Thresholds, want) {
		t.Errorf("merged thresholds\n got %+v\nwant %+v", got.Thresholds, want)
	}
}

// Each scenario's timeline merges as the run's does: points ending in the
// same second since the merged start add, the percentiles the highest; a
// result's points move by its start's offset, and a scenario only one
// result has a timeline of keeps it.
func TestMergeScenarioTimelines(t *testing.T) {
	parts := []*summary.Summary{
		summarize.Build(summarytest.TwoScenarioPart(t, func(call int) bool { return call%2 == 0 }), summarytest.Meta),
		summarize.Build(summarytest.TwoScenarioPart(t, func(call int) bool { return call%2 == 1 }), summarytest.Meta),
	}
	parts[1].Meta.RunID = "the other half"
	parts[1].Meta.Start = parts[1].Meta.Start.Add(time.Second)
	parts[1].Meta.End = parts[1].Meta.End.Add(time.Second)
	timelines := map[string][2][]summary.TimelinePoint{
		"chat": {
			{{T: 1, Seconds: 1, Requests: 2, OutputTokens: 20, ActiveVUs: 1, TTFTP99: 40}, {T: 2, Seconds: 1, Requests: 1, OutputTokens: 5}},
			{{T: 1, Seconds: 1, Requests: 3, OutputTokens: 9, ActiveVUs: 2, TTFTP99: 70}},
		},
		"rag": {{{T: 3.5, Seconds: 0.5, Requests: 1, InFlight: 1}}, nil},
	}
	for i, p := range parts {
		for j := range p.Scenarios {
			p.Scenarios[j].Timeline = timelines[p.Scenarios[j].Name][i]
		}
	}
	got, err := summary.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]summary.TimelinePoint{
		"chat": {{T: 1, Seconds: 1, Requests: 2, OutputTokens: 20, ActiveVUs: 1, TTFTP99: 40},
			{T: 2, Seconds: 1, Requests: 4, OutputTokens: 14, ActiveVUs: 2, TTFTP99: 70}},
		"rag": {{T: 3.5, Seconds: 0.5, Requests: 1, InFlight: 1}},
	}
	if len(got.Scenarios) != len(want) {
		t.Fatalf("%d scenarios, want %d", len(got.Scenarios), len(want))
	}
	for _, sc := range got.Scenarios {
		if !reflect.DeepEqual(sc.Timeline, want[sc.Name]) {
			t.Errorf("scenario %s's timeline\n got %+v\nwant %+v", sc.Name, sc.Timeline, want[sc.Name])
		}
	}
}

// Instances that ran on one machine (one host name and CPU count) count
// its CPUs once; different machines add theirs.
func TestMergeCountsEachMachinesCPUsOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hosts    []string
		cpus     []int
		wantHost string
		wantCPUs int
	}{
		{"one host", []string{"vm", "vm"}, []int{2, 2}, "vm", 2},
		{"two hosts", []string{"gen-1", "gen-2"}, []int{2, 2}, "gen-1, gen-2", 4},
		{"one host twice and another", []string{"gen-1", "gen-1", "gen-2"}, []int{8, 8, 4}, "gen-1, gen-2", 12},
		{"one name, two CPU counts: two machines", []string{"vm", "vm"}, []int{2, 4}, "vm", 6},
		{"no host name: each its own", []string{"", ""}, []int{2, 2}, "", 4},
	} {
		var results []*summary.Summary
		for i, host := range tc.hosts {
			r := result(t, fmt.Sprintf("r%d", i), summarytest.T0, 10*time.Second, 10)
			r.Meta.Host, r.Meta.CPUs = host, tc.cpus[i]
			results = append(results, r)
		}
		got, err := summary.Merge(results...)
		if err != nil {
			t.Fatal(err)
		}
		if got.Meta.Host != tc.wantHost || got.Meta.CPUs != tc.wantCPUs {
			t.Errorf("%s: host %q, %d CPUs; want %q, %d", tc.name, got.Meta.Host, got.Meta.CPUs, tc.wantHost, tc.wantCPUs)
		}
	}
}
