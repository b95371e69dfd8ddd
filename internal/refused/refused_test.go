package refused

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// A connection to the address is refused, and no server can take the
// port while the test runs: not one listening on it (as llmsim.Listen
// and httptest do, with SO_REUSEADDR), nor another refused address.
func TestAddrRefusesAndCannotBeTaken(t *testing.T) {
	addr := Addr(t)
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("a connection to %s was accepted", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v; want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Errorf("another server could listen on %s", addr)
	}
	if other := Addr(t); other == addr {
		t.Errorf("two refused addresses share %s", addr)
	}
}
