package timeline

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// at is the time offset seconds into the run.
func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

// req is a request that ended at end (s) after e2e (ms).
func req(end, e2e float64, ok bool, ttft float64, tokens int) *llm.Record {
	return &llm.Record{Time: at(end), E2E: e2e, OK: ok, TTFT: ttft, OutputTokens: tokens}
}

// progress is a reading of a run's progress: its active VUs and the output
// tokens arrived so far.
func progress(vus, tokens int64) engine.Progress {
	return engine.Progress{ActiveVUs: vus, OutputTokens: tokens}
}

// The counts, the in-flight figures, the VUs and the tokens of hand-made
// requests and readings: the tokens are those the readings say arrived,
// not the requests' own.
func TestPoints(t *testing.T) {
	r := New(t0, nil)
	r.AddRequest(req(2.5, 2000, true, 100, 10)) // 0.5 s → 2.5 s
	r.AddRequest(req(1.2, 100, false, 0, 0))    // 1.1 s → 1.2 s
	r.AddRequest(req(3.9, 3500, true, 300, 20)) // 0.4 s → 3.9 s
	r.AddRequest(req(4.5, 1000, true, 50, 5))   // 3.5 s → 4.5 s
	r.AddRequest(req(1.5, 1000, true, 200, 1))  // 0.5 s → 1.5 s, late
	r.AddRequest(req(-1, 10, false, 0, 0))      // before the start: in the first second
	r.sample(progress(3, 4), 1*time.Second-sampleEvery/2)
	r.sample(progress(4, 30), 3*time.Second+200*time.Millisecond-sampleEvery/2) // a late tick
	r.sample(progress(2, 36), 4*time.Second+700*time.Millisecond)               // the end

	got := r.Points(at(4.7))
	want := []summary.TimelinePoint{
		{T: 1, Seconds: 1, Requests: 1, Failed: 1, OutputTokens: 4, ActiveVUs: 3, InFlight: 3},
		{T: 2, Seconds: 1, Requests: 2, Failed: 1, ActiveVUs: 3, InFlight: 2, TTFTP50: 200, TTFTP99: 200, E2EP50: 1000, E2EP99: 1000},
		{T: 3, Seconds: 1, Requests: 1, OutputTokens: 26, ActiveVUs: 4, InFlight: 1, TTFTP50: 100, TTFTP99: 100, E2EP50: 2000, E2EP99: 2000},
		{T: 4, Seconds: 1, Requests: 1, ActiveVUs: 4, InFlight: 1, TTFTP50: 300, TTFTP99: 300, E2EP50: 3500, E2EP99: 3500},
		{T: 4.7, Seconds: 0.7, Requests: 1, OutputTokens: 6, ActiveVUs: 2, InFlight: 0, TTFTP50: 50, TTFTP99: 50, E2EP50: 1000, E2EP99: 1000},
	}
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		// Latencies are to 3 significant digits; the seconds in floats.
		for _, f := range []struct {
			name string
			g, w *float64
		}{{"T", &g.T, &w.T}, {"Seconds", &g.Seconds, &w.Seconds}, {"TTFTP50", &g.TTFTP50, &w.TTFTP50}, {"TTFTP99", &g.TTFTP99, &w.TTFTP99},
			{"E2EP50", &g.E2EP50, &w.E2EP50}, {"E2EP99", &g.E2EP99, &w.E2EP99}} {
			if math.Abs(*f.g-*f.w) > 0.001*math.Abs(*f.w)+1e-9 {
				t.Errorf("point %d: %s = %g, want %g", i, f.name, *f.g, *f.w)
			}
			*f.g = *f.w
		}
		if g != w {
			t.Errorf("point %d = %+v\nwant     %+v", i, g, w)
		}
	}

	// A request that ended after the end counts in the last point.
	got = r.Points(at(4))
	if len(got) != 4 || got[3].Requests != 2 || got[3].T != 4 || got[3].InFlight != 0 || got[3].ActiveVUs != 2 {
		t.Errorf("points up to 4 s: %+v", got)
	}
	if got := r.Points(t0); got != nil {
		t.Errorf("points of an empty run: %+v", got)
	}
}

