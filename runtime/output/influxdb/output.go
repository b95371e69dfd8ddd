package influxdb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	http2 "github.com/influxdata/influxdb-client-go/v2/api/http"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/output"
	"github.com/llmrun/llmrun/runtime/summary"
)

// startTimeout bounds Start's write of the llm_run_start point.
const startTimeout = 10 * time.Second

// Output writes a run to InfluxDB. New makes one; Start, then AddRequest
// from any number of goroutines, then Finish.
type Output struct {
	cfg Config
	buf *buffer
	agg *aggregates

	// Set by Start.
	run      output.Run
	tags     runTags
	client   influxdb2.Client
	startErr error
	// stopTicker ends the interval ticker, which closes tickerDone after
	// writing the last, partial interval.
	stopTicker, tickerDone chan struct{}
	// stopWriter asks the writer to send what is queued and end;
	// cancelWriter ends it at once; it closes writerDone when it ends.
	stopWriter   chan struct{}
	cancelWriter context.CancelFunc
	writerDone   chan struct{}

	finishOnce sync.Once
	report     summary.OutputReport
}

var _ output.Output = (*Output)(nil)

// New returns an output that writes as cfg says; zero or out-of-range
// sizes and durations take their defaults, and Batch is at most Buffer.
func New(cfg Config) *Output {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Buffer < 1 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.Batch < 1 {
		cfg.Batch = DefaultBatch
	}
	cfg.Batch = min(cfg.Batch, cfg.Buffer)
	if cfg.FlushTimeout <= 0 {
		cfg.FlushTimeout = DefaultFlushTimeout
	}
	return &Output{cfg: cfg, buf: newBuffer(cfg.Buffer, cfg.Batch), agg: newAggregates()}
}

// Describe names the output, without its token.
func (o *Output) Describe() string { return o.cfg.String() }

// Start checks the server, the bucket and the token by writing the
// llm_run_start point (within ctx and startTimeout), then starts the
// writer and the interval ticker. Its errors say what to fix.
func (o *Output) Start(ctx context.Context, run output.Run) error {
	o.run, o.tags = run, newRunTags(run)
	o.client = o.cfg.NewClient()
	api := o.client.WriteAPIBlocking(o.cfg.Org, o.cfg.Bucket)
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	err := api.WritePoint(sctx, startPoint(run, o.tags))
	cancel()
	if err != nil {
		o.startErr = o.startError(ctx, err)
		return o.startErr
	}
	o.buf.account.Wrote(1)

	wctx, cancelWriter := context.WithCancel(context.WithoutCancel(ctx))
	o.stopWriter, o.cancelWriter, o.writerDone = make(chan struct{}), cancelWriter, make(chan struct{})
	w := newWriter(api, o.buf, o.tags, o.cfg.secrets())
	go func() {
		defer close(o.writerDone)
		w.run(wctx, o.stopWriter)
	}()

	o.stopTicker, o.tickerDone = make(chan struct{}), make(chan struct{})
	go o.tick(time.Now())
	return nil
}

// startError is Start's failure: what went wrong and what to do, with
// the client's error as its cause.
type startError struct {
	msg   string
	cause error
}

// Error is the message, which names the URL and what to fix.
func (e *startError) Error() string { return e.msg }

// Unwrap returns the client's error.
func (e *startError) Unwrap() error { return e.cause }

