//go:build !unix

package capped

import (
	"context"
	"io"
	"os"
)

// openNamedPipe opens the named pipe at path for reading; where there is
// no poller for it, the wait for a writer cannot be interrupted.
func openNamedPipe(_ context.Context, path string) (io.ReadCloser, error) {
	return os.Open(path)
}
