package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/data/trace"
	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// TraceReplay starts one iteration per record of a trace file, each at
// its record's timestamp (an offset from the replayed window's start)
// divided by Speed: the trace's own clock, an open model as the
// arrival-rate executors are, with their lag and drop accounting. The
// iteration gets its record (TraceRecord).
type TraceReplay struct {
	arrivalFields
	// Trace is the trace file's path, as the script names it;
	// OpenTrace resolves it.
	Trace string `json:"trace"`
	// Format is the trace's format (trace.Formats); empty detects it.
	Format string `json:"format"`
	// Speed divides the trace's gaps (default 1; 2 replays twice as fast).
	Speed *float64 `json:"speed"`
	// Window is the part of the trace replayed, in the trace's time.
	Window *TraceWindow `json:"window"`
	// Limit, when set, replays at most that many records of the window.
	Limit *int64 `json:"limit"`

	// path is Trace resolved; scan what the first pass over it found.
	path string
	scan *traceScan
}

// TraceWindow is the part of a trace replayed: the records from From
// (default 0, the trace's first record) for Duration (default: to the
// end), both in the trace's own time.
type TraceWindow struct {
	From     Duration `json:"from"`
	Duration Duration `json:"duration"`
}

// traceScan is what the first pass over a trace found: the records of the
// whole plan's window (and limit), and the offset of the last one from
// the window's start, in the trace's time.
type traceScan struct {
	records int64
	last    time.Duration
}

func (c *TraceReplay) speed() float64 {
	if c.Speed == nil {
		return 1
	}
	return *c.Speed
}

func (c *TraceReplay) from() time.Duration {
	if c.Window == nil {
		return 0
	}
	return c.Window.From.D
}

// until is the window's end in the trace's time; false when it has none.
func (c *TraceReplay) until() (time.Duration, bool) {
	if c.Window == nil || !c.Window.Duration.Set {
		return 0, false
	}
	return c.Window.From.D + c.Window.Duration.D, true
}

// Validate implements Config. It does not read the trace: OpenTrace does.
func (c *TraceReplay) Validate() error {
	if c.Trace == "" {
		return &FieldError{Field: "trace", Err: errors.New("is required: the trace file's path")}
	}
	if c.Format != "" {
		if _, err := trace.ParseFormat(c.Format); err != nil {
			return &FieldError{Field: "format", Err: err}
		}
	}
	if s := c.speed(); !(s > 0) || math.IsInf(s, 0) {
		return &FieldError{Field: "speed", Err: fmt.Errorf("must be a positive number (2 replays twice as fast), got %v", s)}
	}
	if c.Window != nil {
		if c.Window.From.D < 0 {
			return &FieldError{Field: "window.from", Err: fmt.Errorf("must not be negative, got %s", c.Window.From.D)}
		}
		if c.Window.Duration.Set && c.Window.Duration.D <= 0 {
			return &FieldError{Field: "window.duration", Err: fmt.Errorf("must be positive, got %s", c.Window.Duration.D)}
		}
		if err := c.checkScaled(c.Window.Duration.D, "the window"); err != nil {
			return err
		}
	}
	if c.Limit != nil && *c.Limit < 1 {
		return &FieldError{Field: "limit", Err: fmt.Errorf("must be at least 1, got %d", *c.Limit)}
	}
	for field, set := range map[string]bool{"timeUnit": c.TimeUnit.Set, "arrival": c.Arrival != "", "burstiness": c.Burstiness != nil} {
		if set {
			return &FieldError{Field: field, Err: errors.New("does not apply to trace-replay: the trace's timestamps say when iterations start")}
		}
	}
	return c.arrivalFields.validate()
}

// TraceFile is a Config that reads a file the script names: the engine
// resolves its path and has it read before the run.
type TraceFile interface {
	// OpenTrace resolves the trace's path with resolve (who names the
	// field, for its messages) and reads the trace once, checking every
	// record of the window and counting them, so that a bad line fails
	// the run before it starts and the plan is known. The error names the
	// file and line.
	OpenTrace(ctx context.Context, resolve func(who, path string) (string, error)) error
}

