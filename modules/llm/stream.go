package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// streamUnit is one token-bearing unit of a streamed response as its
// framing delivers it: an SSE event (typ its "event" field), or an NDJSON
// line (typ ""). data is valid until the next unit is read.
type streamUnit struct {
	typ  string
	data []byte
}

// unitSource is the framing readStream reads a stream's units from: an
// SSEReader or an NDJSONReader.
type unitSource interface {
	// nextUnit returns the next unit; at the end of the stream an error
	// that truncated tells apart (io.EOF, io.ErrUnexpectedEOF).
	nextUnit() (streamUnit, error)
	// unitName names the units, plural, for error messages.
	unitName() string
}

func (s *SSEReader) nextUnit() (streamUnit, error) {
	ev, err := s.Next()
	return streamUnit{typ: ev.Type, data: ev.Data}, err
}

func (s *SSEReader) unitName() string { return "events" }

func (n *NDJSONReader) nextUnit() (streamUnit, error) {
	line, err := n.Next()
	return streamUnit{data: line}, err
}

func (n *NDJSONReader) unitName() string { return "lines" }

// streamFormat is what one protocol's stream adds to readStream, the loop
// every streamed response is read with: what its units mean, and how a
// stream that stops before its end is judged. A format keeps its state
// (the last decoded unit, counts seen so far) in itself; one without
// state is a value, which an interface holds without allocating. Every
// format is listed in readUnit and endOf, which call it.
type streamFormat interface {
	// unit reads unit n (from 0), which arrived at now (since the
	// response's start), into res: it ticks rr.tc for the tokens the unit
	// carries and keeps its text in rr.text when rr.keepText. done reports
	// that the stream ended well with it, res then complete; an error is
	// the response's failure.
	unit(rr *responseReader, u streamUnit, n int, now time.Duration, res *Result) (done bool, err error)
	// end judges a stream that stopped with err, io.EOF or
	// io.ErrUnexpectedEOF, after n units: nil, res then complete, when it
	// ended well, its failure (ErrCut) otherwise.
	end(rr *responseReader, err error, n int, res *Result) error
}

// readStream reads a streamed response from src in format f, timing each
// unit as soon as its bytes are read (rr.tc, from start). A failure is
// returned as a *failure; res.E2E is the time until the end of the
// stream, or until the failure.
//
// What it does before and after the loop is in functions of their own,
// so that its frame, on the stack while it waits for each unit, stays
// small.
func (rr *responseReader) readStream(src unitSource, f streamFormat, start time.Time, keepText bool, res *Result) error {
	rr.beginStream(start, keepText, res)
	for n := 0; ; n++ {
		u, err := src.nextUnit()
		now := rr.tc.now(res, err)
		if err != nil {
			return rr.endStream(src, f, err, n, res)
		}
		if done, err := readUnit(f, rr, u, n, now, res); done || err != nil {
			return err
		}
	}
}

// beginStream readies rr for a stream that started at start.
//
//go:noinline
func (rr *responseReader) beginStream(start time.Time, keepText bool, res *Result) {
	rr.begin()
	rr.keepText, rr.tc = keepText, rr.clock(start)
	res.Stream = true
}

// endStream ends a stream in format f whose reading from src stopped with
// err after n units: as f judges it at the end of the stream, as a read
// failure otherwise.
//
//go:noinline
func (rr *responseReader) endStream(src unitSource, f streamFormat, err error, n int, res *Result) error {
	if truncated(err) {
		return endOf(f, rr, err, n, res)
	}
	if t, ok := f.(*tritonStream); ok {
		n = t.events // Triton counts only the events with data
	}
	return &failure{readClass(err), fmt.Errorf("reading the stream after %d %s: %w", n, src.unitName(), err)}
}

// streamErrorFailure is the failure of a stream one of whose units is an
// error object, raw.
func streamErrorFailure(raw json.RawMessage) error {
	return &failure{ErrStreamError, fmt.Errorf("error in the stream: %s", apiErrorMessage(raw))}
}

// responseErrorFailure is the failure of a whole response that is an
// error object, raw.
func responseErrorFailure(raw json.RawMessage) error {
	return &failure{ErrStreamError, fmt.Errorf("error in the response: %s", apiErrorMessage(raw))}
}

// readUnit calls f.unit through f's concrete type. A call through the
// interface would make res escape, the compiler unable to tell that no
// format keeps it: every stream's Result would be allocated, even one on
// its caller's stack.
func readUnit(f streamFormat, rr *responseReader, u streamUnit, n int, now time.Duration, res *Result) (bool, error) {
	switch f := f.(type) {
	case openaiStream:
		return f.unit(rr, u, n, now, res)
	case *anthropicStream:
		return f.unit(rr, u, n, now, res)
	case *tgiStream:
		return f.unit(rr, u, n, now, res)
	case *tritonStream:
		return f.unit(rr, u, n, now, res)
	case *ollamaStream:
		return f.unit(rr, u, n, now, res)
	case *responsesStream:
		return f.unit(rr, u, n, now, res)
	}
	panic(fmt.Sprintf("llm: stream format %T missing from readUnit", f))
}

// endOf calls f.end through f's concrete type, as readUnit calls f.unit.
func endOf(f streamFormat, rr *responseReader, err error, n int, res *Result) error {
	switch f := f.(type) {
	case openaiStream:
		return f.end(rr, err, n, res)
	case *anthropicStream:
		return f.end(rr, err, n, res)
	case *tgiStream:
		return f.end(rr, err, n, res)
	case *tritonStream:
		return f.end(rr, err, n, res)
	case *ollamaStream:
		return f.end(rr, err, n, res)
	case *responsesStream:
		return f.end(rr, err, n, res)
	}
	panic(fmt.Sprintf("llm: stream format %T missing from endOf", f))
}

// sseReader returns rr's SSE reader, reading body. (Resetting it takes a
// frame of its own, not one on the stack while the stream is read.)
//
//go:noinline
func (rr *responseReader) sseReader(body io.Reader) *SSEReader {
	rr.sse.Reset(body)
	return rr.sse
}

// ndjsonReader returns rr's NDJSON reader, made on first use, reading
// body.
//
//go:noinline
func (rr *responseReader) ndjsonReader(body io.Reader) *NDJSONReader {
	if rr.nd == nil {
		rr.nd = NewNDJSONReader(nil)
	}
	rr.nd.Reset(body)
	return rr.nd
}

// keepTextIn sets res.Text to the text kept, when it is kept.
func (rr *responseReader) keepTextIn(res *Result) {
	if rr.keepText {
		res.Text = string(rr.text)
	}
}

// appendKept appends raw, a JSON string already checked, to the text kept.
func (rr *responseReader) appendKept(raw []byte) {
	s, _ := jsonString(raw)
	rr.text = rr.bound(append(rr.text, s...))
}
