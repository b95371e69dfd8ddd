package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineSize is the largest SSE line, and the largest data of one
// event, that an SSEReader accepts unless told otherwise. A stream chunk
// is a few hundred bytes; the largest events servers send (TGI's last
// one, with the whole generated text) stay far below it.
const DefaultMaxLineSize = 4 << 20

// ErrTooLong is returned (wrapped) by SSEReader.Next for a line or an event
// larger than the reader's maximum size.
var ErrTooLong = errors.New("sse: line or event too long")

const (
	// sseInitialBuf is a reader's buffer until a longer line grows it: a
	// stream chunk is a few hundred bytes, and net/http already buffers the
	// reads of the connection (responseReadBuffer, 2 KiB), so a larger buffer would only hold
	// more memory for as long as a stream is in flight.
	sseInitialBuf = 1 << 10
	sseMaxEmpty   = 100 // reads returning 0, nil in a row before giving up
	// sseKeepData is the largest event data buffer kept from one event
	// to the next: a larger one is dropped once its event was read.
	sseKeepData = 64 << 10
	// sseRoom is what a buffer grown for a line of the maximum size holds
	// beyond it, so that the blank line ending the line's event can be
	// read while the line is its data (takeLine).
	sseRoom = 4 << 10
)

var utf8BOM = []byte("\xEF\xBB\xBF")

// Event is one Server-Sent Event.
type Event struct {
	// Type is the event's "event" field; "" when it had none (SSE's
	// default "message" type).
	Type string
	// Data is the event's data lines joined with "\n". It is valid only
	// until the next call to Next.
	Data []byte
	// ID is the stream's last event ID: the latest "id" field seen so far,
	// in this event or an earlier one.
	ID string
}

// SSEReader reads Server-Sent Events (the text/event-stream format of the
// WHATWG HTML standard) from a stream, one event per Next call. It accepts
// LF, CRLF and CR line endings, comment lines, fields without a space after
// the colon, multi-line data and a leading byte order mark; events may be
// split across reads at any byte. Lines may be long (up to the maximum size,
// DefaultMaxLineSize unless set): the memory one line takes stays about
// that size, since the data of a long line is not copied out of the buffer
// it was read into (takeLine), and that buffer reads the next lines.
// Buffers are reused, so reading events of ordinary size, or long ones
// once the buffer has grown, allocates nothing in steady state.
type SSEReader struct {
	r   io.Reader
	max int
	// take is the length from which an event's first data line is taken
	// over rather than copied (takeLine): sseKeepData.
	take int

	buf        []byte // bytes read but not yet consumed: buf[start:end]
	start, end int
	// base is where unread bytes may be moved to in buf: 0, or the end of
	// a line that is the current event's data (takeLine).
	base    int
	scanned int   // bytes of buf[start:end] known to hold no line end
	skipLF  bool  // the last line ended with CR: a following LF belongs to it
	started bool  // a line was read (the BOM can only start the first)
	rerr    error // the error the underlying reader returned
	err     error // sticky error returned by Next

	data    []byte // data field lines, each followed by '\n'
	typ     []byte
	typStr  string
	id      []byte
	idStr   string
	pending bool // a field was seen since the last dispatched event
}

// NewSSEReader returns a reader of the events in r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: r, max: DefaultMaxLineSize, take: sseKeepData}
}

// SetMaxSize sets the largest line, and the largest data of one event, that
// Next accepts; larger ones make Next fail with ErrTooLong.
func (s *SSEReader) SetMaxSize(n int) {
	s.max = n
}

// Reset makes s read a new stream from r, forgetting all state but keeping
// its buffers and maximum size.
func (s *SSEReader) Reset(r io.Reader) {
	limit, take, buf, data, typ, id := s.max, s.take, s.buf, s.data[:0], s.typ[:0], s.id[:0]
	// Zeroing, then setting what is kept, spares the caller's frame a
	// copy of the reader (a stream's reader waits for its events on that
	// stack).
	*s = SSEReader{}
	s.r, s.max, s.take, s.buf, s.data, s.typ, s.id = r, limit, take, buf, data, typ, id
}

// Next returns the next event. At the end of the stream it returns io.EOF,
// or io.ErrUnexpectedEOF when the stream ended inside an event (a partial
// line, or fields not yet followed by the blank line that ends an event).
// An error of the underlying reader is returned wrapped. After an error,
// Next keeps returning it.
func (s *SSEReader) Next() (Event, error) {
	if s.err != nil {
		return Event{}, s.err
	}
	if cap(s.data) > sseKeepData {
		s.data = nil
	}
	s.data, s.base = s.data[:0], 0
	s.typ = s.typ[:0]
	s.pending = false
	for {
		line, err := s.readLine()
		if err != nil {
			s.err = s.endError(err)
			return Event{}, s.err
		}
		if len(line) > 0 {
			if err := s.field(line); err != nil {
				s.err = err
				return Event{}, err
			}
			continue
		}
		if ev, ok := s.dispatch(); ok {
			return ev, nil
		}
	}
}

