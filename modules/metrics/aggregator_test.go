package metrics

import (
	"sync"
	"testing"
	"time"
)

func TestAggregatorConcurrentShardsMergeExactly(t *testing.T) {
	reg := NewRegistry()
	trend := reg.MustRegister(Metric{Name: "lat", Type: Trend, Contains: Time})
	count := reg.MustRegister(Metric{Name: "reqs", Type: Counter})
	agg := NewAggregator(4)
	chat := NewTagSet(map[string]string{"scenario": "chat"})
	rag := NewTagSet(map[string]string{"scenario": "rag"})

	const vus, perVU = 32, 500
	var wg sync.WaitGroup
	for vu := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sink := agg.Shard(vu)
			tags := chat
			if vu%2 == 1 {
				tags = rag
			}
			batch := make([]Sample, 0, 2)
			for i := range perVU {
				batch = append(batch[:0],
					Sample{Metric: trend, Tags: tags, Time: time.Now(), Value: float64(i + 1)},
					Sample{Metric: count, Tags: tags, Time: time.Now(), Value: 1})
				sink.AddSamples(batch)
			}
		}()
	}
	wg.Wait()

	snap := agg.Snapshot()
	all := snap.Stats("lat", nil)
	if all.Count != vus*perVU {
		t.Fatalf("trend count %d, want %d", all.Count, vus*perVU)
	}
	if got := snap.Stats("reqs", chat).Sum; got != vus/2*perVU {
		t.Errorf("reqs{scenario:chat} = %g, want %d", got, vus/2*perVU)
	}
	if got := snap.Stats("lat", rag).Max; got != perVU {
		t.Errorf("lat{scenario:rag} max = %g, want %d", got, perVU)
	}
	if sum, n := agg.Sum(count); sum != vus*perVU || n != vus*perVU {
		t.Errorf("Sum(reqs) = %g over %d samples, want %d", sum, n, vus*perVU)
	}
	if got := snap.TagValues("lat", "scenario"); len(got) != 2 || got[0] != "chat" || got[1] != "rag" {
		t.Errorf("TagValues = %v", got)
	}
	if snap.Stats("lat", NewTagSet(map[string]string{"scenario": "code"})) != nil {
		t.Error("a filter matching no series must give nil")
	}
}

// SnapshotOf holds the kept metrics' series alone, each as Snapshot holds
// it.
func TestSnapshotOfKeepsOnlyTheMetricsAsked(t *testing.T) {
	reg := NewRegistry()
	trend := reg.MustRegister(Metric{Name: "lat", Type: Trend, Contains: Time})
	count := reg.MustRegister(Metric{Name: "reqs", Type: Counter})
	agg := NewAggregator(2)
	chat := NewTagSet(map[string]string{"scenario": "chat"})
	for vu := range 2 {
		for i := range 100 {
			agg.Shard(vu).AddSamples([]Sample{{Metric: trend, Tags: chat, Value: float64(i + vu)}, {Metric: count, Tags: chat, Value: 1}})
		}
	}
	snap := agg.SnapshotOf(func(m *Metric) bool { return m == count })
	if len(snap.Series()) != 1 || snap.Stats("lat", nil) != nil {
		t.Fatalf("%d series, lat %v; want reqs alone", len(snap.Series()), snap.Stats("lat", nil))
	}
	if got, want := *snap.Stats("reqs", chat), *agg.Snapshot().Stats("reqs", chat); got.Sum != want.Sum || got.Count != want.Count {
		t.Errorf("reqs %+v, want Snapshot's %+v", got, want)
	}
}

func TestRegistry(t *testing.T) {
	reg := NewRegistry()
	a, err := reg.Register(Metric{Name: "my_trend", Type: Trend})
	if err != nil {
		t.Fatal(err)
	}
	b, err := reg.Register(Metric{Name: "my_trend", Type: Trend})
	if err != nil || a != b {
		t.Fatalf("re-registering the same type must return the first definition (%v, %v)", err, a == b)
	}
	for _, bad := range []Metric{{Name: "my_trend", Type: Counter}, {Name: "", Type: Counter}, {Name: "9lives", Type: Rate}, {Name: "has space", Type: Gauge}} {
		if _, err := reg.Register(bad); err == nil {
			t.Errorf("Register(%+v) succeeded, want an error", bad)
		}
	}
}

func TestTagSet(t *testing.T) {
	s := NewTagSet(map[string]string{"b": "2", "a": "1"})
	if s.Key() != "a:1,b:2" {
		t.Errorf("Key = %q", s.Key())
	}
	w := s.With("b", "3", "c", "4")
	if w.Key() != "a:1,b:3,c:4" || s.Key() != "a:1,b:2" {
		t.Errorf("With: %q (receiver now %q)", w.Key(), s.Key())
	}
	if !w.Contains(NewTagSet(map[string]string{"c": "4"})) || w.Contains(NewTagSet(map[string]string{"c": "5"})) {
		t.Error("Contains is wrong")
	}
	var empty *TagSet
	if empty.Key() != "" || !s.Contains(empty) || empty.Merge(s) != s {
		t.Error("the nil TagSet must behave as the empty set")
	}
}

func BenchmarkShardAddSamples(b *testing.B) {
	reg := NewRegistry()
	itl := reg.MustRegister(Metric{Name: "itl", Type: Trend, Contains: Time})
	tags := NewTagSet(map[string]string{"scenario": "default", "model": "m"})
	batch := make([]Sample, 256)
	for i := range batch {
		batch[i] = Sample{Metric: itl, Tags: tags, Value: float64(10 + i%7)}
	}
	agg := NewAggregator(4)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		sink := agg.Shard(int(time.Now().UnixNano()))
		for pb.Next() {
			sink.AddSamples(batch)
		}
	})
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/sample")
}

func TestRegistryRejectsAnotherValueType(t *testing.T) {
	reg := NewRegistry()
	reg.MustRegister(Metric{Name: "x", Type: Trend})
	if _, err := reg.Register(Metric{Name: "x", Type: Trend, Contains: Time}); err == nil {
		t.Fatal("a trend of plain values re-registered as a time trend")
	}
}
