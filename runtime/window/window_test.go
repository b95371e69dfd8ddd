package window

import (
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
