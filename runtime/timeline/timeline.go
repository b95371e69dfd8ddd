// Package timeline records a run interval by interval: requests ended and
// failed, output tokens arrived, TTFT and E2E percentiles, VUs active and
// requests in flight, for the "over time" charts of the result file.
//
// A Recorder keeps one bucket per second of the run. When a run grows past
// summary.MaxTimelinePoints buckets, neighbouring buckets merge in pairs
// (2 s, then 4 s, ...), so memory and output stay bounded however long the
// run. Latencies go into HDR histograms to 2 significant digits: dense ones
// (26 KB each), fast to record into, while a bucket is one of the last two,
// then sparse ones, whose size grows with the number of distinct values a
// bucket saw, not with their range: about 1.5 KB a bucket at 100 requests
// a second, 7 KB at 1,000, and never more than 54 KB (32 MB for a whole
// timeline), when a bucket's latencies fill every slot of the histograms.
package timeline

import (
	"context"
	"math"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Histograms hold microseconds from 1 µs to an hour (longer latencies are
// recorded as an hour) to 2 significant digits: a percentile is within
// 1 % of the exact one.
const (
	histMax    = int64(time.Hour / time.Microsecond)
	histDigits = 2
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
	// hot are the indices of the buckets with dense histograms; spare
	// are emptied dense histograms, for the next ones.
	hot   []int
	spare []*dense
}

// bucket holds the figures of one interval.
type bucket struct {
	requests, failed int64
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
	// hot holds latencies of completed requests while the interval is
	// recent; nil once they are sealed into ttft and e2e.
	hot *dense
	// ttft and e2e are the completed requests' latencies in µs; nil until
	// some are sealed.
	ttft, e2e *hdr.PackedHistogram
}

// dense are dense histograms of an interval's latencies in µs.
type dense struct{ ttft, e2e *hdr.Histogram }

// New returns a recorder of a run that started at start; progress, when
// not nil, reads the run's live figures, of which the recorder takes the
// active VUs and the output tokens arrived (counted from 0 at start).
func New(start time.Time, progress func() engine.Progress) *Recorder {
	return &Recorder{start: start, progress: progress, width: sampleEvery}
}

// AddRequest counts a request that ended at r.Time after r.E2E ms; its
// output tokens are not counted here but as they arrived (Run). It
// implements llm.RequestSink.
func (r *Recorder) AddRequest(rec *llm.Record) {
	end := max(rec.Time.Sub(r.start), 0)
	begin := end - millis(rec.E2E)
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.reserve(end)
	b := &r.buckets[i]
	b.requests++
	b.inFlight--
	r.buckets[r.index(begin)].inFlight++
	if !rec.OK {
		b.failed++
		return
	}
	if i+recent >= len(r.buckets) {
		h := r.heat(i)
		record(h.ttft, rec.TTFT)
		record(h.e2e, rec.E2E)
		return
	}
	// A late record, into an older interval.
	if b.ttft == nil {
		b.ttft, b.e2e = newPacked(), newPacked()
	}
	record(b.ttft, rec.TTFT)
	record(b.e2e, rec.E2E)
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
	n := r.index(elapsed-1) + 1
	// A last interval shorter than half a bucket joins the one before, so
	// that requests ending in a sliver of time do not read as a burst.
	if n >= 2 && elapsed-time.Duration(n-1)*r.width < r.width/2 {
		n--
	}
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
		p := summary.TimelinePoint{T: to.Seconds(), Seconds: (to - from).Seconds(),
			Requests: b.requests, Failed: b.failed, OutputTokens: b.outputTokens, ActiveVUs: vus, InFlight: inFlight}
		p.TTFTP50, p.TTFTP99 = percentiles(b.ttft)
		p.E2EP50, p.E2EP99 = percentiles(b.e2e)
		points[i] = p
	}
	return points
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

// heat returns bucket i's dense histograms, giving it some if it has
// none.
func (r *Recorder) heat(i int) *dense {
	b := &r.buckets[i]
	if b.hot != nil {
		return b.hot
	}
	if n := len(r.spare); n > 0 {
		b.hot, r.spare = r.spare[n-1], r.spare[:n-1]
	} else {
		b.hot = &dense{ttft: hdr.New(1, histMax, histDigits), e2e: hdr.New(1, histMax, histDigits)}
	}
	r.hot = append(r.hot, i)
	return b.hot
}

// seal moves the latencies of the buckets before below from their dense
// histograms into sparse ones, and keeps the emptied dense ones for
// reuse.
func (r *Recorder) seal(below int) {
	kept := r.hot[:0]
	for _, i := range r.hot {
		if i >= below {
			kept = append(kept, i)
			continue
		}
		b := &r.buckets[i]
		b.ttft = sealHist(b.ttft, b.hot.ttft)
		b.e2e = sealHist(b.e2e, b.hot.e2e)
		r.spare = append(r.spare, b.hot)
		b.hot = nil
	}
	r.hot = kept
}

// sealHist returns p with h's counts added, creating p when nil and
// trimming its storage to fit, and empties h.
func sealHist(p *hdr.PackedHistogram, h *hdr.Histogram) *hdr.PackedHistogram {
	if h.TotalCount() == 0 {
		return p
	}
	if p == nil {
		p = newPacked()
	}
	p.MergeFrom(h) // same geometry: drops nothing
	p.Compact()
	h.Reset()
	return p
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
	b.requests += o.requests
	b.failed += o.failed
	b.outputTokens += o.outputTokens
	b.inFlight += o.inFlight
	if o.sampled {
		b.activeVUs, b.sampled = o.activeVUs, true
	}
	b.ttft = mergeHist(b.ttft, o.ttft)
	b.e2e = mergeHist(b.e2e, o.e2e)
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

func newPacked() *hdr.PackedHistogram { return hdr.NewPacked(1, histMax, histDigits) }

// mergeHist returns h with o's counts added, creating h when nil and
// trimming its storage to fit.
func mergeHist(h, o *hdr.PackedHistogram) *hdr.PackedHistogram {
	if o == nil {
		return h
	}
	if h == nil {
		h = newPacked()
	}
	h.Merge(o) // same geometry: drops nothing
	h.Compact()
	return h
}

// record adds a latency in ms to h, unless it is 0 (not measured).
func record(h interface{ RecordValue(int64) error }, ms float64) {
	if !(ms > 0) {
		return
	}
	us := int64(min(math.Round(ms*1000), float64(histMax)))
	_ = h.RecordValue(max(us, 1)) // in range: never fails
}

// percentiles returns the p50 and p99 of h in ms, 0 when h is empty.
func percentiles(h *hdr.PackedHistogram) (p50, p99 float64) {
	if h == nil || h.TotalCount() == 0 {
		return 0, 0
	}
	v := h.ValueAtPercentilesSlice([]float64{50, 99})
	return float64(v[0]) / 1000, float64(v[1]) / 1000
}
