package data

import (
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

// words are common English words; a synthesizer keeps those its tokenizer
// encodes as one token both alone and after a space.
//
//go:embed words.txt
var words string

// Synthesizer writes prompts of an exact token count under one tokenizer:
// random words, each one token, so prompts share no prefix by chance.
//
// The count is exact by construction where the tokenizer splits text into
// pre-tokens at word boundaries (every regex-split BPE: cl100k_base,
// o200k_base, Llama 3, Qwen, and SentencePiece vocabularies): a word and
// its leading space are one pre-token and one token, so n words are n
// tokens. NewSynthesizer checks that on sample texts; a tokenizer that
// fails the check gets prompts re-encoded and adjusted one by one, which is
// exact but slower.
type Synthesizer struct {
	tok tokenizer.Tokenizer
	// words are bare words (for a prompt's start); spaced, the same with
	// a leading space.
	words, spaced []string
	// additive is true when n words always encode to n tokens.
	additive bool
	// longest is the length of the longest spaced word: n words fit in
	// n·longest bytes.
	longest int

	prefixes sync.Map // prefix text → prefixInfo
	nPrefix  atomic.Int64
}

// prefixInfo is what a synthesizer knows of a prefix: its token count, and
// whether words appended after it add one token each.
type prefixInfo struct {
	tokens   int
	additive bool
}

// maxCachedPrefixes bounds the prefixes a synthesizer remembers: a few
// shared system prompts are the use; a script that passes a new prefix to
// every call gets them counted each time instead.
const maxCachedPrefixes = 1024

// additivityProbes is how many sample texts NewSynthesizer encodes to
// check that its words add one token each.
const additivityProbes = 32

// NewSynthesizer returns a synthesizer for tok.
func NewSynthesizer(tok tokenizer.Tokenizer) (*Synthesizer, error) {
	s := &Synthesizer{tok: tok}
	seen := map[string]bool{}
	for _, w := range strings.Fields(words) {
		if seen[w] {
			continue
		}
		seen[w] = true
		bare, err := tok.Count(w)
		if err != nil {
			return nil, err
		}
		spaced, err := tok.Count(" " + w)
		if err != nil {
			return nil, err
		}
		if bare == 1 && spaced == 1 {
			s.words = append(s.words, w)
			s.spaced = append(s.spaced, " "+w)
			s.longest = max(s.longest, 1+len(w))
		}
	}
	if len(s.words) < 16 {
		return nil, fmt.Errorf("tokenizer %s: only %d common English words are single tokens; prompts cannot be synthesized to exact lengths with it", tok.Name(), len(s.words))
	}
	additive, err := s.checkAdditive()
	if err != nil {
		return nil, err
	}
	s.additive = additive
	return s, nil
}

// checkAdditive encodes sample texts of random words, from a fixed seed,
// and reports whether each has exactly as many tokens as words.
func (s *Synthesizer) checkAdditive() (bool, error) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range additivityProbes {
		n := 1 + i*i
		text := s.appendWords(nil, r, n, true)
		got, err := s.tok.Count(string(text))
		if err != nil {
			return false, err
		}
		if got != n {
			return false, nil
		}
	}
	return true, nil
}

// appendWords appends n random words to b, the first without a leading
// space when bare.
func (s *Synthesizer) appendWords(b []byte, r *rand.Rand, n int, bare bool) []byte {
	for i := range n {
		k := r.IntN(len(s.words))
		if i == 0 && bare {
			b = append(b, s.words[k]...)
		} else {
			b = append(b, s.spaced[k]...)
		}
	}
	return b
}

// MaxPromptTokens is the longest synthetic prompt, and the most tokens of
// all a run's shared prefixes together: the longest context window of a
// served model (10M tokens), so that no prompt asked for is refused that a
// server could take, and none grows without bound (docs/limits.md).
const MaxPromptTokens = 10_000_000

