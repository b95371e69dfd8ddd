//go:build !unix

package llm

import "net"

// peerClosed reports whether the server closed conn; on this system it
// cannot tell, and the request finds out.
func peerClosed(net.Conn) bool { return false }
