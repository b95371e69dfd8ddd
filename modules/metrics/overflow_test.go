package metrics

import (
	"strconv"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/internal/race"
)

// idTags returns the n tag sets id=from … id=from+n-1.
func idTags(from, n int) []*TagSet {
	tags := make([]*TagSet, n)
	for i := range tags {
		tags[i] = NewTagSet(map[string]string{"id": strconv.Itoa(from + i)})
	}
	return tags
}

// MaxSeries counts distinct tag sets over all shards: MaxSeries tag sets,
// each used by VUs on many shards at once, all keep their own series, and
// only a tag set beyond them overflows.
func TestSeriesLimitCountsTagSetsOverShards(t *testing.T) {
	m := &Metric{Name: "hits", Type: Counter}
	const shards = 16
	agg := NewAggregator(shards)
	tags := idTags(0, MaxSeries)
	var wg sync.WaitGroup
	for vu := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sink := agg.Shard(vu)
			for i, ts := range tags {
				if (i+vu)%4 == 0 { // each tag set on 4 of the 16 shards
					sink.AddSamples([]Sample{{Metric: m, Tags: ts, Value: 1}})
				}
			}
		}()
	}
	wg.Wait()
	snap := agg.Snapshot()
	if st := snap.Stats("hits", overflowTags); st != nil {
		t.Fatalf("%d tag sets over %d shards overflowed %d samples, want none", MaxSeries, shards, st.Count)
	}
	if n := len(snap.Series()); n != MaxSeries {
		t.Errorf("%d series, want %d", n, MaxSeries)
	}
	if st := snap.Stats("hits", tags[7]); st == nil || st.Count != shards/4 {
		t.Errorf("series id=7: %+v, want the %d samples of its shards", st, shards/4)
	}
	extra := idTags(MaxSeries, 1)[0]
	agg.Shard(3).AddSamples([]Sample{{Metric: m, Tags: extra, Value: 1}})
	if st := agg.Snapshot().Stats("hits", overflowTags); st == nil || st.Count != 1 {
		t.Errorf("a tag set beyond the %d: overflow series %+v, want its sample", MaxSeries, st)
	}
}

// A tag set admitted on one shard keeps its series on a shard that sees it
// only after the metric is full: it is not split with the overflow series.
func TestSeriesAdmittedOnOneShardAreNotSplit(t *testing.T) {
	m := &Metric{Name: "hits", Type: Counter}
	agg := NewAggregator(2)
	tags := idTags(0, MaxSeries)
	for _, ts := range tags {
		agg.Shard(0).AddSamples([]Sample{{Metric: m, Tags: ts, Value: 1}})
	}
	agg.Shard(1).AddSamples([]Sample{{Metric: m, Tags: tags[0], Value: 1}})
	snap := agg.Snapshot()
	if st := snap.Stats("hits", overflowTags); st != nil {
		t.Errorf("overflow series %+v, want none", st)
	}
	if st := snap.Stats("hits", tags[0]); st == nil || st.Count != 2 {
		t.Errorf("series id=0: %+v, want its 2 samples from both shards", st)
	}
}

// Once a metric is full, a sample of a new tag set goes into the overflow
// series without allocating.
func TestOverflowingSamplesDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates: TestOverflowingSamplesDoNotAllocate counts allocations without -race, TestSeriesLimitCountsTagSetsOverShards covers the overflow under it")
	}
	m := &Metric{Name: "hits", Type: Counter}
	agg := NewAggregator(4)
	for i, ts := range idTags(0, MaxSeries) {
		agg.Shard(i).AddSamples([]Sample{{Metric: m, Tags: ts, Value: 1}})
	}
	batch := make([]Sample, 64)
	for i, ts := range idTags(MaxSeries, len(batch)) {
		batch[i] = Sample{Metric: m, Tags: ts, Value: 1}
	}
	sink := agg.Shard(1)
	sink.AddSamples(batch) // makes the shard's overflow series
	if n := testing.AllocsPerRun(100, func() { sink.AddSamples(batch) }); n != 0 {
		t.Errorf("a batch of %d samples of new tag sets of a full metric: %g allocations, want 0", len(batch), n)
	}
	if st := agg.Snapshot().Stats("hits", overflowTags); st == nil || st.Count != 102*int64(len(batch)) {
		t.Errorf("overflow series %+v, want every sample of the batches", st)
	}
}
