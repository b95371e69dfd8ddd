package dashboard

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Bounds of what the dashboard holds and sends.
const (
	// MaxClients is how many pages may watch at once; one more is
	// answered 503.
	MaxClients = 16
	// MaxHistory is how many past events a new page gets first: an hour
	// at a period of 1 s. Older ones are let go.
	MaxHistory = 3600
	// MaxEventSize bounds one encoded event; a larger one is cut to its
	// pooled figures and its first scenarios.
	MaxEventSize = 64 << 10
	// clientQueue is how many events wait for a slow page before the
	// next are dropped for it.
	clientQueue = 64
	// closeGrace is how long, once the hub closes, a page has for each
	// write of the events left for it: one that reads takes them in
	// milliseconds, one that stopped reading is cut then, so that the
	// run's end never waits for it longer.
	closeGrace = time.Second
)

// hub holds the history of the encoded events and hands each new one to
// the clients' queues without ever waiting for one.
type hub struct {
	mu      sync.Mutex
	history [][]byte
	clients map[*client]struct{}
	closed  bool
}

// client is one page's queue of events and what was dropped for it.
type client struct {
	events  chan []byte
	dropped int64
	// done is closed when the hub closes: no event will follow.
	done chan struct{}
	// deadline sets when a write to the page under way, and every later
	// one, ends: on closing, the hub gives a page whose queue is full,
	// which has stopped reading, none (now), and the others closeGrace.
	deadline func(time.Time)
}

// writeDeadline sets the deadline of c's next write: timeout from now,
// or closeGrace once the hub closed. The hub's own deadline, set as it
// closes, is never pushed back: done is checked after the deadline is
// set, and the hub closes done before it sets its own.
func (c *client) writeDeadline(timeout time.Duration) {
	c.deadline(time.Now().Add(timeout))
	select {
	case <-c.done:
		c.deadline(time.Now().Add(min(timeout, closeGrace)))
	default:
	}
}

func newHub() *hub { return &hub{clients: map[*client]struct{}{}} }

// encodeEvent is ev as one line of JSON, no larger than MaxEventSize:
// scenarios are left out from the last until it fits, and counted.
func encodeEvent(ev Event) ([]byte, error) {
	all := len(ev.Scenarios)
	for {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("encoding the dashboard's event: %w", err)
		}
		if len(b) <= MaxEventSize || len(ev.Scenarios) == 0 {
			return b, nil
		}
		ev.Scenarios = ev.Scenarios[:len(ev.Scenarios)/2]
		ev.ScenariosLeftOut = all - len(ev.Scenarios)
	}
}

// publish keeps b in the history and queues it for every client; a
// client whose queue is full loses it, counted.
func (h *hub) publish(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if len(h.history) == MaxHistory {
		h.history = append(h.history[:0], h.history[1:]...)
	}
	h.history = append(h.history, b)
	for c := range h.clients {
		select {
		case c.events <- b:
		default:
			c.dropped++
		}
	}
}

// join adds a client, whose writes deadline bounds, and returns it with
// the history so far; nil when MaxClients watch already or the hub is
// closed.
func (h *hub) join(deadline func(time.Time)) (*client, [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.clients) >= MaxClients {
		return nil, nil
	}
	c := &client{events: make(chan []byte, clientQueue), done: make(chan struct{}), deadline: deadline}
	h.clients[c] = struct{}{}
	return c, append([][]byte(nil), h.history...)
}

// leave removes c.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
}

// droppedFor is how many events c lost so far.
func (h *hub) droppedFor(c *client) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return c.dropped
}

// close tells every client that no event follows, cuts off those whose
// queue is full (they stopped reading) and gives the others closeGrace
// for the write under way: the run's end waits for no page that does
// not read, whether its queue filled or the socket's buffers took what
// it left.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	now := time.Now()
	for c := range h.clients {
		close(c.done)
		if len(c.events) == cap(c.events) {
			c.deadline(now)
		} else {
			c.deadline(now.Add(closeGrace))
		}
	}
}

// historySoFar is the history's events so far; they are never changed,
// only let go.
func (h *hub) historySoFar() [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]byte(nil), h.history...)
}

// sseEvent frames data as a server-sent event of the given type ("" for
// the default, "message"). data holds no newline (it is JSON).
func sseEvent(kind string, data []byte) []byte {
	var b []byte
	if kind != "" {
		b = append(b, "event: "+kind+"\n"...)
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
