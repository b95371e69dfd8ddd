//go:build !unix

package refused

import "net"

// hold, where sockets cannot be bound without listening through package
// syscall, picks a port that was free when it looked: another test can
// take it before the test connects.
func hold() (port int, release func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	port = l.Addr().(*net.TCPAddr).Port
	return port, func() {}, l.Close()
}
