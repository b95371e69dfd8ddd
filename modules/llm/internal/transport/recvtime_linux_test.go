package transport

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// loopbackPair returns the two ends of a TCP connection on 127.0.0.1, the
// client's dialed through DialWithReceiveTimes.
func loopbackPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = DialWithReceiveTimes((&net.Dialer{}).DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestReceiveTimeBeforeTheRead: the time a stamped connection gives what it
// read is when the bytes arrived, not when the reader got round to them:
// with the read held back after the socket became readable, the arrival
// is still before it became readable, and after the server wrote.
func TestReceiveTimeBeforeTheRead(t *testing.T) {
	t.Parallel()
	client, server := loopbackPair(t)
	sc, ok := client.(*stampedConn)
	if !ok {
		t.Fatalf("dialed %T, want a *stampedConn", client)
	}
	if now := time.Now(); !sc.ReceivedBy(now).Equal(now) {
		t.Errorf("before any read: %s, want now", sc.ReceivedBy(now).Sub(now))
	}
	waitForTimestamps(t, sc, server)
	beforeWrite := time.Now()
	if _, err := server.Write([]byte("data: token\n\n")); err != nil {
		t.Fatal(err)
	}
	readable := waitReadable(t, sc)
	const heldBack = 30 * time.Millisecond
	time.Sleep(heldBack) // the client's own delay, which arrival times leave out
	buf := make([]byte, 64)
	n, err := client.Read(buf)
	if err != nil || string(buf[:n]) != "data: token\n\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	read := time.Now()
	arrived := sc.ReceivedBy(read)
	// The wall and monotonic clocks may disagree by microseconds.
	const slack = time.Millisecond
	if arrived.Before(beforeWrite.Add(-slack)) || arrived.After(readable.Add(slack)) {
		t.Errorf("arrived %s after the write, readable %s after it: want the arrival between the write and readable",
			arrived.Sub(beforeWrite), readable.Sub(beforeWrite))
	}
	if lag := read.Sub(arrived); lag < heldBack {
		t.Errorf("read %s after the arrival, want at least the %s it was held back", lag, heldBack)
	}
}

// waitForTimestamps exchanges bytes until reads carry a receive timestamp:
// the kernel turns them on for the whole system from a work queue after
// the first socket asks (and off after the last one closes), which a busy
// machine may run late.
func waitForTimestamps(t *testing.T, c *stampedConn, server net.Conn) {
	t.Helper()
	buf := make([]byte, 1)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if _, err := server.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		if c.received.Load() != 0 {
			return
		}
	}
	t.Fatal("no receive timestamp on any read for 10 s")
}

// waitReadable blocks until c has data to read, without reading it, and
// returns when it had.
func waitReadable(t *testing.T, c *stampedConn) time.Time {
	t.Helper()
	var perr error
	err := c.raw.Control(func(fd uintptr) {
		for {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, 10_000)
			if err == unix.EINTR {
				continue
			}
			if err == nil && n == 0 {
				err = context.DeadlineExceeded
			}
			perr = err
			return
		}
	})
	if err != nil || perr != nil {
		t.Fatalf("waiting for data: %v %v", err, perr)
	}
	return time.Now()
}

// TestReceiveTimeReadEnds: a stamped connection ends and fails as a plain one
// does: io.EOF at the peer's close, a timeout past a read deadline.
func TestReceiveTimeReadEnds(t *testing.T) {
	t.Parallel()
	client, server := loopbackPair(t)
	if err := client.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var ne net.Error
	if _, err := client.Read(make([]byte, 8)); err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("read past the deadline: %v, want a timeout", err)
	}
	if err := client.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	server.Close()
	if n, err := client.Read(make([]byte, 8)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("read after the peer closed: %d, %v, want 0, EOF", n, err)
	}
}