// Percentiles of a bucket's latencies are within 0.2 % of the exact ones
// (3 significant digits, and the exact ones' nearest rank).
func TestPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := New(t0, nil)
	var ttft, e2e []float64
	for range 5000 {
		ft := math.Exp(rng.NormFloat64()*1.5 + 5) // around 150 ms, from µs to seconds
		total := ft + rng.Float64()*20000
		ttft, e2e = append(ttft, ft), append(e2e, total)
		r.AddRequest(req(0.5, total, true, ft, 1))
	}
	p := r.Points(at(1))[0]
	for _, c := range []struct {
		name string
		vals []float64
		q    float64
		got  float64
	}{{"TTFT p50", ttft, 50, p.TTFTP50}, {"TTFT p99", ttft, 99, p.TTFTP99}, {"E2E p50", e2e, 50, p.E2EP50}, {"E2E p99", e2e, 99, p.E2EP99}} {
		want := exact(c.vals, c.q)
		if math.Abs(c.got-want) > 0.002*want {
			t.Errorf("%s = %g, want %g ± 0.2 %%", c.name, c.got, want)
		}
	}
}

// exact is the nearest-rank percentile q of vals.
func exact(vals []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(vals))
	return s[max(int(math.Ceil(q/100*float64(len(s))))-1, 0)]
}

// A run longer than MaxTimelinePoints seconds merges its intervals in
// pairs and keeps every total.
func TestMergeKeepsTotals(t *testing.T) {
	r := New(t0, nil)
	const seconds, perSecond = 2000, 10
	var requests, failed, tokens int64
	for i := range seconds * perSecond {
		end := float64(i)/perSecond + 0.05
		ok := i%7 != 0
		r.AddRequest(req(end, 2500, ok, 100, 3))
		requests++
		if !ok {
			failed++
		}
		if i%perSecond == perSecond-1 {
			tokens += int64(i % 13)
			r.sample(progress(1, tokens), time.Duration(end*float64(time.Second)))
		}
	}
	points := r.Points(at(seconds))
	if n := len(points); n > summary.MaxTimelinePoints || n < summary.MaxTimelinePoints/4 {
		t.Fatalf("%d points", n)
	}
	if r.width != 4*time.Second {
		t.Errorf("intervals of %v, want 4s", r.width)
	}
	var got summary.TimelinePoint
	for i, p := range points {
		got.Requests += p.Requests
		got.Failed += p.Failed
		got.OutputTokens += p.OutputTokens
		got.Seconds += p.Seconds
		// 2.5 s requests, 10 a second: 25 in flight in steady state.
		if i > 0 && i < len(points)-1 && p.InFlight != 25 {
			t.Errorf("point %d: %d in flight, want 25", i, p.InFlight)
		}
		if math.Abs(p.TTFTP50-100) > 1 || math.Abs(p.E2EP99-2500) > 25 {
			t.Errorf("point %d: TTFT p50 %g, E2E p99 %g; want 100 and 2500", i, p.TTFTP50, p.E2EP99)
		}
	}
	if got.Requests != requests || got.Failed != failed || got.OutputTokens != tokens || got.Seconds != seconds {
		t.Errorf("totals %+v, want %d requests, %d failed, %d tokens over %d s", got, requests, failed, tokens, seconds)
	}
	if last := points[len(points)-1]; last.T != seconds || last.InFlight != 0 {
		t.Errorf("last point %+v", last)
	}
}

