package capacity_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/summary"
)

// lvl is one scenario of a run: its shape and figures.
type lvl struct {
	name, executor string
	vus            int
	tags           map[string]string
	// ok and failed requests; output tok/s; TTFT p50 and p99, TPOT p99 (ms)
	ok, failed             int64
	tokps                  float64
	ttft50, ttft99, tpot99 float64
}

// conc is a constant-vus level tagged concurrency=n, as the stock sweep
// makes them, with all its requests ok.
func conc(n string, tokps, ttft50, ttft99, tpot99 float64) lvl {
	return lvl{name: "c" + n, executor: "constant-vus", tags: map[string]string{"concurrency": n}, ok: 100, tokps: tokps, ttft50: ttft50, ttft99: ttft99, tpot99: tpot99}
}

// run is the summary of a run of the scenarios.
func run(levels ...lvl) *summary.Summary {
	s := &summary.Summary{}
	for _, l := range levels {
		s.Meta.LoadShape = append(s.Meta.LoadShape, summary.ScenarioShape{Name: l.name, Executor: l.executor, MaxVUs: l.vus, Tags: l.tags})
		total := l.ok + l.failed
		sv := summary.Serving{Requests: total, OK: l.ok, Failed: l.failed, OutputTokenThroughput: l.tokps, RequestThroughput: l.tokps / 100}
		if total > 0 {
			sv.SuccessRate = float64(l.ok) / float64(total)
		}
		sc := summary.ScenarioSummary{Name: l.name, Serving: sv}
		if l.ok > 0 {
			sc.Latency = []summary.LatencyRow{
				{Metric: "llm_ttft", Count: l.ok, P: map[string]float64{"p50": l.ttft50, "p99": l.ttft99}},
				{Metric: "llm_tpot", Count: l.ok, P: map[string]float64{"p50": l.tpot99 / 2, "p99": l.tpot99}},
			}
		}
		s.Scenarios = append(s.Scenarios, sc)
	}
	return s
}

// knee is a concurrency sweep whose throughput stops growing beyond 4
// while TTFT climbs.
func knee() *summary.Summary {
	return run(
		conc("1", 100, 50, 80, 20),
		conc("2", 190, 52, 90, 21),
		conc("4", 360, 55, 150, 25),
		conc("8", 380, 120, 300, 40),
		conc("16", 385, 250, 600, 80),
	)
}