// OpenTrace implements TraceFile: one pass over the trace's window,
// which costs a read of it (about a second per million records) and
// holds one line at a time.
func (c *TraceReplay) OpenTrace(ctx context.Context, resolve func(who, path string) (string, error)) error {
	path, err := resolve("trace-replay's trace", c.Trace)
	if err != nil {
		return err
	}
	c.path = path
	recs, err := c.open()
	if err != nil {
		return err
	}
	defer recs.close()
	scan := &traceScan{}
	for {
		rec, ok, err := recs.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		scan.records++
		scan.last = rec.Start - c.from()
	}
	if scan.records == 0 {
		return fmt.Errorf("%s: no record in the window replayed (%s)", path, c.describeWindow())
	}
	if err := c.checkScaled(scan.last, "the trace's records"); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	c.scan = scan
	return nil
}

// open opens the trace at the window's first record.
func (c *TraceReplay) open() (*windowReader, error) {
	r, err := trace.Open(c.path, trace.Options{Format: trace.Format(c.Format)})
	if err != nil {
		return nil, err
	}
	w := &windowReader{r: r, from: c.from(), limit: -1}
	w.until, w.bounded = c.until()
	if c.Limit != nil {
		w.limit = *c.Limit
	}
	return w, nil
}

// windowReader reads the records of a trace's window, up to the limit.
type windowReader struct {
	r       *trace.Reader
	from    time.Duration
	until   time.Duration
	bounded bool  // until is set
	limit   int64 // records left to read, -1 for no limit
}

// next returns the window's next record, false after its last.
func (w *windowReader) next(ctx context.Context) (trace.Record, bool, error) {
	for w.limit != 0 {
		rec, err := w.r.Next(ctx)
		if err == io.EOF {
			return trace.Record{}, false, nil
		}
		if err != nil {
			return trace.Record{}, false, err
		}
		if rec.Start < w.from {
			continue
		}
		if w.bounded && rec.Start >= w.until {
			w.limit = 0
			break
		}
		if w.limit > 0 {
			w.limit--
		}
		return rec, true, nil
	}
	return trace.Record{}, false, nil
}

func (w *windowReader) close() error { return w.r.Close() }

// describeWindow says which records are replayed.
func (c *TraceReplay) describeWindow() string {
	var b strings.Builder
	b.WriteString("from ")
	b.WriteString(c.from().String())
	if until, ok := c.until(); ok {
		fmt.Fprintf(&b, " to %s", until)
	} else {
		b.WriteString(" to the end")
	}
	if c.Limit != nil {
		fmt.Fprintf(&b, ", at most %s", textfmt.Count(*c.Limit, "record"))
	}
	return b.String()
}

// TraceEndSlack is how long after its last record's start a replay may
// still start iterations that run late: a record the scheduling loop
// reaches later than that is dropped (dropped_iterations, cause ended).
const TraceEndSlack = time.Second

// duration is how long the replay starts iterations: until the last
// record's start at the speed, plus TraceEndSlack, or the window's length
// at the speed when that is longer. It ends sooner, once every record
// has started and ended.
func (c *TraceReplay) duration() time.Duration {
	if c.scan == nil {
		return 0
	}
	d := c.scale(c.scan.last) + TraceEndSlack
	if c.Window != nil && c.Window.Duration.Set {
		d = max(d, c.scale(c.Window.Duration.D))
	}
	return d
}

// maxReplay is the longest a replay may last: a bound well inside what a
// time.Duration holds, so that scaling cannot wrap around.
const maxReplay = 100 * 365 * 24 * time.Hour

// checkScaled refuses a speed at which what, d of the trace's time,
// would last past maxReplay.
func (c *TraceReplay) checkScaled(d time.Duration, what string) error {
	if float64(d)/c.speed() <= float64(maxReplay) {
		return nil
	}
	// 1% above the least speed that fits, so that %.3g's rounding stays
	// above it too.
	least := float64(d) / float64(maxReplay) * 1.01
	return &FieldError{Field: "speed", Err: fmt.Errorf("%v replays %s (%s of the trace) over more than 100 years: raise speed to %.3g or more, or replay a shorter window", c.speed(), what, d, least)}
}

// scale turns a span of the trace's time into the scenario's.
func (c *TraceReplay) scale(d time.Duration) time.Duration {
	return time.Duration(math.Round(float64(d) / c.speed()))
}

// records is how many records this part replays.
func (c *TraceReplay) records() int64 {
	if c.scan == nil {
		return 0
	}
	return c.part.Scale(c.scan.records)
}

// MaxDuration implements Config.
func (c *TraceReplay) MaxDuration() time.Duration { return c.duration() + c.graceful() }

// Plan implements Config: the replay starts its records over its
// duration, and ends once they have ended.
func (c *TraceReplay) Plan() Plan { return Plan{Duration: c.duration(), Iterations: c.records()} }