// Run reads the progress at the end of each second, and at its end: the
// active VUs then, and the tokens that arrived in the second, which go to
// that second however late the request they belong to ends.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var vus, tokens atomic.Int64
		vus.Store(7)
		r := New(start, func() engine.Progress { return progress(vus.Load(), tokens.Load()) })
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			r.Run(ctx)
			close(done)
		}()
		for _, step := range []struct {
			at          time.Duration
			vus, tokens int64
		}{{300 * time.Millisecond, 7, 5}, {1500 * time.Millisecond, 7, 12}, {2200 * time.Millisecond, 9, 15}, {3500 * time.Millisecond, 9, 15}} {
			time.Sleep(time.Until(start.Add(step.at)))
			vus.Store(step.vus)
			tokens.Store(step.tokens)
		}
		cancel()
		<-done
		// One request of the 15 tokens ends at the end, after 3.4 s.
		r.AddRequest(&llm.Record{Time: time.Now(), E2E: 3400, OK: true, TTFT: 10, OutputTokens: 15})
		var gotVUs, gotTokens, gotRequests []int64
		for _, p := range r.Points(start.Add(3500 * time.Millisecond)) {
			gotVUs, gotTokens, gotRequests = append(gotVUs, p.ActiveVUs), append(gotTokens, p.OutputTokens), append(gotRequests, p.Requests)
		}
		if want := []int64{7, 7, 9, 9}; !slices.Equal(gotVUs, want) {
			t.Errorf("active VUs %v, want %v", gotVUs, want)
		}
		if want := []int64{5, 7, 3, 0}; !slices.Equal(gotTokens, want) {
			t.Errorf("output tokens %v, want %v", gotTokens, want)
		}
		if want := []int64{0, 0, 0, 1}; !slices.Equal(gotRequests, want) {
			t.Errorf("requests %v, want %v", gotRequests, want)
		}
	})
}

// AddRequest is safe for concurrent use, alongside Run and Points; Run's
// last reading counts every token that arrived.
func TestConcurrentAddRequest(t *testing.T) {
	start := time.Now()
	var arrived atomic.Int64
	r := New(start, func() engine.Progress { return progress(1, arrived.Load()) })
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	const goroutines, each = 8, 5000
	var adders sync.WaitGroup
	for g := range goroutines {
		adders.Go(func() {
			for i := range each {
				arrived.Add(2)
				r.AddRequest(&llm.Record{Time: time.Now(), E2E: float64(i % 50), OK: g%2 == 0, TTFT: 1, OutputTokens: 2})
				if i%1000 == 0 {
					r.Points(time.Now())
				}
			}
		})
	}
	adders.Wait()
	cancel()
	wg.Wait()
	var requests, failed, tokens int64
	for _, p := range r.Points(time.Now()) {
		requests, failed, tokens = requests+p.Requests, failed+p.Failed, tokens+p.OutputTokens
	}
	if requests != goroutines*each || failed != goroutines*each/2 || tokens != 2*goroutines*each {
		t.Errorf("%d requests, %d failed, %d tokens", requests, failed, tokens)
	}
}

// fill records a busy 600-second run: perSecond streamed requests a
// second, their latencies spread over four orders of magnitude.
func fill(r *Recorder, perSecond int) {
	rng := rand.New(rand.NewPCG(3, 4))
	for s := range summary.MaxTimelinePoints {
		for i := range perSecond {
			ttft := math.Exp(rng.NormFloat64()*1.5 + 5)
			e2e := ttft + math.Exp(rng.NormFloat64()+9)
			rec := req(float64(s)+float64(i)/float64(perSecond), e2e, true, ttft, 100)
			rec.TPOT = (e2e - ttft) / 99
			r.AddRequest(rec)
		}
	}
}

// A bucket's histograms stay small: a busy 600-second run holds a few MB.
func TestMemoryPerBucket(t *testing.T) {
	for _, perSecond := range []int{100, 1000} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := New(t0, nil)
		fill(r, perSecond)
		r.Points(at(summary.MaxTimelinePoints)) // seals every bucket
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		hists := 0
		for _, b := range r.buckets {
			hists += b.ended.MemorySize()
		}
		runtime.KeepAlive(r)
		n := int64(len(r.buckets))
		t.Logf("%d requests/s: %d buckets, heap %d KB (%d B per bucket), histograms %d B per bucket",
			perSecond, n, heap/1024, heap/n, int64(hists)/n)
		if heap > 20<<20 {
			t.Errorf("%d requests/s: a 600-bucket run holds %d MB", perSecond, heap>>20)
		}
	}
}