// TestConnReceiveClock: the clock is found through the connections that
// wrap a stamped one (headConn, TLS), and nowhere else.
func TestConnReceiveClock(t *testing.T) {
	t.Parallel()
	client, _ := loopbackPair(t)
	for name, conn := range map[string]net.Conn{
		"stamped":         client,
		"headConn":        &headConn{Conn: client},
		"tls":             tls.Client(client, &tls.Config{InsecureSkipVerify: true}),
		"tls over header": tls.Client(&headConn{Conn: client}, &tls.Config{InsecureSkipVerify: true}),
	} {
		if connReceiveClock(conn) == nil {
			t.Errorf("%s: no arrival clock", name)
		}
	}
	plain, _ := net.Pipe()
	defer plain.Close()
	if c := connReceiveClock(plain); c != nil {
		t.Errorf("net.Pipe: %T, want none", c)
	}
	if c := connReceiveClock(nil); c != nil {
		t.Errorf("nil: %T, want none", c)
	}
}

// TestTimestampNS reads the SCM_TIMESTAMPNS message among control
// messages, and nothing from truncated or foreign ones.
func TestTimestampNS(t *testing.T) {
	t.Parallel()
	msg := func(level, typ int32, data []byte) []byte {
		b := make([]byte, unix.CmsgSpace(len(data)))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = level, typ
		h.SetLen(unix.CmsgLen(len(data)))
		copy(b[unix.CmsgLen(0):], data)
		return b
	}
	ts := make([]byte, 16)
	binary.NativeEndian.PutUint64(ts[0:], 1_700_000_000)
	binary.NativeEndian.PutUint64(ts[8:], 123)
	want := int64(1_700_000_000)*int64(time.Second) + 123
	stamp := msg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)
	other := msg(unix.SOL_IP, 1, []byte{1, 2, 3, 4})
	for _, tc := range []struct {
		name string
		oob  []byte
		want int64
	}{
		{"alone", stamp, want},
		{"after another", append(append([]byte{}, other...), stamp...), want},
		{"none", other, 0},
		{"empty", nil, 0},
		{"truncated", stamp[:len(stamp)-4], 0},
		{"short header", stamp[:8], 0},
		{"zero length", make([]byte, 32), 0},
	} {
		if got := timestampNS(tc.oob); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// BenchmarkRead reads 100 bytes per op from a loopback connection whose
// receive queue already holds them (the writer refills it between
// batches, off the clock): the cost of one read system call, with the
// kernel's receive time (recvmsg and its control message) and without
// (read).
func BenchmarkRead(b *testing.B) {
	const chunk, batch = 100, 1000
	for _, stamped := range []bool{false, true} {
		name := map[bool]string{false: "read", true: "recvmsg"}[stamped]
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, _ := ln.Accept()
				accepted <- c
			}()
			dial := (&net.Dialer{}).DialContext
			if stamped {
				dial = DialWithReceiveTimes(dial)
			}
			client, err := dial(context.Background(), "tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			server := <-accepted
			if server == nil {
				b.Fatal("accept failed")
			}
			defer server.Close()
			block := make([]byte, chunk*batch)
			buf := make([]byte, chunk)
			left := 0
			b.ReportAllocs()
			for b.Loop() {
				if left == 0 {
					b.StopTimer()
					if _, err := server.Write(block); err != nil {
						b.Fatal(err)
					}
					left = len(block)
					b.StartTimer()
				}
				n, err := client.Read(buf)
				if err != nil {
					b.Fatal(err)
				}
				left -= n
			}
		})
	}
}

// TestFirstByteAtItsReceiveTime: TTFB's first byte is timed, like the
// tokens, by its receive time, however late its hook runs.
func TestFirstByteAtItsReceiveTime(t *testing.T) {
	t.Parallel()
	c := &stampedConn{}
	arrived := time.Now().Add(-50 * time.Millisecond)
	c.received.Store(arrived.UnixNano())
	tr := &Tracer{conn: c}
	tr.markFirstByte()
	// Both sides read the wall and monotonic clocks, which may disagree
	// by microseconds, never by the 50 ms the hook ran late.
	if d := tr.firstByte.Sub(arrived); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("first byte at %s from its receive time, want it", d)
	}
}
