//go:build unix

package refused

import "syscall"

// hold binds a TCP socket to a free port of 127.0.0.1 without listening
// on it, and without SO_REUSEADDR, so that no other socket can bind the
// port; a connection to it is answered with a reset: refused.
func hold() (port int, release func(), err error) {
	// Under ForkLock, as package net does where sockets cannot be made
	// close-on-exec at once: a child started meanwhile does not inherit
	// the socket and hold the port after the test.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return 0, nil, err
	}
	release = func() { syscall.Close(fd) }
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		return 0, nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		release()
		return 0, nil, err
	}
	return sa.(*syscall.SockaddrInet4).Port, release, nil
}
