package window

import (
	"fmt"
	"maps"
	"testing"

	"github.com/llmrun/llmrun/modules/llm"
)

// counts are an aggregate's counts, to compare.
type counts struct {
	requests, failed, promptTokens int64
	errors                         map[string]int64
	ttft, tpot, e2e                int64
}

func countsOf(a *Aggregate) counts {
	return counts{a.Requests, a.Failed, a.PromptTokens, maps.Clone(a.Errors), a.TTFT.Count(), a.TPOT.Count(), a.E2E.Count()}
}

func (c counts) equal(o counts) bool {
	return c.requests == o.requests && c.failed == o.failed && c.promptTokens == o.promptTokens &&
		maps.Equal(c.errors, o.errors) && c.ttft == o.ttft && c.tpot == o.tpot && c.e2e == o.e2e
}

// An aggregate counts every request, the prompt tokens and latencies of
// the successful ones only (those measured), and the failures by class.
func TestAdd(t *testing.T) {
	tests := []struct {
		name string
		recs []llm.Record
		want counts
	}{
		{"none", nil, counts{}},
		{"streamed", []llm.Record{{OK: true, TTFT: 80, TPOT: 11, E2E: 900, PromptTokens: 300}},
			counts{requests: 1, promptTokens: 300, ttft: 1, tpot: 1, e2e: 1}},
		{"one token, no TPOT", []llm.Record{{OK: true, TTFT: 80, E2E: 80, PromptTokens: 30}},
			counts{requests: 1, promptTokens: 30, ttft: 1, e2e: 1}},
		{"failed", []llm.Record{{ErrorClass: "http_5xx", E2E: 40, PromptTokens: 99}, {E2E: 50}},
			counts{requests: 2, failed: 2, errors: map[string]int64{"http_5xx": 1, "unknown": 1}}},
	}
	for _, tt := range tests {
		var a Aggregate
		for i := range tt.recs {
			a.Add(&tt.recs[i])
		}
		if got := countsOf(&a); !got.equal(tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// Merging two aggregates, sealed or not, gives the counts and percentiles
// of one that saw both's requests; Reset empties one for reuse.
func TestMergeSealReset(t *testing.T) {
	recs := []llm.Record{
		{OK: true, TTFT: 80, TPOT: 11, E2E: 900, PromptTokens: 300},
		{OK: true, TTFT: 120, TPOT: 14, E2E: 1900, PromptTokens: 200},
		{ErrorClass: "timeout", E2E: 30_000},
		{OK: true, TTFT: 43.007, TPOT: 9, E2E: 700, PromptTokens: 100},
	}
	var all, first, second Aggregate
	for i := range recs {
		all.Add(&recs[i])
		half := &first
		if i >= 2 {
			half = &second
		}
		half.Add(&recs[i])
	}
	first.Seal()
	var merged Aggregate
	merged.Merge(&first)
	merged.Merge(&second)
	if got, want := countsOf(&merged), countsOf(&all); !got.equal(want) {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	for _, p := range []float64{50, 99} {
		if got, want := merged.TTFT.Percentile(p), all.TTFT.Percentile(p); got != want {
			t.Errorf("merged TTFT p%g = %g, want %g", p, got, want)
		}
	}
	merged.Reset()
	if got := countsOf(&merged); !got.equal(counts{errors: map[string]int64{}}) {
		t.Errorf("reset: %+v", got)
	}
	if first.MemorySize() >= second.MemorySize() {
		t.Errorf("sealed %d B, dense %d B", first.MemorySize(), second.MemorySize())
	}
}

// With CountITL, the ITL distribution holds every gap of the successful
// requests, as llm_itl does, merged and reset with the rest; without it,
// none (the views that do not show ITL do not pay for it).
func TestITLHoldsEveryGap(t *testing.T) {
	results := []llm.Result{
		{OK: true, TTFT: 80, E2E: 200, ITL: []float64{10, 20, 30}},
		{OK: true, TTFT: 90, E2E: 300, ITL: []float64{40}},
		{Class: llm.ErrTimeout, E2E: 500, ITL: []float64{99}},
	}
	a, b, uncounted := Aggregate{CountITL: true}, Aggregate{}, Aggregate{}
	for i := range results {
		var rec llm.Record
		results[i].Record(&rec, nil, nil)
		a.Add(&rec)
		uncounted.Add(&rec)
	}
	if got := uncounted.ITL.Count(); got != 0 || uncounted.Requests != 3 {
		t.Errorf("without CountITL: %d requests, ITL holds %d gaps, want 3 and none", uncounted.Requests, got)
	}
	if got := a.ITL.Count(); got != 4 {
		t.Errorf("ITL holds %d gaps, want the successful requests' 4", got)
	}
	if got := a.ITL.Max(); got != 40 {
		t.Errorf("ITL max %g, want 40", got)
	}
	a.Seal()
	b.Merge(&a)
	if got := b.ITL.Count(); got != 4 {
		t.Errorf("merged ITL holds %d gaps, want 4", got)
	}
	b.Reset()
	if got := b.ITL.Count(); got != 0 {
		t.Errorf("reset ITL holds %d gaps", got)
	}
}

// One streamed request of 128 gaps added to an interval's aggregate: what
// each view of a run over time pays per request, and the dashboard's with
// its ITL.
func BenchmarkAddStreamed(b *testing.B) {
	res := llm.Result{OK: true, TTFT: 80, TPOT: 11, E2E: 1500, PromptTokens: 300}
	for i := range 128 {
		res.ITL = append(res.ITL, 9+float64(i%7))
	}
	var rec llm.Record
	res.Record(&rec, nil, nil)
	for _, countITL := range []bool{false, true} {
		b.Run(fmt.Sprintf("CountITL=%t", countITL), func(b *testing.B) {
			a := Aggregate{CountITL: countITL}
			for b.Loop() {
				a.Add(&rec)
			}
		})
	}
}
