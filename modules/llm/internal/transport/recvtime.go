package transport

import (
	"context"
	"net"
	"time"
)

// ReceiveClock tells when what a connection delivered arrived on the
// machine: the kernel's receive time of its latest read, where the
// connection records it (stampedConn).
type ReceiveClock interface {
	// ReceivedBy returns the arrival time of the bytes handed to the
	// reader by now, which is no later than now and no earlier than the
	// arrival of any of them; now when it cannot tell.
	ReceivedBy(now time.Time) time.Time
}

// DialWithReceiveTimes wraps dial so that its TCP connections record
// when what they read arrived (withReceiveTimes).
func DialWithReceiveTimes(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return withReceiveTimes(conn), nil
	}
}

// connReceiveClock finds the receive clock of a request's connection,
// through the wrappers llmrun and crypto/tls put around it; nil when it has
// none (no receive timestamps on this system or this connection).
func connReceiveClock(conn net.Conn) ReceiveClock {
	for ; conn != nil; conn = innerConn(conn) {
		if c, ok := conn.(ReceiveClock); ok {
			return c
		}
	}
	return nil
}

// innerConn returns the connection that conn, a wrapper of llmrun's
// (headConn, stampedConn) or crypto/tls's, holds; nil when conn is none
// of them.
func innerConn(conn net.Conn) net.Conn {
	switch c := conn.(type) {
	case *headConn:
		return c.Conn
	case interface{ NetConn() net.Conn }: // *tls.Conn, stampedConn
		return c.NetConn()
	}
	return nil
}
