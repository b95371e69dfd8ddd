package engine

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxDistinctErrors bounds how many distinct script error messages are
// kept; further ones are counted under the first entries' total only.
const maxDistinctErrors = 50

// ErrorCount is one distinct error message and how often it happened.
type ErrorCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// errorLog counts exceptions thrown by iterations, by message (grouped by
// MessageKey, each shown as the first seen), in bounded memory. It is safe
// for concurrent use.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]*ErrorCount // by MessageKey
	order  []*ErrorCount
	other  int64
}

func newErrorLog() *errorLog { return &errorLog{counts: make(map[string]*ErrorCount)} }

func (l *errorLog) record(msg string) {
	key := MessageKey(msg)
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.counts[key]; ok {
		c.Count++
		return
	}
	if len(l.order) >= maxDistinctErrors {
		l.other++
		return
	}
	c := &ErrorCount{Message: msg, Count: 1}
	l.counts[key] = c
	l.order = append(l.order, c)
}

// list returns the distinct messages, most frequent first, and the count of
// errors whose message was not kept.
func (l *errorLog) list() ([]ErrorCount, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ErrorCount, len(l.order))
	for i, c := range l.order {
		out[i] = *c
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out, l.other
}

const (
	// maxMessagesPerClass is how many distinct messages of failed
	// requests are kept per error class: the first ones seen.
	maxMessagesPerClass = 3
	// maxErrorClasses bounds the classes kept; the llm module has about a
	// dozen.
	maxErrorClasses = 32
	// maxMessageLen bounds a kept message, in bytes.
	maxMessageLen = 500
)

// requestErrorLog keeps the first few distinct messages of failed LLM
// requests per error class, with their counts, in bounded memory. Messages
// that differ only by ids are one (MessageKey), shown as the first seen.
// It implements llm.ErrorRecorder and is safe for concurrent use.
type requestErrorLog struct {
	mu      sync.Mutex
	byClass map[string][]keptError
}

// keptError is a kept message and its MessageKey.
type keptError struct {
	key string
	ErrorCount
}

func newRequestErrorLog() *requestErrorLog {
	return &requestErrorLog{byClass: make(map[string][]keptError)}
}

// Record implements llm.ErrorRecorder.
func (l *requestErrorLog) Record(class, msg string) {
	msg = truncateMessage(msg)
	key := MessageKey(msg)
	l.mu.Lock()
	defer l.mu.Unlock()
	msgs, ok := l.byClass[class]
	if !ok && len(l.byClass) >= maxErrorClasses {
		return
	}
	for i := range msgs {
		if msgs[i].key == key {
			msgs[i].Count++
			return
		}
	}
	if len(msgs) < maxMessagesPerClass {
		l.byClass[class] = append(msgs, keptError{key, ErrorCount{Message: msg, Count: 1}})
	}
}

// list returns a copy of the kept messages by class, each class's in the
// order they were first seen.
func (l *requestErrorLog) list() map[string][]ErrorCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]ErrorCount, len(l.byClass))
	for class, msgs := range l.byClass {
		list := make([]ErrorCount, len(msgs))
		for i, m := range msgs {
			list[i] = m.ErrorCount
		}
		out[class] = list
	}
	return out
}

// truncateMessage cuts msg to maxMessageLen bytes, on a UTF-8 boundary,
// marking the cut with "…".
func truncateMessage(msg string) string {
	if len(msg) <= maxMessageLen {
		return msg
	}
	cut := maxMessageLen
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// idPlaceholder replaces an id in a MessageKey.
const idPlaceholder = "<id>"

// MessageKey is msg with the ids in it (a response's "chatcmpl-123", a
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
func MessageKey(msg string) string {
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
// MessageKey).
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
