package llm

import (
	"slices"
	"testing"
)

// Each measured request reaches the VU's request sink as a record with its
// tags, timings and tokens; a failed one with its class and E2E only.
func TestRequestRecords(t *testing.T) {
	t.Parallel()
	_, m, rec := startRecordedJSSim(t)
	v := newJSVU(t, m)
	ok := stream(t, v, `llm.stream(`+body(20)+`, { tags: { workload: 'chat' } })`)
	bad := stream(t, v, `llm.stream(`+body(4)+`, { headers: { 'X-Llmsim-Fault': 'http_5xx' } })`)
	recs := rec.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	r := recs[0]
	if w, _ := r.Tags.Get("workload"); w != "chat" || !r.OK || r.Status != 200 || r.ErrorClass != "" {
		t.Errorf("ok record %+v", r)
	}
	if r.TTFT != ok.TTFT || r.TPOT != ok.TPOT || r.E2E != ok.E2E || r.OutputTokens != 20 || r.PromptTokens != ok.PromptTokens {
		t.Errorf("ok record %+v, result %+v", r, ok)
	}
	if !(r.ITLMean > 0 && r.ITLP99 >= r.ITLMean) || !r.Time.Equal(rec.Records()[0].Time) {
		t.Errorf("ITL mean %v, p99 %v", r.ITLMean, r.ITLP99)
	}
	f := recs[1]
	if f.OK || f.ErrorClass != "http_5xx" || f.Status != bad.Status || f.E2E != bad.E2E || f.TTFT != 0 || f.OutputTokens != 0 {
		t.Errorf("failed record %+v", f)
	}
}

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
		scratch = r.record(&rec, nil, scratch)
		if rec.ITLMean != tc.mean || rec.ITLP99 != tc.p99 {
			t.Errorf("ITL %v: mean %v p99 %v, want %v %v", tc.itl, rec.ITLMean, rec.ITLP99, tc.mean, tc.p99)
		}
	}
}

// A warmup iteration's requests reach only the observer: no record, no
// error message, no token counted.
func TestWarmupRequestsAreOnlyObserved(t *testing.T) {
	_, m, rec := startRecordedJSSim(t)
	v := newJSVU(t, m)
	v.State().Warmup = true
	stream(t, v, `llm.stream(`+body(4)+`)`)
	stream(t, v, `llm.stream(`+body(4)+`, { headers: { 'X-Llmsim-Fault': 'http_5xx' } })`)
	if r, e, n := rec.Records(), rec.Errors(), rec.Tokens("test", jsModel); len(r) != 0 || len(e) != 0 || n != 0 {
		t.Errorf("warmup kept: %d records, errors %v, %d tokens", len(r), e, n)
	}
	if o := rec.Observed(); len(o) != 2 || o[0].Class != "" || o[1].Class != "http_5xx" {
		t.Errorf("observed %v, want an ok request then an http_5xx", o)
	}
	if by := rec.ObservedBy(); !slices.Equal(by, []int64{v.ID(), v.ID()}) {
		t.Errorf("observed requests of VUs %v, want both of VU %d", by, v.ID())
	}
}
