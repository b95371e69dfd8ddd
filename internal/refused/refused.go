// Package refused gives tests an address of 127.0.0.1 whose connections
// are refused for as long as the test runs: the port is held by a socket
// that is bound but never listens, so no other test's server can take it
// meanwhile, as it could take a port that was listened on and closed (a
// test of a dead target then talks to another test's simulator).
package refused

import (
	"net"
	"strconv"
	"testing"
)

// Addr returns "127.0.0.1:PORT", a port that refuses every connection
// until t ends.
func Addr(t testing.TB) string {
	t.Helper()
	port, release, err := hold()
	if err != nil {
		t.Fatalf("holding a port of 127.0.0.1 that refuses connections: %v", err)
	}
	t.Cleanup(release)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// URL returns "http://" + Addr(t).
func URL(t testing.TB) string {
	t.Helper()
	return "http://" + Addr(t)
}
