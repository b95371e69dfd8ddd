package data

import (
	"errors"
	"fmt"
)

// DefaultHashBlockTokens is the tokens of a trace's hash block when the
// trace does not say: Mooncake's 512.
const DefaultHashBlockTokens = 512

// Random stream keys of the prompts built from hash ids: a block's words
// come from the stream of the run's seed and its hash id, a prompt's tail
// from the stream of the seed and the request's number.
const (
	hashBlockStreamKey = 0x68626c6b // "hblk"
	hashTailStreamKey  = 0x6874616c // "htal"
)

// errNotAdditive is BlockPrompt's refusal of a tokenizer whose words do
// not encode to one token each: its blocks' tokens would change at their
// edges, and requests that share hash ids would not share tokens.
var errNotAdditive = errors.New("its common words do not encode to one token each, so blocks would not keep their tokens when joined; prompts from hash_ids need a regex-split BPE tokenizer (cl100k_base, o200k_base, Llama 3, Qwen)")

// BlockPrompt is the prompt of one trace record built from its hash ids.
type BlockPrompt struct {
	Text string
	// Tokens is Text's length in tokens: the record's input tokens.
	Tokens int
	// HashedTokens are the tokens of Text that come from hash blocks; the
	// rest, after them, is the request's own.
	HashedTokens int
}

// BlockPrompt builds the prompt of a trace record: its input tokens,
// exactly, of which block k is the first blockSize tokens (fewer in the
// last block) of the token sequence that hash id hashIDs[k] stands for,
// and the tokens after the last hash block are the request's own (drawn
// from the stream of seed and request). Hash ids that would start beyond
// inputTokens are dropped. A block's sequence depends only on seed and
// its id, so requests sharing hash ids share exactly those blocks' tokens,
// and differ after them.
//
// Every token is a common word with its leading space, which the
// synthesizer's tokenizer encodes as one token alone and after any other
// such word: a block's token ids are the same wherever it stands, and the
// prompt's ids are its blocks' ids joined. Two different ids' blocks are
// random words; they share their first k tokens with a chance of
// 1/words^k, so a server's cache, which hashes blocks of 16 tokens or more,
// does not confuse them.
func (s *Synthesizer) BlockPrompt(seed int64, hashIDs []int64, inputTokens, blockSize int, request uint64) (BlockPrompt, error) {
	if blockSize < 1 {
		return BlockPrompt{}, fmt.Errorf("prompt from hash_ids: block size must be ≥ 1 token, got %d", blockSize)
	}
	if inputTokens < 0 {
		return BlockPrompt{}, fmt.Errorf("prompt from hash_ids: input tokens must be ≥ 0, got %d", inputTokens)
	}
	if err := CheckPromptTokens("prompt from hash_ids", inputTokens); err != nil {
		return BlockPrompt{}, err
	}
	if !s.additive {
		return BlockPrompt{}, fmt.Errorf("prompt from hash_ids with tokenizer %s: %w", s.tok.Name(), errNotAdditive)
	}
	b := make([]byte, 0, s.longest*inputTokens)
	hashed := 0
	for _, id := range hashIDs {
		if hashed >= inputTokens {
			break
		}
		n := min(blockSize, inputTokens-hashed)
		b = s.appendWords(b, newStream(seed, hashBlockStreamKey, uint64(id)), n, false)
		hashed += n
	}
	b = s.appendWords(b, newStream(seed, hashTailStreamKey, request), inputTokens-hashed, false)
	return BlockPrompt{Text: string(b), Tokens: inputTokens, HashedTokens: hashed}, nil
}
