package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes text that may hold a server's bytes safe to print on a
// terminal and to store: control characters (escape sequences, NUL, CR,
// LF), Unicode line separators and bidirectional controls are written as
// \xNN or \uNNNN, bytes that are not UTF-8 as \xNN. A text longer than
// limit bytes once escaped is cut, and says so.
func Escape(text string, limit int) string {
	const cut = "... (truncated)"
	var scratch [6]byte
	clean := 0
	for clean < len(text) {
		r, size := utf8.DecodeRuneInString(text[clean:])
		if _, escaped := escapeRune(scratch[:0], r, size, text[clean]); escaped {
			break
		}
		clean += size
	}
	if clean == len(text) && len(text) <= limit-len(cut) {
		return text
	}
	var b strings.Builder
	b.Grow(min(len(text), limit))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		piece, escaped := escapeRune(scratch[:0], r, size, text[i])
		n := size
		if escaped {
			n = len(piece)
		}
		if b.Len()+n > limit-len(cut) {
			b.WriteString(cut)
			break
		}
		if escaped {
			b.Write(piece)
		} else {
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeRune appends to dst how Escape writes r, the rune of size
// bytes starting with the byte first, and reports whether it is escaped;
// dst needs a capacity of 6 not to grow.
func escapeRune(dst []byte, r rune, size int, first byte) ([]byte, bool) {
	switch {
	case r == utf8.RuneError && size == 1:
		return appendHex(append(dst, `\x`...), uint32(first), 2), true
	case r == '\n':
		return append(dst, `\n`...), true
	case r == '\r':
		return append(dst, `\r`...), true
	case r == '\t':
		return append(dst, `\t`...), true
	case r < 0x100 && unicode.IsControl(r):
		return appendHex(append(dst, `\x`...), uint32(r), 2), true
	case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029':
		return appendHex(append(dst, `\u`...), uint32(r), 4), true
	}
	return dst, false
}

// appendHex appends v in hexadecimal, as digits digits.
func appendHex(dst []byte, v uint32, digits int) []byte {
	const hex = "0123456789abcdef"
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hex[v>>shift&0xf])
	}
	return dst
}
