// Package records is the --out jsonl=FILE and --out csv=FILE outputs: one
// line per measured request (ok or failed), streamed to a file while the
// run goes.
//
// # Fields
//
// Each JSONL line is one object with these members, in this order; the
// CSV file has a header row and the same columns (docs/outputs.md has
// examples). Those after tags are the figures of llm.Record, named and
// ordered by its record tags:
//
//	time              when the request ended, RFC 3339 in UTC, fractional
//	                  seconds to the nanosecond, trailing zeros dropped
//	scenario          the scenario's name ("" when untagged)
//	model             the model requested ("" when untagged)
//	tags              the request's other tags (group, workload, turn, --tag
//	                  pairs, the script's own): a JSON object; in CSV one
//	                  column of key=value pairs sorted by key, joined by ";"
//	ok                true when the request succeeded
//	status            the HTTP status, 0 when there was no response
//	error_class       the failure's class (timeout, http_5xx, ...); left out
//	                  of JSONL lines when ok, empty in CSV
//	ttft_ms           time to first token, milliseconds
//	ttfo_ms           time to first output (content or reasoning), milliseconds
//	tpot_ms           time per output token after the first, milliseconds
//	e2e_ms            end-to-end latency, milliseconds
//	itl_mean_ms       mean inter-token latency of the request, milliseconds
//	itl_p99_ms        99th percentile inter-token latency of the request
//	input_tokens      prompt tokens (the server's usage)
//	output_tokens     output tokens
//	cached_tokens     prompt tokens served from the server's prefix cache
//	reasoning_tokens  the reasoning share of output_tokens
//	image_count       images the request sent
//	image_bytes       their bytes (each data URL's decoded length)
//	image_pixels      their pixels (width × height of each)
//
// Times and tokens are 0 where not measured: a failed request has only
// e2e_ms, and the ITL figures need two token-bearing chunks. Numbers are
// written in full precision; a non-finite time (none is expected) is null
// in JSONL and NaN or ±Inf in CSV.
//
// # Memory and losses
//
// AddRequest never waits for the disk: it copies the record into a queue
// of at most DefaultQueue records, which one writer goroutine encodes into
// a buffered file, flushed at least every second and at Finish. Records
// that find the queue full are dropped and counted. A write error (a full
// disk) stops the writing: the records not yet flushed and every later
// one are dropped and counted with the error, which the report carries.
package records

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// DefaultQueue is the most records queued for writing.
const DefaultQueue = 65536

// flushInterval is the most time a written line stays in the buffer.
const flushInterval = time.Second

// bufferSize is the size of the file's write buffer.
const bufferSize = 64 << 10

// gaveUp is why records are dropped when Finish's context ends before
// they are written.
const gaveUp = "not written: Finish gave up"

// Format is a file format of the records.
type Format int

// The formats.
const (
	JSONL Format = iota
	CSV
)

// String is the format's --out name.
func (f Format) String() string {
	if f == CSV {
		return "csv"
	}
	return "jsonl"
}

// encoder turns records into the lines of a format.
type encoder interface {
	// header appends what precedes the records (CSV's header row) to dst.
	header(dst []byte) []byte
	// record appends r's line, newline included, to dst.
	record(dst []byte, r *llm.Record) []byte
}

// newEncoder returns an encoder of format f.
func newEncoder(f Format) encoder {
	if f == CSV {
		return newCSVEncoder()
	}
	return newJSONLEncoder()
}

// Output writes every request record to a file. New makes one; Start,
// then AddRequest from any number of goroutines, then Finish.
type Output struct {
	format Format
	path   string
	q      *queue

	// Set by Start.
	startErr error
	w        *fileWriter
	// stop asks the writer to write what is queued and end; cancel ends
	// it early; it closes done when it ends.
	stop   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	finishOnce sync.Once
	report     summary.OutputReport
}

var _ output.Output = (*Output)(nil)

// New returns an output that writes the records in format f to the file
// at path, which Start creates.
func New(f Format, path string) (*Output, error) {
	if path == "" {
		return nil, fmt.Errorf("%s: want a file name, as in --out %s=requests.%s", f, f, f)
	}
	return newOutput(f, path, DefaultQueue), nil
}

// newOutput returns an output whose queue holds at most queue records.
func newOutput(f Format, path string, queue int) *Output {
	full := fmt.Sprintf("queue full (%s): writing %s did not keep up", textfmt.Count(queue, "record"), path)
	return &Output{format: f, path: path, q: newQueue(queue, full)}
}

// Describe names the output: "jsonl requests.jsonl".
func (o *Output) Describe() string { return o.format.String() + " " + o.path }

// Start creates (or truncates) the file, writes the CSV header, and starts
// the writer, under a context that keeps ctx's values but not its end
// (Finish ends it); it fails, naming the file, when the file cannot be
// written. A write error later is told at once through run.Warn.
func (o *Output) Start(ctx context.Context, run output.Run) error {
	f, err := os.Create(o.path)
	if err != nil {
		o.startErr = fmt.Errorf("cannot create the file: %w", err)
		return o.startErr
	}
	w := &fileWriter{f: f, bw: bufio.NewWriterSize(f, bufferSize), enc: newEncoder(o.format), q: o.q, flushed: time.Now(),
		describe: o.Describe(), warn: run.Warn}
	w.line = w.enc.header(w.line)
	if _, err = w.bw.Write(w.line); err == nil {
		err = w.bw.Flush()
	}
	if err != nil {
		f.Close()
		o.startErr = fmt.Errorf("cannot write the file: %w", err)
		return o.startErr
	}
	o.w = w
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o.stop, o.cancel, o.done = make(chan struct{}), cancel, make(chan struct{})
	go func() {
		defer close(o.done)
		w.run(wctx, o.stop)
	}()
	return nil
}

