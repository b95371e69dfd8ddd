package llmjs

import "testing"

// llm.stream counts into the run's arrivals, by scenario and model; a
// warmup iteration counts nothing.
func TestJSStreamCountsArrivals(t *testing.T) {
	_, m, rec := startRecordedJSSim(t)
	v := newJSVU(t, m)
	r := stream(t, v, `llm.stream({ prompt: 'hi', max_tokens: 9, ignore_eos: true })`)
	if !r.OK || r.OutputTokens != 9 {
		t.Fatalf("result %+v", r)
	}
	if got := rec.Tokens("test", jsModel); got != 9 {
		t.Errorf("%d tokens counted, want 9", got)
	}
	v.State().Warmup = true
	stream(t, v, `llm.stream({ prompt: 'hi', max_tokens: 9, ignore_eos: true })`)
	if got := rec.Tokens("test", jsModel); got != 9 {
		t.Errorf("%d tokens counted after a warmup request, want 9", got)
	}
}
