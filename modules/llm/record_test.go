package llm

import (
	"testing"
)

func TestRecordITL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		itl       []float64
		mean, p99 float64
	}{
		{nil, 0, 0},
		{[]float64{7}, 7, 7},
		{[]float64{4, 1, 3, 2}, 2.5, 4},
		{func() []float64 {
			x := make([]float64, 100)
			for i := range x {
				x[i] = float64(100 - i)
			}
			return x
		}(), 50.5, 99},
	}
	var rec Record
	var scratch []float64
	for _, tc := range tests {
		r := &Result{OK: true, ITL: tc.itl}
		scratch = r.Record(&rec, nil, scratch)
		if rec.ITLMean != tc.mean || rec.ITLP99 != tc.p99 {
			t.Errorf("ITL %v: mean %v p99 %v, want %v %v", tc.itl, rec.ITLMean, rec.ITLP99, tc.mean, tc.p99)
		}
	}
}

// A record yields its request's gaps as llm_itl counts them: each of the
// exact ones, then the folded ones with their counts; a failed request's
// none.
func TestRecordITLGaps(t *testing.T) {
	var long Result
	long.OK = true
	for i := range maxExactITL + 3 {
		long.addGap(float64(10 + i%2))
	}
	for _, tc := range []struct {
		name  string
		r     *Result
		exact int
		total int64
	}{
		{"short", &Result{OK: true, ITL: []float64{5, 7, 9}}, 3, 3},
		{"folded", &long, maxExactITL, maxExactITL + 3},
		{"failed", &Result{Class: ErrTimeout, ITL: []float64{5}}, 0, 0},
	} {
		var rec Record
		tc.r.Record(&rec, nil, nil)
		var exact int
		var total int64
		for _, n := range rec.ITLGaps() {
			if n == 1 && total < int64(len(tc.r.ITL)) {
				exact++
			}
			total += n
		}
		if exact != tc.exact || total != tc.total {
			t.Errorf("%s: %d exact gaps, %d in all; want %d and %d", tc.name, exact, total, tc.exact, tc.total)
		}
	}
}