func TestAssess(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	withSuccess := func(s *summary.Summary, i int, ok, failed int64) *summary.Summary {
		sv := &s.Scenarios[i].Serving
		sv.OK, sv.Failed, sv.Requests, sv.SuccessRate = ok, failed, ok+failed, float64(ok)/float64(ok+failed)
		return s
	}
	tests := []struct {
		name string
		s    *summary.Summary
		slo  summary.SLO
		// nil: Assess returns nil; otherwise the variable, the levels in
		// order, those that meet the SLO, the saturation and the
		// level within the SLO (nil: none).
		notSweep   bool
		variable   string
		levels     []float64
		meets      []float64
		saturation *float64
		within     *float64
	}{
		{name: "knee found", s: knee(),
			variable: "concurrency", levels: []float64{1, 2, 4, 8, 16}, saturation: f(4)},
		{name: "no knee: throughput keeps growing", s: run(conc("1", 100, 50, 80, 20), conc("2", 200, 60, 90, 20), conc("4", 390, 80, 120, 20)),
			variable: "concurrency", levels: []float64{1, 2, 4}},
		{name: "no knee: flat throughput but TTFT flat too", s: run(conc("1", 100, 50, 80, 20), conc("2", 105, 52, 90, 20), conc("4", 108, 54, 120, 20)),
			variable: "concurrency", levels: []float64{1, 2, 4}},
		{name: "SLO met up to a level", s: knee(), slo: summary.SLO{TTFTP99: 200},
			variable: "concurrency", levels: []float64{1, 2, 4, 8, 16}, meets: []float64{1, 2, 4}, saturation: f(4), within: f(4)},
		{name: "TPOT SLO", s: knee(), slo: summary.SLO{TTFTP99: 1000, TPOTP99: 30},
			variable: "concurrency", levels: []float64{1, 2, 4, 8, 16}, meets: []float64{1, 2, 4}, saturation: f(4), within: f(4)},
		{name: "SLO needs 99 % success", s: withSuccess(knee(), 2, 97, 3), slo: summary.SLO{TTFTP99: 200},
			variable: "concurrency", levels: []float64{1, 2, 4, 8, 16}, meets: []float64{1, 2}, saturation: f(4), within: f(2)},
		{name: "the highest level within SLO, whatever its throughput", s: run(conc("1", 100, 50, 80, 20), conc("2", 200, 60, 90, 20), conc("4", 150, 60, 95, 20)),
			slo: summary.SLO{TTFTP99: 100}, variable: "concurrency", levels: []float64{1, 2, 4}, meets: []float64{1, 2, 4}, within: f(4)},
		{name: "no level meets the SLO", s: knee(), slo: summary.SLO{TTFTP99: 50},
			variable: "concurrency", levels: []float64{1, 2, 4, 8, 16}, saturation: f(4)},
		{name: "a level that failed outright", s: run(conc("1", 100, 50, 80, 20), conc("2", 200, 60, 90, 20),
			lvl{name: "c4", executor: "constant-vus", tags: map[string]string{"concurrency": "4"}, failed: 50}),
			slo: summary.SLO{TTFTP99: 100}, variable: "concurrency", levels: []float64{1, 2, 4}, meets: []float64{1, 2}, within: f(2)},
		{name: "rate sweep, scenarios out of order", s: run(
			lvl{name: "r4", executor: "constant-arrival-rate", vus: 512, tags: map[string]string{"rate": "4"}, ok: 100, tokps: 500, ttft50: 400, ttft99: 900, tpot99: 30},
			lvl{name: "r1", executor: "constant-arrival-rate", vus: 512, tags: map[string]string{"rate": "1"}, ok: 100, tokps: 128, ttft50: 40, ttft99: 90, tpot99: 20},
			lvl{name: "r2.5", executor: "constant-arrival-rate", vus: 512, tags: map[string]string{"rate": "2.5"}, ok: 100, tokps: 320, ttft50: 60, ttft99: 120, tpot99: 22}),
			slo: summary.SLO{TTFTP99: 500}, variable: "rate", levels: []float64{1, 2.5, 4}, meets: []float64{1, 2.5}, within: f(2.5)},
		{name: "untagged constant-vus levels", s: run(
			lvl{name: "small", executor: "constant-vus", vus: 8, ok: 10, tokps: 300, ttft50: 50, ttft99: 60},
			lvl{name: "big", executor: "constant-vus", vus: 32, ok: 10, tokps: 310, ttft50: 200, ttft99: 300}),
			variable: "concurrency", levels: []float64{8, 32}, saturation: f(8)},
		{name: "concurrency wins over rate", s: run(
			lvl{name: "a", executor: "constant-vus", tags: map[string]string{"concurrency": "2", "rate": "9"}, ok: 10, tokps: 100, ttft50: 50},
			lvl{name: "b", executor: "constant-vus", tags: map[string]string{"concurrency": "4", "rate": "1"}, ok: 10, tokps: 200, ttft50: 50}),
			variable: "concurrency", levels: []float64{2, 4}},
		{name: "untagged scenarios beside tagged ones are no levels", s: run(conc("1", 100, 50, 80, 20), conc("2", 200, 60, 90, 20),
			lvl{name: "warm", executor: "shared-iterations", vus: 1, ok: 5, tokps: 10}),
			variable: "concurrency", levels: []float64{1, 2}},
		{name: "mixed tags", s: run(conc("1", 100, 50, 80, 20),
			lvl{name: "r2", executor: "constant-arrival-rate", tags: map[string]string{"rate": "2"}, ok: 10, tokps: 200, ttft50: 50}),
			notSweep: true},
		{name: "one level twice", s: run(conc("1", 100, 50, 80, 20), conc("2", 200, 60, 90, 20),
			lvl{name: "again", executor: "constant-vus", tags: map[string]string{"concurrency": "2"}, ok: 10, tokps: 200, ttft50: 50}),
			notSweep: true},
		{name: "single level", s: run(conc("8", 100, 50, 80, 20)), notSweep: true},
		{name: "one level with completed requests", s: run(conc("1", 100, 50, 80, 20),
			lvl{name: "c2", executor: "constant-vus", tags: map[string]string{"concurrency": "2"}, failed: 10}), notSweep: true},
		{name: "a level that never ran", s: run(conc("1", 100, 50, 80, 20),
			lvl{name: "c2", executor: "constant-vus", tags: map[string]string{"concurrency": "2"}}), notSweep: true},
		{name: "non-numeric tags", s: run(
			lvl{name: "a", executor: "ramping-vus", vus: 4, tags: map[string]string{"concurrency": "low"}, ok: 10, tokps: 100},
			lvl{name: "b", executor: "ramping-vus", vus: 8, tags: map[string]string{"concurrency": "high"}, ok: 10, tokps: 200}), notSweep: true},
		{name: "a workload mix", s: run(
			lvl{name: "chat", executor: "constant-vus", vus: 4, ok: 10, tokps: 100},
			lvl{name: "rag", executor: "constant-arrival-rate", vus: 8, ok: 10, tokps: 200}), notSweep: true},
		{name: "no scenarios", s: &summary.Summary{}, notSweep: true},
		{name: "no summary", notSweep: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := capacity.Assess(tc.s, capacity.Criteria{SLO: tc.slo})
			if tc.notSweep {
				if c != nil {
					t.Fatalf("not a sweep, got %+v", c)
				}
				return
			}
			if c == nil {
				t.Fatal("no verdict")
			}
			var levels, meets []float64
			for _, l := range c.Levels {
				levels = append(levels, l.Level)
				if l.MeetsSLO {
					meets = append(meets, l.Level)
				}
			}
			if c.Variable != tc.variable || !slices.Equal(levels, tc.levels) || !slices.Equal(meets, tc.meets) {
				t.Errorf("%s levels %v, meeting the SLO %v; want %s %v, %v", c.Variable, levels, meets, tc.variable, tc.levels, tc.meets)
			}
			if c.SLO != tc.slo {
				t.Errorf("SLO %+v, want %+v", c.SLO, tc.slo)
			}
			check := func(what string, got *summary.CapacityLevel, want *float64) {
				t.Helper()
				switch {
				case want == nil && got != nil:
					t.Errorf("%s at %g, want none", what, got.Level)
				case want != nil && got == nil:
					t.Errorf("no %s, want %g", what, *want)
				case want != nil && got.Level != *want:
					t.Errorf("%s at %g, want %g", what, got.Level, *want)
				}
			}
			check("saturation", c.Saturation, tc.saturation)
			check("within SLO", c.MaxWithinSLO, tc.within)
			if c.Method == "" {
				t.Error("no method")
			}
		})
	}
}

