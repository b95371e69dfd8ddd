package transport

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stampedConn is a TCP connection whose reads record the kernel's receive
// timestamp (SO_TIMESTAMPNS) of the data they return: when it arrived on
// the machine, before any wait for a CPU, for the goroutine or for the
// reader. Token times taken from it are the server's, not the client's
// queueing (see ReceiveClock).
type stampedConn struct {
	net.Conn // a *net.TCPConn; its other methods (ReadFrom, WriteTo) would read around Read
	raw      syscall.RawConn
	// received is the kernel's receive time of the latest read's last
	// segment, in wall-clock nanoseconds since the epoch; 0 before any
	// read, or when the latest had none.
	received atomic.Int64

	// The state of one read, for recv: Read is never called concurrently
	// on one connection (net/http reads a connection from one goroutine
	// at a time).
	p    []byte
	n    int
	err  error
	oob  [64]byte // room for one SCM_TIMESTAMPNS message
	iov  unix.Iovec
	msg  unix.Msghdr // made once: its buffers are the iov and oob above
	recv func(fd uintptr) bool
}

// withReceiveTimes turns on receive timestamps on conn, when it is TCP and
// the kernel allows them, and returns it wrapped as a stampedConn; conn
// itself otherwise.
func withReceiveTimes(conn net.Conn) net.Conn {
	tc, ok := conn.(*net.TCPConn)
	if !ok || unsafe.Sizeof(uintptr(0)) != 8 {
		return conn // a timespec of 2 × 64 bits is what recv parses
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return conn
	}
	c := &stampedConn{Conn: tc, raw: raw}
	c.msg.Iov, c.msg.Iovlen = &c.iov, 1
	c.msg.Control = &c.oob[0]
	c.recv = c.recvmsg
	return c
}

// NetConn returns the TCP connection under c.
func (c *stampedConn) NetConn() net.Conn { return c.Conn }

// Read reads like net.TCPConn.Read, and records when what it read arrived.
func (c *stampedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Read(p)
	}
	c.p, c.n, c.err = p, 0, nil
	err := c.raw.Read(c.recv)
	n := c.n
	c.p = nil
	if err == nil {
		err = c.err
	}
	switch {
	case err == nil && n == 0:
		return 0, io.EOF
	case err != nil:
		return n, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	return n, nil
}

// recvmsg is the RawConn callback of one read: false asks the poller to
// wait until the socket is readable.
func (c *stampedConn) recvmsg(fd uintptr) bool {
	c.iov.Base = &c.p[0]
	c.iov.SetLen(len(c.p))
	for {
		// The message header is the connection's, made once (where
		// syscall.Recvmsg builds one, and a sockaddr, on every call).
		c.msg.SetControllen(len(c.oob))
		c.msg.Flags = 0
		n, _, errno := syscall.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), 0)
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			c.n = int(n)
			raceAcquire(fd)
			if n > 0 {
				// Without a timestamp (the kernel turns them on for the
				// whole system asynchronously, after the first socket
				// asks) the arrival is unknown, not the previous one's.
				c.received.Store(timestampNS(c.oob[:c.msg.Controllen]))
			}
		default:
			c.err = os.NewSyscallError("recvmsg", errno)
		}
		return true
	}
}

// timestampNS reads the SCM_TIMESTAMPNS control message in oob (a
// struct timespec on a 64-bit system) as nanoseconds since the epoch; 0
// when there is none.
func timestampNS(oob []byte) int64 {
	const header = int(unsafe.Sizeof(unix.Cmsghdr{}))
	for len(oob) >= header {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		size := int(h.Len)
		if size < header || size > len(oob) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && size >= header+16 {
			data := oob[unix.CmsgLen(0):]
			sec := int64(binary.NativeEndian.Uint64(data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(data[8:16]))
			return sec*int64(time.Second) + nsec
		}
		oob = oob[min(unix.CmsgSpace(size-header), len(oob)):]
	}
	return 0
}

// ReceivedBy implements ReceiveClock.
func (c *stampedConn) ReceivedBy(now time.Time) time.Time {
	return receivedBy(now, c.received.Load())
}

// maxReadDelay bounds the client's own delay between a byte's arrival on
// the machine and the moment a reader handles it, beyond which the
// arrival time is not believed (a wall clock that stepped): the reader's
// own time is used instead.
const maxReadDelay = time.Minute

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
