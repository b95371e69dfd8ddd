package llmjs

import (
	"context"
	"slices"
	"testing"

	"github.com/llmrun/llmrun/modules/llm"
)

// Each measured request reaches the VU's request sink as a record with its
// tags, timings and tokens; a failed one with its class and E2E only.
func TestRequestRecords(t *testing.T) {
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

// Each measured request that ended reaches the Results sink as the Go
// Result the client measured, the one its record was made from; a
// warmup request, or one the run stopped, does not.
func TestResultsAreTheRecordsResults(t *testing.T) {
	_, m, rec := startRecordedJSSim(t)
	v := newJSVU(t, m)
	ok := stream(t, v, `llm.stream(`+body(20)+`, { promptTokens: 7 })`)
	stream(t, v, `llm.stream(`+body(4)+`, { headers: { 'X-Llmsim-Fault': 'http_5xx' } })`)
	v.State().Warmup = true
	stream(t, v, `llm.stream(`+body(4)+`)`)
	v.State().Warmup = false
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	v.Ctx = ctx
	if r := stream(t, v, `llm.stream(`+body(4)+`)`); r.ErrorClass != "canceled" {
		t.Fatalf("result %+v, want canceled", r)
	}

	results, records := rec.Results(), rec.Records()
	if len(results) != 2 || len(records) != 2 {
		t.Fatalf("%d results and %d records, want 2 of each: the measured requests that ended", len(results), len(records))
	}
	for i, res := range results {
		if !res.End().Equal(records[i].Time) || res.E2E != records[i].E2E || res.OK != records[i].OK || string(res.Class) != records[i].ErrorClass {
			t.Errorf("result %d: end %v, E2E %v, ok %v, class %q; its record %+v", i, res.End(), res.E2E, res.OK, res.Class, records[i])
		}
	}
	if r := results[0]; !r.OK || r.TTFT != ok.TTFT || r.OutputTokens != 20 || len(r.ITL) != 19 || r.RequestedPromptTokens != 7 {
		t.Errorf("the ok request's result %+v, its object %+v", r, ok)
	}
	if r := results[1]; r.OK || r.Class != llm.ErrHTTP5xx {
		t.Errorf("the failed request's result: ok %v, class %q; want %s", r.OK, r.Class, llm.ErrHTTP5xx)
	}
}
