package llm

import (
	"testing"

	"github.com/llmrun/llmrun/modules"
)

// Each measured request reaches the VU's request sink as a record with its
// tags, timings and tokens; a failed one with its class and E2E only.
func TestRequestRecords(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	ok := stream(t, v, `llm.stream(`+body(20)+`, { tags: { workload: 'chat' } })`)
	bad := stream(t, v, `llm.stream(`+body(4)+`, { headers: { 'X-Llmsim-Fault': 'http_5xx' } })`)
	recs := v.Requests.Records()
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
	if !(r.ITLMean > 0 && r.ITLP99 >= r.ITLMean) || !r.Time.Equal(v.Requests.Records()[0].Time) {
		t.Errorf("ITL mean %v, p99 %v", r.ITLMean, r.ITLP99)
	}
	f := recs[1]
	if f.OK || f.ErrorClass != "http_5xx" || f.Status != bad.Status || f.E2E != bad.E2E || f.TTFT != 0 || f.OutputTokens != 0 {
		t.Errorf("failed record %+v", f)
	}
}

func TestFillRecordITL(t *testing.T) {
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
	var rec modules.RequestRecord
	var scratch []float64
	for _, tc := range tests {
		r := &Result{OK: true, ITL: tc.itl}
		scratch = r.fillRecord(&rec, nil, scratch)
		if rec.ITLMean != tc.mean || rec.ITLP99 != tc.p99 {
			t.Errorf("ITL %v: mean %v p99 %v, want %v %v", tc.itl, rec.ITLMean, rec.ITLP99, tc.mean, tc.p99)
		}
	}
}
