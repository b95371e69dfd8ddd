package timeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

// of tags rec with its scenario.
func of(scenario string, rec *llm.Record) *llm.Record {
	rec.Tags = metrics.NewTagSet(map[string]string{"scenario": scenario})
	return rec
}

// byScenario is a reading of a run's progress: per scenario its active
// VUs and the output tokens arrived so far.
func byScenario(vus, tokens map[string]int64) engine.Progress {
	var p engine.Progress
	for name, n := range vus {
		p.Scenarios = append(p.Scenarios, engine.ScenarioProgress{Name: name, ActiveVUs: n})
		p.ActiveVUs += n
	}
	for name, n := range tokens {
		p.Arrived = append(p.Arrived, engine.TokenCount{Scenario: name, Model: "m", Tokens: n})
		p.OutputTokens += n
	}
	return p
}

// brief is what a test checks of a point.
type brief struct {
	T                        float64
	Requests, Failed, Tokens int64
	VUs, InFlight            int64
	TTFTP50                  float64
}

func briefs(points []summary.TimelinePoint) []brief {
	var out []brief
	for _, p := range points {
		out = append(out, brief{p.T, p.Requests, p.Failed, p.OutputTokens, p.ActiveVUs, p.InFlight, p.TTFTP50})
	}
	return out
}

// Each scenario's timeline has its own requests, tokens and VUs, and only
// the intervals it had something in; the scenarios' counts add up to the
// run's in every interval.
func TestScenarioPoints(t *testing.T) {
	type reading struct {
		at          time.Duration
		vus, tokens map[string]int64
	}
	for _, c := range []struct {
		name     string
		requests []*llm.Record
		readings []reading
		end      float64
		want     map[string][]brief
	}{{
		name: "two at once",
		requests: []*llm.Record{
			of("chat", req(0.5, 300, true, 20, 5)),  // 0.2 → 0.5 s
			of("rag", req(1.5, 1400, true, 200, 9)), // 0.1 → 1.5 s
			of("chat", req(1.7, 200, false, 0, 0)),  // 1.5 → 1.7 s
			of("chat", req(2.4, 500, true, 30, 4)),  // 1.9 → 2.4 s
		},
		readings: []reading{
			{500 * time.Millisecond, map[string]int64{"chat": 1, "rag": 1}, map[string]int64{"chat": 5, "rag": 4}},
			{1500 * time.Millisecond, map[string]int64{"chat": 1, "rag": 0}, map[string]int64{"chat": 5, "rag": 9}},
			{2500 * time.Millisecond, map[string]int64{"chat": 0, "rag": 0}, map[string]int64{"chat": 9, "rag": 9}},
		},
		end: 3,
		want: map[string][]brief{
			"chat": {{1, 1, 0, 5, 1, 0, 20}, {2, 1, 1, 0, 1, 1, 0}, {3, 1, 0, 4, 0, 0, 30}},
			"rag":  {{1, 0, 0, 4, 1, 1, 0}, {2, 1, 0, 5, 0, 0, 200}},
		},
	}, {
		name: "one after the other, as a sweep's levels",
		requests: []*llm.Record{
			of("c1", req(0.5, 100, true, 10, 1)),
			of("c1", req(1.5, 100, true, 10, 1)),
			of("c2", req(4.5, 100, true, 40, 1)),
		},
		readings: []reading{
			{500 * time.Millisecond, map[string]int64{"c1": 1}, map[string]int64{"c1": 1}},
			{1500 * time.Millisecond, map[string]int64{"c1": 1}, map[string]int64{"c1": 2}},
			{2500 * time.Millisecond, map[string]int64{"c1": 0}, map[string]int64{"c1": 2}},
			{3500 * time.Millisecond, map[string]int64{"c1": 0}, map[string]int64{"c1": 2}},
			{4500 * time.Millisecond, map[string]int64{"c1": 0, "c2": 2}, map[string]int64{"c1": 2, "c2": 1}},
		},
		end: 5,
		want: map[string][]brief{
			// c1's VUs dropping to none is its last point: none after.
			"c1": {{1, 1, 0, 1, 1, 0, 10}, {2, 1, 0, 1, 1, 0, 10}, {3, 0, 0, 0, 0, 0, 0}},
			"c2": {{5, 1, 0, 1, 2, 0, 40}},
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			r := New(t0, nil)
			r.SplitByScenario()
			for _, rec := range c.requests {
				r.AddRequest(rec)
			}
			for _, rd := range c.readings {
				r.sample(byScenario(rd.vus, rd.tokens), rd.at)
			}
			got := r.ScenarioPoints(at(c.end))
			if len(got) != len(c.want) {
				t.Errorf("timelines of %d scenarios, want %d: %v", len(got), len(c.want), got)
			}
			for name, want := range c.want {
				if g := briefs(got[name]); !slices.Equal(g, want) {
					t.Errorf("%s: %+v\nwant %+v", name, g, want)
				}
			}
			assertAddsUp(t, r.Points(at(c.end)), got)
		})
	}
}

