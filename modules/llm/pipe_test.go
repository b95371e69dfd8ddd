package llm

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

// pipeListener is a listener whose connections are in-memory pipes made
// by its dial, so that a client and a server can talk inside a
// testing/synctest bubble, where time is fake and real sockets are not
// allowed.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// dial opens a connection to the listener's server.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pipeServer serves h over in-memory pipes and returns a client of it
// made with cfg; both are closed when the test ends. Call it inside a
// synctest bubble.
func pipeServer(t *testing.T, h http.HandlerFunc, cfg Config) *Client {
	t.Helper()
	l := newPipeListener()
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	cfg.BaseURL = "http://llm.test"
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	switch tr := c.http.Transport.(type) {
	case *http.Transport:
		tr.Proxy, tr.DialContext = nil, l.dial
	case *transport.H1:
		tr.Dial = l.dial
	}
	t.Cleanup(func() {
		c.CloseIdleConnections()
		srv.Close()
	})
	return c
}
