package influxdb

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api"
	http2 "github.com/influxdata/influxdb-client-go/v2/api/http"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/internal/redact"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
)

// Timing of the writer.
const (
	// sendEvery is the longest a queued point waits for a batch to fill.
	sendEvery = time.Second
	// writeTimeout bounds one write request.
	writeTimeout = 10 * time.Second
	// minBackoff and maxBackoff bound the wait before retrying a batch;
	// it doubles from one to the other, jittered.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
	// maxRetryAfter caps the wait a server may ask for (Retry-After).
	maxRetryAfter = 30 * time.Second
)

// writer is the goroutine that sends the buffer's points to InfluxDB in
// batches; it alone converts records to points and owns the series.
type writer struct {
	api  api.WriteAPIBlocking
	buf  *buffer
	tags runTags
	// byTags finds a record's series by its TagSet's key; byKey by the
	// series' own key, since different record tags may end up as the
	// same tags once merged with the run's.
	byTags map[string]*series
	byKey  map[string]*series
	// fields are the llm_request fields.
	fields []requestField
	// secrets are redacted from the errors the buffer keeps.
	secrets redact.Secrets
}

// series is one llm_request series: its tags, sorted, and the time of
// its last point, which the next must come after.
type series struct {
	tags []metrics.Tag
	last time.Time
}

// newWriter returns a writer of buf's points through w, which redacts
// secrets from the errors it reports.
func newWriter(w api.WriteAPIBlocking, buf *buffer, tags runTags, secrets redact.Secrets) *writer {
	return &writer{api: w, buf: buf, tags: tags, secrets: secrets, byTags: map[string]*series{}, byKey: map[string]*series{},
		fields: requestFields()}
}

// run sends what is queued whenever a batch fills and at least every
// sendEvery, until stop is closed and the buffer is empty, or ctx ends
// (the flush deadline), leaving what is unsent pending in the buffer.
func (w *writer) run(ctx context.Context, stop <-chan struct{}) {
	tick := time.NewTicker(sendEvery)
	defer tick.Stop()
	for {
		draining := false
		select {
		case <-ctx.Done():
			return
		case <-stop:
			draining = true
		case <-w.buf.ready:
		case <-tick.C:
		}
		for chunk := w.buf.take(); chunk != nil; chunk = w.buf.take() {
			if !w.send(ctx, chunk, stop) {
				return
			}
		}
		if draining {
			return
		}
	}
}

// send writes one batch, retrying failures that may pass with a growing
// backoff, and dropping it when InfluxDB rejects it; it returns false when
// ctx ended first. Closing stop (Finish) cuts the current wait short once.
func (w *writer) send(ctx context.Context, chunk []item, stop <-chan struct{}) bool {
	points := make([]*write.Point, len(chunk))
	for i := range chunk {
		if points[i] = chunk[i].point; points[i] == nil {
			points[i] = w.requestPoint(&chunk[i].rec)
		}
	}
	backoff := minBackoff
	for {
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err := w.api.WritePoint(wctx, points...)
		cancel()
		if err == nil {
			w.buf.sent(len(points))
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		retry, wait := retryable(err)
		if !retry {
			w.buf.rejected(len(points), partiallyWritten(err, len(points)), w.secrets.Clean(errText(err), maxErrorText))
			return true
		}
		w.buf.fail(w.secrets.Clean(errText(err), maxErrorText))
		wait = max(wait, jitter(backoff))
		backoff = min(2*backoff, maxBackoff)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-stop:
			t.Stop()
			stop = nil
		case <-t.C:
		}
	}
}

// jitter returns a random duration between d/2 and d.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// retryable says whether a failed write may succeed later (no answer, a
// timeout, HTTP 5xx or 429), and how long the server asked to wait.
func retryable(err error) (bool, time.Duration) {
	var he *http2.Error
	if !errors.As(err, &he) {
		return false, 0 // the points could not be encoded
	}
	if he.StatusCode != 0 && he.StatusCode != http.StatusTooManyRequests && he.StatusCode < 500 {
		return false, 0
	}
	return true, min(time.Duration(he.RetryAfter)*time.Second, maxRetryAfter)
}

// partialDropped finds the count of refused points in a partial write's
// error ("partial write: field type conflict: … dropped=3").
var partialDropped = regexp.MustCompile(`dropped=(\d+)`)

// partiallyWritten returns how many of a rejected batch's n points
// InfluxDB stored nonetheless: those a partial write did not drop.
func partiallyWritten(err error, n int) int {
	var he *http2.Error
	if !errors.As(err, &he) || !strings.Contains(he.Error(), "partial write") {
		return 0
	}
	m := partialDropped.FindStringSubmatch(he.Error())
	if m == nil {
		return 0
	}
	d, err := strconv.Atoi(m[1])
	if err != nil || d > n {
		return 0
	}
	return n - d
}

// requestPoint converts a record to its llm_request point, at a time
// after the previous point of its series.
func (w *writer) requestPoint(r *llm.Record) *write.Point {
	s := w.series(r.Tags)
	t := r.Time
	if !t.After(s.last) {
		t = s.last.Add(time.Nanosecond)
	}
	s.last = t
	return requestPoint(r, w.fields, s.tags, t)
}

// series returns the series of a record's tags, making it the first time.
func (w *writer) series(rt *metrics.TagSet) *series {
	if s := w.byTags[rt.Key()]; s != nil {
		return s
	}
	m := maps.Clone(w.tags.extra)
	if m == nil {
		m = map[string]string{}
	}
	for _, t := range rt.Tags() {
		m[t.Key] = t.Value
	}
	w.tags.ids(m)
	tags := make([]metrics.Tag, 0, len(m))
	for k, v := range m {
		if v != "" {
			tags = append(tags, metrics.Tag{Key: k, Value: v})
		}
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	var key strings.Builder
	for _, t := range tags {
		key.WriteString(t.Key)
		key.WriteByte(0)
		key.WriteString(t.Value)
		key.WriteByte(0)
	}
	s := w.byKey[key.String()]
	if s == nil {
		s = &series{tags: tags}
		w.byKey[key.String()] = s
	}
	w.byTags[rt.Key()] = s
	return s
}
