//go:build !unix

package transport

import "net"

// peerProbe would tell whether the server closed an idle connection; on
// this system it cannot, and the request finds out.
type peerProbe struct{}

func (*peerProbe) init(net.Conn) {}

func (*peerProbe) peerClosed() bool { return false }
