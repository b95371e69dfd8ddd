package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// hfPiece is a part of the text on its way to the model.
type hfPiece struct {
	text string
	// first says the piece starts the text (for Metaspace's
	// prepend_scheme "first").
	first bool
}

// hfSpan is the part [start, end) of a string; match says a pattern matched
// it.
type hfSpan struct {
	start, end int
	match      bool
}

// hfPreTokenizer splits a piece into pre-tokens, which the model encodes
// separately.
type hfPreTokenizer interface {
	// split appends the pre-tokens of p to out.
	split(p hfPiece, out []hfPiece, sc *hfScratch) ([]hfPiece, error)
}

// hfPattern finds what a Split pre-tokenizer, a Replace normalizer or decoder
// acts on.
type hfPattern interface {
	// spans appends to out the spans that cover s in order: the matches
	// and the text between them.
	spans(s string, out []hfSpan) ([]hfSpan, error)
}

// hfRegexPattern matches a regular expression. regexp2 (.NET syntax) has the
// look-ahead tokenizer patterns use, as Oniguruma does in the tokenizers
// library.
type hfRegexPattern struct {
	re *regexp2.Regexp
}

func (p hfRegexPattern) spans(s string, out []hfSpan) ([]hfSpan, error) {
	matches, err := p.re.FindAllStringIndex(s, -1)
	if err != nil {
		return out, err
	}
	prev := 0
	for _, m := range matches {
		if m[0] > prev {
			out = append(out, hfSpan{start: prev, end: m[0]})
		}
		out = append(out, hfSpan{start: m[0], end: m[1], match: true})
		prev = m[1]
	}
	if prev < len(s) {
		out = append(out, hfSpan{start: prev, end: len(s)})
	}
	return out, nil
}

// hfStringPattern matches a literal string; an empty one matches nothing.
type hfStringPattern string

func (p hfStringPattern) spans(s string, out []hfSpan) ([]hfSpan, error) {
	prev := 0
	for p != "" {
		i := strings.Index(s[prev:], string(p))
		if i < 0 {
			break
		}
		if i > 0 {
			out = append(out, hfSpan{start: prev, end: prev + i})
		}
		prev += i
		out = append(out, hfSpan{start: prev, end: prev + len(p), match: true})
		prev += len(p)
	}
	if prev < len(s) {
		out = append(out, hfSpan{start: prev, end: len(s)})
	}
	return out, nil
}

// hfCharPattern matches each character for which it returns true, one
// match per character.
type hfCharPattern func(rune) bool

func (p hfCharPattern) spans(s string, out []hfSpan) ([]hfSpan, error) {
	prev := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if p(r) {
			if i > prev {
				out = append(out, hfSpan{start: prev, end: i})
			}
			out = append(out, hfSpan{start: i, end: i + n, match: true})
			prev = i + n
		}
		i += n
	}
	if prev < len(s) {
		out = append(out, hfSpan{start: prev, end: len(s)})
	}
	return out, nil
}

// parseHFPattern decodes a pattern, {"Regex": "..."} or {"String": "..."},
// at path.
func parseHFPattern(raw json.RawMessage, path string) (hfPattern, error) {
	var c struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	}
	if hfIsNull(raw) {
		return nil, fmt.Errorf("%s is missing", path)
	}
	if err := hfDecodeComponent(raw, path, &c); err != nil {
		return nil, err
	}
	switch {
	case c.Regex != nil:
		re, err := regexp2.Compile(*c.Regex, regexp2.None)
		if err != nil {
			return nil, fmt.Errorf("%s.Regex %q: %w", path, *c.Regex, err)
		}
		return hfRegexPattern{re: re}, nil
	case c.String != nil:
		return hfStringPattern(*c.String), nil
	}
	return nil, fmt.Errorf(`%s: want {"Regex": "..."} or {"String": "..."}`, path)
}

// hfSplitBehavior is what a split does with the matches of its pattern.
type hfSplitBehavior int

const (
	// hfIsolated keeps each match a pre-token of its own.
	hfIsolated hfSplitBehavior = iota
	// hfRemoved drops the matches.
	hfRemoved
	// hfMergedWithPrevious joins a match to the text before it.
	hfMergedWithPrevious
	// hfMergedWithNext joins a match to the text after it.
	hfMergedWithNext
	// hfContiguous joins runs of matches, and runs of text between them.
	hfContiguous
)

var hfSplitBehaviors = map[string]hfSplitBehavior{
	"Isolated":           hfIsolated,
	"Removed":            hfRemoved,
	"MergedWithPrevious": hfMergedWithPrevious,
	"MergedWithNext":     hfMergedWithNext,
	"Contiguous":         hfContiguous,
}

