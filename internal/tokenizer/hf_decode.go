package tokenizer

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// hfDecoder turns the texts of tokens back into text, a step at a time:
// each step rewrites the list, which is concatenated at the end.
type hfDecoder interface {
	decode(tokens []string) ([]string, error)
}

// hfByteLevelDecoder is the ByteLevel decoder: byte-level characters back
// to the bytes they stand for. A token with other characters (an added
// token) is kept as it is.
type hfByteLevelDecoder struct{}

func (hfByteLevelDecoder) decode(tokens []string) ([]string, error) {
	var b []byte
	for _, t := range tokens {
		var ok bool
		if b, ok = hfAppendByteLevelDecoded(b, t); !ok {
			b = append(b, t...)
		}
	}
	return []string{string(b)}, nil
}

// hfMetaspaceDecoder is the Metaspace decoder: the replacement character
// back to spaces, less the one a prepend scheme put before the text.
//
// The tokenizers library drops every replacement character of the first
// token; this drops only the leading one, so that text starting with
// several spaces survives too.
type hfMetaspaceDecoder struct {
	replacement string
	stripFirst  bool
}

func (d hfMetaspaceDecoder) decode(tokens []string) ([]string, error) {
	for i, t := range tokens {
		if i == 0 && d.stripFirst {
			t = strings.TrimPrefix(t, d.replacement)
		}
		tokens[i] = strings.ReplaceAll(t, d.replacement, " ")
	}
	return tokens, nil
}

// hfByteFallbackDecoder is the ByteFallback decoder: runs of <0xXX> tokens
// back to the text their bytes spell, or one U+FFFD per byte if they are
// not UTF-8.
type hfByteFallbackDecoder struct{}

func (hfByteFallbackDecoder) decode(tokens []string) ([]string, error) {
	out := tokens[:0]
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			out = append(out, strings.Repeat("\uFFFD", len(pending)))
		}
		pending = pending[:0]
	}
	for _, t := range tokens {
		if b, ok := hfFallbackByte(t); ok {
			pending = append(pending, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out, nil
}

// hfFallbackByte returns the byte of a byte-fallback token, "<0x41>".
func hfFallbackByte(t string) (byte, bool) {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return 0, false
	}
	b, err := strconv.ParseUint(t[3:5], 16, 8)
	return byte(b), err == nil
}

// hfFuseDecoder is the Fuse decoder: all tokens into one.
type hfFuseDecoder struct{}

func (hfFuseDecoder) decode(tokens []string) ([]string, error) {
	return []string{strings.Join(tokens, "")}, nil
}

// hfReplaceDecoder is the Replace decoder: in each token, each match of a
// pattern becomes content.
type hfReplaceDecoder struct {
	pattern hfPattern
	content string
}

func (d hfReplaceDecoder) decode(tokens []string) ([]string, error) {
	for i, t := range tokens {
		s, err := hfReplaceAll(d.pattern, t, d.content)
		if err != nil {
			return nil, err
		}
		tokens[i] = s
	}
	return tokens, nil
}

// hfStripDecoder is the Strip decoder: up to start occurrences of content
// off the front of each token, and up to stop off its end.
type hfStripDecoder struct {
	content     string
	start, stop int
}

func (d hfStripDecoder) decode(tokens []string) ([]string, error) {
	for i, t := range tokens {
		for n := 0; n < d.start && strings.HasPrefix(t, d.content); n++ {
			t = t[len(d.content):]
		}
		for n := 0; n < d.stop && strings.HasSuffix(t, d.content); n++ {
			t = t[:len(t)-len(d.content)]
		}
		tokens[i] = t
	}
	return tokens, nil
}

// hfBPEDecoder is the BPEDecoder decoder: the end-of-word suffix becomes a
// space, or nothing in the last token.
type hfBPEDecoder struct {
	suffix string
}

func (d hfBPEDecoder) decode(tokens []string) ([]string, error) {
	if d.suffix == "" {
		return tokens, nil
	}
	for i, t := range tokens {
		repl := " "
		if i == len(tokens)-1 {
			repl = ""
		}
		tokens[i] = strings.ReplaceAll(t, d.suffix, repl)
	}
	return tokens, nil
}

// hfDecoderTypes lists the decoders parseHFDecoder knows.
var hfDecoderTypes = []string{"ByteLevel", "Metaspace", "ByteFallback", "Fuse", "Replace", "Strip", "BPEDecoder", "Sequence"}

// parseHFDecoder decodes the decoder raw at path, a Sequence flattened into its
// steps.
func parseHFDecoder(raw json.RawMessage, path string) ([]hfDecoder, error) {
	return hfParseComponent(raw, path, "decoders", parseHFDecoderType)
}

// parseHFDecoderType decodes the decoder raw at path, whose type, typ, is not
// Sequence.
func parseHFDecoderType(raw json.RawMessage, path, typ string) ([]hfDecoder, error) {
	switch typ {
	case "ByteLevel":
		return []hfDecoder{hfByteLevelDecoder{}}, nil
	case "Metaspace":
		r, scheme, _, err := parseHFMetaspaceConfig(raw, path)
		if err != nil {
			return nil, err
		}
		return []hfDecoder{hfMetaspaceDecoder{replacement: string(r), stripFirst: scheme != hfPrependNever}}, nil
	case "ByteFallback":
		return []hfDecoder{hfByteFallbackDecoder{}}, nil
	case "Fuse":
		return []hfDecoder{hfFuseDecoder{}}, nil
	case "Replace":
		p, content, err := parseHFReplace(raw, path)
		if err != nil {
			return nil, err
		}
		return []hfDecoder{hfReplaceDecoder{pattern: p, content: content}}, nil
	case "Strip":
		var c struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		if _, err := hfOneChar(c.Content, path+".content"); err != nil {
			return nil, err
		}
		return []hfDecoder{hfStripDecoder{content: c.Content, start: c.Start, stop: c.Stop}}, nil
	case "BPEDecoder":
		c := struct {
			Suffix *string `json:"suffix"`
		}{}
		if err := hfDecodeComponent(raw, path, &c); err != nil {
			return nil, err
		}
		suffix := "</w>"
		if c.Suffix != nil {
			suffix = *c.Suffix
		}
		return []hfDecoder{hfBPEDecoder{suffix: suffix}}, nil
	}
	return nil, hfUnsupported(path, typ, hfDecoderTypes...)
}