// assertAddsUp checks that the scenarios' requests, failures and tokens
// add up to the run's, interval by interval.
func assertAddsUp(t *testing.T, pooled []summary.TimelinePoint, byName map[string][]summary.TimelinePoint) {
	t.Helper()
	type counts struct{ requests, failed, tokens int64 }
	sums := map[float64]counts{}
	for _, points := range byName {
		for _, p := range points {
			c := sums[p.T]
			sums[p.T] = counts{c.requests + p.Requests, c.failed + p.Failed, c.tokens + p.OutputTokens}
		}
	}
	for _, p := range pooled {
		if c := sums[p.T]; c != (counts{p.Requests, p.Failed, p.OutputTokens}) {
			t.Errorf("at %g s the scenarios add up to %+v, the run has %d requests, %d failed, %d tokens", p.T, c, p.Requests, p.Failed, p.OutputTokens)
		}
		delete(sums, p.T)
	}
	if len(sums) > 0 {
		t.Errorf("scenario points at no point of the run: %v", sums)
	}
}

// A recorder not split by scenario keeps no scenario's timeline.
func TestScenarioPointsNeedASplit(t *testing.T) {
	r := New(t0, nil)
	r.AddRequest(of("chat", req(0.5, 100, true, 10, 1)))
	if got := r.ScenarioPoints(at(1)); got != nil {
		t.Errorf("scenario points without a split: %v", got)
	}
}

// Many scenarios running the whole run at once hold no more than
// MaxScenarioBuckets intervals together: theirs merge in pairs, and every
// count is kept.
func TestScenarioBucketsAreBounded(t *testing.T) {
	const scenarios, seconds = 40, summary.MaxTimelinePoints
	r := New(t0, nil)
	r.SplitByScenario()
	for s := range seconds {
		for i := range scenarios {
			r.AddRequest(of(fmt.Sprintf("s%02d", i), req(float64(s)+0.5, 100, i%3 != 0, 10, 1)))
		}
	}
	if r.scenarios.buckets > MaxScenarioBuckets {
		t.Errorf("%d intervals held, more than %d", r.scenarios.buckets, MaxScenarioBuckets)
	}
	if r.scenarios.width <= r.width {
		t.Errorf("the scenarios' intervals are %v, the run's %v: want them wider", r.scenarios.width, r.width)
	}
	got := r.ScenarioPoints(at(seconds))
	if len(got) != scenarios {
		t.Fatalf("timelines of %d scenarios, want %d", len(got), scenarios)
	}
	for name, points := range got {
		var requests, failed int64
		for _, p := range points {
			requests, failed = requests+p.Requests, failed+p.Failed
		}
		var i int
		if _, err := fmt.Sscanf(name, "s%d", &i); err != nil {
			t.Fatal(err)
		}
		wantFailed := int64(0)
		if i%3 == 0 {
			wantFailed = seconds
		}
		if requests != seconds || failed != wantFailed || points[len(points)-1].T != seconds {
			t.Errorf("%s: %d requests, %d failed, last point at %g s; want %d, %d, ending at %d s",
				name, requests, failed, points[len(points)-1].T, seconds, wantFailed, seconds)
		}
	}
}

