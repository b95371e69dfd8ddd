package data

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

// TestBlockPromptSharesExactlyTheHashedBlocks builds prompts of records
// that share hash ids with both built-in encodings, encodes them, and
// checks that each has its exact length, that its token ids are its
// blocks' ids joined (no token merges across a block's edge), that records
// sharing leading ids share exactly those blocks' ids, and that they
// differ at the first token after them.
func TestBlockPromptSharesExactlyTheHashedBlocks(t *testing.T) {
	const seed, bs = 42, 64
	records := []struct {
		ids    []int64
		tokens int
	}{
		{[]int64{1, 2, 3}, 3*bs + 10},
		{[]int64{1, 2, 3, 4}, 4*bs + 5},
		{[]int64{1, 2, 7}, 3 * bs},
		{[]int64{1, 2, 3, 4, 5, 6}, 2*bs + 1}, // ids beyond the input dropped
		{[]int64{9}, bs / 2},                  // a partial block only
		{nil, 50},                             // no hash ids: all its own
		{[]int64{1}, 0},
	}
	for _, enc := range tokenizer.Encodings {
		t.Run(enc, func(t *testing.T) {
			s := loadSynthesizer(t, enc)
			block := map[int64][]int{}
			blockIDs := func(id int64) []int {
				if ids, ok := block[id]; ok {
					return ids
				}
				p, err := s.BlockPrompt(seed, []int64{id}, bs, bs, 0)
				if err != nil {
					t.Fatal(err)
				}
				ids, _ := s.tok.Encode(p.Text)
				if len(ids) != bs {
					t.Fatalf("block %d alone encodes to %d tokens, want %d", id, len(ids), bs)
				}
				block[id] = ids
				return ids
			}
			encoded := make([][]int, len(records))
			for i, r := range records {
				p, err := s.BlockPrompt(seed, r.ids, r.tokens, bs, uint64(i))
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				ids, _ := s.tok.Encode(p.Text)
				if len(ids) != r.tokens || p.Tokens != r.tokens {
					t.Fatalf("record %d: %d tokens encoded, %d reported, want %d", i, len(ids), p.Tokens, r.tokens)
				}
				wantHashed := min(len(r.ids)*bs, r.tokens)
				if p.HashedTokens != wantHashed {
					t.Errorf("record %d: %d hashed tokens, want %d", i, p.HashedTokens, wantHashed)
				}
				for k, id := range r.ids {
					from := k * bs
					if from >= r.tokens {
						break
					}
					to := min(from+bs, r.tokens)
					if !slices.Equal(ids[from:to], blockIDs(id)[:to-from]) {
						t.Errorf("record %d: block %d (hash id %d) encodes differently inside the prompt than alone", i, k, id)
					}
				}
				encoded[i] = ids
			}
			// Records 0 and 1 share blocks 1, 2, 3 and differ after them;
			// 0 and 2 share 1, 2.
			for _, c := range []struct{ a, b, shared int }{{0, 1, 3 * bs}, {0, 2, 2 * bs}, {1, 3, 2*bs + 1}} {
				if common := commonPrefix(encoded[c.a], encoded[c.b]); common != c.shared {
					t.Errorf("records %d and %d share %d leading tokens, want %d", c.a, c.b, common, c.shared)
				}
			}
			again, _ := s.BlockPrompt(seed, records[1].ids, records[1].tokens, bs, 1)
			other, _ := s.BlockPrompt(seed+1, records[1].ids, records[1].tokens, bs, 1)
			first, _ := s.BlockPrompt(seed, records[1].ids, records[1].tokens, bs, 1)
			if again.Text != first.Text {
				t.Error("the same record, seed and request number gave two prompts")
			}
			if strings.HasPrefix(other.Text, first.Text[:40]) {
				t.Error("another seed gave the same blocks")
			}
		})
	}
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestBlockPromptRefusesBadInput checks the errors name what is wrong.
func TestBlockPromptRefusesBadInput(t *testing.T) {
	s := loadSynthesizer(t, tokenizer.DefaultEncoding)
	for _, c := range []struct {
		tokens, bs int
		want       string
	}{
		{10, 0, "block size must be ≥ 1"},
		{-1, 512, "input tokens must be ≥ 0"},
		{MaxPromptTokens + 1, 512, "exceeds llmrun's limit"},
	} {
		if _, err := s.BlockPrompt(1, []int64{1}, c.tokens, c.bs, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("BlockPrompt(tokens %d, block size %d): error %v, want one saying %q", c.tokens, c.bs, err, c.want)
		}
	}
	s.additive = false
	if _, err := s.BlockPrompt(1, []int64{1}, 10, 4, 0); err == nil || !strings.Contains(err.Error(), "one token each") {
		t.Errorf("a tokenizer whose words merge: error %v, want a refusal", err)
	}
}
