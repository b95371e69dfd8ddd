package llmsim

import (
	"math"
	"testing"
)

func TestEmbeddingDeterministic(t *testing.T) {
	a, b, c := make([]float32, 32), make([]float32, 32), make([]float32, 32)
	embedding(a, 1, []byte("hello"))
	embedding(b, 1, []byte("hello"))
	embedding(c, 2, []byte("hello"))
	var norm float64
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("same input and seed, different vectors at %d", k)
		}
		norm += float64(a[k]) * float64(a[k])
	}
	if a[0] == c[0] && a[1] == c[1] {
		t.Error("another seed gave the same vector")
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² %v, want 1", norm)
	}
}

func TestEmbeddingInputs(t *testing.T) {
	for in, want := range map[string]int{`"abc"`: 1, `["a","b"]`: 2, `[1,2,3]`: 1, `[[1],[2,3]]`: 2} {
		seeds, tokens, err := embeddingInputs([]byte(in), &prompter{})
		if err != nil || len(seeds) != want || len(tokens) != want {
			t.Errorf("%s: %d inputs, %v", in, len(seeds), err)
		}
	}
	for _, in := range []string{`[]`, `null`, `3`, `[[]]`, `[{}]`} {
		if _, _, err := embeddingInputs([]byte(in), &prompter{}); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}
