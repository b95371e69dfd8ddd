package capacity_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/summarytest"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/capacity"
	"github.com/llmrun/llmrun/runtime/summary"
)

// block is one scenario of one level: n completed requests with TTFTs
// spread evenly over [ttft, ttft·spread] ms, then failed ones; good
// counts the goodput's good requests (-1: no goodput).
func block(t *testing.T, name string, n int, ttft, spread float64, failed, good int) summary.ScenarioSummary {
	t.Helper()
	var results []*llm.Result
	for i := range n {
		v := ttft * (1 + (spread-1)*float64(i)/float64(max(n-1, 1)))
		results = append(results, summarytest.Streamed(v, 10, 10, 10))
	}
	for range failed {
		results = append(results, summarytest.Failed(llm.ErrHTTP5xx))
	}
	s := summarytest.Build(t, 10*time.Second, results...)
	sc := summary.ScenarioSummary{Name: name, Serving: s.Serving, Metrics: s.Metrics, Latency: s.Latency}
	if good >= 0 {
		sc.Serving.Goodput = &summary.Goodput{Good: int64(good), Requests: int64(n + failed)}
	}
	return sc
}

func TestJudgeLevel(t *testing.T) {
	slo := summary.SLO{TTFTP99: 500}
	tests := []struct {
		name      string
		scenarios []summary.ScenarioSummary
		share     float64
		// the verdict and the deciding figure
		verdict, figure string
	}{
		{name: "every interval within the SLO", scenarios: []summary.ScenarioSummary{block(t, "a", 1000, 100, 2, 0, -1)},
			verdict: capacity.Met, figure: "ttft_p99"},
		{name: "every interval above the SLO", scenarios: []summary.ScenarioSummary{block(t, "a", 1000, 600, 2, 0, -1)},
			verdict: capacity.Missed, figure: "ttft_p99"},
		{name: "a p99 of too few requests is inconclusive, though its value is within", scenarios: []summary.ScenarioSummary{block(t, "a", 100, 100, 2, 0, -1)},
			verdict: capacity.Inconclusive, figure: "ttft_p99"},
		{name: "few requests, all far above the SLO: missed", scenarios: []summary.ScenarioSummary{block(t, "a", 50, 2000, 1.1, 0, -1)},
			verdict: capacity.Missed, figure: "ttft_p99"},
		{name: "a p99 whose interval straddles the bound", scenarios: []summary.ScenarioSummary{block(t, "a", 400, 100, 5.04, 0, -1)},
			verdict: capacity.Inconclusive, figure: "ttft_p99"},
		{name: "5 % failed", scenarios: []summary.ScenarioSummary{block(t, "a", 950, 100, 2, 50, -1)},
			verdict: capacity.Missed, figure: "success_rate"},
		{name: "a mix is judged scenario by scenario", scenarios: []summary.ScenarioSummary{block(t, "chat", 1000, 100, 2, 0, -1), block(t, "rag", 1000, 700, 2, 0, -1)},
			verdict: capacity.Missed, figure: "rag: ttft_p99"},
		{name: "too few good requests", scenarios: []summary.ScenarioSummary{block(t, "a", 1000, 100, 2, 0, 800)}, share: 0.9,
			verdict: capacity.Missed, figure: "goodput_share"},
		{name: "enough good requests, nearer their bound than TTFT", scenarios: []summary.ScenarioSummary{block(t, "a", 1000, 100, 2, 0, 990)}, share: 0.9,
			verdict: capacity.Met, figure: "goodput_share"},
		{name: "no request ended", scenarios: []summary.ScenarioSummary{{Name: "a"}},
			verdict: capacity.Inconclusive, figure: "success_rate"},
		{name: "a mix's rounds named by level: the figure by scenario", scenarios: []summary.ScenarioSummary{block(t, "chat@8.5", 1000, 100, 2, 0, -1), block(t, "rag@8.5", 1000, 700, 2, 0, -1)},
			verdict: capacity.Missed, figure: "rag: ttft_p99"},
		{name: "no scenario ran at the level", scenarios: nil,
			verdict: capacity.Inconclusive, figure: "success_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := capacity.JudgeLevel(tt.scenarios, false, slo, tt.share, 0.95)
			if j.Verdict != tt.verdict || j.Figure != tt.figure {
				t.Errorf("got %s on %s (%+v), want %s on %s", j.Verdict, j.Figure, j.Estimate, tt.verdict, tt.figure)
			}
		})
	}
}

