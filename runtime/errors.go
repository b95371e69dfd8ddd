package runtime

import (
	"sort"
	"sync"
)

// maxDistinctErrors bounds how many distinct script error messages are
// kept; further ones are counted under the first entries' total only.
const maxDistinctErrors = 50

// ErrorCount is one distinct error message and how often it happened.
type ErrorCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// errorLog counts exceptions thrown by iterations, by message, in bounded
// memory. It is safe for concurrent use.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]*ErrorCount
	order  []*ErrorCount
	other  int64
}

func newErrorLog() *errorLog { return &errorLog{counts: make(map[string]*ErrorCount)} }

func (l *errorLog) record(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.counts[msg]; ok {
		c.Count++
		return
	}
	if len(l.order) >= maxDistinctErrors {
		l.other++
		return
	}
	c := &ErrorCount{Message: msg, Count: 1}
	l.counts[msg] = c
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
