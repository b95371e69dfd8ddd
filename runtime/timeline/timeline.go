// Package timeline records a run interval by interval: requests ended and
// failed, output tokens arrived, TTFT and E2E percentiles, VUs active and
// requests in flight, for the "over time" charts of the result file.
//
// A Recorder keeps one bucket per second of the run. When a run grows past
// summary.MaxTimelinePoints buckets, neighbouring buckets merge in pairs
// (2 s, then 4 s, ...), so memory and output stay bounded however long the
// run. A bucket's requests go into a window.Aggregate, whose percentiles
// are those of the summary (HDR histograms, 3 significant digits). Its
// TTFT and E2E (the timeline charts no TPOT) are in dense histograms
// (184 KiB each), fast to record into, while the bucket is one of the last
// two, then sealed into a compact form whose size grows with the number
// of distinct values a bucket saw, not with their range: about 0.9 KB a
// bucket in all at 100 requests a second, 4.6 KB at 1,000, and 93 KB (up
// to twice that when they hold thousands each) when a bucket's latencies
// fill every one of the histograms' 23,221 buckets: tens of thousands of
// requests spread from 1 µs to an hour.
//
// Split by scenario (SplitByScenario, for a run of several), it also keeps
// each scenario's timeline (the result file's scenarios[].timeline) from
// the requests' scenario tag and the progress's per-scenario figures:
// only the intervals a scenario had something in, all of them together
// bounded by MaxScenarioBuckets (scenarios.go).
package timeline

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/window"
)

// sampleEvery is how often Run reads the run's progress; a bucket is
// never narrower.
const sampleEvery = time.Second

// recent is how many buckets, the last ones, record latencies into dense
// histograms.
const recent = 2

// Recorder collects a run's timeline. AddRequest is safe for concurrent
// use and takes a short lock; Run reads the run's progress (the active
// VUs, the output tokens arrived) once a second; Points reads the timeline
// at the end.
type Recorder struct {
	start    time.Time
	progress func() engine.Progress

	mu sync.Mutex
	// arrived is the output tokens arrived at the last reading of the
	// progress.
	arrived int64
	// width is the buckets' length: a second, doubled at each merge.
	width time.Duration
	// buckets[i] covers [start + i·width, start + (i+1)·width).
	buckets []bucket
	// hot are the indices of the recent buckets that requests ended in:
	// those whose latencies are not sealed yet.
	hot []int
	// scenarios are the scenarios' own timelines; nil until
	// SplitByScenario.
	scenarios *scenarioTimelines
}

// bucket holds the figures of one interval.
type bucket struct {
	// ended is the requests that ended in the interval.
	ended window.Aggregate
	// outputTokens arrived in the interval: the growth of the progress's
	// count between the readings at its start and at its end.
	outputTokens int64
	// inFlight is the change in requests in flight over the interval:
	// +1 for each request started in it, −1 for each one ended in it.
	inFlight int64
	// activeVUs is the last sample of the active VUs taken at the
	// interval's end; sampled says whether there was one.
	activeVUs int64
	sampled   bool
	// hot says that the bucket is in Recorder.hot.
	hot bool
}

// New returns a recorder of a run that started at start; progress, when
// not nil, reads the run's live figures, of which the recorder takes the
// active VUs and the output tokens arrived (counted from 0 at start).
func New(start time.Time, progress func() engine.Progress) *Recorder {
	return &Recorder{start: start, progress: progress, width: sampleEvery}
}

// SplitByScenario makes the recorder keep a timeline of each scenario
// besides the run's (ScenarioPoints), for a run of several. Call it before
// the first request.
func (r *Recorder) SplitByScenario() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scenarios = newScenarioTimelines()
}

