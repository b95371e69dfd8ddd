package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// hfAdded is a token of added_tokens, split out of the text whole
// before pre-tokenization.
type hfAdded struct {
	content string
	id      int
	// singleWord: the token only matches when no word character touches
	// it on either side.
	singleWord bool
	// lstrip and rstrip: the token takes in the whitespace on its left,
	// on its right.
	lstrip, rstrip bool
}

// hfAddedMatcher finds added tokens in a text: at the leftmost position where
// one starts, the longest.
type hfAddedMatcher struct {
	// byFirst lists the tokens by their first byte, longest first.
	byFirst [256][]hfAdded
	// firsts holds the first bytes that start a token.
	firsts []byte
}

// hfAddedMatch is an added token found in a text, at [start, end) with its
// stripped whitespace.
type hfAddedMatch struct {
	start, end, id int
}

func newHFAddedMatcher(tokens []hfAdded) hfAddedMatcher {
	var m hfAddedMatcher
	for _, tok := range tokens {
		b := tok.content[0]
		if len(m.byFirst[b]) == 0 {
			m.firsts = append(m.firsts, b)
		}
		m.byFirst[b] = append(m.byFirst[b], tok)
	}
	for _, b := range m.firsts {
		sort.SliceStable(m.byFirst[b], func(i, j int) bool {
			return len(m.byFirst[b][i].content) > len(m.byFirst[b][j].content)
		})
	}
	return m
}

// find returns the first added token in s at or after from. Like the
// tokenizers library, a match rejected by single_word is skipped whole, and
// lstrip takes in whitespace back to from at most.
func (m *hfAddedMatcher) find(s string, from int) (hfAddedMatch, bool) {
	if len(m.firsts) == 0 {
		return hfAddedMatch{}, false
	}
	for i := from; i < len(s); i++ {
		if len(m.firsts) == 1 {
			j := strings.IndexByte(s[i:], m.firsts[0])
			if j < 0 {
				return hfAddedMatch{}, false
			}
			i += j
		}
		for _, tok := range m.byFirst[s[i]] {
			if !strings.HasPrefix(s[i:], tok.content) {
				continue
			}
			start, end := i, i+len(tok.content)
			if tok.singleWord && (hfEndsWithWordChar(s[:start]) || hfStartsWithWordChar(s[end:])) {
				i = end - 1
				break
			}
			if tok.lstrip {
				start = from + len(strings.TrimRightFunc(s[from:start], unicode.IsSpace))
			}
			if tok.rstrip {
				end = len(s) - len(strings.TrimLeftFunc(s[end:], unicode.IsSpace))
			}
			return hfAddedMatch{start: start, end: end, id: tok.id}, true
		}
	}
	return hfAddedMatch{}, false
}

// encode appends to ids the IDs of s: the ID of each added token m finds,
// and for each non-empty gap between them what encodeGap appends, which is
// told whether the gap starts s.
func (m *hfAddedMatcher) encode(s string, ids []int, encodeGap func(gap string, atStart bool, ids []int) ([]int, error)) ([]int, error) {
	var err error
	pos := 0
	for pos < len(s) {
		match, ok := m.find(s, pos)
		end := len(s)
		if ok {
			end = match.start
		}
		if pos < end {
			if ids, err = encodeGap(s[pos:end], pos == 0, ids); err != nil {
				return ids, err
			}
		}
		if !ok {
			break
		}
		ids = append(ids, match.id)
		pos = match.end
	}
	return ids, nil
}

// hfIsWordChar says whether r is a word character, as the regular
// expression \w has it.
func hfIsWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Pc, r)
}

func hfEndsWithWordChar(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && hfIsWordChar(r)
}

func hfStartsWithWordChar(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && hfIsWordChar(r)
}
