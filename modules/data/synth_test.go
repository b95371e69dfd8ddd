package data

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

// TestSyntheticExactLengths asks both built-in encodings for prompts of
// many lengths, with and without a prefix, and re-encodes each.
func TestSyntheticExactLengths(t *testing.T) {
	lengths := []int{0, 1, 2, 3, 7, 16, 31, 64, 100, 127, 128, 255, 256, 500, 512, 777, 1000, 1024, 2048, 3000, 4096, 8192}
	prefixes := []string{
		"You are a helpful assistant.",
		"System: answer in French.\n",
		"Context:\n\n",
		"Tail with spaces   ",
		"numbers 12345",
		"ünïcödé 日本語 🙂",
	}
	for _, enc := range tokenizer.Encodings {
		t.Run(enc, func(t *testing.T) {
			s := loadSynthesizer(t, enc)
			if !s.additive {
				t.Fatalf("%s: words do not add one token each; prompts would take the slow path", enc)
			}
			r := rand.New(rand.NewPCG(7, 7))
			for _, n := range lengths {
				text, err := s.Text(r, n)
				if err != nil {
					t.Fatalf("Text(%d): %v", n, err)
				}
				if got, _ := s.tok.Count(text); got != n {
					t.Errorf("Text(%d) encodes to %d tokens", n, got)
				}
				for _, p := range prefixes {
					pn, _ := s.tok.Count(p)
					if n < pn {
						if _, err := s.WithPrefix(r, p, n); err == nil {
							t.Errorf("WithPrefix(%q, %d): no error for a prefix of %d tokens", p, n, pn)
						}
						continue
					}
					text, err := s.WithPrefix(r, p, n)
					if err != nil {
						t.Fatalf("WithPrefix(%q, %d): %v", p, n, err)
					}
					if !strings.HasPrefix(text, p) {
						t.Fatalf("WithPrefix(%q, %d) = %.40q…: the prefix is not kept", p, n, text)
					}
					if got, _ := s.tok.Count(text); got != n {
						t.Errorf("WithPrefix(%q, %d) encodes to %d tokens", p, n, got)
					}
				}
			}
		})
	}
}

// BenchmarkSynthesizerText measures Text alone, without JavaScript.
func BenchmarkSynthesizerText(b *testing.B) {
	s := loadSynthesizer(b, tokenizer.DefaultEncoding)
	r := rand.New(rand.NewPCG(1, 1))
	const n = 2048
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Text(r, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/token")
}

// A prompt longer than MaxPromptTokens, or shared prefixes longer than it
// together, is refused before anything is allocated for it, naming the
// limit; one at the limit's edge is not refused.
func TestSyntheticLengthBound(t *testing.T) {
	s := loadSynthesizer(t, "cl100k_base")
	r := rand.New(rand.NewPCG(7, 7))
	const want = "exceeds llmrun's limit of 10000000 tokens"
	if _, err := s.Text(r, MaxPromptTokens+1); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Text(MaxPromptTokens+1): %v, want %q", err, want)
	}
	if _, err := s.WithPrefix(r, "You are a helpful assistant.", MaxPromptTokens+1); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("WithPrefix(MaxPromptTokens+1): %v, want %q", err, want)
	}
	if _, err := NewPrefixGroups(s, 1, MaxPromptTokens/256+1, 256); err == nil || !strings.Contains(err.Error(), "for the prefixes together") {
		t.Errorf("NewPrefixGroups beyond the limit: %v", err)
	}
	if err := CheckPromptTokens("--random-input-len", MaxPromptTokens); err != nil {
		t.Errorf("a prompt of exactly MaxPromptTokens: %v", err)
	}
}

// loadSynthesizer is the synthesizer of encoding enc.
func loadSynthesizer(tb testing.TB, enc string) *Synthesizer {
	tb.Helper()
	tok, err := tokenizer.Load(enc)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := NewSynthesizer(tok)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
