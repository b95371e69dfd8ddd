// Package capped reads files that scripts and their data name with a cap
// on their size, so that a huge file, a device (/dev/zero) or a pipe that
// never ends fails with an error naming the file and the cap instead of
// exhausting memory.
package capped

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// TooLargeError is a file with more than Limit bytes.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most llmrun reads", e.Path, Size(e.Limit))
}

// ReadFile reads the file at path whole, failing when it has more than
// limit bytes. It must be a regular file or a named pipe (read until its
// writer closes it); a directory, a device or a socket is an error, as is
// any file that turns out longer than limit while it is read (/proc
// files, a file that grows).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens the file at path for a streamed read of at most limit bytes:
// reading beyond them fails with a *TooLargeError. The file must be a
// regular file or a named pipe, as for ReadFile.
func Open(path string, limit int64) (io.ReadCloser, error) {
	return OpenContext(context.Background(), path, limit)
}

// OpenContext is Open whose waits end with ctx: a named pipe's wait for
// a writer (which, left to open(2), nothing could interrupt) and its
// reads, with an error naming the file that wraps ctx's cause.
func OpenContext(ctx context.Context, path string, limit int64) (io.ReadCloser, error) {
	// Stat first: opening a device can have effects, and opening a named
	// pipe waits for a writer.
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkMode(path, info.Mode()); err != nil {
		return nil, err
	}
	if info.Mode().IsRegular() && info.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	var f io.ReadCloser
	if info.Mode()&fs.ModeNamedPipe != 0 {
		f, err = openNamedPipe(ctx, path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	return &limitedFile{f: f, limitedReader: limitedReader{r: io.LimitReader(f, limit+1), path: path, limit: limit}}, nil
}

// NewReader returns a reader of at most limit bytes of r, named name in
// its error: reading beyond them fails with a *TooLargeError, as for a
// file Open opened.
func NewReader(r io.Reader, name string, limit int64) io.Reader {
	return &limitedReader{r: io.LimitReader(r, limit+1), path: name, limit: limit}
}

// checkMode accepts regular files and named pipes.
func checkMode(path string, mode fs.FileMode) error {
	switch {
	case mode.IsRegular(), mode&fs.ModeNamedPipe != 0:
		return nil
	case mode.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	case mode&fs.ModeDevice != 0:
		return fmt.Errorf("%s is a device, not a regular file", path)
	default:
		return fmt.Errorf("%s is not a regular file", path)
	}
}

// limitedFile reads a file up to its limit and fails one byte beyond.
type limitedFile struct {
	f io.Closer
	limitedReader
}

func (l *limitedFile) Close() error { return l.f.Close() }

// limitedReader reads up to its limit and fails one byte beyond.
type limitedReader struct {
	r     io.Reader
	path  string
	limit int64
	read  int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.read += int64(n)
	if l.read > l.limit {
		return n - int(l.read-l.limit), &TooLargeError{Path: l.path, Limit: l.limit}
	}
	return n, err
}

// Size writes a byte count for users: "16 MiB", "1 GiB", "512 KiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// Budget is a cap on the bytes several reads take together, such as the
// result files one merge unpacks: each read asks for what is Left before
// it allocates, then Takes what it read.
type Budget struct {
	limit, used int64
	what        string // what the cap bounds, for its error
}

// NewBudget returns a budget of limit bytes for what ("the result files
// one merge unpacks"), named in its error.
func NewBudget(limit int64, what string) *Budget {
	return &Budget{limit: limit, what: what}
}

// Left is how many bytes the next read may take.
func (b *Budget) Left() int64 { return b.limit - b.used }

// Take counts n bytes read, failing with Exceeded when they are more than
// Left.
func (b *Budget) Take(n int64) error {
	if n > b.Left() {
		return b.Exceeded()
	}
	b.used += n
	return nil
}

// Exceeded is the error of a read that needs more than the budget has
// left; it names the cap.
func (b *Budget) Exceeded() error {
	return &BudgetError{What: b.what, Limit: b.limit}
}

// BudgetError is more bytes than a Budget allows.
type BudgetError struct {
	What  string
	Limit int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("more than %s in all, the most llmrun takes of %s", Size(e.Limit), e.What)
}

// FailureReader reads R and keeps in Err the first error R gave other
// than io.EOF: the stream's own failure (a damaged gzip stream, a read
// past a cap), which a decoder reading it reports only as what it could
// not decode.
type FailureReader struct {
	R   io.Reader
	Err error
}

func (f *FailureReader) Read(p []byte) (int, error) {
	n, err := f.R.Read(p)
	if err != nil && err != io.EOF && f.Err == nil {
		f.Err = err
	}
	return n, err
}