// Run reads each scenario's tokens and VUs once a second, and at its
// end: a scenario's tokens go to the seconds they arrived in.
func TestRunSplitByScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var chat, rag atomic.Int64
		r := New(start, func() engine.Progress {
			return byScenario(map[string]int64{"chat": 1, "rag": 1}, map[string]int64{"chat": chat.Load(), "rag": rag.Load()})
		})
		r.SplitByScenario()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			r.Run(ctx)
			close(done)
		}()
		for _, step := range []struct {
			at        time.Duration
			chat, rag int64
		}{{300 * time.Millisecond, 4, 0}, {1500 * time.Millisecond, 6, 10}, {2600 * time.Millisecond, 6, 12}} {
			time.Sleep(time.Until(start.Add(step.at)))
			chat.Store(step.chat)
			rag.Store(step.rag)
		}
		cancel()
		<-done
		got := r.ScenarioPoints(time.Now())
		tokens := map[string][]int64{}
		for name, points := range got {
			for _, p := range points {
				tokens[name] = append(tokens[name], p.OutputTokens)
			}
		}
		if want := []int64{4, 2, 0}; !slices.Equal(tokens["chat"], want) {
			t.Errorf("chat's tokens %v, want %v", tokens["chat"], want)
		}
		if want := []int64{0, 10, 2}; !slices.Equal(tokens["rag"], want) {
			t.Errorf("rag's tokens %v, want %v", tokens["rag"], want)
		}
	})
}

// BenchmarkScenarioMemory records a 600-second run of four scenarios at
// once, perSecond requests a second each, and reports the heap its
// scenarios' timelines hold per scenario per interval, sealed.
func BenchmarkScenarioMemory(b *testing.B) {
	for _, perSecond := range []int{10, 100} {
		b.Run(fmt.Sprintf("%d_per_s", perSecond), func(b *testing.B) {
			const scenarios = 4
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				whole := New(t0, nil)
				fill(whole, perSecond*scenarios)
				whole.Points(at(summary.MaxTimelinePoints))
				runtime.GC()
				runtime.ReadMemStats(&after)
				pooled := int64(after.HeapAlloc) - int64(before.HeapAlloc)

				runtime.GC()
				runtime.ReadMemStats(&before)
				split := New(t0, nil)
				split.SplitByScenario()
				fillScenarios(split, scenarios, perSecond)
				split.ScenarioPoints(at(summary.MaxTimelinePoints)) // seals every interval
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap := int64(after.HeapAlloc) - int64(before.HeapAlloc) - pooled
				runtime.KeepAlive(whole)
				runtime.KeepAlive(split)
				b.ReportMetric(float64(heap)/float64(split.scenarios.buckets), "B/scenario-interval")
			}
		})
	}
}

// fillScenarios records a busy 600-second run of scenarios at once, each
// perSecond streamed requests a second, their latencies spread as fill's.
func fillScenarios(r *Recorder, scenarios, perSecond int) {
	rng := rand.New(rand.NewPCG(3, 4))
	for s := range summary.MaxTimelinePoints {
		for i := range perSecond * scenarios {
			ttft := math.Exp(rng.NormFloat64()*1.5 + 5)
			e2e := ttft + math.Exp(rng.NormFloat64()+9)
			rec := of(fmt.Sprintf("s%d", i%scenarios), req(float64(s)+float64(i)/float64(perSecond*scenarios), e2e, true, ttft, 100))
			rec.TPOT = (e2e - ttft) / 99
			r.AddRequest(rec)
		}
	}
}

// A run whose scenarios ended long before it did has had its intervals
// widened past theirs: the scenarios' are widened as well, so that each of
// their points ends where one of the run's does.
func TestScenarioIntervalsAreTheRunsAtLeast(t *testing.T) {
	r := New(t0, nil)
	r.SplitByScenario()
	for s := range 10 {
		r.AddRequest(of("a", req(float64(s)+0.5, 100, true, 10, 1)))
		r.AddRequest(of("b", req(float64(s)+0.7, 100, true, 10, 1)))
	}
	end := at(3 * summary.MaxTimelinePoints) // the run's intervals are 4 s
	pooled := r.Points(end)
	byName := r.ScenarioPoints(end)
	if len(byName) != 2 {
		t.Fatalf("timelines %v", byName)
	}
	assertAddsUp(t, pooled, byName)
}
