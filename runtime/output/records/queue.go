package records

import (
	"sync"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// chunkSize is the most records of one chunk of the queue.
const chunkSize = 1024

// maxSpare bounds the emptied chunks the queue keeps for reuse.
const maxSpare = 4

// otherReasons is the reason under which drops are counted once the
// account has output.MaxDropReasons-1 others.
const otherReasons = "other causes (see the error)"

// queue is the bounded queue between AddRequest and the writer, and the
// account of what became of every record. Records are queued in chunks,
// which the writer takes all at once, so that taking copies nothing under
// the lock and memory follows what is queued; emptied chunks are reused.
// A record counts against the bound from the moment it is queued until
// the writer has encoded it.
type queue struct {
	max int
	// fullReason is why records that find the queue full are dropped.
	fullReason string
	// ready is signalled when a push starts a chunk, for the writer.
	ready chan struct{}

	mu      sync.Mutex
	chunks  [][]llm.Record
	spare   [][]llm.Record
	pending int
	closed  bool
	// failure, once writing failed, is why every later record is dropped.
	failure string
	// account is what became of the records: the writer counts those
	// it wrote and lost in it directly.
	account output.Account
}

// newQueue returns a queue of at most max records; fullReason says why
// those that find it full are dropped.
func newQueue(max int, fullReason string) *queue {
	return &queue{max: max, fullReason: fullReason, ready: make(chan struct{}, 1), account: output.Account{Other: otherReasons}}
}

// push queues a copy of r, or drops and counts it when the queue is full
// or writing has failed; it never blocks beyond the lock. After close it
// does nothing.
func (q *queue) push(r *llm.Record) {
	q.mu.Lock()
	switch {
	case q.closed:
		q.mu.Unlock()
		return
	case q.failure != "":
		q.account.Drop(1, q.failure)
		q.mu.Unlock()
		return
	case q.pending >= q.max:
		q.account.Drop(1, q.fullReason)
		q.mu.Unlock()
		return
	}
	q.pending++
	n := len(q.chunks)
	started := n == 0 || len(q.chunks[n-1]) == cap(q.chunks[n-1])
	if started {
		var c []llm.Record
		if s := len(q.spare); s > 0 {
			c, q.spare[s-1] = q.spare[s-1], nil
			q.spare = q.spare[:s-1]
		} else {
			c = make([]llm.Record, 0, min(chunkSize, q.max))
		}
		q.chunks = append(q.chunks, c)
		n++
	}
	q.chunks[n-1] = append(q.chunks[n-1], *r)
	q.mu.Unlock()
	if started {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
}

// take appends every queued chunk to dst, oldest first, for the writer,
// which hands each back with recycle once it is done with it.
func (q *queue) take(dst [][]llm.Record) [][]llm.Record {
	q.mu.Lock()
	defer q.mu.Unlock()
	dst = append(dst, q.chunks...)
	clear(q.chunks)
	q.chunks = q.chunks[:0]
	return dst
}

// recycle takes back a chunk the writer is done with: its records leave
// the bound, and the chunk is kept for reuse while few are.
func (q *queue) recycle(c []llm.Record) {
	clear(c) // keep no tag sets alive
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending -= len(c)
	if len(q.spare) < maxSpare {
		q.spare = append(q.spare, c[:0])
	}
}

// fail records that writing failed: from now on every record is dropped
// for reason.
func (q *queue) fail(reason string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.failure = reason
}

// close stops queueing, counts every record still queued as dropped for
// reason, and returns the account's report.
func (q *queue) close(reason string) summary.OutputReport {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		for _, c := range q.chunks {
			q.account.Drop(len(c), reason)
		}
		q.chunks, q.spare, q.pending = nil, nil, 0
	}
	return q.account.Report()
}
