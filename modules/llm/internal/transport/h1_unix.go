//go:build unix

package transport

import (
	"net"
	"syscall"
)

// peerProbe tells whether the server closed one connection, or sent on
// it what no request asked for, while it was idle: a peek that does not
// wait finds the end of the stream or bytes. It is made once per
// connection, so that a look allocates nothing.
type peerProbe struct {
	raw    syscall.RawConn // nil: a connection it cannot look into
	peek   func(fd uintptr) bool
	closed bool
	buf    [1]byte
}

// init readies p to look into conn.
func (p *peerProbe) init(conn net.Conn) {
	sc, ok := tcpConn(conn).(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.raw, p.peek = raw, p.look
}

// look peeks at fd without waiting.
func (p *peerProbe) look(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	p.closed = err == nil || err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR
	return true
}

// peerClosed reports whether the server closed the connection or sent
// on it; a connection p cannot look into counts as open.
func (p *peerProbe) peerClosed() bool {
	if p.raw == nil {
		return false
	}
	err := p.raw.Read(p.peek)
	return err != nil || p.closed
}

// tcpConn finds the connection under the wrappers llmrun puts around
// one; nil when it is none of them.
func tcpConn(conn net.Conn) net.Conn {
	for ; conn != nil; conn = innerConn(conn) {
		if c, ok := conn.(*net.TCPConn); ok {
			return c
		}
	}
	return nil
}
