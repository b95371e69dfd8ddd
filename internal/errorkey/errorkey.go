// Package errorkey groups error messages that differ only by the ids in
// them (request ids, UUIDs, tokens): the run's error lists and the merge
// of result files key messages with it, so that both group alike.
package errorkey

import "strings"

// idPlaceholder replaces an id in a key.
const idPlaceholder = "<id>"

// Of is msg with the ids in it (a response's "chatcmpl-123", a
// "req_011CS…" or "msg_01…" request id, a UUID, a long hexadecimal or
// alphanumeric token) replaced by "<id>": error messages are grouped by
// it, so that the same failure of many requests is one message, not one
// per request. In a word (a run of letters, digits, '-' and '_'), an id is
// what follows a prefix of letters and a '-' or '_' when it is digits, or
// at least 8 letters and digits with a digit ("chatcmpl-<id>"); or else the
// whole word when a part of it between '-' and '_' is at least 10 letters
// and digits with a digit. Plain numbers (a status code, a count) and
// model names ("Meta-Llama-3-8B-Instruct") stay. A msg without an id is
// its own key, with no allocation; one with ids allocates its key once.
func Of(msg string) string {
	var b strings.Builder
	copied := 0 // msg[:copied] is in b
	for i := 0; i < len(msg); {
		if !isWordByte(msg[i]) {
			i++
			continue
		}
		end := i
		for end < len(msg) && isWordByte(msg[end]) {
			end++
		}
		if at := idStart(msg[i:end]); at >= 0 {
			if copied == 0 {
				// One allocation for the key: ids are rarely shorter
				// than their placeholder.
				b.Grow(len(msg) + len(idPlaceholder))
			}
			b.WriteString(msg[copied : i+at])
			b.WriteString(idPlaceholder)
			copied = end
		}
		i = end
	}
	if copied == 0 {
		return msg
	}
	b.WriteString(msg[copied:])
	return b.String()
}

// idStart says where the id in word starts, or -1 when word has none (see
// Of).
func idStart(word string) int {
	prefix := strings.IndexFunc(word, func(r rune) bool { return !isLetter(byte(r)) })
	if prefix > 0 && (word[prefix] == '-' || word[prefix] == '_') {
		if tail := word[prefix+1:]; isID(tail, 1, true) || isID(tail, 8, false) {
			return prefix + 1
		}
	}
	for part := range strings.FieldsFuncSeq(word, func(r rune) bool { return r == '-' || r == '_' }) {
		if isID(part, 10, false) {
			return 0
		}
	}
	return -1
}

// isID says whether s is at least minLen letters and digits with a digit;
// with digitsOnly, digits alone.
func isID(s string, minLen int, digitsOnly bool) bool {
	hasDigit := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			hasDigit = true
		case !isLetter(c) || digitsOnly:
			return false
		}
	}
	return hasDigit && len(s) >= minLen
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWordByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '-' || c == '_'
}