// server is a synthetic server whose TTFT is 100 ms up to threshold and
// over the SLO of 500 ms beyond it, growing with the level; each second of a level completes perSecond requests.
type server struct {
	threshold float64
	perSecond func(level float64) int
}

// drive runs a search against the server: each round adds a step's
// requests to its level (a round at a level already run continues it)
// and hands the searcher the run so far.
func drive(t *testing.T, srv server, o capacity.SearchOptions) *summary.CapacitySearch {
	t.Helper()
	s := capacity.NewSearcher(o, summary.SLO{TTFTP99: 500})
	run := &summary.Summary{}
	steps := map[float64]int{}
	for round := 0; round < 100; round++ {
		level, step, ok := s.Next(run)
		if !ok {
			return s.Result()
		}
		if step != o.Step {
			t.Fatalf("round %d: step %s, want %s", round, step, o.Step)
		}
		steps[level]++
		secs := float64(steps[level]) * o.Step.Seconds()
		ttft := 100.0
		if level > srv.threshold {
			ttft = 600 + 1000*(level-srv.threshold)/srv.threshold*10
		}
		sc := block(t, "s@"+strconv.FormatFloat(level, 'g', -1, 64), srv.perSecond(level)*int(secs), ttft, 2, 0, -1)
		sc.Serving.DurationSeconds = secs
		run = withLevel(run, o.Variable, level, sc)
	}
	t.Fatal("the search did not end within 100 rounds")
	return nil
}

// withLevel is run with the level's scenario sc, added or replaced.
func withLevel(run *summary.Summary, variable string, level float64, sc summary.ScenarioSummary) *summary.Summary {
	for i := range run.Scenarios {
		if run.Scenarios[i].Name == sc.Name {
			run.Scenarios[i] = sc
			return run
		}
	}
	run.Meta.LoadShape = append(run.Meta.LoadShape, summary.ScenarioShape{Name: sc.Name, Executor: "constant-arrival-rate",
		Tags: map[string]string{variable: strconv.FormatFloat(level, 'g', -1, 64)}})
	run.Scenarios = append(run.Scenarios, sc)
	return run
}

