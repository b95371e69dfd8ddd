package timeline

import (
	"maps"
	"slices"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summary"
)

// MaxScenarioBuckets bounds the intervals the scenarios' timelines hold
// together: four scenarios running the whole run at the run's own
// resolution. A run whose scenarios take turns (a sweep's levels, a
// search's rounds) holds about as many as the run's timeline, since a
// scenario's timeline holds only the intervals it had something in;
// beyond the bound, the scenarios' intervals merge in pairs, as the
// run's do beyond summary.MaxTimelinePoints.
const MaxScenarioBuckets = 4 * summary.MaxTimelinePoints

// scenarioTimelines are the timelines of a run's scenarios, each from the
// requests and readings of its own: a scenario's requests by their
// scenario tag, its output tokens and active VUs from the progress's.
// Its owner, the Recorder, locks around it.
type scenarioTimelines struct {
	// width is the intervals' length, the same for every scenario: a
	// second, doubled at each merge.
	width  time.Duration
	series map[string]*scenarioSeries
	// buckets counts the intervals of every series.
	buckets int
	// last is the highest index of an interval any series holds.
	last int
	// hot are the recent intervals requests ended in, whose latencies are
	// not sealed yet.
	hot []hotBucket
}

// scenarioSeries is one scenario's intervals: only those it had a request
// start or end, tokens arrive or VUs active in.
type scenarioSeries struct {
	buckets map[int]*bucket
	// arrived is the scenario's output tokens at the last reading of the
	// progress; activeVUs its active VUs then.
	arrived, activeVUs int64
}

// hotBucket is an interval whose latencies are held dense.
type hotBucket struct {
	index  int
	bucket *bucket
}

func newScenarioTimelines() *scenarioTimelines {
	return &scenarioTimelines{width: sampleEvery, series: map[string]*scenarioSeries{}}
}

// add counts a request of scenario that started begin and ended end
// after the run's start.
func (s *scenarioTimelines) add(scenario string, rec *llm.Record, begin, end time.Duration) {
	sr := s.seriesOf(scenario)
	s.reserve(sr, begin).inFlight++
	b := s.reserve(sr, end)
	i := s.index(end)
	b.inFlight--
	if i+recent > s.last {
		if !b.hot {
			b.hot = true
			s.hot = append(s.hot, hotBucket{i, b})
		}
	} else {
		b.ended.Seal()
	}
	b.ended.Add(rec)
}

// sample records a reading of the progress in the interval that holds
// offset, for each scenario that has VUs active, had tokens arrive since
// the reading before, or had VUs active at it: the last keeps the drop
// to no VU in the scenario's timeline.
func (s *scenarioTimelines) sample(p engine.Progress, offset time.Duration) {
	arrived := map[string]int64{}
	for _, c := range p.Arrived {
		arrived[c.Scenario] += c.Tokens
	}
	vus := map[string]int64{}
	for _, sc := range p.Scenarios {
		vus[sc.Name] += sc.ActiveVUs
	}
	for _, name := range slices.Sorted(maps.Keys(arrived)) {
		if _, ok := vus[name]; !ok {
			vus[name] = 0
		}
	}
	for _, name := range slices.Sorted(maps.Keys(vus)) {
		sr := s.series[name]
		var before, wasActive int64
		if sr != nil {
			before, wasActive = sr.arrived, sr.activeVUs
		}
		tokens := arrived[name] - before
		if tokens == 0 && vus[name] == 0 && wasActive == 0 {
			continue
		}
		sr = s.seriesOf(name)
		b := s.reserve(sr, offset)
		b.activeVUs, b.sampled = vus[name], true
		b.outputTokens += tokens
		sr.arrived, sr.activeVUs = arrived[name], vus[name]
	}
}

// seriesOf is scenario's series, made when it has none.
func (s *scenarioTimelines) seriesOf(scenario string) *scenarioSeries {
	sr := s.series[scenario]
	if sr == nil {
		sr = &scenarioSeries{buckets: map[int]*bucket{}}
		s.series[scenario] = sr
	}
	return sr
}

// index is the interval that holds offset; offsets before the start are in
// the first.
func (s *scenarioTimelines) index(offset time.Duration) int {
	return int(max(offset, 0) / s.width)
}

// reserve returns sr's interval that holds offset, made when it has none,
// merging every series' intervals in pairs while that one would be
// beyond summary.MaxTimelinePoints or the series hold more than
// MaxScenarioBuckets together (unless each holds one: a merge would
// then not shrink them).
func (s *scenarioTimelines) reserve(sr *scenarioSeries, offset time.Duration) *bucket {
	for s.index(offset) >= summary.MaxTimelinePoints {
		s.halve()
	}
	i := s.index(offset)
	if b := sr.buckets[i]; b != nil {
		return b
	}
	for s.buckets >= MaxScenarioBuckets && s.buckets > len(s.series) {
		s.halve()
	}
	i = s.index(offset)
	b := sr.buckets[i]
	if b == nil {
		b = &bucket{}
		sr.buckets[i] = b
		s.buckets++
	}
	if i > s.last {
		s.last = i
		s.seal(s.last + 1 - recent)
	}
	return b
}

// seal seals the latencies of the intervals before below.
func (s *scenarioTimelines) seal(below int) {
	kept := s.hot[:0]
	for _, h := range s.hot {
		if h.index >= below {
			kept = append(kept, h)
			continue
		}
		h.bucket.ended.Seal()
		h.bucket.hot = false
	}
	s.hot = kept
}

// halve merges every series' intervals in pairs and doubles their width.
func (s *scenarioTimelines) halve() {
	s.seal(s.last + 1)
	s.buckets = 0
	for _, sr := range s.series {
		merged := make(map[int]*bucket, (len(sr.buckets)+1)/2)
		// In index order: a pair's later interval merges into its earlier.
		for _, i := range slices.Sorted(maps.Keys(sr.buckets)) {
			if b := merged[i/2]; b != nil {
				b.merge(sr.buckets[i])
				continue
			}
			merged[i/2] = sr.buckets[i]
		}
		sr.buckets = merged
		s.buckets += len(merged)
	}
	s.last /= 2
	s.width *= 2
}

// points returns each scenario's timeline up to elapsed after the start,
// by name: a point per interval it holds, each ending where the run's
// would at this width; what came after elapsed counts in the run's last
// interval, as in Recorder.Points.
func (s *scenarioTimelines) points(elapsed time.Duration) map[string][]summary.TimelinePoint {
	s.seal(s.last + 1)
	lastI := lastIndex(elapsed, s.width)
	out := make(map[string][]summary.TimelinePoint, len(s.series))
	for name, sr := range s.series {
		var points []summary.TimelinePoint
		var inFlight, vus int64
		var tail *bucket
		for _, i := range slices.Sorted(maps.Keys(sr.buckets)) {
			b := sr.buckets[i]
			if i >= lastI {
				if tail == nil {
					tail = &bucket{}
				}
				tail.merge(b)
				continue
			}
			inFlight += b.inFlight
			if b.sampled {
				vus = b.activeVUs
			}
			points = append(points, b.point(time.Duration(i)*s.width, time.Duration(i+1)*s.width, inFlight, vus))
		}
		if tail != nil {
			inFlight += tail.inFlight
			if tail.sampled {
				vus = tail.activeVUs
			}
			points = append(points, tail.point(time.Duration(lastI)*s.width, elapsed, inFlight, vus))
		}
		if len(points) > 0 {
			out[name] = points
		}
	}
	return out
}
