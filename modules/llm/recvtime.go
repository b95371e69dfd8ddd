package llm

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// maxReadDelay bounds the client's own delay between a byte's arrival on
// the machine and the moment a reader handles it, beyond which the
// arrival time is not believed (a wall clock that stepped): the reader's
// own time is used instead.
const maxReadDelay = time.Minute

// receiveClock tells when what a connection delivered arrived on the
// machine: the kernel's receive time of its latest read, where the
// connection records it (stampedConn).
type receiveClock interface {
	// receivedBy returns the arrival time of the bytes handed to the
	// reader by now, which is no later than now and no earlier than the
	// arrival of any of them; now when it cannot tell.
	receivedBy(now time.Time) time.Time
}

// dialWithReceiveTimes wraps dial so that its TCP connections record
// when what they read arrived (withReceiveTimes).
func dialWithReceiveTimes(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
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
func connReceiveClock(conn net.Conn) receiveClock {
	for conn != nil {
		switch c := conn.(type) {
		case receiveClock:
			return c
		case *headConn:
			conn = c.Conn
		case *tls.Conn:
			conn = c.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// receivedBy returns the time arrived (wall-clock nanoseconds since the
// epoch, 0 for unknown) on now's monotonic clock, so that it subtracts
// from request start times like any other reading of the clock.
func receivedBy(now time.Time, arrived int64) time.Time {
	if arrived == 0 {
		return now
	}
	d := time.Duration(now.UnixNano() - arrived)
	if d <= 0 || d > maxReadDelay {
		return now
	}
	return now.Add(-d)
}
