package transport

import (
	"context"
	"net"
	"slices"
	"sync"
	"sync/atomic"
)

// firstBytesLen is how many bytes of a connection a headConn keeps.
const firstBytesLen = 64

// headConn is a plain-text HTTP/1 connection that keeps the first bytes it
// reads, so that a request that fails before any response can say what
// the server sent instead (an SSH banner). Its first bytes are read under
// a lock, the transport reading on its own goroutine; once they are kept
// (full), a read takes no lock.
type headConn struct {
	net.Conn
	full atomic.Bool
	mu   sync.Mutex
	head []byte
}

func (c *headConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n == 0 || c.full.Load() {
		return n, err
	}
	c.mu.Lock()
	c.head = append(c.head, p[:min(n, firstBytesLen-len(c.head))]...)
	c.full.Store(len(c.head) == firstBytesLen)
	c.mu.Unlock()
	return n, err
}

// first returns a copy of the first bytes read.
func (c *headConn) first() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.head)
}

// DialKeepingHead wraps dial so that its connections keep their first
// bytes (headConn).
func DialKeepingHead(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &headConn{Conn: conn}, nil
	}
}