// Describe implements Config.
func (c *TraceReplay) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s of the trace %s (%s) over %s", textfmt.Count(c.records(), "record"), c.Trace, c.describeWindow(), c.duration())
	if c.speed() != 1 {
		fmt.Fprintf(&b, " at %s× speed", num(c.speed()))
	}
	if c.MaxConcurrency != nil {
		fmt.Fprintf(&b, ", at most %d in flight", *c.MaxConcurrency)
	}
	fmt.Fprintf(&b, " (preAllocatedVUs %d, maxVUs %d, gracefulStop %s)", c.PreAllocatedVUs(), c.MaxVUs(), c.graceful())
	return b.String()
}

// Segment implements Config: the part replays the records of the window
// it owns (record i of the window goes to the part that owns arrival i),
// so that the parts replay each record exactly once.
func (c *TraceReplay) Segment(p segment.Part) Config {
	out := *c
	out.arrivalFields = c.arrivalFields.segment(p)
	return &out
}

// NewExecutor implements Config. A configuration whose trace was not
// opened (OpenTrace) replays nothing.
func (c *TraceReplay) NewExecutor(uint64) Executor {
	return arrivalRate{f: &c.arrivalFields, end: c.duration(), limit: c.records(), schedule: func(context.Context) (arrivals, error) {
		if c.scan == nil {
			return nil, fmt.Errorf("trace-replay: the trace %s was not read before the run", c.Trace)
		}
		recs, err := c.open()
		if err != nil {
			return nil, err
		}
		return &traceArrivals{recs: recs, part: c.part, scale: c.scale, from: c.from(), total: c.scan.records}, nil
	}}
}

// traceArrivals are the planned starts of a trace's records: the arrivals
// of a TraceReplay.
type traceArrivals struct {
	recs  *windowReader
	part  segment.Part
	scale func(time.Duration) time.Duration
	from  time.Duration
	// index is the number of the window's records read; total how many
	// the window has (the first pass counted them).
	index, total int64
	last         trace.Record // the record of the start Next returned last
	pending      *indexed     // read past by SkipTo, for Next
	err          error
	done         bool
}

// Next implements arrivals.
func (a *traceArrivals) Next() (time.Duration, bool) {
	for !a.done {
		rec, ok := a.read()
		if !ok {
			break
		}
		if a.part.Owns(rec.index) {
			a.last = rec.Record
			return a.offset(rec.Start), true
		}
	}
	return 0, false
}

// indexed is a record with its index in the window.
type indexed struct {
	trace.Record
	index int64
}

// read reads the window's next record; false at its end or on an error
// (the trace changed since the first pass), which close returns.
func (a *traceArrivals) read() (indexed, bool) {
	if p := a.pending; p != nil {
		a.pending = nil
		return *p, true
	}
	rec, ok, err := a.recs.next(context.Background())
	if err != nil || !ok {
		a.err, a.done = err, true
		return indexed{}, false
	}
	a.index++
	return indexed{rec, a.index - 1}, true
}

// offset is when a record starting at start in the trace's time starts
// in the scenario's.
func (a *traceArrivals) offset(start time.Duration) time.Duration {
	return a.scale(start - a.from)
}

// Drain implements arrivals: the records of the part not read yet, as the
// first pass counted them, without reading them.
func (a *traceArrivals) Drain() int {
	from := a.index
	if a.pending != nil {
		from = a.pending.index
	}
	n := a.part.Count(from, max(from, a.total))
	a.done = true
	return int(n)
}

// SkipTo implements arrivals: it reads past the records that start at or
// before offset, the first of the others kept for Next.
func (a *traceArrivals) SkipTo(offset time.Duration) int {
	n := 0
	for !a.done {
		rec, ok := a.read()
		if !ok {
			break
		}
		if a.offset(rec.Start) > offset {
			a.pending = &rec
			break
		}
		if a.part.Owns(rec.index) {
			n++
		}
	}
	return n
}

// iteration implements arrivals: the iteration gets its record.
func (a *traceArrivals) iteration(iter context.Context) context.Context {
	return context.WithValue(iter, recordKey{}, a.last)
}

// close implements arrivals.
func (a *traceArrivals) close() error {
	return errors.Join(a.err, a.recs.close())
}

type recordKey struct{}

// TraceRecord returns the trace record the iteration running under ctx
// replays; false when its scenario is not a trace replay.
func TraceRecord(ctx context.Context) (trace.Record, bool) {
	rec, ok := ctx.Value(recordKey{}).(trace.Record)
	return rec, ok
}