// CheckPromptTokens refuses a prompt length above MaxPromptTokens; what
// names the length asked for (a flag, a call).
func CheckPromptTokens(what string, n int) error {
	if n > MaxPromptTokens {
		return fmt.Errorf("%s: %d tokens exceeds llmrun's limit of %d tokens for a prompt (see docs/limits.md)", what, n, MaxPromptTokens)
	}
	return nil
}

// Text returns a text of exactly n tokens, drawn from r.
func (s *Synthesizer) Text(r *rand.Rand, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("synthetic prompt: length must be ≥ 0, got %d", n)
	}
	if err := CheckPromptTokens("synthetic prompt", n); err != nil {
		return "", err
	}
	b := s.appendWords(make([]byte, 0, s.longest*n), r, n, true)
	if s.additive {
		return string(b), nil
	}
	return s.adjust(r, b, "", n)
}

// WithPrefix returns prefix followed by words, exactly n tokens in all; it
// fails when the prefix alone has more than n tokens.
func (s *Synthesizer) WithPrefix(r *rand.Rand, prefix string, n int) (string, error) {
	if prefix == "" {
		return s.Text(r, n)
	}
	info, err := s.prefix(r, prefix)
	if err != nil {
		return "", err
	}
	if info.tokens > n {
		return "", fmt.Errorf("synthetic prompt: the prefix alone has %d tokens, more than the %d asked for", info.tokens, n)
	}
	if err := CheckPromptTokens("synthetic prompt", n); err != nil {
		return "", err
	}
	b := make([]byte, 0, len(prefix)+s.longest*(n-info.tokens))
	b = append(b, prefix...)
	b = s.appendWords(b, r, n-info.tokens, false)
	if s.additive && info.additive {
		return string(b), nil
	}
	return s.adjust(r, b, prefix, n)
}

// prefix counts prefix, and checks that a word after it adds one token,
// remembering both for up to maxCachedPrefixes prefixes.
func (s *Synthesizer) prefix(r *rand.Rand, prefix string) (prefixInfo, error) {
	if v, ok := s.prefixes.Load(prefix); ok {
		return v.(prefixInfo), nil
	}
	n, err := s.tok.Count(prefix)
	if err != nil {
		return prefixInfo{}, err
	}
	info := prefixInfo{tokens: n}
	probe, err := s.tok.Count(prefix + s.spaced[r.IntN(len(s.spaced))])
	if err != nil {
		return prefixInfo{}, err
	}
	info.additive = probe == n+1
	if s.nPrefix.Add(1) <= maxCachedPrefixes {
		s.prefixes.Store(prefix, info)
	}
	return info, nil
}

// maxAdjustments bounds the re-encodings adjust makes.
const maxAdjustments = 16

// errNotExact is adjust's failure: the tokenizer merges words in ways the
// synthesizer cannot steer.
var errNotExact = errors.New("could not reach the exact length")

// adjust re-encodes text (prefix followed by words) and drops or adds
// words until it has exactly n tokens.
func (s *Synthesizer) adjust(r *rand.Rand, text []byte, prefix string, n int) (string, error) {
	for range maxAdjustments {
		got, err := s.tok.Count(string(text))
		if err != nil {
			return "", err
		}
		switch {
		case got == n:
			return string(text), nil
		case got < n:
			text = s.appendWords(text, r, n-got, len(text) == 0)
		default:
			text = dropWords(text, len(prefix), got-n)
		}
	}
	return "", fmt.Errorf("synthetic prompt of %d tokens with tokenizer %s: %w", n, s.tok.Name(), errNotExact)
}

// dropWords removes the last k space-separated words of text after its
// first keep bytes (the prefix, which stays).
func dropWords(text []byte, keep, k int) []byte {
	for ; k > 0 && len(text) > keep; k-- {
		i := strings.LastIndexByte(string(text[keep:]), ' ')
		if i < 0 {
			return text[:keep]
		}
		text = text[:keep+i]
	}
	return text
}
