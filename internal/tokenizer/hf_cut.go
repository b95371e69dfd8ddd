package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A long text is counted in windows cut where an ASCII letter meets a
// space (cutWindow). hfCutsExact works out, step by step of a
// tokenizer.json's pipeline, whether such a cut can change the count. Each
// step must either keep the place of the cut (the seam) intact, acting on
// either side of it alone, with an ASCII letter still before it and a
// known character after it; or end a pre-token there whatever the text
// around it, after which every step acts on each pre-token alone. What a
// text's start gets (Prepend's prefix, Strip's left side, Metaspace's
// "first" replacement) the windows after the first are told to leave out.

// hfKnownSplits are the Split expressions known to end a pre-token
// between a letter and a space, whatever comes before or after (no
// match holds a letter then a white space character; nothing looks
// behind): GPT-2's (ByteLevel's own), that of cl100k_base and Llama 3,
// Qwen2's, DeepSeek-V3's last, and the Whitespace pre-tokenizer's.
var hfKnownSplits = map[string]bool{
	`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`:                                                                                  true,
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:                                         true,
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:                                              true,
	"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": true,
	`\w+|[^\w\s]+`: true,
}

// hfKnownApartSplits are the Split expressions known to match only runs
// of a class of characters that holds no ASCII letter, looking neither
// behind nor ahead (DeepSeek-V3's first two: digits, CJK): where the
// character after the seam is not of the class either, the seam is never
// matched, whatever the behavior.
var hfKnownApartSplits = map[string]bool{
	`\p{N}{1,3}`:   true,
	`[一-龥぀-ゟ゠-ヿ]+`: true,
}

// hfCutsExact says whether t counts a text cut where an ASCII letter
// meets a space piece by piece to the count of the whole text.
func hfCutsExact(t *hfTokenizer) bool {
	right := " "
	if !t.raw.keepsSeam(right) {
		return false
	}
	for _, n := range t.normalizers {
		var ok bool
		if right, ok = hfNormalizerSeam(n, right); !ok {
			return false
		}
	}
	if !t.normalized.keepsSeam(right) {
		return false
	}
	for _, pt := range t.preTokenizers {
		var split, ok bool
		if right, split, ok = hfPreTokenizerSeam(pt, right); !ok {
			return false
		}
		if split {
			return true
		}
	}
	return t.model.keepsSeam(right)
}

// keepsSeam says whether m finds the same added tokens in a text cut
// before right, a character that follows an ASCII letter, as in the whole:
// none holds a letter followed by right (so none spans the seam), none
// starting with right is single_word (the letter before it would reject
// it), and none ending with a letter takes in the white space after it.
func (m *hfAddedMatcher) keepsSeam(right string) bool {
	for _, b := range m.firsts {
		for _, tok := range m.byFirst[b] {
			if hfJoinsLetter(tok.content, right) ||
				tok.singleWord && strings.HasPrefix(tok.content, right) ||
				tok.rstrip && isASCIILetter(tok.content[len(tok.content)-1]) {
				return false
			}
		}
	}
	return true
}

// hfJoinsLetter says whether s holds an ASCII letter followed by right.
func hfJoinsLetter(s, right string) bool {
	for i := 1; i < len(s); i++ {
		if isASCIILetter(s[i-1]) && strings.HasPrefix(s[i:], right) {
			return true
		}
	}
	return false
}

// hfNormalizerSeam returns the character after the seam once n has
// normalized the text, whose character after the seam is right; false if
// n may act across the seam.
func hfNormalizerSeam(n hfNormalizer, right string) (string, bool) {
	r, _ := utf8.DecodeRuneInString(right)
	switch n := n.(type) {
	case hfPrependNormalizer, hfStripNormalizer:
		// The text's start only; a text ending in a letter has nothing
		// to strip on its right.
		return right, true
	case hfUnicodeNormalizer:
		return right, n.form.String(right) == right && n.form.PropertiesString(right).BoundaryBefore()
	case hfLowercaseNormalizer:
		return strings.ToLower(right), true
	case hfStripAccentsNormalizer:
		return right, !unicode.IsMark(r)
	case hfReplaceNormalizer:
		lit, ok := n.pattern.(hfStringPattern)
		switch {
		case !ok || strings.IndexFunc(string(lit), func(c rune) bool { return c < utf8.RuneSelf && isASCIILetter(byte(c)) }) >= 0:
			return "", false
		case string(lit) == right && n.content != "":
			first, _ := utf8.DecodeRuneInString(n.content)
			return string(first), true
		case lit != "" && strings.Contains(string(lit), right):
			return "", false
		}
		return right, true
	}
	return "", false
}

// hfPreTokenizerSeam returns the character after the seam once pt has
// split the text, whose character after the seam is right, and whether
// pt ends a pre-token at the seam; false if pt may act across it.
func hfPreTokenizerSeam(pt hfPreTokenizer, right string) (string, bool, bool) {
	r, _ := utf8.DecodeRuneInString(right)
	switch pt := pt.(type) {
	case *hfByteLevelPre:
		switch {
		case pt.useRegex:
			// GPT-2's expression ends a pre-token before a space.
			return right, true, right == " "
		case pt.addPrefixSpace && right != " ":
			// A prefix space would go before the window.
			return "", false, false
		case pt.mapBytes:
			first, _ := utf8.DecodeRuneInString(hfByteLevelEncode(right))
			return string(first), false, true
		}
		return right, false, true
	case *hfMetaspacePre:
		if right != " " && right != pt.replacement {
			return "", false, false
		}
		return pt.replacement, pt.splitOn != nil, true
	case *hfSplit:
		return hfSplitSeam(pt, r, right)
	}
	return "", false, false
}

// hfSplitSeam is hfPreTokenizerSeam for a Split, whose character after the
// seam is r, right.
func hfSplitSeam(s *hfSplit, r rune, right string) (string, bool, bool) {
	isolates := s.behavior == hfIsolated || s.behavior == hfRemoved
	switch p := s.pattern.(type) {
	case hfRegexPattern:
		if hfKnownApartSplits[p.re.String()] {
			matched, err := p.re.MatchString(right)
			return right, false, err == nil && !matched
		}
		return right, true, isolates && right == " " && hfKnownSplits[p.re.String()]
	case hfCharPattern:
		matches := func(c rune) bool { return p(c) != s.invert }
		for c := 'A'; c <= 'z'; c++ {
			if isASCIILetter(byte(c)) && matches(c) {
				return "", false, false
			}
		}
		// A match after the seam starts a pre-token unless it joins the
		// letter before it.
		return right, matches(r) && s.behavior != hfMergedWithPrevious, true
	}
	return "", false, false
}

// keepsSeam says whether the model encodes a pre-token cut before right, a
// character that follows an ASCII letter, to as many tokens as the two
// parts: no token of the vocabulary holds an ASCII letter followed by
// right's first unit (so no merge joins the parts), no unit carries a
// prefix or suffix by its place, and unknown units are not fused into one.
func (m *hfBPE) keepsSeam(right string) bool {
	unit := right
	if m.byteLevel {
		unit = right[:1]
	}
	if m.prefix != "" || m.suffix != "" {
		return false
	}
	if m.fuseUnk && m.unk >= 0 {
		if _, ok := m.vocab[unit]; !ok && !(m.byteLevel && m.byteUnits[unit[0]] >= 0) {
			return false
		}
	}
	for tok := range m.vocab {
		if hfJoinsLetter(tok, unit) {
			return false
		}
	}
	return true
}
