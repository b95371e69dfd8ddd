package llmsim

import (
	"fmt"
	"sync"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

// Prompt token counting; see the package documentation.
const (
	bytesPerToken  = 4
	tokensPerMsg   = 3 // each chat message's framing (role, separators)
	tokensForReply = 3 // the priming of the assistant's reply
)

// roleMarkerBit sets a role marker apart from token ids, which are small
// non-negative numbers.
const roleMarkerBit = 1 << 63

// textTokens approximates the tokens of a text of n bytes: ceil(n/4), at
// least 1.
func textTokens(n int) int {
	return max(1, (n+bytesPerToken-1)/bytesPerToken)
}

// prompter counts the prompt tokens of requests, with a tokenizer or
// bytes/4, and, when the prefix cache is on, cuts the prompt's token
// sequence into hashed blocks (see blockHasher). It is safe for concurrent
// use: request handlers share it.
type prompter struct {
	tok tokenizer.Tokenizer // nil: bytes/4
	// blocks is set when the prefix cache is on, which needs a tokenizer:
	// prompts are then encoded into ids instead of merely counted.
	blocks bool
	memo   encodingMemo
	// images is the rule of the tokens an image costs.
	images imageRule
}

// encodingMemo remembers the tokenization of long texts, which load tests
// send again and again (a shared system prompt, a dataset's prompts):
// tokenizing costs about a microsecond per token, a lookup a hash of the
// text. Texts of at least memoMinBytes are kept, up to memoMaxBytes of
// texts and ids, after which the memo starts afresh.
type encodingMemo struct {
	mu    sync.Mutex
	m     map[string]memoEntry
	bytes int
}

type memoEntry struct {
	ids []int // nil when only counted
	n   int
}

const (
	memoMinBytes = 256
	memoMaxBytes = 32 << 20
)

func (m *encodingMemo) get(text string) (memoEntry, bool) {
	m.mu.Lock()
	e, ok := m.m[text]
	m.mu.Unlock()
	return e, ok
}

// put remembers e for text; an entry with ids is never replaced by one
// without.
func (m *encodingMemo) put(text string, e memoEntry) {
	size := len(text) + 8*len(e.ids) + 64
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.m[text]; ok && (old.ids != nil || e.ids == nil) {
		return
	}
	if m.m == nil || m.bytes+size > memoMaxBytes {
		m.m, m.bytes = map[string]memoEntry{}, 0
	}
	m.m[text] = e
	m.bytes += size
}

// newPrompter returns cfg's prompter, loading its tokenizer (shared by
// the process).
func newPrompter(cfg *Config) (*prompter, error) {
	images := imageRule{patch: cfg.ImagePatch, perImage: cfg.ImageTokens}
	if cfg.Tokenizer == TokenizerBytes {
		return &prompter{images: images}, nil
	}
	tok, err := tokenizer.Load(cfg.Tokenizer)
	if err != nil {
		return nil, err
	}
	return &prompter{tok: tok, blocks: cfg.PrefixCacheBlocks > 0, images: images}, nil
}

// prompt is a request's prompt as the engine sees it.
type prompt struct {
	tokens int
	// blocks are the hashes of the full blocks of its token sequence; nil
	// when it has none or the prefix cache is off.
	blocks []uint64
	// cacheable is set when the prefix cache is on: the request looks its
	// blocks up, even if it has none.
	cacheable bool
}

// chat returns the prompt of a conversation: for each message (system
// first, when not empty: Anthropic's top-level system prompt, counted
// without framing), its content's tokens plus tokensPerMsg, then
// tokensForReply. Its token sequence is, for each message, a marker of
// its role, then its content's ids, so that conversations that share a
// system prompt or their first messages share a prefix.
func (p *prompter) chat(system content, msgs []chatMessage) (prompt, error) {
	n := tokensForReply + tokensPerMsg*len(msgs)
	if p.tok == nil {
		if system.text != "" {
			n += textTokens(len(system.text))
		}
		for _, m := range msgs {
			if m.Content.text != "" {
				n += textTokens(len(m.Content.text))
			}
			n += p.images.tokens(m.Content.images)
		}
		return prompt{tokens: n}, nil
	}
	h := newBlockHasher()
	if system.text != "" {
		k, err := p.content(&h, roleSystem, system.text)
		if err != nil {
			return prompt{}, err
		}
		n += k
	}
	for _, m := range msgs {
		k, err := p.content(&h, m.Role, m.Content.text)
		if err != nil {
			return prompt{}, err
		}
		n += k + p.images.tokens(m.Content.images)
	}
	return prompt{tokens: n, blocks: h.blocks, cacheable: p.blocks}, nil
}

// content counts a message's content and, with the prefix cache on,
// hashes its role's marker and its ids.
func (p *prompter) content(h *blockHasher, r role, text string) (int, error) {
	if !p.blocks {
		if text == "" {
			return 0, nil
		}
		return p.count(text)
	}
	ids, err := p.encode(text)
	if err != nil {
		return 0, err
	}
	h.add(uint64(r) | roleMarkerBit)
	h.addIDs(ids)
	return len(ids), nil
}

// text returns the prompt of a plain text (completions, generate, TGI's
// inputs, Triton's text_input): its tokens, at least 1 (an empty prompt
// counts one, as its begin-of-sequence token would).
func (p *prompter) text(s string) (prompt, error) {
	if p.tok == nil {
		return prompt{tokens: textTokens(len(s))}, nil
	}
	if !p.blocks {
		n, err := p.plain(s)
		return prompt{tokens: n}, err
	}
	ids, err := p.encode(s)
	if err != nil {
		return prompt{}, err
	}
	return p.ids(ids), nil
}

// ids returns the prompt of token ids, at least 1 token.
func (p *prompter) ids(ids []int) prompt {
	if !p.blocks {
		return prompt{tokens: max(1, len(ids))}
	}
	h := newBlockHasher()
	h.addIDs(ids)
	return prompt{tokens: max(1, len(ids)), blocks: h.blocks, cacheable: true}
}

// plain returns the tokens of a prompt's text, at least 1, without
// hashing its blocks.
func (p *prompter) plain(s string) (int, error) {
	n, err := p.count(s)
	return max(1, n), err
}

// count returns the tokens of a text: the tokenizer's count, or bytes/4.
func (p *prompter) count(s string) (int, error) {
	if p.tok == nil {
		return textTokens(len(s)), nil
	}
	memo := len(s) >= memoMinBytes
	if memo {
		if e, ok := p.memo.get(s); ok {
			return e.n, nil
		}
	}
	n, err := p.tok.Count(s)
	if err != nil {
		return 0, fmt.Errorf("tokenizing the prompt: %w", err)
	}
	if memo {
		p.memo.put(s, memoEntry{n: n})
	}
	return n, nil
}

// encode returns the token ids of a text, which the caller must not
// modify: they may be shared.
func (p *prompter) encode(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	memo := len(s) >= memoMinBytes
	if memo {
		if e, ok := p.memo.get(s); ok && e.ids != nil {
			return e.ids, nil
		}
	}
	ids, err := p.tok.Encode(s)
	if err != nil {
		return nil, fmt.Errorf("tokenizing the prompt: %w", err)
	}
	if memo {
		p.memo.put(s, memoEntry{ids: ids, n: len(ids)})
	}
	return ids, nil
}

// role is a chat message's role, hashed: the prefix cache's token
// sequence marks each message with it.
type role uint64

// roleSystem is the role of Anthropic's top-level system prompt.
var roleSystem = hashRole([]byte(`"system"`))

// UnmarshalJSON hashes the role's JSON, without allocating.
func (r *role) UnmarshalJSON(b []byte) error {
	*r = hashRole(b)
	return nil
}

// hashRole is FNV-1a.
func hashRole(b []byte) role {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return role(h)
}
