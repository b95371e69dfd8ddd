//go:build !linux

package transport

import "net"

// withReceiveTimes returns conn: receive timestamps are read on Linux
// only, elsewhere token times are the reader's.
func withReceiveTimes(conn net.Conn) net.Conn { return conn }
