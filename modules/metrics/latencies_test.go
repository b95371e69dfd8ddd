package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// latencyValues are n latencies in ms, from µs to minutes.
func latencyValues(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = math.Exp(rng.NormFloat64()*1.5 + 4)
	}
	return vals
}

// added returns Latencies holding vals, recorded one by one.
func added(vals []float64) *Latencies {
	var l Latencies
	for _, v := range vals {
		l.Add(v)
	}
	return &l
}

// The percentiles of Latencies are those of a trend's Stats of the same
// values, to the bit, however they were built: recorded dense, sealed,
// added to once sealed, merged in either form, reused after Reset.
func TestLatenciesPercentilesAreThoseOfStats(t *testing.T) {
	builds := []struct {
		name  string
		build func(vals []float64) *Latencies
	}{
		{"dense", added},
		{"sealed", func(vals []float64) *Latencies {
			l := added(vals)
			l.Seal()
			return l
		}},
		{"added to once sealed", func(vals []float64) *Latencies {
			l := added(vals[:len(vals)/2])
			l.Seal()
			for _, v := range vals[len(vals)/2:] {
				l.Add(v)
			}
			return l
		}},
		{"sealed merged into dense", func(vals []float64) *Latencies {
			l, o := added(vals[:len(vals)/3]), added(vals[len(vals)/3:])
			o.Seal()
			l.Merge(o)
			return l
		}},
		{"dense merged into sealed", func(vals []float64) *Latencies {
			l, o := added(vals[:len(vals)/3]), added(vals[len(vals)/3:])
			l.Seal()
			l.Merge(o)
			return l
		}},
		{"sealed with late values merged into the same", func(vals []float64) *Latencies {
			a, b := added(vals[:len(vals)/4]), added(vals[len(vals)/4:len(vals)/2])
			a.Seal()
			b.Seal()
			for i, v := range vals[len(vals)/2:] {
				[]*Latencies{a, b}[i%2].Add(v)
			}
			a.Merge(b)
			return a
		}},
		{"sealed merged into empty", func(vals []float64) *Latencies {
			var l Latencies
			o := added(vals)
			o.Seal()
			l.Merge(o)
			return &l
		}},
		{"reused after Reset", func(vals []float64) *Latencies {
			l := added(latencyValues(9, 100))
			l.Reset()
			for _, v := range vals {
				l.Add(v)
			}
			return l
		}},
	}
	for _, n := range []int{1, 10, 5000} {
		vals := latencyValues(uint64(n), n)
		st := newStats(Trend)
		for _, v := range vals {
			st.add(v)
		}
		for _, b := range builds {
			l := b.build(vals)
			if l.Count() != int64(n) || l.Min() != st.Min || l.Max() != st.Max {
				t.Errorf("%d values %s: count %d, min %g, max %g; want %d, %g, %g", n, b.name, l.Count(), l.Min(), l.Max(), n, st.Min, st.Max)
			}
			for p := 0.0; p <= 100.2; p += 0.3 { // 0 to 100 and beyond
				if got, want := l.Percentile(p), st.Percentile(p); got != want {
					t.Errorf("%d values %s: p%g = %g, Stats says %g", n, b.name, p, got, want)
				}
			}
		}
	}
}

// Empty Latencies answer 0, and merging them changes nothing.
func TestEmptyLatencies(t *testing.T) {
	var l, empty Latencies
	l.Merge(&empty)
	empty.Seal()
	l.Merge(&empty)
	if l.Count() != 0 || l.Percentile(50) != 0 || l.MemorySize() != 0 {
		t.Errorf("empty: count %d, p50 %g, %d B", l.Count(), l.Percentile(50), l.MemorySize())
	}
	l.Add(12.5)
	if l.Percentile(99) != 12.5 {
		t.Errorf("one value of 12.5: p99 %g", l.Percentile(99))
	}
}

