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

// One streamed request of 128 gaps made into its record, on the VU's
// goroutine at the end of each request.
func BenchmarkRecordStreamed(b *testing.B) {
	res := Result{OK: true, TTFT: 80, TPOT: 11, E2E: 1500, PromptTokens: 300}
	for i := range 128 {
		res.ITL = append(res.ITL, 9+float64(i%7))
	}
	b.RunParallel(func(pb *testing.PB) {
		res := res
		var rec Record
		var scratch []float64
		for pb.Next() {
			scratch = res.Record(&rec, nil, scratch)
		}
	})
}

// A sink's copy of a record kept past AddRequest never yields the gaps of
// the request its pooled Result serves next, nor those of the Result
// emptied for it: it yields none; the next request's record yields its
// own.
func TestRecordCopyYieldsNoOtherRequestsGaps(t *testing.T) {
	t.Parallel()
	c, err := NewClient(Config{BaseURL: startSim(t).URL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	// One Result and one gap buffer for request after request, as a VU
	// has them (StreamInto).
	var res Result
	var itl []float64
	ask := func(tokens int) Record {
		req := Request{Body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Hi."}}, "max_tokens": tokens, "ignore_eos": true}}
		c.StreamInto(t.Context(), &req, &res, itl)
		itl = res.ITL
		if !res.OK {
			t.Fatalf("request failed: %s", res.Error)
		}
		var rec Record
		res.Record(&rec, nil, nil)
		return rec
	}
	count := func(r *Record) (n int64) {
		for _, k := range r.ITLGaps() {
			n += k
		}
		return n
	}
	kept := ask(3) // what the JSONL and InfluxDB queues do: a copy
	if n := count(&kept); n != 2 {
		t.Fatalf("the copy yields %d gaps while the request is its Result's, want 2", n)
	}
	next := ask(4)
	if n := count(&kept); n != 0 {
		t.Errorf("the copy yields %d gaps of the next request, want none", n)
	}
	if n := count(&next); n != 3 {
		t.Errorf("the next request's record yields %d gaps, want its 3", n)
	}
}
