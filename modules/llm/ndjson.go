package llm

import (
	"bytes"
	"fmt"
	"io"
)

// NDJSONReader reads newline-delimited JSON (one value per line, as
// Ollama streams) one line at a time. Lines may be split across reads at
// any byte and be long (up to the maximum size, DefaultMaxLineSize unless
// set); LF and CRLF line endings are accepted, blank lines skipped, and a
// last line without a line ending is returned as a line. Its buffer is
// reused: reading lines allocates nothing in steady state.
type NDJSONReader struct {
	r   io.Reader
	max int

	buf        []byte // bytes read but not yet consumed: buf[start:end]
	start, end int
	scanned    int   // bytes of buf[start:end] known to hold no '\n'
	rerr       error // the error the underlying reader returned
	err        error // sticky error returned by Next
	// unterminated is set once the last line, returned without its line
	// ending, was seen.
	unterminated bool
}

// NewNDJSONReader returns a reader of the lines in r.
func NewNDJSONReader(r io.Reader) *NDJSONReader {
	return &NDJSONReader{r: r, max: DefaultMaxLineSize}
}

// SetMaxSize sets the largest line Next accepts; a larger one makes Next
// fail with ErrTooLong.
func (n *NDJSONReader) SetMaxSize(size int) { n.max = size }

// Reset makes n read a new stream from r, keeping its buffer and maximum
// size.
func (n *NDJSONReader) Reset(r io.Reader) {
	*n = NDJSONReader{r: r, max: n.max, buf: n.buf}
}

// Unterminated reports whether the stream ended with a line that had no
// line ending, as a stream cut mid-line does.
func (n *NDJSONReader) Unterminated() bool { return n.unterminated }

// Next returns the next non-blank line, without its line ending and
// surrounding space; it is valid until the next call. At the end of the
// stream it returns io.EOF; an error of the underlying reader is returned
// wrapped. After an error, Next keeps returning it.
func (n *NDJSONReader) Next() ([]byte, error) {
	for n.err == nil {
		line, err := n.line()
		if err != nil {
			n.err = err
			break
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
	return nil, n.err
}

// line returns the next line, blank or not.
func (n *NDJSONReader) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(n.buf[n.start+n.scanned:n.end], '\n'); i >= 0 {
			end := n.start + n.scanned + i
			line := n.buf[n.start:end]
			n.start, n.scanned = end+1, 0
			if len(line) > n.max {
				return nil, fmt.Errorf("%w: line over %d bytes", ErrTooLong, n.max)
			}
			return line, nil
		}
		n.scanned = n.end - n.start
		if n.rerr != nil {
			if n.rerr == io.EOF && n.start < n.end {
				line := n.buf[n.start:n.end]
				n.start, n.scanned = n.end, 0
				n.unterminated = len(bytes.TrimSpace(line)) > 0
				return line, nil
			}
			if n.rerr == io.EOF {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("ndjson: read: %w", n.rerr)
		}
		n.fill()
	}
}

// fill reads more input, making room first by moving the unconsumed bytes
// to the front of the buffer or growing it; the reader's error is kept in
// rerr.
func (n *NDJSONReader) fill() {
	if n.start > 0 {
		n.end = copy(n.buf, n.buf[n.start:n.end])
		n.start = 0
	}
	if n.end > n.max { // buf[:end] is one unfinished line
		n.rerr = fmt.Errorf("%w: line over %d bytes", ErrTooLong, n.max)
		return
	}
	if n.end == len(n.buf) {
		size := max(2*len(n.buf), sseInitialBuf)
		buf := make([]byte, min(size, n.max+1))
		copy(buf, n.buf[:n.end])
		n.buf = buf
	}
	k, err := readSome(n.r, n.buf[n.end:])
	n.end += k
	n.rerr = err
}