// A level carries its scenario's figures.
func TestLevelFigures(t *testing.T) {
	s := knee()
	s.Scenarios[3].Serving.RequestThroughput = 3.5
	c := capacity.Assess(s, capacity.Criteria{SLO: summary.SLO{TTFTP99: 2000, TPOTP99: 50}})
	want := summary.CapacityLevel{Scenario: "c8", Level: 8, RequestRate: 3.5, OutputThroughput: 380, SuccessRate: 1,
		TTFTP50: 120, TTFTP99: 300, TPOTP50: 20, TPOTP99: 40, MeetsSLO: true}
	if got := c.Levels[3]; got != want {
		t.Errorf("level %+v\nwant  %+v", got, want)
	}
	if *c.Saturation != c.Levels[2] || *c.MaxWithinSLO != c.Levels[3] {
		t.Errorf("saturation %+v, within SLO %+v", c.Saturation, c.MaxWithinSLO)
	}
}

// The method states both rules with their numbers.
func TestMethod(t *testing.T) {
	for _, tc := range []struct {
		slo  summary.SLO
		want []string
	}{
		{summary.SLO{TTFTP99: 2000, TPOTP99: 50}, []string{
			"first level after which output throughput grows by less than 10 %", "TTFT p50 grows by more than 10 %",
			"the highest level among those with TTFT p99 ≤ 2000 ms, TPOT p99 ≤ 50 ms, success rate ≥ 99 %"}},
		{summary.SLO{TPOTP99: 40}, []string{"among those with TPOT p99 ≤ 40 ms, success rate ≥ 99 %"}},
		{summary.SLO{}, []string{"less than 10 %", "No SLO was given"}},
	} {
		m := capacity.Assess(knee(), capacity.Criteria{SLO: tc.slo}).Method
		for _, w := range tc.want {
			if !strings.Contains(m, w) {
				t.Errorf("SLO %+v: method %q lacks %q", tc.slo, m, w)
			}
		}
	}
}

