package tokenizer

import (
	"encoding/json"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// hfNormalizer rewrites text before pre-tokenization.
type hfNormalizer interface {
	// normalize rewrites s; continued says s continues a text cut before
	// it (a long text counted in pieces), so that what goes at a text's
	// start (Prepend's prefix, Strip's left side) is left out.
	normalize(s string, continued bool) (string, error)
}

// hfUnicodeNormalizer is one of the NFC, NFD, NFKC and NFKD normalizers.
type hfUnicodeNormalizer struct {
	form norm.Form
}

func (n hfUnicodeNormalizer) normalize(s string, _ bool) (string, error) {
	return n.form.String(s), nil
}

// hfPrependNormalizer is the Prepend normalizer: a prefix before any
// non-empty text.
type hfPrependNormalizer struct {
	prefix string
}

func (n hfPrependNormalizer) normalize(s string, continued bool) (string, error) {
	if s == "" || continued {
		return s, nil
	}
	return n.prefix + s, nil
}

// hfReplaceNormalizer is the Replace normalizer: each match of a pattern
// becomes content.
type hfReplaceNormalizer struct {
	pattern hfPattern
	content string
}

func (n hfReplaceNormalizer) normalize(s string, _ bool) (string, error) {
	return hfReplaceAll(n.pattern, s, n.content)
}

// hfReplaceAll replaces each match of p in s with content.
func hfReplaceAll(p hfPattern, s, content string) (string, error) {
	if lit, ok := p.(hfStringPattern); ok {
		if lit == "" {
			return s, nil
		}
		return strings.ReplaceAll(s, string(lit), content), nil
	}
	spans, err := p.spans(s, nil)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, sp := range spans {
		if sp.match {
			sb.WriteString(content)
		} else {
			sb.WriteString(s[sp.start:sp.end])
		}
	}
	return sb.String(), nil
}

// hfLowercaseNormalizer is the Lowercase normalizer.
type hfLowercaseNormalizer struct{}

func (hfLowercaseNormalizer) normalize(s string, _ bool) (string, error) {
	return strings.ToLower(s), nil
}

// hfStripNormalizer is the Strip normalizer: whitespace off either end.
type hfStripNormalizer struct {
	left, right bool
}

func (n hfStripNormalizer) normalize(s string, continued bool) (string, error) {
	if n.left && !continued {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s, nil
}

// hfStripAccentsNormalizer is the StripAccents normalizer: it drops
// combining marks (the accents NFD splits off).
type hfStripAccentsNormalizer struct{}

func (hfStripAccentsNormalizer) normalize(s string, _ bool) (string, error) {
	return strings.Map(func(r rune) rune {
		if unicode.IsMark(r) {
			return -1
		}
		return r
	}, s), nil
}

var hfUnicodeForms = map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}

// hfNormalizerTypes lists the normalizers parseHFNormalizer knows.
var hfNormalizerTypes = []string{"NFC", "NFD", "NFKC", "NFKD", "Prepend", "Replace", "Lowercase", "Strip", "StripAccents", "Sequence"}

// parseHFNormalizer decodes the normalizer raw at path, a Sequence flattened
// into its steps.
func parseHFNormalizer(raw json.RawMessage, path string) ([]hfNormalizer, error) {
	return hfParseComponent(raw, path, "normalizers", parseHFNormalizerType)
}

// parseHFNormalizerType decodes the normalizer raw at path, whose type, typ, is
// not Sequence.
func parseHFNormalizerType(raw json.RawMessage, path, typ string) ([]hfNormalizer, error) {
	if form, ok := hfUnicodeForms[typ]; ok {
		return []hfNormalizer{hfUnicodeNormalizer{form: form}}, nil
	}
	switch typ {
	case "Prepend":
		var c struct {
			Prepend string `json:"prepend"`
		}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		return []hfNormalizer{hfPrependNormalizer{prefix: c.Prepend}}, nil
	case "Replace":
		p, content, err := parseHFReplace(raw, path)
		if err != nil {
			return nil, err
		}
		return []hfNormalizer{hfReplaceNormalizer{pattern: p, content: content}}, nil
	case "Lowercase":
		return []hfNormalizer{hfLowercaseNormalizer{}}, nil
	case "Strip":
		var c struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		return []hfNormalizer{hfStripNormalizer{left: c.Left, right: c.Right}}, nil
	case "StripAccents":
		return []hfNormalizer{hfStripAccentsNormalizer{}}, nil
	}
	return nil, hfUnsupported(path, typ, hfNormalizerTypes...)
}

// parseHFReplace decodes the pattern and content of the Replace normalizer
// or decoder raw at path.
func parseHFReplace(raw json.RawMessage, path string) (hfPattern, string, error) {
	var c struct {
		Pattern json.RawMessage `json:"pattern"`
		Content string          `json:"content"`
	}
	if err := hfDecodeComponent(raw, path, &c); err != nil {
		return nil, "", err
	}
	p, err := parseHFPattern(c.Pattern, path+".pattern")
	if err != nil {
		return nil, "", err
	}
	return p, c.Content, nil
}