// AddRequest counts a request that ended at r.Time after r.E2E ms; its
// output tokens are not counted here but as they arrived (Run). It
// implements llm.RequestSink.
func (r *Recorder) AddRequest(rec *llm.Record) {
	end := max(rec.Time.Sub(r.start), 0)
	begin := end - millis(rec.E2E)
	// The timeline charts no TPOT: leaving it out spares each bucket a
	// histogram.
	charted := *rec
	charted.TPOT = 0
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.reserve(end)
	b := &r.buckets[i]
	b.inFlight--
	r.buckets[r.index(begin)].inFlight++
	if i+recent >= len(r.buckets) {
		if !b.hot {
			b.hot = true
			r.hot = append(r.hot, i)
		}
	} else {
		// A late record, into an older interval: straight into the
		// sealed form.
		b.ended.Seal()
	}
	b.ended.Add(&charted)
	if r.scenarios != nil {
		scenario, _ := rec.Tags.Get("scenario")
		r.scenarios.add(scenario, &charted, begin, end)
	}
}

// Run reads the run's progress once a second, at the end of each second
// of the run, and once more when ctx ends, for the last interval: the
// active VUs then, and the output tokens that arrived since the reading
// before. It returns when ctx ends; without a progress function it returns
// at once.
func (r *Recorder) Run(ctx context.Context) {
	if r.progress == nil {
		return
	}
	timer := time.NewTimer(r.untilNextSecond(time.Now()))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			now := time.Now()
			r.sample(r.progress(), now.Sub(r.start))
			return
		case now := <-timer.C:
			// The tick ends the second before it; half a second's
			// slack keeps a late tick in its own interval.
			r.sample(r.progress(), now.Sub(r.start)-sampleEvery/2)
			timer.Reset(r.untilNextSecond(now))
		}
	}
}

// untilNextSecond is the wait from now to the next whole second of the
// run.
func (r *Recorder) untilNextSecond(now time.Time) time.Duration {
	elapsed := max(now.Sub(r.start), 0)
	return (elapsed/sampleEvery+1)*sampleEvery - elapsed
}

// sample records a reading of the progress in the interval that holds
// offset: its active VUs as those at the interval's end, and the output
// tokens that arrived since the reading before as arrived in it.
func (r *Recorder) sample(p engine.Progress, offset time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &r.buckets[r.reserve(offset)]
	b.activeVUs, b.sampled = p.ActiveVUs, true
	b.outputTokens += p.OutputTokens - r.arrived
	r.arrived = p.OutputTokens
	if r.scenarios != nil {
		r.scenarios.sample(p, offset)
	}
}

// ScenarioPoints returns the timeline of each scenario up to end, by name,
// when SplitByScenario was called (nil otherwise): a point per interval
// in which the scenario had a request start or end, output tokens arrive
// or VUs active, ending where the run's intervals end; its requests that
// ended after end count in the point of the run's last interval.
func (r *Recorder) ScenarioPoints(end time.Time) map[string][]summary.TimelinePoint {
	elapsed := end.Sub(r.start)
	r.mu.Lock()
	defer r.mu.Unlock()
	if elapsed <= 0 || r.scenarios == nil {
		return nil
	}
	// The scenarios' intervals are never narrower than the run's, so that
	// each of theirs ends where one of the run's does.
	r.reserve(elapsed - 1)
	for r.scenarios.width < r.width {
		r.scenarios.halve()
	}
	return r.scenarios.points(elapsed)
}

// Points returns the timeline of the run up to end: one point per
// interval, the last one ending at end (and one and a half intervals long
// at most). Requests that ended after end count in the last point.
func (r *Recorder) Points(end time.Time) []summary.TimelinePoint {
	elapsed := end.Sub(r.start)
	if elapsed <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reserve(elapsed - 1)
	r.seal(len(r.buckets))
	n := lastIndex(elapsed, r.width) + 1
	points := make([]summary.TimelinePoint, n)
	var inFlight, vus int64
	for i := range points {
		b := &r.buckets[i]
		if i == n-1 {
			// The last point also holds whatever came after end.
			b = &bucket{}
			for j := i; j < len(r.buckets); j++ {
				b.merge(&r.buckets[j])
			}
		}
		inFlight += b.inFlight
		if b.sampled {
			vus = b.activeVUs
		}
		from, to := time.Duration(i)*r.width, min(time.Duration(i+1)*r.width, elapsed)
		if i == n-1 {
			to = elapsed
		}
		points[i] = b.point(from, to, inFlight, vus)
	}
	return points
}

