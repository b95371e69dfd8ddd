package llmsim

import (
	"encoding/json"
	"testing"
)

func TestVocabularyNeedsNoEscaping(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range vocabulary {
		quoted, _ := json.Marshal(w)
		if len(w) < 2 || w[0] != ' ' || string(quoted) != `"`+w+`"` || seen[w] {
			t.Errorf("bad or repeated vocabulary entry %q", w)
		}
		seen[w] = true
	}
}

func TestLengthDistribution(t *testing.T) {
	const mean, draws = 40, 20000
	sum := 0
	for i := range uint64(draws) {
		n, reason := newTextSource(1, i).length(&job{maxTokens: 1 << 20}, mean)
		if n < 1 || reason != "stop" {
			t.Fatalf("draw %d: %d tokens, %q", i, n, reason)
		}
		sum += n
	}
	// ceil of an exponential with mean 40 has mean ≈ 40.5; its standard
	// error over 20000 draws is 0.3.
	if got := float64(sum) / draws; got < 39 || got > 42 {
		t.Errorf("mean length %.2f, want ≈ 40.5", got)
	}
}
