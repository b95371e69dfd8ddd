package engine

import (
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/llmrun/llmrun/internal/errorkey"
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
// errorkey.Of, each shown as the first seen), in bounded memory. It is safe
// for concurrent use.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]*ErrorCount // by errorkey.Of
	order  []*ErrorCount
	other  int64
}

func newErrorLog() *errorLog { return &errorLog{counts: make(map[string]*ErrorCount)} }

func (l *errorLog) record(msg string) {
	key := errorkey.Of(msg)
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
// that differ only by ids are one (errorkey.Of), shown as the first seen.
// It implements llm.ErrorRecorder and is safe for concurrent use.
type requestErrorLog struct {
	mu      sync.Mutex
	byClass map[string][]keptError
}

// keptError is a kept message and its key (errorkey.Of).
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
	key := errorkey.Of(msg)
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
