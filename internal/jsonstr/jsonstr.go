// Package jsonstr appends strings as JSON writes them, without
// reflection: the request bodies of modules/llm (byte for byte what
// json.Marshal writes) and the per-request JSONL lines of
// runtime/output/records (what a json.Encoder with SetEscapeHTML(false)
// writes).
package jsonstr

import "unicode/utf8"

// escapes are how encoding/json writes each ASCII byte in a string, with
// HTML escaping (html) and without (plain); "" for a byte written as it
// is.
var escapes = func() (t struct{ html, plain [utf8.RuneSelf]string }) {
	const hex = "0123456789abcdef"
	for c := range byte(0x20) {
		t.plain[c] = `\u00` + string(hex[c>>4]) + string(hex[c&0xF])
	}
	t.plain['"'], t.plain['\\'] = `\"`, `\\`
	t.plain['\b'], t.plain['\f'], t.plain['\n'], t.plain['\r'], t.plain['\t'] = `\b`, `\f`, `\n`, `\r`, `\t`
	t.html = t.plain
	for _, c := range []byte{'<', '>', '&'} {
		t.html[c] = `\u00` + string(hex[c>>4]) + string(hex[c&0xF])
	}
	return t
}()

// Append appends s quoted as encoding/json does: quotes, backslashes and
// control characters escaped, and <, > and & too when escapeHTML (as
// json.Marshal does); U+2028 and U+2029 escaped (for JavaScript), invalid
// UTF-8 as \ufffd.
func Append(dst []byte, s string, escapeHTML bool) []byte {
	table := &escapes.plain
	if escapeHTML {
		table = &escapes.html
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		esc, size := "", 1
		if c := s[i]; c < utf8.RuneSelf {
			esc = table[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				esc = `\ufffd`
			case r == '\u2028':
				esc = `\u2028`
			case r == '\u2029':
				esc = `\u2029`
			}
		}
		if esc != "" {
			dst = append(append(dst, s[start:i]...), esc...)
			start = i + size
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}