// parseHFBehavior decodes the split behavior at path.
func parseHFBehavior(name, path string) (hfSplitBehavior, error) {
	if name == "" {
		return 0, fmt.Errorf("%s is missing", path)
	}
	b, ok := hfSplitBehaviors[name]
	if !ok {
		return 0, fmt.Errorf("%s %q is not supported (supported: Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous)", path, name)
	}
	return b, nil
}

// hfSplitSpans appends to out the pieces of p that spans, covering p.text,
// make under behavior b. Empty pieces are dropped.
func hfSplitSpans(p hfPiece, spans []hfSpan, b hfSplitBehavior, out []hfPiece) []hfPiece {
	emit := func(start, end int) {
		if start < end {
			out = append(out, hfPiece{text: p.text[start:end], first: p.first && start == 0})
		}
	}
	if b == hfIsolated || b == hfRemoved {
		for _, s := range spans {
			if !(b == hfRemoved && s.match) {
				emit(s.start, s.end)
			}
		}
		return out
	}
	start, end, have, prevMatch := 0, 0, false, false
	for _, s := range spans {
		var join bool
		switch b {
		case hfMergedWithPrevious:
			join = s.match && !prevMatch
		case hfMergedWithNext:
			join = prevMatch && !s.match
		case hfContiguous:
			join = s.match == prevMatch
		}
		if have && join {
			end = s.end
		} else {
			if have {
				emit(start, end)
			}
			start, end, have = s.start, s.end, true
		}
		prevMatch = s.match
	}
	if have {
		emit(start, end)
	}
	return out
}

// hfSplit is the Split pre-tokenizer, and the built-in splitters made of
// it: a pattern, what to do with its matches, and whether to split on what
// it does not match instead.
type hfSplit struct {
	pattern  hfPattern
	behavior hfSplitBehavior
	invert   bool
}

func (s *hfSplit) split(p hfPiece, out []hfPiece, sc *hfScratch) ([]hfPiece, error) {
	spans, err := s.pattern.spans(p.text, sc.spans[:0])
	sc.spans = spans
	if err != nil {
		return out, err
	}
	if s.invert {
		for i := range spans {
			spans[i].match = !spans[i].match
		}
	}
	return hfSplitSpans(p, spans, s.behavior, out), nil
}

// hfByteLevelPre is the ByteLevel pre-tokenizer: GPT-2's split, then each
// byte written as a character of the byte-level alphabet.
type hfByteLevelPre struct {
	addPrefixSpace, useRegex bool
	// mapBytes: write the pre-tokens in the byte-level alphabet. Off when
	// the model reads raw bytes itself (hfBPE.byteLevel).
	mapBytes bool
}

// hfGPT2Split is the pattern ByteLevel splits with when use_regex is set.
var hfGPT2Split = sync.OnceValue(func() hfPattern {
	return hfRegexPattern{re: regexp2.MustCompile(`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`, regexp2.None)}
})

func (b *hfByteLevelPre) split(p hfPiece, out []hfPiece, sc *hfScratch) ([]hfPiece, error) {
	if b.addPrefixSpace && !strings.HasPrefix(p.text, " ") {
		p.text = " " + p.text
	}
	start := len(out)
	if b.useRegex {
		spans, err := hfGPT2Split().spans(p.text, sc.spans[:0])
		sc.spans = spans
		if err != nil {
			return out, err
		}
		out = hfSplitSpans(p, spans, hfIsolated, out)
	} else {
		out = append(out, p)
	}
	if b.mapBytes {
		for i := start; i < len(out); i++ {
			out[i].text = hfByteLevelEncode(out[i].text)
		}
	}
	return out, nil
}

// hfPrependScheme says when Metaspace puts the replacement before a piece.
type hfPrependScheme int

const (
	hfPrependAlways hfPrependScheme = iota
	hfPrependFirst
	hfPrependNever
)

var hfPrependSchemes = map[string]hfPrependScheme{"always": hfPrependAlways, "first": hfPrependFirst, "never": hfPrependNever}

// hfMetaspacePre is the Metaspace pre-tokenizer (SentencePiece's): spaces
// become the replacement character, which may go before the text too,
// and with split each pre-token starts at one.
type hfMetaspacePre struct {
	replacement string
	scheme      hfPrependScheme
	splitOn     hfCharPattern
}

