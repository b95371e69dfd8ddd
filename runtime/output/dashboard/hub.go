package dashboard

import (
	"encoding/json"
	"fmt"
	"sync"
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
	// cut ends at once a write to the page under way, and every later
	// one: the hub calls it on closing for a page whose queue is full,
	// which has stopped reading.
	cut func()
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

// join adds a client, which cut cuts off, and returns it with the
// history so far; nil when MaxClients watch already or the hub is
// closed.
func (h *hub) join(cut func()) (*client, [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.clients) >= MaxClients {
		return nil, nil
	}
	c := &client{events: make(chan []byte, clientQueue), done: make(chan struct{}), cut: cut}
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

// close tells every client that no event follows, and cuts off those
// whose queue is full: they stopped reading, and the run's end does not
// wait for them.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for c := range h.clients {
		close(c.done)
		if len(c.events) == cap(c.events) {
			c.cut()
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