// startError explains the failure of Start's first write, without the
// token in any form and with the server's control characters escaped.
func (o *Output) startError(ctx context.Context, err error) error {
	url := o.cfg.URL
	var he *http2.Error
	status := 0
	if errors.As(err, &he) {
		status = he.StatusCode
	}
	var msg string
	switch {
	case ctx.Err() != nil:
		msg = fmt.Sprintf("influxdb: checking InfluxDB at %s: %v", url, ctx.Err())
	case status == 0:
		msg = fmt.Sprintf("influxdb: cannot reach InfluxDB at %s: %v (is the server running, and is the URL right?)", url, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		if o.cfg.Token == "" {
			msg = fmt.Sprintf("influxdb: InfluxDB at %s wants a token (HTTP %s): set %s; for InfluxDB 1.8 the token is user:password", url, httpDetail(he), TokenEnv)
		} else {
			msg = fmt.Sprintf("influxdb: InfluxDB at %s refused the token in %s (HTTP %s); for InfluxDB 1.8 the token is user:password", url, TokenEnv, httpDetail(he))
		}
	case status == http.StatusNotFound || strings.Contains(err.Error(), "not found"):
		msg = fmt.Sprintf("influxdb: bucket %q not found at %s: %s (create it, or name another with ?bucket=; for InfluxDB 1.8 the bucket is database/retention-policy)", o.cfg.Bucket, url, errText(err))
	default:
		msg = fmt.Sprintf("influxdb: writing to bucket %q at %s failed: %s", o.cfg.Bucket, url, errText(err))
	}
	return &startError{msg: o.cfg.secrets().Clean(msg, maxErrorText), cause: err}
}

// httpDetail is an HTTP error as "401 Unauthorized" or "404 Not Found:
// database not found: ..." (the status code, then what the server said).
func httpDetail(he *http2.Error) string {
	s := he.Error()
	if he.Err == nil && he.Message == "" {
		s = he.Code // InfluxDB 1.8 answers 401 with no message
	}
	if code := strconv.Itoa(he.StatusCode); !strings.HasPrefix(s, code) {
		s = strings.TrimSpace(code + " " + s)
	}
	return s
}

// errText is a write's error as the report shows it: "HTTP 503 Service
// Unavailable: ..." for an answer, the client's error otherwise.
func errText(err error) string {
	var he *http2.Error
	if errors.As(err, &he) && he.StatusCode != 0 {
		return "HTTP " + httpDetail(he)
	}
	return err.Error()
}

// AddRequest counts the request in the current interval and, when
// llm_request points are on, queues a copy of the record (the caller may
// reuse it), or drops and counts it when the buffer is full. It never
// waits for InfluxDB.
func (o *Output) AddRequest(r *llm.Record) {
	if r == nil {
		return
	}
	o.agg.add(r)
	if o.cfg.Requests {
		o.buf.push(item{rec: *r})
	}
}

// tick queues the llm_interval points every interval, and those of the
// last, partial interval when stopTicker closes.
func (o *Output) tick(start time.Time) {
	defer close(o.tickerDone)
	t := time.NewTicker(o.cfg.Interval)
	defer t.Stop()
	var arrived arrivals
	for {
		var end time.Time
		last := false
		select {
		case end = <-t.C:
		case <-o.stopTicker:
			end, last = time.Now(), true
		}
		activeVUs := -1
		var tokens map[string]int64
		if o.run.Progress != nil {
			p := o.run.Progress()
			activeVUs, tokens = int(p.ActiveVUs), arrived.since(p.Arrived)
		}
		for _, p := range o.agg.interval(o.tags, start, end, activeVUs, tokens) {
			o.buf.push(item{point: p})
		}
		if last {
			return
		}
		start = end
	}
}

// Finish queues the last interval and the llm_run points of s (none when
// s is nil), sends everything queued until ctx's deadline or FlushTimeout,
// whichever comes first, and reports what was written and dropped. It
// reports also when Start failed or was never called; a second call
// returns the first's report.
func (o *Output) Finish(ctx context.Context, s *summary.Summary) summary.OutputReport {
	o.finishOnce.Do(func() { o.report = o.finish(ctx, s) })
	return o.report
}

// finalPoints are the points of the finished run, in the groups they are
// written in: its llm_run points, then its server section's llm_server
// and llm_server_series points, then its result document as llm_result
// points, at most a batch a write (unless that cannot be encoded, which
// is counted as a drop).
func (o *Output) finalPoints(s *summary.Summary) [][]item {
	groups := [][]item{items(runPoints(s, o.tags, o.run.Start, o.agg.scenarioModels()))}
	for ps := range slices.Chunk(serverPoints(s, o.tags, runTime(s, o.run.Start)), o.cfg.Batch) {
		groups = append(groups, items(ps))
	}
	doc, err := resultDocument(s)
	var results [][]*write.Point
	if err == nil {
		results, err = resultPoints(doc, o.tags, runTime(s, o.run.Start), o.cfg.Batch)
	}
	if err != nil {
		o.buf.account.Drop(1, "the llm_result points: "+err.Error())
		return groups
	}
	for _, ps := range results {
		groups = append(groups, items(ps))
	}
	return groups
}

// items are the points as the buffer queues them.
func items(points []*write.Point) []item {
	its := make([]item, len(points))
	for i, p := range points {
		its[i] = item{point: p}
	}
	return its
}

// finish is Finish, once.
func (o *Output) finish(ctx context.Context, s *summary.Summary) summary.OutputReport {
	timeout := o.cfg.FlushTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), 0)
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if o.stopTicker != nil {
		close(o.stopTicker)
		<-o.tickerDone
	}
	if s != nil {
		o.buf.pushFront(o.finalPoints(s)...)
	}
	var reason func(lastErr string) string
	switch {
	case o.writerDone != nil:
		stop := context.AfterFunc(fctx, o.cancelWriter)
		close(o.stopWriter)
		<-o.writerDone
		stop()
		o.cancelWriter()
		reason = func(lastErr string) string {
			r := fmt.Sprintf("not written within the %s flush timeout", timeout.Round(time.Millisecond))
			if lastErr != "" {
				r += ": " + lastErr
			}
			return r
		}
	case o.startErr != nil:
		reason = func(string) string { return "not written: the output did not start: " + o.startErr.Error() }
	default:
		reason = func(string) string { return "not written: the output was not started" }
	}
	if o.client != nil {
		o.client.Close()
	}
	rep := o.buf.close(reason)
	rep.Output = o.Describe()
	if rep.Err == "" && o.startErr != nil {
		rep.Err = o.startErr.Error()
	}
	return rep
}