func (m *hfMetaspacePre) split(p hfPiece, out []hfPiece, sc *hfScratch) ([]hfPiece, error) {
	p.text = strings.ReplaceAll(p.text, " ", m.replacement)
	if (m.scheme == hfPrependAlways || m.scheme == hfPrependFirst && p.first) && !strings.HasPrefix(p.text, m.replacement) {
		p.text = m.replacement + p.text
	}
	if m.splitOn == nil {
		return append(out, p), nil
	}
	spans, _ := m.splitOn.spans(p.text, sc.spans[:0])
	sc.spans = spans
	return hfSplitSpans(p, spans, hfMergedWithNext, out), nil
}

// hfWhitespaceSplit is the Whitespace pre-tokenizer's pattern, whose matches
// it keeps.
var hfWhitespaceSplit = sync.OnceValue(func() hfPattern {
	return hfRegexPattern{re: regexp2.MustCompile(`\w+|[^\w\s]+`, regexp2.None)}
})

// hfIsPunctuation says whether r is punctuation, as the Punctuation and
// BertPreTokenizer pre-tokenizers have it: Unicode punctuation or ASCII
// punctuation and symbols.
func hfIsPunctuation(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.IsPunct(r)
}

// hfPreTokenizerTypes lists the pre-tokenizers parseHFPreTokenizer knows.
var hfPreTokenizerTypes = []string{"ByteLevel", "Split", "Metaspace", "Digits", "Whitespace", "WhitespaceSplit", "Punctuation", "CharDelimiterSplit", "BertPreTokenizer", "Sequence"}

// parseHFPreTokenizer decodes the pre-tokenizer raw at path, a Sequence
// flattened into its steps.
func parseHFPreTokenizer(raw json.RawMessage, path string) ([]hfPreTokenizer, error) {
	return hfParseComponent(raw, path, "pretokenizers", parseHFPreTokenizerType)
}

