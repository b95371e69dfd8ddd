package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies turned into an HDR histogram and back, sealed or not, merge
// into others as the originals do: every percentile of the merge is the
// same, to the bit.
func TestLatenciesThroughAHistogramMergeExactly(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(3, 4))
		var a, b Latencies
		for range 300 {
			a.Add(1 + 50*rng.ExpFloat64())
			b.Add(5 + 400*rng.Float64())
		}
		if sealed {
			b.Seal()
			b.Add(7777) // a late value, not encoded yet
		}
		back, err := LatenciesFromHistogram(b.Histogram(), b.Min(), b.Max())
		if err != nil {
			t.Fatal(err)
		}
		var want, got Latencies
		want.Merge(&a)
		want.Merge(&b)
		got.Merge(&a)
		got.Merge(&back)
		for _, p := range []float64{0, 1, 50, 90, 99, 99.9, 100} {
			if g, w := got.Percentile(p), want.Percentile(p); g != w || got.Count() != want.Count() {
				t.Errorf("sealed %v: p%v %v of %d values, want %v of %d", sealed, p, g, got.Count(), w, want.Count())
			}
		}
	}
	var empty Latencies
	if h := empty.Histogram(); h != nil {
		t.Errorf("empty latencies gave a histogram of %d values", h.TotalCount())
	}
}

func TestLatenciesFromHistogramRefusesWhatDoesNotFit(t *testing.T) {
	var l Latencies
	l.Add(10)
	l.Add(20)
	other := hdr.New(1, 1000, 2)
	other.RecordValue(5)
	for _, tt := range []struct {
		name     string
		h        *hdr.Histogram
		min, max float64
		want     string
	}{
		{"another geometry", other, 0.005, 0.005, "significant figures"},
		{"min above max", l.Histogram(), 20, 10, "not 0 ≤ min ≤ max"},
		{"min outside", l.Histogram(), 9, 20, "outside the histogram's lowest and highest buckets"},
		{"max outside", l.Histogram(), 10, 25, "outside"},
	} {
		if _, err := LatenciesFromHistogram(tt.h, tt.min, tt.max); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		}
	}
}
