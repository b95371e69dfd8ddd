package transport

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestHeadConnKeepsFirstBytesOnly checks that a headConn keeps the first
// firstBytesLen bytes and, once it has them, reads without taking its lock.
func TestHeadConnKeepsFirstBytesOnly(t *testing.T) {
	t.Parallel()
	server, client := net.Pipe()
	defer server.Close()
	hc := &headConn{Conn: client}
	defer hc.Close()
	sent := strings.Repeat("0123456789", 10)
	go io.WriteString(server, sent)
	buf := make([]byte, 40)
	for read := 0; read < firstBytesLen; {
		n, err := hc.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		read += n
	}
	if got := string(hc.first()); got != sent[:firstBytesLen] {
		t.Fatalf("first = %q, want %q", got, sent[:firstBytesLen])
	}
	hc.mu.Lock() // a read that took the lock would wait for ever
	defer hc.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := hc.Read(buf)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a read after the first bytes were kept waits for the lock")
	}
}
