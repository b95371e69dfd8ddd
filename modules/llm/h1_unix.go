//go:build unix

package llm

import (
	"net"
	"syscall"
)

// peerClosed reports whether the server closed conn, an idle connection,
// or sent on it what no request asked for: a peek that does not wait
// finds the end of the stream or bytes. A connection it cannot look into
// counts as open.
func peerClosed(conn net.Conn) bool {
	sc, ok := tcpConn(conn).(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var closed bool
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = rerr == nil || rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK && rerr != syscall.EINTR
		return true
	})
	return err != nil || closed
}

// tcpConn finds the connection under the wrappers llmrun puts around
// one; nil when it is none of them.
func tcpConn(conn net.Conn) net.Conn {
	for {
		switch c := conn.(type) {
		case *net.TCPConn:
			return c
		case *headConn:
			conn = c.Conn
		case interface{ NetConn() net.Conn }:
			conn = c.NetConn()
		default:
			return nil
		}
	}
}
