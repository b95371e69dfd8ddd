package influxdb

import (
	"fmt"
	"sync"

	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// item is one queued point: a request record, converted to its llm_request
// point by the writer, or a point built already (llm_interval, llm_run).
type item struct {
	rec   llm.Record
	point *write.Point
}

// otherReasons is the reason under which drops are counted once the
// account has output.MaxDropReasons-1 others.
const otherReasons = "other causes (see the last error)"

// buffer is the bounded queue between AddRequest (and the interval ticker)
// and the writer, and the account of what became of every point. Points
// are queued in chunks of at most a batch, which the writer takes whole,
// so taking never copies under the lock and memory follows what is queued.
// A point counts against the bound from the moment it is queued until it
// is written or dropped, while the writer holds it too.
type buffer struct {
	max, batch int
	// ready is signalled when a chunk fills up, for the writer.
	ready chan struct{}

	mu      sync.Mutex
	chunks  [][]item
	pending int
	closed  bool
	// account is what became of the points; what was written or lost
	// outside the queue (llm_run_start, llm_result points that could
	// not be encoded) is counted in it directly.
	account output.Account
	lastErr string
	failing bool
	// fullReason is why points refused because the buffer is full are
	// dropped: the writer's last failure, when it is failing.
	fullReason string
}

// newBuffer returns a buffer of at most max points, queued in chunks of
// batch.
func newBuffer(max, batch int) *buffer {
	b := &buffer{max: max, batch: batch, ready: make(chan struct{}, 1), account: output.Account{Other: otherReasons}}
	b.fullReason = b.slowReason()
	return b
}

// slowReason is why points are refused for want of room while writes
// succeed.
func (b *buffer) slowReason() string {
	return fmt.Sprintf("buffer full (%s): writes to InfluxDB did not keep up", textfmt.Count(b.max, "point"))
}

// push queues one point, or drops and counts it when the buffer is full;
// it never blocks beyond the lock. After close it does nothing.
func (b *buffer) push(it item) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	if b.pending >= b.max {
		b.account.Drop(1, b.fullReason)
		b.mu.Unlock()
		return
	}
	b.pending++
	n := len(b.chunks)
	if n == 0 || len(b.chunks[n-1]) == b.batch {
		b.chunks = append(b.chunks, nil)
		n++
	}
	b.chunks[n-1] = append(b.chunks[n-1], it)
	full := len(b.chunks[n-1]) == b.batch
	b.mu.Unlock()
	if full {
		select {
		case b.ready <- struct{}{}:
		default:
		}
	}
}

// pushFront queues groups of points ahead of the others, in order, each
// group sent in a write of its own, beyond the bound: the run's llm_run
// and llm_result points, which matter most, go first at the end.
func (b *buffer) pushFront(groups ...[]item) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	var front [][]item
	for _, its := range groups {
		if len(its) > 0 {
			b.pending += len(its)
			front = append(front, its)
		}
	}
	b.chunks = append(front, b.chunks...)
}

// take hands the oldest chunk to the writer, nil when none is queued; its
// points stay pending until sent or rejected.
func (b *buffer) take() []item {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.chunks) == 0 {
		return nil
	}
	c := b.chunks[0]
	b.chunks[0] = nil
	b.chunks = b.chunks[1:]
	if len(b.chunks) == 0 {
		b.chunks = nil
	}
	return c
}

// sent accounts for n points written.
func (b *buffer) sent(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending -= n
	b.account.Wrote(n)
	if b.failing {
		b.failing, b.fullReason = false, b.slowReason()
	}
}

// rejected accounts for a batch of n points InfluxDB refused for good, of
// which it stored written (a partial write).
func (b *buffer) rejected(n, written int, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending -= n
	b.account.Wrote(written)
	b.lastErr = msg
	b.account.Drop(n-written, "rejected by InfluxDB: "+msg)
}

// fail records a failure the writer retries: until a write succeeds,
// points refused for want of room are dropped because of it.
func (b *buffer) fail(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastErr, b.failing = msg, true
	b.fullReason = fmt.Sprintf("buffer full (%s) while InfluxDB was failing: %s", textfmt.Count(b.max, "point"), msg)
}

// close stops queueing, counts every point still pending as dropped for
// reason(last error), and returns the account's report, its error the
// last error.
func (b *buffer) close(reason func(lastErr string) string) summary.OutputReport {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.account.Drop(b.pending, reason(b.lastErr))
		b.pending, b.chunks = 0, nil
	}
	rep := b.account.Report()
	rep.Err = b.lastErr
	return rep
}
