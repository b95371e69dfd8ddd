package data

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// PrefixGroups are the shared system prompts of a prefix-cache benchmark:
// Groups prompts of PrefixTokens tokens each, which every request of a
// group repeats before its own suffix, so that a server with prefix
// caching computes each prefix once. The prefixes depend only on the run's
// seed and the group's index: every VU of a run sends the same ones, and a
// run with another seed sends new ones (a server keeps its cache between
// runs).
type PrefixGroups struct {
	Prefixes     []string
	PrefixTokens int
	synth        *Synthesizer
}

// prefixStreamKey keeps the prefixes' random streams apart from the VUs'.
const prefixStreamKey = 0x70726566 // "pref"

// NewPrefixGroups synthesizes groups prefixes of prefixTokens tokens each.
func NewPrefixGroups(s *Synthesizer, seed int64, groups, prefixTokens int) (*PrefixGroups, error) {
	if groups < 1 {
		return nil, fmt.Errorf("shared prefix: groups must be ≥ 1, got %d", groups)
	}
	if prefixTokens < 1 {
		return nil, fmt.Errorf("shared prefix: prefixTokens must be ≥ 1, got %d", prefixTokens)
	}
	if groups > MaxPromptTokens/prefixTokens {
		return nil, fmt.Errorf("shared prefix: %d groups of %d tokens exceed llmrun's limit of %d tokens for the prefixes together (see docs/limits.md)", groups, prefixTokens, MaxPromptTokens)
	}
	g := &PrefixGroups{Prefixes: make([]string, groups), PrefixTokens: prefixTokens, synth: s}
	for i := range groups {
		text, err := s.Text(newStream(seed, prefixStreamKey, uint64(i)), prefixTokens)
		if err != nil {
			return nil, fmt.Errorf("shared prefix of group %d: %w", i, err)
		}
		g.Prefixes[i] = text
	}
	return g, nil
}

// Prompt is one request's prompt of a prefix group.
type Prompt struct {
	Group  int
	Prefix string
	// Suffix is the request's own part: suffixTokens tokens on its own
	// where the synthesizer is additive (every built-in encoding).
	Suffix string
	// Text is Prefix, a space and Suffix: PrefixTokens + suffixTokens
	// tokens in all.
	Text   string
	Tokens int
}

// Prompt returns a prompt of group (a random one when group < 0) with a
// suffix of suffixTokens tokens drawn from r.
func (g *PrefixGroups) Prompt(r *rand.Rand, group, suffixTokens int) (Prompt, error) {
	if group < 0 {
		group = r.IntN(len(g.Prefixes))
	}
	if group >= len(g.Prefixes) {
		return Prompt{}, fmt.Errorf("shared prefix: group %d does not exist (there are %d, from 0)", group, len(g.Prefixes))
	}
	p := Prompt{Group: group, Prefix: g.Prefixes[group], Tokens: g.PrefixTokens + suffixTokens}
	if !g.synth.additive {
		// Only the whole text can be made exact: re-encoded and adjusted.
		text, err := g.synth.WithPrefix(r, p.Prefix, p.Tokens)
		if err != nil {
			return Prompt{}, err
		}
		p.Text, p.Suffix = text, strings.TrimPrefix(text[len(p.Prefix):], " ")
		return p, nil
	}
	suffix, err := g.synth.Text(r, suffixTokens)
	if err != nil {
		return Prompt{}, err
	}
	p.Text, p.Suffix = p.Prefix, suffix
	if suffix != "" {
		p.Text += " " + suffix
	}
	return p, nil
}