// The compact form keeps every bucket of the histogram and its count:
// one value in each bucket from 0 to the top, and a bucket of many. Its
// buckets are the histogram's: 1 wide below 2^subBucketBits, 2 wide from
// there.
func TestSealingKeepsEveryBucket(t *testing.T) {
	h := newHistogram()
	if top := int64(1) << subBucketBits; h.ValuesAreEquivalent(top-2, top-1) || !h.ValuesAreEquivalent(top, top+1) {
		t.Fatalf("the histograms' buckets do not double from %d", top)
	}
	var l Latencies
	for v := int64(0); v <= histMax; v += 1 << bucketShift(v) {
		l.Add(float64(v) / histScale)
	}
	for range 70_000 {
		l.Add(42)
	}
	want := l.dense.Clone()
	l.Seal()
	// Merged into dense Latencies (of one more value), the sealed ones
	// decode.
	var got Latencies
	got.Add(1)
	got.Merge(&l)
	recordAbs(want, 1, 1)
	if !got.dense.Equals(want) {
		t.Errorf("decoded %d values, want %d", got.dense.TotalCount(), want.TotalCount())
	}
	t.Logf("%d values: %d B sealed", l.Count(), l.MemorySize())
}

// Sealed Latencies hold far less than dense ones: their size grows with
// the distinct values they hold.
func TestSealedLatenciesAreSmall(t *testing.T) {
	l := added(latencyValues(4, 1000))
	dense := l.MemorySize()
	l.Seal()
	if sealed := l.MemorySize(); sealed*10 > dense {
		t.Errorf("1,000 values take %d B sealed, %d B dense", sealed, dense)
	}
}

// BenchmarkLatenciesAdd records latencies into a dense histogram.
func BenchmarkLatenciesAdd(b *testing.B) {
	vals := latencyValues(5, 1024)
	var l Latencies
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Add(vals[i%len(vals)])
		i++
	}
}

// BenchmarkLatenciesPercentile reads the p99 of 1,000 latencies, dense and
// sealed.
func BenchmarkLatenciesPercentile(b *testing.B) {
	for _, sealed := range []bool{false, true} {
		name := "dense"
		if sealed {
			name = "sealed"
		}
		b.Run(name, func(b *testing.B) {
			l := added(latencyValues(6, 1000))
			if sealed {
				l.Seal()
			}
			b.ReportAllocs()
			for b.Loop() {
				l.Percentile(99)
			}
		})
	}
}

// AddN(v, n) is n calls of Add(v), sealed or not: the same count,
// extremes and percentiles.
func TestLatenciesAddNEqualsRepeatedAdds(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		var weighted, repeated Latencies
		if sealed {
			weighted.Add(1)
			repeated.Add(1)
			weighted.Seal()
			repeated.Seal()
		}
		for _, w := range []struct {
			v float64
			n int64
		}{{5, 1000}, {12.5, 1}, {40, 130}, {7, 0}} {
			weighted.AddN(w.v, w.n)
			for range w.n {
				repeated.Add(w.v)
			}
		}
		if weighted.Count() != repeated.Count() || weighted.Min() != repeated.Min() || weighted.Max() != repeated.Max() {
			t.Errorf("sealed %t: %d values in [%g, %g], want %d in [%g, %g]", sealed, weighted.Count(), weighted.Min(), weighted.Max(),
				repeated.Count(), repeated.Min(), repeated.Max())
		}
		for _, p := range []float64{50, 90, 99, 99.9} {
			if got, want := weighted.Percentile(p), repeated.Percentile(p); got != want {
				t.Errorf("sealed %t: p%g %g, want %g", sealed, p, got, want)
			}
		}
	}
}

// The gaps of a stream of 32,768 tokens beyond the first 4,096, folded
// into buckets (llm.Record.ITLGaps), added to an interval's ITL: one by
// one, as window.Aggregate did, and a bucket at a time.
func BenchmarkLatenciesFoldedGaps(b *testing.B) {
	const folded, buckets = 32768 - 4096, 7
	b.Run("one-by-one", func(b *testing.B) {
		var l Latencies
		for b.Loop() {
			for i := range buckets {
				for range folded / buckets {
					l.Add(9 + float64(i))
				}
			}
		}
	})
	b.Run("AddN", func(b *testing.B) {
		var l Latencies
		for b.Loop() {
			for i := range buckets {
				l.AddN(9+float64(i), folded/buckets)
			}
		}
	})
}
