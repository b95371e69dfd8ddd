package trace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultMaxLineBytes is the longest line a Reader accepts unless told
// otherwise: a Mooncake record of a 128k-token prompt is about 2 KiB.
const DefaultMaxLineBytes = 4 << 20

// Options tune a Reader.
type Options struct {
	// Format is the trace's format; empty detects it from the first line
	// (see Detect).
	Format Format
	// MaxLineBytes caps a line's length (DefaultMaxLineBytes when 0); a
	// longer line is an error, so that a file that is not a trace cannot
	// make the reader hold it whole.
	MaxLineBytes int
}

// Reader reads a trace's records one at a time, in the file's order,
// holding one line in memory. Timestamps must not decrease: a record that
// starts before the one above it is an error naming its line (a stream
// cannot be sorted). It is not safe for concurrent use.
type Reader struct {
	name    string
	format  Format
	scan    *bufio.Scanner
	maxLine int
	closer  io.Closer
	line    int
	next    int64
	parse   func([]byte) (row, error)
	first   time.Time
	started bool
	last    time.Duration
	pending []byte // the first line, read by detection, not yet parsed
}

// row is a line parsed, its timestamp absolute in its format's terms.
type row struct {
	at            time.Time
	input, output int
	hashIDs       []int64
	fields        map[string]any
}

// Open opens the trace file at path. Close it when done.
func Open(path string, opts Options) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r, err := NewReader(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a trace from src; name is how errors name it (its path).
// It reads the first line to detect the format or the CSV's header.
func NewReader(src io.Reader, name string, opts Options) (*Reader, error) {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	scan := bufio.NewScanner(src)
	scan.Buffer(make([]byte, 0, min(64<<10, max)), max)
	r := &Reader{name: name, scan: scan, maxLine: max}
	first, err := r.readLine()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: the trace is empty", name)
	}
	if err != nil {
		return nil, err
	}
	format := opts.Format
	if format == "" {
		if format, err = Detect(name, first); err != nil {
			return nil, err
		}
	}
	r.format = format
	switch format {
	case Mooncake:
		r.parse, r.pending = parseMooncake, first
	case JSONL:
		r.parse, r.pending = parseJSONL, first
	case Azure:
		r.parse, err = r.csvParser(first, azureColumns, parseAzureTime)
	case BurstGPT:
		r.parse, err = r.csvParser(first, burstColumns, parseSeconds)
	default:
		return nil, fmt.Errorf("%s: unknown trace format %q (known: %s)", name, format, formatList())
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Format is the trace's format, given or detected.
func (r *Reader) Format() Format { return r.format }

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// Next returns the next record, or io.EOF after the last. Any other error
// names the file and line, and the field when one is wrong; the Reader is
// then done.
func (r *Reader) Next(ctx context.Context) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	line := r.pending
	r.pending = nil
	if line == nil {
		var err error
		if line, err = r.readLine(); err != nil {
			return Record{}, err
		}
	}
	rw, err := r.parse(line)
	if err != nil {
		return Record{}, fmt.Errorf("%s:%d: %w", r.name, r.line, err)
	}
	if !r.started {
		r.first, r.started = rw.at, true
	}
	start := rw.at.Sub(r.first)
	if start < r.last {
		return Record{}, fmt.Errorf("%s:%d: the timestamp is %s before the record above it: a trace must be in time order (sort it first)", r.name, r.line, r.last-start)
	}
	r.last = start
	rec := Record{Index: r.next, Start: start, InputTokens: rw.input, OutputTokens: rw.output, HashIDs: rw.hashIDs, Fields: rw.fields}
	r.next++
	return rec, nil
}

// readLine returns the next non-blank line, io.EOF at the end.
func (r *Reader) readLine() ([]byte, error) {
	for r.scan.Scan() {
		r.line++
		line := bytes.TrimSpace(r.scan.Bytes())
		if len(line) > 0 {
			return line, nil
		}
	}
	if err := r.scan.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line is longer than %d bytes: is this a trace?", r.name, r.line+1, r.maxLine)
		}
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	return nil, io.EOF
}

// Detect tells a trace's format from its name and first line: a CSV's
// header names Azure's or BurstGPT's columns; a JSON line with
// "timestamp_ms" is llmrun's JSONL, one with "input_length" Mooncake's.
func Detect(name string, firstLine []byte) (Format, error) {
	line := bytes.TrimSpace(firstLine)
	if bytes.HasPrefix(line, []byte("{")) {
		switch {
		case bytes.Contains(line, []byte(`"timestamp_ms"`)):
			return JSONL, nil
		case bytes.Contains(line, []byte(`"input_length"`)):
			return Mooncake, nil
		}
		return "", fmt.Errorf("%s:1: a JSON line with neither \"timestamp_ms\" (llmrun's jsonl) nor \"input_length\" (mooncake): name the format", name)
	}
	header := strings.ToLower(string(line))
	switch {
	case strings.HasPrefix(header, "timestamp,contexttokens,generatedtokens"):
		return Azure, nil
	case strings.HasPrefix(header, "timestamp,model,request tokens,response tokens"):
		return BurstGPT, nil
	}
	return "", fmt.Errorf("%s:1: cannot tell the trace's format (%s) from its first line: name the format (%s)", name, filepath.Ext(name), formatList())
}

// ParseFormat returns the format named name, or an error that lists the
// known ones.
func ParseFormat(name string) (Format, error) {
	for _, f := range Formats {
		if string(f) == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("%q is not a trace format (known: %s)", name, formatList())
}

func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
