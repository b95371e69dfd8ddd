package dashboard

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// RecordFormat names a recording in its first line, with its version
// (Version, the events' shape).
const RecordFormat = "llmrun-dashboard"

// MaxRecordSize bounds a recording's events before compression; on
// reaching it the recording stops, the file kept valid.
const MaxRecordSize = 256 << 20

// recordFlushEvery is how often at most the compressor's pending output
// is written out, so that a run killed (no Close) leaves a recording
// readable up to its last seconds: gzip holds some minutes of events
// otherwise. Flushing each event would make the file half as large
// again.
const recordFlushEvery = 5 * time.Second

// recordHeader is a recording's first line.
type recordHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

// Recorder writes the dashboard's events to a file, gzip-compressed, one
// JSON event per line after a line naming the format and its version.
type Recorder struct {
	path    string
	file    *os.File
	zip     *gzip.Writer
	limit   int64
	written int64
	// flushed is when the compressor's output was last written out.
	flushed time.Time
	// Full says the limit was reached and later events left out.
	full bool
	err  error
}

// CreateRecorder creates path for a recording of at most limit bytes of
// events (MaxRecordSize when limit is 0).
func CreateRecorder(path string, limit int64) (*Recorder, error) {
	if limit <= 0 {
		limit = MaxRecordSize
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("dashboard recording: %w", err)
	}
	r := &Recorder{path: path, file: f, zip: gzip.NewWriter(f), limit: limit, flushed: time.Now()}
	header, _ := json.Marshal(recordHeader{Format: RecordFormat, Version: Version})
	if _, err := r.zip.Write(append(header, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("dashboard recording %s: %w", path, err)
	}
	return r, nil
}

// Record appends one encoded event; once the limit is reached or a
// write failed, it records nothing more.
func (r *Recorder) Record(event []byte) {
	if r.full || r.err != nil {
		return
	}
	if r.written+int64(len(event))+1 > r.limit {
		r.full = true
		return
	}
	if _, err := r.zip.Write(append(event[:len(event):len(event)], '\n')); err != nil {
		r.err = err
		return
	}
	r.written += int64(len(event)) + 1
	if now := time.Now(); now.Sub(r.flushed) >= recordFlushEvery {
		r.flushed = now
		r.err = r.zip.Flush()
	}
}

// Close flushes and closes the file. The warning, when not empty, says
// why the recording lacks events (its limit or a failed write).
func (r *Recorder) Close() (warning string, err error) {
	zerr := r.zip.Close()
	ferr := r.file.Close()
	switch {
	case r.err != nil:
		warning = fmt.Sprintf("dashboard recording %s stopped: %v", r.path, r.err)
	case r.full:
		warning = fmt.Sprintf("dashboard recording %s stopped at its limit of %d bytes of events", r.path, r.limit)
	}
	if err := errors.Join(zerr, ferr); err != nil {
		return warning, fmt.Errorf("dashboard recording %s: %w", r.path, err)
	}
	return warning, nil
}

// ReadRecording reads a recording's events, each checked to be an event
// of this Version no larger than MaxEventSize. An error names the file
// and the line; with it come the events before that line, so that a
// recording cut short (an error that is io.ErrUnexpectedEOF: a run
// killed) can still be shown up to the cut.
func ReadRecording(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dashboard recording: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip-compressed dashboard recording: %w", path, err)
	}
	lines := bufio.NewReaderSize(zr, 4096)
	var events []Event
	var total int64
	for line := 1; ; line++ {
		b, err := readLine(lines, MaxEventSize)
		if errors.Is(err, io.EOF) && b == nil {
			if line == 1 {
				return nil, fmt.Errorf("%s: empty: no line naming the format", path)
			}
			return events, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return events, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if total += int64(len(b)); total > MaxRecordSize {
			return events, fmt.Errorf("%s:%d: more than %d bytes of events", path, line, MaxRecordSize)
		}
		if line == 1 {
			var h recordHeader
			if json.Unmarshal(b, &h) != nil || h.Format != RecordFormat {
				return nil, fmt.Errorf("%s:1: not a dashboard recording: the first line must be {\"format\":%q,\"version\":N}", path, RecordFormat)
			}
			if h.Version != Version {
				return nil, fmt.Errorf("%s:1: recording version %d, this llmrun reads version %d", path, h.Version, Version)
			}
			continue
		}
		var ev Event
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			return events, fmt.Errorf("%s:%d: not a dashboard event: %w", path, line, err)
		}
		if ev.V != Version {
			return events, fmt.Errorf("%s:%d: event version %d, this llmrun reads version %d", path, line, ev.V, Version)
		}
		events = append(events, ev)
	}
}

// readLine reads one line without its newline, failing on one longer
// than max rather than holding it. It returns io.EOF with a nil line at
// the end, and an error of a truncated stream as it comes.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max+1 {
			return nil, fmt.Errorf("a line longer than %d bytes", max)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) == 0:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("the last line has no newline: the recording was cut short (%w)", io.ErrUnexpectedEOF)
		default:
			return nil, fmt.Errorf("reading: %w", err)
		}
	}
}