// AddRequest queues a copy of r (the caller may reuse it), or drops and
// counts it when the queue is full or writing failed. It never waits for
// the disk.
func (o *Output) AddRequest(r *llm.Record) {
	if r != nil {
		o.q.push(r)
	}
}

// Finish writes what is queued, until ctx ends, closes the file, and
// reports the records written and dropped. It reports also when Start
// failed or was never called; a second call returns the first's report.
func (o *Output) Finish(ctx context.Context, _ *summary.Summary) summary.OutputReport {
	o.finishOnce.Do(func() { o.report = o.finish(ctx) })
	return o.report
}

// finish is Finish, once.
func (o *Output) finish(ctx context.Context) summary.OutputReport {
	var reason string
	var errs []error
	switch {
	case o.done != nil:
		stop := context.AfterFunc(ctx, o.cancel)
		close(o.stop)
		<-o.done
		stop()
		o.cancel()
		reason = gaveUp
		if err := o.w.f.Close(); err != nil && o.w.failure == "" {
			errs = append(errs, fmt.Errorf("closing %s: %w", o.path, err))
		}
		if o.w.failure != "" {
			errs = append(errs, errors.New(o.w.failure))
		}
	case o.startErr != nil:
		reason = "not written: the output did not start: " + o.startErr.Error()
		errs = append(errs, o.startErr)
	default:
		reason = "not written: the output was not started"
	}
	rep := o.q.close(reason)
	rep.Output = o.Describe()
	if err := errors.Join(errs...); err != nil {
		rep.Err = err.Error()
	}
	return rep
}

// fileWriter is the writer goroutine's state: it takes the queued
// records, encodes them into the file's buffer, and accounts for them
// when the buffer reaches the file.
type fileWriter struct {
	f   *os.File
	bw  *bufio.Writer
	enc encoder
	q   *queue
	// line is the reused encoding buffer; chunks the reused list of
	// chunks taken.
	line   []byte
	chunks [][]llm.Record
	// unflushed counts the records in bw, not yet in the file; flushed is
	// when bw was last flushed.
	unflushed int
	flushed   time.Time
	// failure is why writing stopped, "" while it works.
	failure string
	// describe names the output in a warning; warn, when not nil, is
	// told of a write error as it happens.
	describe string
	warn     func(string)
}

// run writes the queued records as they come and flushes every
// flushInterval, until stop closes; then it writes what is left and
// flushes. When ctx ends it stops at once, dropping what is left.
func (w *fileWriter) run(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.q.ready:
			w.drain(ctx)
		case <-t.C:
			w.flush()
		case <-stop:
			w.drain(ctx)
			w.flush()
			return
		}
	}
}

// drain writes every queued record, or drops it once writing failed or
// ctx ended; it flushes on the way when the last flush is flushInterval
// old, so that lines reach the file also while records keep coming.
func (w *fileWriter) drain(ctx context.Context) {
	for {
		w.chunks = w.q.take(w.chunks[:0])
		if len(w.chunks) == 0 {
			return
		}
		for i, c := range w.chunks {
			if err := ctx.Err(); err != nil && w.failure == "" {
				w.halt(fmt.Sprintf("%s: %v", gaveUp, err))
			}
			for j := range c {
				w.write(&c[j])
			}
			w.q.recycle(c)
			w.chunks[i] = nil
			if time.Since(w.flushed) >= flushInterval {
				w.flush()
			}
		}
	}
}

// write encodes r into the buffer, flushing first when it does not fit,
// so that the buffer never flushes on its own and every record is
// accounted for exactly.
func (w *fileWriter) write(r *llm.Record) {
	if w.failure != "" {
		w.drop(1)
		return
	}
	w.line = w.enc.record(w.line[:0], r)
	if w.bw.Buffered() > 0 && len(w.line) > w.bw.Available() {
		if !w.flush() {
			w.drop(1)
			return
		}
	}
	// A line longer than the buffer goes straight to the file.
	if _, err := w.bw.Write(w.line); err != nil {
		w.unflushed++
		w.writeFailed(err)
		return
	}
	w.unflushed++
	if w.bw.Buffered() == 0 {
		w.q.account.Wrote(w.unflushed)
		w.unflushed = 0
	}
}

// flush writes the buffer to the file and reports whether it succeeded.
func (w *fileWriter) flush() bool {
	if w.failure != "" {
		return false
	}
	w.flushed = time.Now()
	if err := w.bw.Flush(); err != nil {
		w.writeFailed(err)
		return false
	}
	w.q.account.Wrote(w.unflushed)
	w.unflushed = 0
	return true
}

// writeFailed stops the writing after a write error, and tells it at
// once: the run goes on, and its end may be hours away.
func (w *fileWriter) writeFailed(err error) {
	w.halt(fmt.Sprintf("write error: %v", err))
	if w.warn != nil {
		w.warn(fmt.Sprintf("output %s: %s; its later records are dropped and counted, the run goes on", w.describe, w.failure))
	}
}

// halt stops the writing: the records in the buffer, and every later one,
// are dropped for reason.
func (w *fileWriter) halt(reason string) {
	w.failure = reason
	w.q.fail(reason)
	w.drop(w.unflushed)
	w.unflushed = 0
}

// drop counts n records dropped because writing stopped.
func (w *fileWriter) drop(n int) {
	w.q.account.Drop(n, w.failure)
}
