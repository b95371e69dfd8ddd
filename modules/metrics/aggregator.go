package metrics

import (
	"sort"
	"sync"
)

// MaxSeries bounds the series an aggregator keeps of one metric: its
// distinct tag sets, over all the aggregator's shards. A tag whose values
// do not repeat (an id per request) would make a series per sample and
// grow memory with the run; beyond MaxSeries the samples of a new tag set
// of the metric go into its one series tagged OverflowTag instead, so that
// its totals stay whole while its breakdown by tag stops growing. Other
// metrics are not affected.
const MaxSeries = 10_000

// OverflowTag tags the series that take the samples of the tag sets over
// MaxSeries; its value is "true".
const OverflowTag = "series_overflow"

// overflowTags is the tag set of the overflow series.
var overflowTags = NewTagSet(map[string]string{OverflowTag: "true"})

// Aggregator folds samples into per-series statistics, a series being one
// metric with one tag set. It is split into shards, each with its own lock,
// so many VUs can add samples at once without waiting on each other: a VU
// takes a shard (Shard) and only ever contends with VUs sharing it and with a
// snapshot. Memory is bounded by the number of series, not by the run length.
type Aggregator struct {
	shards []*shard
}

// seriesLimit admits at most MaxSeries distinct tag sets of each metric
// over all shards: a tag set admitted on one shard is admitted on the
// others too, so a series used by VUs of several shards counts once.
type seriesLimit struct {
	mu       sync.RWMutex
	admitted map[seriesKey]struct{}
	count    map[*Metric]int
}

// admit reports whether key has, or may now have, a series of its own;
// false when its metric already has MaxSeries others. A shard asks only
// for a key it has no series for, so once a metric is full this is what
// each sample of a new tag set costs: a read lock and two lookups.
func (l *seriesLimit) admit(key seriesKey) bool {
	l.mu.RLock()
	_, ok := l.admitted[key]
	full := l.count[key.metric] >= MaxSeries
	l.mu.RUnlock()
	if ok || full {
		return ok
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.admitted[key]; ok {
		return true
	}
	if l.count[key.metric] >= MaxSeries {
		return false
	}
	l.admitted[key] = struct{}{}
	l.count[key.metric]++
	return true
}

type seriesKey struct {
	metric *Metric
	tags   string
}

type series struct {
	metric *Metric
	tags   *TagSet
	stats  *Stats
}

type shard struct {
	mu     sync.Mutex
	series map[seriesKey]*series
	limit  *seriesLimit // the aggregator's, shared by its shards
}

// NewAggregator returns an aggregator with n shards (at least one). One shard
// per CPU is plenty: a shard's lock is held only to fold a batch of samples.
func NewAggregator(n int) *Aggregator {
	n = max(n, 1)
	limit := &seriesLimit{admitted: make(map[seriesKey]struct{}), count: make(map[*Metric]int)}
	a := &Aggregator{shards: make([]*shard, n)}
	for i := range a.shards {
		a.shards[i] = &shard{series: make(map[seriesKey]*series), limit: limit}
	}
	return a
}

// Shard returns the sink for the i-th user (for example VU i); users spread
// over the shards round-robin.
func (a *Aggregator) Shard(i int) Sink {
	if i < 0 {
		i = -i
	}
	return a.shards[i%len(a.shards)]
}

// AddSamples folds samples into the shard.
func (s *shard) AddSamples(samples []Sample) {
	if len(samples) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var last *series
	for i := range samples {
		smp := &samples[i]
		if last == nil || last.metric != smp.Metric || last.tags != smp.Tags {
			last = s.seriesOf(smp.Metric, smp.Tags)
		}
		last.stats.addAt(smp.Value, smp.count(), smp.Time)
	}
}

// seriesOf returns the series of m with tags, made if need be; beyond
// MaxSeries, the overflow series of m.
func (s *shard) seriesOf(m *Metric, tags *TagSet) *series {
	key := seriesKey{m, tags.Key()}
	if se := s.series[key]; se != nil {
		return se
	}
	if !s.limit.admit(key) {
		tags = overflowTags
		key = seriesKey{m, tags.Key()}
		if se := s.series[key]; se != nil {
			return se
		}
	}
	se := &series{metric: m, tags: tags, stats: newStats(m.Type)}
	s.series[key] = se
	return se
}

// Sum returns the sum of every value of a metric over all its series and
// shards, without copying histograms: cheap enough for a progress line.
func (a *Aggregator) Sum(m *Metric) (sum float64, count int64) {
	for _, sh := range a.shards {
		sh.mu.Lock()
		for k, se := range sh.series {
			if k.metric == m {
				sum += se.stats.Sum
				count += se.stats.Count
			}
		}
		sh.mu.Unlock()
	}
	return sum, count
}

// Snapshot merges every shard into a consistent copy, for summaries and
// threshold checks.
func (a *Aggregator) Snapshot() *Snapshot { return a.SnapshotOf(nil) }

// SnapshotOf is Snapshot of only the metrics keep keeps (nil keeps
// all): what reads a few metrics often (the thresholds, live) clones
// only their statistics, under the shards' locks the VUs' samples take.
func (a *Aggregator) SnapshotOf(keep func(*Metric) bool) *Snapshot {
	merged := make(map[seriesKey]*Series)
	for _, sh := range a.shards {
		sh.mu.Lock()
		for k, se := range sh.series {
			if keep != nil && !keep(se.metric) {
				continue
			}
			if m, ok := merged[k]; ok {
				m.Stats.Merge(se.stats)
				continue
			}
			merged[k] = &Series{Metric: se.metric, Tags: se.tags, Stats: se.stats.Clone()}
		}
		sh.mu.Unlock()
	}
	snap := &Snapshot{series: make([]*Series, 0, len(merged))}
	for _, se := range merged {
		snap.series = append(snap.series, se)
	}
	sort.Slice(snap.series, func(i, j int) bool {
		a, b := snap.series[i], snap.series[j]
		if a.Metric.Name != b.Metric.Name {
			return a.Metric.Name < b.Metric.Name
		}
		return a.Tags.Key() < b.Tags.Key()
	})
	return snap
}

// Series is one metric with one tag set and its statistics.
type Series struct {
	Metric *Metric
	Tags   *TagSet
	Stats  *Stats
}

// Snapshot is a point-in-time copy of an aggregator's series, sorted by
// metric name and tags. It is immutable and safe to share.
type Snapshot struct {
	series []*Series
}

// Series returns every series, sorted by metric name then tags.
func (s *Snapshot) Series() []*Series { return s.series }

// Stats merges the series of the named metric whose tags contain filter
// (nil: all of them) — a k6 sub-metric such as llm_ttft{scenario:chat}. It
// returns nil when the metric has no matching samples.
func (s *Snapshot) Stats(name string, filter *TagSet) *Stats {
	var out *Stats
	for _, se := range s.series {
		if se.Metric.Name != name || !se.Tags.Contains(filter) {
			continue
		}
		if out == nil {
			out = newStats(se.Metric.Type)
		}
		out.Merge(se.Stats)
	}
	return out
}

// TagValues returns the distinct values of a tag among a metric's series,
// sorted; series without the tag are left out.
func (s *Snapshot) TagValues(name, tag string) []string {
	seen := make(map[string]bool)
	var out []string
	for _, se := range s.series {
		if se.Metric.Name != name {
			continue
		}
		if v, ok := se.Tags.Get(tag); ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