func TestSearchBracketsAMonotoneServer(t *testing.T) {
	many := func(float64) int { return 100 } // 400 requests a 4 s step
	options := func(variable string, start, max float64) capacity.SearchOptions {
		return capacity.SearchOptions{Variable: variable, Start: start, Max: max, Width: 0.05, Confidence: 0.95,
			Budget: time.Hour, Step: 4 * time.Second, MaxStep: 12 * time.Second}
	}
	tests := []struct {
		name string
		srv  server
		o    capacity.SearchOptions
		// want the bracket [low, high] (high 0: none), the stop's
		// start, the levels tried
		low, high float64
		stop      string
		levels    int
		check     func(t *testing.T, r *summary.CapacitySearch)
	}{
		{name: "a rate bracketed within ±5 %", srv: server{threshold: 37.3, perSecond: many}, o: options(capacity.Rate, 4, 1000),
			stop: "bracketed within ±5 %", check: func(t *testing.T, r *summary.CapacitySearch) {
				if !(r.Low <= 37.3 && 37.3 < r.High) || (r.High-r.Low)/(r.High+r.Low) > 0.05 {
					t.Errorf("bracket [%g, %g] does not hold 37.3 within ±5 %%", r.Low, r.High)
				}
				if r.Estimate != math.Sqrt(r.Low*r.High) {
					t.Errorf("estimate %g, want the geometric mean of the bracket", r.Estimate)
				}
			}},
		{name: "a concurrency bracketed to one VU", srv: server{threshold: 13, perSecond: many}, o: options(capacity.Concurrency, 2, 1000),
			low: 13, high: 14, stop: "bracketed: concurrency 13 met the SLO and concurrency 14 did not"},
		{name: "a width finer than the levels' rounding stops once no level lies between", srv: server{threshold: 10.005, perSecond: many},
			o: func() capacity.SearchOptions {
				o := options(capacity.Rate, 10, 1000)
				o.Width = 1e-5
				return o
			}(),
			low: 10, high: 10.01, stop: "bracketed: rate 10 met the SLO and rate 10.01 did not, with no level between them"},
		{name: "the first level misses: the search halves until a level meets", srv: server{threshold: 10, perSecond: many}, o: options(capacity.Rate, 50, 1000),
			stop: "bracketed within ±5 %", check: func(t *testing.T, r *summary.CapacitySearch) {
				if !(r.Low <= 10 && 10 < r.High) {
					t.Errorf("bracket [%g, %g] does not hold 10", r.Low, r.High)
				}
				if len(r.Levels) < 4 {
					t.Fatalf("%d levels tried: want the search to go down from 50", len(r.Levels))
				}
				if got := []float64{r.Levels[1].Level, r.Levels[2].Level, r.Levels[3].Level}; got[0] != 25 || got[1] != 12.5 || got[2] != 6.25 {
					t.Errorf("levels after 50: %v, want 25, 12.5, 6.25", got)
				}
			}},
		{name: "no level down to the lowest meets", srv: server{threshold: 0.001, perSecond: many}, o: options(capacity.Rate, 50, 1000),
			high: 0.04883, stop: "no level down to rate 0.04883 met the SLO: the capacity is below it", levels: 11},
		{name: "levels short of requests, their figures within the SLO: the search grows past them", srv: server{threshold: 37.3, perSecond: func(l float64) int { return int(25 * l) }},
			o: options(capacity.Rate, 1, 1000), stop: "bracketed within ±5 %", check: func(t *testing.T, r *summary.CapacitySearch) {
				if !(r.Low <= 37.3 && 37.3 < r.High) {
					t.Errorf("bracket [%g, %g] does not hold 37.3", r.Low, r.High)
				}
				if len(r.Levels) < 3 {
					t.Fatalf("%d levels tried: want the search to grow from 1", len(r.Levels))
				}
				for _, l := range r.Levels[:2] {
					if l.Verdict != capacity.Inconclusive || l.Extended {
						t.Errorf("level %g: %s, extended %v; want inconclusive, not run longer: the next level up has more requests", l.Level, l.Verdict, l.Extended)
					}
				}
				if r.Levels[2].Level != 4 || r.Levels[2].Verdict != capacity.Met {
					t.Errorf("the third level %+v, want 4 met", r.Levels[2])
				}
			}},
		{name: "a level short of requests, then one that misses", srv: server{threshold: 1.5, perSecond: func(l float64) int { return int(25 * l) }},
			o: options(capacity.Rate, 1, 1000), high: 2, levels: 2,
			stop: "below rate 2: no level met the SLO with confidence (too few requests at levels ≤ 1): run a longer step", check: func(t *testing.T, r *summary.CapacitySearch) {
				if r.Low != 0 {
					t.Errorf("low %g: no level was met with confidence", r.Low)
				}
			}},
		{name: "the highest level allowed meets", srv: server{threshold: 100, perSecond: many}, o: options(capacity.Rate, 5, 20),
			low: 20, stop: "the highest level allowed, rate 20, met the SLO", levels: 3},
		{name: "the budget ends", srv: server{threshold: 1000, perSecond: many},
			o: func() capacity.SearchOptions {
				o := options(capacity.Rate, 1, 1e6)
				o.Budget = 10 * time.Second
				return o
			}(),
			low: 2, stop: "the time budget (10s) ended", levels: 2},
		{name: "a level inconclusive after its longest run counts as not met", srv: server{threshold: 100, perSecond: func(l float64) int {
			if l > 8 {
				return 10 // 120 requests in 12 s cannot bound a p99
			}
			return 100
		}}, o: options(capacity.Rate, 4, 1000), low: 8, stop: "bracketed", check: func(t *testing.T, r *summary.CapacitySearch) {
			if r.High <= 8 || r.High > 8.8 {
				t.Errorf("bracket [%g, %g]: every level above 8 is inconclusive, so the search bisects down to 8", r.Low, r.High)
			}
			for _, l := range r.Levels {
				if l.Level > 8 && (l.Verdict != capacity.Inconclusive || !l.Extended || l.Seconds != 12 || l.Figure != "ttft_p99" || l.Why == "") {
					t.Errorf("level %g: %+v, want inconclusive on ttft_p99 after 12 s, extended, saying why", l.Level, l)
				}
			}
		}},
		{name: "a level run longer until its interval is bounded", srv: server{threshold: 100, perSecond: func(float64) int { return 40 }},
			o: options(capacity.Rate, 64, 64), low: 64, stop: "the highest level allowed", levels: 1, check: func(t *testing.T, r *summary.CapacitySearch) {
				if l := r.Levels[0]; l.Verdict != capacity.Met || !l.Extended || l.Seconds != 12 {
					t.Errorf("level 64: %+v, want met after 12 s, extended", l)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := drive(t, tt.srv, tt.o)
			if tt.low != 0 && r.Low != tt.low || tt.high != 0 && r.High != tt.high {
				t.Errorf("bracket [%g, %g], want [%g, %g]; levels %+v", r.Low, r.High, tt.low, tt.high, r.Levels)
			}
			if !strings.HasPrefix(r.Stop, tt.stop) {
				t.Errorf("stop %q, want it to start %q", r.Stop, tt.stop)
			}
			if tt.levels != 0 && len(r.Levels) != tt.levels {
				t.Errorf("%d levels tried, want %d: %+v", len(r.Levels), tt.levels, r.Levels)
			}
			for i := 1; i < len(r.Levels); i++ {
				if r.Levels[i].Level == r.Levels[i-1].Level {
					t.Errorf("level %g listed twice: a level run longer is one row", r.Levels[i].Level)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

// In a mixed search, the most within the SLO is the level's total over
// its scenarios, not one scenario's: throughputs summed, the worst
// scenario's latency.
func TestSearchVerdictTotalsAMixedLevel(t *testing.T) {
	run := &summary.Summary{}
	for _, l := range []struct {
		level     float64
		chat, rag float64 // TTFT, ms
	}{{8, 100, 200}, {16, 900, 900}} {
		tag := strconv.FormatFloat(l.level, 'g', -1, 64)
		for _, sc := range []summary.ScenarioSummary{block(t, "chat@"+tag, 1000, l.chat, 2, 0, -1), block(t, "rag@"+tag, 1000, l.rag, 2, 0, -1)} {
			run = withLevel(run, capacity.Rate, l.level, sc)
		}
	}
	search := &summary.CapacitySearch{Variable: capacity.Rate, Low: 8, High: 16, Levels: []summary.SearchLevel{
		{Level: 8, Verdict: capacity.Met}, {Level: 16, Verdict: capacity.Missed}}}
	c := capacity.SearchVerdict(run, search, summary.SLO{TTFTP99: 500})
	var chat, rag summary.CapacityLevel
	for _, row := range c.Levels {
		switch row.Scenario {
		case "chat@8":
			chat = row
		case "rag@8":
			rag = row
		}
	}
	m := c.MaxWithinSLO
	switch {
	case m == nil:
		t.Fatal("no max within the SLO")
	case m.Level != 8 || m.Scenario != "chat@8 + rag@8":
		t.Errorf("max within the SLO %q at %g, want both scenarios of level 8", m.Scenario, m.Level)
	case m.OutputThroughput != chat.OutputThroughput+rag.OutputThroughput || m.OutputThroughput <= chat.OutputThroughput:
		t.Errorf("output throughput %g, want chat's %g + rag's %g", m.OutputThroughput, chat.OutputThroughput, rag.OutputThroughput)
	case m.RequestRate != chat.RequestRate+rag.RequestRate:
		t.Errorf("request rate %g, want chat's %g + rag's %g", m.RequestRate, chat.RequestRate, rag.RequestRate)
	case m.TTFTP99 != rag.TTFTP99 || rag.TTFTP99 <= chat.TTFTP99:
		t.Errorf("TTFT p99 %g, want the slower scenario's, rag's %g (chat's %g)", m.TTFTP99, rag.TTFTP99, chat.TTFTP99)
	}
}