// parseHFPreTokenizerType decodes the pre-tokenizer raw at path, whose type,
// typ, is not Sequence.
func parseHFPreTokenizerType(raw json.RawMessage, path, typ string) ([]hfPreTokenizer, error) {
	switch typ {
	case "ByteLevel":
		c := struct {
			AddPrefixSpace *bool `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}{}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		return []hfPreTokenizer{&hfByteLevelPre{addPrefixSpace: hfOrTrue(c.AddPrefixSpace), useRegex: hfOrTrue(c.UseRegex), mapBytes: true}}, nil
	case "Split":
		var c struct {
			Pattern  json.RawMessage `json:"pattern"`
			Behavior string          `json:"behavior"`
			Invert   bool            `json:"invert"`
		}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		pat, err := parseHFPattern(c.Pattern, path+".pattern")
		if err != nil {
			return nil, err
		}
		b, err := parseHFBehavior(c.Behavior, path+".behavior")
		if err != nil {
			return nil, err
		}
		return []hfPreTokenizer{&hfSplit{pattern: pat, behavior: b, invert: c.Invert}}, nil
	case "Metaspace":
		return parseHFMetaspace(raw, path)
	case "Digits":
		var c struct {
			IndividualDigits bool `json:"individual_digits"`
		}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		b := hfContiguous
		if c.IndividualDigits {
			b = hfIsolated
		}
		return []hfPreTokenizer{&hfSplit{pattern: hfCharPattern(unicode.IsNumber), behavior: b}}, nil
	case "Whitespace":
		return []hfPreTokenizer{&hfSplit{pattern: hfWhitespaceSplit(), behavior: hfRemoved, invert: true}}, nil
	case "WhitespaceSplit":
		return []hfPreTokenizer{&hfSplit{pattern: hfCharPattern(unicode.IsSpace), behavior: hfRemoved}}, nil
	case "Punctuation":
		var c struct {
			Behavior string `json:"behavior"`
		}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		b := hfIsolated
		if c.Behavior != "" {
			var err error
			if b, err = parseHFBehavior(c.Behavior, path+".behavior"); err != nil {
				return nil, err
			}
		}
		return []hfPreTokenizer{&hfSplit{pattern: hfCharPattern(hfIsPunctuation), behavior: b}}, nil
	case "CharDelimiterSplit":
		var c struct {
			Delimiter string `json:"delimiter"`
		}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		d, err := hfOneChar(c.Delimiter, path+".delimiter")
		if err != nil {
			return nil, err
		}
		return []hfPreTokenizer{&hfSplit{pattern: hfCharPattern(func(r rune) bool { return r == d }), behavior: hfRemoved}}, nil
	case "BertPreTokenizer":
		return []hfPreTokenizer{
			&hfSplit{pattern: hfCharPattern(unicode.IsSpace), behavior: hfRemoved},
			&hfSplit{pattern: hfCharPattern(hfIsPunctuation), behavior: hfIsolated},
		}, nil
	}
	return nil, hfUnsupported(path, typ, hfPreTokenizerTypes...)
}

// parseHFMetaspace decodes the Metaspace pre-tokenizer raw at path.
func parseHFMetaspace(raw json.RawMessage, path string) ([]hfPreTokenizer, error) {
	r, scheme, split, err := parseHFMetaspaceConfig(raw, path)
	if err != nil {
		return nil, err
	}
	m := &hfMetaspacePre{replacement: string(r), scheme: scheme}
	if split {
		m.splitOn = func(c rune) bool { return c == r }
	}
	return []hfPreTokenizer{m}, nil
}

// parseHFMetaspaceConfig decodes the fields the Metaspace pre-tokenizer and
// decoder share: the replacement character, the prepend scheme (from
// add_prefix_space in older files) and split.
func parseHFMetaspaceConfig(raw json.RawMessage, path string) (rune, hfPrependScheme, bool, error) {
	var c struct {
		Replacement    *string `json:"replacement"`
		PrependScheme  *string `json:"prepend_scheme"`
		AddPrefixSpace *bool   `json:"add_prefix_space"`
		Split          *bool   `json:"split"`
	}
	if err := hfDecodeComponent(raw, path, &c); err != nil {
		return 0, 0, false, err
	}
	r := '▁'
	if c.Replacement != nil {
		var err error
		if r, err = hfOneChar(*c.Replacement, path+".replacement"); err != nil {
			return 0, 0, false, err
		}
	}
	scheme := hfPrependAlways
	switch {
	case c.PrependScheme != nil:
		s, ok := hfPrependSchemes[*c.PrependScheme]
		if !ok {
			return 0, 0, false, fmt.Errorf("%s.prepend_scheme %q is not supported (supported: always, first, never)", path, *c.PrependScheme)
		}
		scheme = s
	case c.AddPrefixSpace != nil && !*c.AddPrefixSpace:
		scheme = hfPrependNever
	}
	return r, scheme, hfOrTrue(c.Split), nil
}

// hfOneChar returns the one character s holds.
func hfOneChar(s, path string) (rune, error) {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || n != len(s) || r == utf8.RuneError {
		return 0, fmt.Errorf("%s %q: want one character", path, s)
	}
	return r, nil
}

// hfOrTrue is *b, or true when b is nil.
func hfOrTrue(b *bool) bool {
	return b == nil || *b
}

// hfByteLevelRunes is GPT-2's byte-level alphabet: the character each byte
// is written as, so that every token is printable text. Printable Latin-1
// bytes stand for themselves; the others take the characters from U+0100
// on, in byte order.
var hfByteLevelRunes = func() [256]rune {
	var t [256]rune
	n := rune(0)
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			t[b] = rune(b)
		} else {
			t[b] = 256 + n
			n++
		}
	}
	return t
}()

// hfByteLevelChars holds hfByteLevelRunes as strings.
var hfByteLevelChars = func() [256]string {
	var t [256]string
	for b, r := range hfByteLevelRunes {
		t[b] = string(r)
	}
	return t
}()

// hfByteLevelBytes inverts hfByteLevelRunes: the byte each character up to
// U+0143 stands for, -1 for characters outside the alphabet.
var hfByteLevelBytes = func() [324]int16 {
	var t [324]int16
	for i := range t {
		t[i] = -1
	}
	for b, r := range hfByteLevelRunes {
		t[r] = int16(b)
	}
	return t
}()

// hfByteLevelEncode writes the bytes of s in the byte-level alphabet.
func hfByteLevelEncode(s string) string {
	var sb strings.Builder
	sb.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		sb.WriteRune(hfByteLevelRunes[s[i]])
	}
	return sb.String()
}

// hfAppendByteLevelDecoded appends the bytes the byte-level characters of s
// stand for; false (and dst unchanged) if s has a character outside the
// alphabet.
func hfAppendByteLevelDecoded(dst []byte, s string) ([]byte, bool) {
	n := len(dst)
	for _, r := range s {
		if r < 0 || int(r) >= len(hfByteLevelBytes) || hfByteLevelBytes[r] < 0 {
			return dst[:n], false
		}
		dst = append(dst, byte(hfByteLevelBytes[r]))
	}
	return dst, true
}

// hfByteLevelDecode returns the bytes the byte-level characters of s
// stand for; false if s has a character outside the alphabet.
func hfByteLevelDecode(s string) (string, bool) {
	b, ok := hfAppendByteLevelDecoded(make([]byte, 0, len(s)), s)
	return string(b), ok
}