// lastIndex is the index of the last point of a timeline that ends
// elapsed after the start, in intervals of width: a last interval
// shorter than half of one joins the one before, so that requests ending
// in a sliver of time do not read as a burst.
func lastIndex(elapsed, width time.Duration) int {
	n := int((elapsed-1)/width) + 1
	if n >= 2 && elapsed-time.Duration(n-1)*width < width/2 {
		n--
	}
	return n - 1
}

// point is the timeline point of b over [from, to), with the requests in
// flight and the active VUs at its end.
func (b *bucket) point(from, to time.Duration, inFlight, vus int64) summary.TimelinePoint {
	ttft, e2e := &b.ended.TTFT, &b.ended.E2E
	return summary.TimelinePoint{T: to.Seconds(), Seconds: (to - from).Seconds(),
		Requests: b.ended.Requests, Failed: b.ended.Failed, OutputTokens: b.outputTokens, ActiveVUs: vus, InFlight: inFlight,
		TTFTP50: ttft.Percentile(50), TTFTP99: ttft.Percentile(99), E2EP50: e2e.Percentile(50), E2EP99: e2e.Percentile(99)}
}

// index is the bucket that holds offset, at the current width; offsets
// before the start are in the first.
func (r *Recorder) index(offset time.Duration) int {
	return int(max(offset, 0) / r.width)
}

// reserve makes sure a bucket holds offset, merging buckets in pairs
// while it would be beyond summary.MaxTimelinePoints, and returns its
// index.
func (r *Recorder) reserve(offset time.Duration) int {
	i := r.index(offset)
	for i >= summary.MaxTimelinePoints {
		r.halve()
		i = r.index(offset)
	}
	if i >= len(r.buckets) {
		r.buckets = append(r.buckets, make([]bucket, i+1-len(r.buckets))...)
		r.seal(len(r.buckets) - recent)
	}
	return i
}

// seal seals the latencies of the buckets before below.
func (r *Recorder) seal(below int) {
	kept := r.hot[:0]
	for _, i := range r.hot {
		if i >= below {
			kept = append(kept, i)
			continue
		}
		b := &r.buckets[i]
		b.ended.Seal()
		b.hot = false
	}
	r.hot = kept
}

// halve merges the buckets in pairs and doubles their width.
func (r *Recorder) halve() {
	r.seal(len(r.buckets))
	n := (len(r.buckets) + 1) / 2
	for i := range n {
		// Slot 2i has not been overwritten yet: only slots below i have.
		r.buckets[i] = r.buckets[2*i]
		if 2*i+1 < len(r.buckets) {
			r.buckets[i].merge(&r.buckets[2*i+1])
		}
	}
	clear(r.buckets[n:])
	r.buckets = r.buckets[:n]
	r.width *= 2
}

// merge adds the figures of the later interval o to b; o's histograms
// stay as they were.
func (b *bucket) merge(o *bucket) {
	b.ended.Merge(&o.ended)
	b.outputTokens += o.outputTokens
	b.inFlight += o.inFlight
	if o.sampled {
		b.activeVUs, b.sampled = o.activeVUs, true
	}
}

// maxMillis bounds the durations millis converts, well inside
// time.Duration's range.
const maxMillis = float64(math.MaxInt64/2) / float64(time.Millisecond)

// millis converts a duration in ms, 0 when not positive (or NaN).
func millis(ms float64) time.Duration {
	if !(ms > 0) {
		return 0
	}
	return time.Duration(min(ms, maxMillis) * float64(time.Millisecond))
}
