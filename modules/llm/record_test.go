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
