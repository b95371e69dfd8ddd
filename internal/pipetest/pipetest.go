// Package pipetest serves HTTP over in-memory connections (net.Pipe), so
// that a client and a server can talk inside a testing/synctest bubble:
// their reads and writes block durably, and time is the bubble's.
package pipetest

import (
	"context"
	"net"
	"sync"
)

// Listener accepts the server ends of the pipes its Dial makes. Make it
// in the bubble it is used in.
type Listener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// NewListener returns a Listener that accepts until Close.
func NewListener() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Dial opens a connection to the listener's server: an http.Transport's
// DialContext.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		server.Close()
		client.Close()
		return nil, net.ErrClosed
	case <-ctx.Done():
		server.Close()
		client.Close()
		return nil, ctx.Err()
	}
}

// Accept waits for a Dial, or for Close.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; the connections made stay open.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr is the listener's address, "pipe".
func (l *Listener) Addr() net.Addr { return addr{} }

type addr struct{}

func (addr) Network() string { return "pipe" }
func (addr) String() string  { return "pipe" }
