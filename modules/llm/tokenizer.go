package llm

import (
	"github.com/llmrun/llmrun/internal/tokenizer"
)

// tokenCounter counts the tokens of a text.
type tokenCounter interface {
	Count(text string) (int, error)
}

// newTokenCounter returns the shared tokenizer name gives: a built-in
// encoding (tokenizer.Encodings), a tokenizer.json file or a Hugging Face
// model id; nil for "".
func newTokenCounter(name string) (tokenCounter, error) {
	if name == "" {
		return nil, nil
	}
	return tokenizer.Load(name)
}

// countGenerated counts, with tok, the tokens of what a response generated:
// its answer text, its reasoning text (rr.reasoning, where its protocol
// keeps it) and its tool calls' names and arguments; ok is false when the
// tokenizer failed.
func countGenerated(tok tokenCounter, rr *responseReader, res *Result) (n int, ok bool) {
	texts := [2]string{res.Text, string(rr.reasoning)}
	for _, t := range texts {
		if t == "" {
			continue
		}
		k, err := tok.Count(t)
		if err != nil {
			return 0, false
		}
		n += k
	}
	for _, call := range res.ToolCalls {
		for _, t := range [2]string{call.Name, call.Arguments} {
			k, err := tok.Count(t)
			if err != nil {
				return 0, false
			}
			n += k
		}
	}
	return n, true
}

// settleTokens applies DESIGN section 5's order of token sources once a
// response was read well: usage (the adapter's), else the tokenizer when
// the client has one, else the chunks. A request counted by usage gets a
// second count (CheckTokens) for the summary's comparison: the tokenizer's
// when there is one, else, for a streamed response, its chunk count (a
// stream is expected to carry one token per chunk; a non-streamed response
// has one chunk, nothing to compare).
func settleTokens(tok tokenCounter, rr *responseReader, res *Result) {
	if tok == nil {
		if res.TokenSource == TokensFromUsage && res.Stream && res.Chunks > 0 {
			res.CheckTokens, res.CheckSource = res.Chunks, TokensFromChunks
		}
		return
	}
	n, ok := countGenerated(tok, rr, res)
	if !ok {
		return
	}
	switch res.TokenSource {
	case TokensFromUsage:
		res.CheckTokens, res.CheckSource = n, TokensFromTokenizer
	default:
		// A protocol whose text the client does not see (n == 0 with
		// token-bearing chunks) keeps its chunk count.
		if n == 0 && res.Chunks > 0 {
			return
		}
		res.OutputTokens, res.TokenSource = n, TokensFromTokenizer
		res.TPOT = 0
		finishTiming(res)
	}
}