// endError turns the error that stopped reading lines into Next's error.
func (s *SSEReader) endError(err error) error {
	if err != io.EOF {
		if errors.Is(err, ErrTooLong) {
			return err
		}
		return fmt.Errorf("sse: read: %w", err)
	}
	if s.pending || s.start < s.end {
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// dispatch ends the current event. An event without data is not dispatched
// (the SSE standard's rule); its type is forgotten.
func (s *SSEReader) dispatch() (Event, bool) {
	s.pending = false
	if len(s.data) == 0 {
		s.typ = s.typ[:0]
		return Event{}, false
	}
	if string(s.typ) != s.typStr {
		s.typStr = string(s.typ)
	}
	if string(s.id) != s.idStr {
		s.idStr = string(s.id)
	}
	return Event{Type: s.typStr, Data: s.data[:len(s.data)-1], ID: s.idStr}, true
}

// field applies one non-empty line: a comment or a "name: value" field.
func (s *SSEReader) field(line []byte) error {
	if line[0] == ':' {
		return nil
	}
	s.pending = true
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(s.data)+len(value) > s.max {
			return fmt.Errorf("%w: event data over %d bytes", ErrTooLong, s.max)
		}
		if len(s.data) == 0 && len(value) > s.take {
			s.takeLine(value)
			return nil
		}
		// A line taken over ends where its data's capacity does: this
		// append moves the data out of buf.
		s.base = 0
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
	case "event":
		s.typ = append(s.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.id = append(s.id[:0], value...)
		}
	}
	// "retry" and unknown fields are ignored.
	return nil
}

// takeLine makes value, the first data line of an event and a long one,
// the event's data without copying it: the data stays in the read buffer,
// whose next reads go after it (base) until the next event. value is a
// slice of s.buf ending before the line ending already consumed, which
// the appended '\n' overwrites.
func (s *SSEReader) takeLine(value []byte) {
	n := len(value) + 1
	s.data = append(value, '\n')[:n:n]
	s.base = s.start
}

// readLine returns the next line without its line ending. The line is valid
// until the next call. At the end of the input it returns the reader's
// error, leaving an unterminated last line in buf[start:end].
func (s *SSEReader) readLine() ([]byte, error) {
	for {
		if s.start < s.end {
			if s.skipLF {
				s.skipLF = false
				if s.buf[s.start] == '\n' {
					s.start++
					continue
				}
			}
			if line, ok := s.scanLine(); ok {
				if len(line) > s.max { // a buffer grown under a larger maximum
					return nil, fmt.Errorf("%w: line over %d bytes", ErrTooLong, s.max)
				}
				if !s.started {
					s.started = true
					line = bytes.TrimPrefix(line, utf8BOM)
				}
				return line, nil
			}
		}
		if s.rerr != nil {
			if s.end-s.start > s.max { // an unfinished last line
				return nil, fmt.Errorf("%w: line over %d bytes", ErrTooLong, s.max)
			}
			return nil, s.rerr
		}
		if err := s.fill(); err != nil {
			return nil, err
		}
	}
}

// scanLine finds the end of the line starting at buf[start], consumes it
// and returns it.
func (s *SSEReader) scanLine() ([]byte, bool) {
	rest := s.buf[s.start+s.scanned : s.end]
	n := bytes.IndexByte(rest, '\n')
	before := rest
	if n >= 0 {
		before = rest[:n]
	}
	if cr := bytes.IndexByte(before, '\r'); cr >= 0 {
		n = cr
		s.skipLF = true
	}
	if n < 0 {
		s.scanned = s.end - s.start
		return nil, false
	}
	lineEnd := s.start + s.scanned + n
	line := s.buf[s.start:lineEnd]
	s.start = lineEnd + 1
	s.scanned = 0
	return line, true
}

// fill reads more input, making room first by moving the unconsumed bytes
// to the front of the buffer or growing it.
func (s *SSEReader) fill() error {
	if s.start > s.base {
		s.end = s.base + copy(s.buf[s.base:], s.buf[s.start:s.end])
		s.start = s.base
	}
	if s.end-s.start > s.max { // buf[start:end] is one unfinished line
		return fmt.Errorf("%w: line over %d bytes", ErrTooLong, s.max)
	}
	if s.end == len(s.buf) {
		s.grow()
	}
	n, err := readSome(s.r, s.buf[s.end:])
	s.end += n
	s.rerr = err
	return nil
}

// readSome reads into p, the free end of a line reader's buffer: the
// bytes of one read, or its error; a reader that returns neither
// sseMaxEmpty times in a row fails with io.ErrNoProgress.
func readSome(r io.Reader, p []byte) (int, error) {
	for range sseMaxEmpty {
		n, err := r.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// grow makes room in a full buffer: a larger one, twice as large up to a
// line of the maximum size and sseRoom, or, while the buffer holds the
// event's data (base), a new one for the bytes after it.
func (s *SSEReader) grow() {
	unread := s.buf[s.start:s.end]
	size := 2 * len(s.buf)
	if s.base > 0 {
		size = 2 * len(unread)
	}
	buf := make([]byte, min(max(size, sseInitialBuf), s.max+1+sseRoom))
	s.start, s.end, s.base = 0, copy(buf, unread), 0
	s.buf = buf
}