// BenchmarkAddRequest records requests whose latencies vary as a real
// run's do, 100,000 a second of the run, from one goroutine (also into a
// recorder split by scenario) and from all at once. The records' times are the caller's: time.Now is not counted.
func BenchmarkAddRequest(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := make([]llm.Record, 1024)
	for i := range recs {
		ttft := math.Exp(rng.NormFloat64()*0.5 + 5)
		recs[i] = *of([]string{"chat", "rag", "code"}[i%3], &llm.Record{OK: i%50 != 0, TTFT: ttft, E2E: ttft + math.Exp(rng.NormFloat64()*0.3+8), OutputTokens: 128})
	}
	serial := func(b *testing.B, r *Recorder) {
		i := 0
		for b.Loop() {
			rec := &recs[i%len(recs)]
			rec.Time = t0.Add(time.Duration(i) * 10 * time.Microsecond) // 100,000 a second
			r.AddRequest(rec)
			i++
		}
	}
	b.Run("serial", func(b *testing.B) { serial(b, New(t0, nil)) })
	// Split by scenario, the requests of three scenarios in turn: what
	// keeping each scenario's timeline costs a request.
	b.Run("split", func(b *testing.B) {
		r := New(t0, nil)
		r.SplitByScenario()
		serial(b, r)
	})
	b.Run("parallel", func(b *testing.B) {
		r := New(t0, nil)
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := n.Add(1)
				rec := recs[i%int64(len(recs))]
				rec.Time = t0.Add(time.Duration(i) * 10 * time.Microsecond)
				r.AddRequest(&rec)
			}
		})
	})
}

// A run that ends just past a whole second does not get a sliver of a last
// interval, whose few requests would read as a burst: the sliver joins the
// interval before.
func TestShortLastIntervalJoinsThePrevious(t *testing.T) {
	r := New(t0, nil)
	for range 10 {
		r.AddRequest(req(3.1, 50, true, 10, 4))
	}
	points := r.Points(at(3.2))
	if len(points) != 3 {
		t.Fatalf("%d points, want 3: %+v", len(points), points)
	}
	last := points[2]
	if last.T != 3.2 || math.Abs(last.Seconds-1.2) > 1e-9 || last.Requests != 10 {
		t.Errorf("last point %+v, want 1.2 s ending at 3.2 s with the 10 requests", last)
	}
	if p := r.Points(at(3.6)); len(p) != 4 || p[3].Requests != 10 {
		t.Errorf("a last interval of 0.6 s stands on its own: %+v", p)
	}
}

// BenchmarkPoints reads the timeline of a 600-second run of 100 requests a
// second: the percentiles of every bucket.
func BenchmarkPoints(b *testing.B) {
	r := New(t0, nil)
	fill(r, 100)
	end := at(summary.MaxTimelinePoints)
	b.ReportAllocs()
	for b.Loop() {
		r.Points(end)
	}
}

// Requests recorded after their interval was sealed still count in it,
// and its percentiles are those of all its requests.
func TestLateRequestsJoinSealedIntervals(t *testing.T) {
	r := New(t0, nil)
	var want metrics.Latencies
	for i := range 100 {
		ttft := 20 + float64(i)
		r.AddRequest(req(0.5, 500, true, ttft, 1))
		want.Add(ttft)
	}
	r.AddRequest(req(5.5, 500, true, 10, 1)) // the first second is sealed
	for i := range 100 {
		ttft := 400 + 3*float64(i)
		r.AddRequest(req(0.7, 500, true, ttft, 1))
		want.Add(ttft)
	}
	p := r.Points(at(6))[0]
	if p.Requests != 200 || p.TTFTP50 != want.Percentile(50) || p.TTFTP99 != want.Percentile(99) {
		t.Errorf("first second: %d requests, TTFT p50 %g, p99 %g; want 200, %g, %g",
			p.Requests, p.TTFTP50, p.TTFTP99, want.Percentile(50), want.Percentile(99))
	}
}
