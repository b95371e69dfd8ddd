//go:build linux && race

package transport

import "syscall"

// raceAcquire tells the race detector that what a read of fd returned was
// written by the peer's write, as syscall.Read tells it and
// syscall.Recvmsg does not (without it, data handed over through a socket
// looks like a race): a read of zero bytes, which consumes nothing.
func raceAcquire(fd uintptr) { _, _ = syscall.Read(int(fd), nil) }