// The criteria's minimum gain moves the saturation point, is stated in
// the method and kept in the verdict, so that a result judged again
// (merge, report --slo) is judged by the same rule.
func TestMinGain(t *testing.T) {
	for _, tc := range []struct {
		gain, want float64
		words      string
	}{
		{0, 4, "less than 10 %"},
		{0.03, 8, "less than 3 %"},
	} {
		c := capacity.Assess(knee(), capacity.Criteria{MinGain: tc.gain})
		if c.Saturation == nil || c.Saturation.Level != tc.want {
			t.Errorf("min gain %g: saturation %+v, want at %g", tc.gain, c.Saturation, tc.want)
		}
		if !strings.Contains(c.Method, tc.words) {
			t.Errorf("min gain %g: method %q lacks %q", tc.gain, c.Method, tc.words)
		}
		s := knee()
		s.Capacity = c
		if got := capacity.CriteriaOf(s).MinGain; got != c.MinGain || got <= 0 {
			t.Errorf("min gain %g: kept %g, criteria of the result %g", tc.gain, c.MinGain, got)
		}
	}
}

// A sweep stops once the levels it ran show what its rule waits for, and
// not before; the knee sweep saturates at 4, which its level 8 shows.
func TestStopReason(t *testing.T) {
	levels := knee().Scenarios
	ran := func(n int) *summary.Summary {
		s := knee()
		s.Scenarios = levels[:n]
		return s
	}
	slo := summary.SLO{TTFTP99: 200}
	tests := []struct {
		name string
		s    *summary.Summary
		crit capacity.Criteria
		want string // "" goes on
	}{
		{"never", ran(5), capacity.Criteria{Stop: capacity.StopNever}, ""},
		{"unset", ran(5), capacity.Criteria{}, ""},
		{"saturation not yet shown", ran(3), capacity.Criteria{Stop: capacity.StopAtSaturation}, ""},
		{"saturation shown by the level after it", ran(4), capacity.Criteria{Stop: capacity.StopAtSaturation},
			"saturation at concurrency 4: from it to concurrency 8 output throughput grew by less than 10 % while TTFT p50 grew by more"},
		{"every level within the SLO", ran(3), capacity.Criteria{Stop: capacity.StopAtSLOMiss, SLO: slo}, ""},
		{"a level missed the SLO", ran(4), capacity.Criteria{Stop: capacity.StopAtSLOMiss, SLO: slo},
			"concurrency 8 missed the SLO (TTFT p99 ≤ 200 ms, success rate ≥ 99 %)"},
		{"the first level missed the SLO", ran(1), capacity.Criteria{Stop: capacity.StopAtSLOMiss, SLO: summary.SLO{TTFTP99: 10}},
			"concurrency 1 missed the SLO (TTFT p99 ≤ 10 ms, success rate ≥ 99 %)"},
	}
	for _, tc := range tests {
		if got := capacity.StopReason(tc.s, tc.crit); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A level of a result file and a whole run are judged by the rule of a
// sweep's levels: each bound the SLO sets met, a latency with no figure
// missing it, and 99 % of requests successful.
func TestLevelAndRunMeet(t *testing.T) {
	slo := summary.SLO{TTFTP99: 1000, TPOTP99: 50}
	good := summary.CapacityLevel{Level: 4, SuccessRate: 1, TTFTP99: 900, TPOTP99: 40, OutputThroughput: 100}
	for _, tc := range []struct {
		name  string
		level func(*summary.CapacityLevel)
		slo   summary.SLO
		want  bool
	}{
		{"within both bounds", func(*summary.CapacityLevel) {}, slo, true},
		{"TTFT over", func(l *summary.CapacityLevel) { l.TTFTP99 = 1900 }, slo, false},
		{"TPOT over", func(l *summary.CapacityLevel) { l.TPOTP99 = 51 }, slo, false},
		{"no TPOT figure", func(l *summary.CapacityLevel) { l.TPOTP99 = 0 }, slo, false},
		{"no TPOT figure, no TPOT bound", func(l *summary.CapacityLevel) { l.TPOTP99 = 0 }, summary.SLO{TTFTP99: 1000}, true},
		{"too many failures", func(l *summary.CapacityLevel) { l.SuccessRate = 0.9 }, slo, false},
		{"no SLO", func(*summary.CapacityLevel) {}, summary.SLO{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := good
			tc.level(&l)
			if got := capacity.LevelMeets(l, tc.slo); got != tc.want {
				t.Errorf("LevelMeets %v, want %v", got, tc.want)
			}
			run := &summary.Summary{Serving: summary.Serving{OK: 10, SuccessRate: l.SuccessRate, OutputTokenThroughput: l.OutputThroughput},
				Latency: []summary.LatencyRow{{Metric: "llm_ttft", Count: 10, P: map[string]float64{"p99": l.TTFTP99}}}}
			if l.TPOTP99 > 0 {
				run.Latency = append(run.Latency, summary.LatencyRow{Metric: "llm_tpot", Count: 10, P: map[string]float64{"p99": l.TPOTP99}})
			}
			if got := capacity.RunMeets(run, tc.slo); got != tc.want {
				t.Errorf("RunMeets %v, want %v", got, tc.want)
			}
		})
	}
}

// Levels rows a sweep's levels as Assess does, from its first level on,
// judged against the SLO; a run that is no sweep has none.
func TestLevels(t *testing.T) {
	slo := capacity.Criteria{SLO: summary.SLO{TTFTP99: 100}}
	variable, one := capacity.Levels(run(conc("1", 100, 50, 80, 20)), slo)
	if variable != capacity.Concurrency || len(one) != 1 || one[0].Level != 1 || !one[0].MeetsSLO || one[0].OutputThroughput != 100 {
		t.Errorf("a sweep's first level: %q %+v, want concurrency 1 at 100 tok/s, meeting the SLO", variable, one)
	}
	_, all := capacity.Levels(knee(), slo)
	if want := capacity.Assess(knee(), slo).Levels; !slices.Equal(all, want) {
		t.Errorf("Levels %+v, want Assess's rows %+v", all, want)
	}
	notSweep := run(lvl{name: "chat", executor: "ramping-vus", ok: 10, tokps: 50})
	if variable, levels := capacity.Levels(notSweep, slo); variable != "" || levels != nil {
		t.Errorf("a run that is no sweep has levels: %q %+v", variable, levels)
	}
}
