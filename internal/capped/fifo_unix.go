//go:build unix

package capped

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openNamedPipe opens the named pipe at path for reading and waits for a
// writer, until ctx ends. Opening a pipe for reading waits in open(2),
// which nothing can interrupt; opened without waiting, its descriptor
// joins the runtime's poller, where the wait for the writer's first bytes
// (or its close) and every later read end when ctx does.
func openNamedPipe(ctx context.Context, path string) (io.ReadCloser, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	p := &pipeWatch{f: f, path: path, ctx: ctx}
	p.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	if err := p.waitForWriter(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// pipeWatch is a named pipe whose reads end when ctx does.
type pipeWatch struct {
	f    *os.File
	path string
	ctx  context.Context
	stop func() bool
}

func (p *pipeWatch) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	return n, p.interrupted(err, "interrupted while reading the named pipe")
}

func (p *pipeWatch) Close() error {
	p.stop()
	return p.f.Close()
}

// waitForWriter waits until the pipe has bytes or a writer that came and
// went: until then a read finds no writer and returns 0, which is not
// the end of the input.
func (p *pipeWatch) waitForWriter() error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if err != syscall.EINTR {
				return n > 0 || err != nil
			}
		}
	})
	if err != nil {
		return p.interrupted(err, "interrupted while waiting for a writer on the named pipe")
	}
	return nil
}

// interrupted words err, of a wait that ctx ended, as what was
// interrupted; other errors are returned as they are.
func (p *pipeWatch) interrupted(err error, what string) error {
	if errors.Is(err, os.ErrDeadlineExceeded) && p.ctx.Err() != nil {
		return fmt.Errorf("%s: %s: %w", p.path, what, context.Cause(p.ctx))
	}
	return err
}
