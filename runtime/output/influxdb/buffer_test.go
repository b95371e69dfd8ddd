package influxdb

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	http2 "github.com/influxdata/influxdb-client-go/v2/api/http"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/llmrun/llmrun/runtime/output"
)

// The buffer queues up to its bound, in chunks of a batch, counts what it
// refuses with the writer's state as the reason, and at close counts what
// is still pending, in flight included.
func TestBuffer(t *testing.T) {
	b := newBuffer(5, 2)
	for range 4 {
		b.push(item{})
	}
	select {
	case <-b.ready:
	default:
		t.Error("no ready signal with a full chunk queued")
	}
	if c := b.take(); len(c) != 2 {
		t.Fatalf("took %d points, want a batch of 2", len(c))
	}
	b.push(item{})
	b.fail("HTTP 503 Service Unavailable")
	b.push(item{}) // the taken chunk still counts: 5 pending
	b.push(item{})
	b.sent(2)
	b.push(item{}) // after a success: room for 2 more, and another reason
	b.push(item{})
	b.push(item{})
	b.pushFront([]item{{point: write.NewPointWithMeasurement(mRun)}})
	if c := b.take(); len(c) != 1 || c[0].point == nil {
		t.Fatalf("took %v, want the point pushed in front", c)
	}
	b.rejected(1, 0, "HTTP 400 Bad Request: bad")
	for n, c := 0, b.take(); c != nil; c = b.take() {
		if n += len(c); len(c) > 2 || n > 5 {
			t.Fatalf("took %d points in all, in chunks of up to %d", n, len(c))
		}
	}
	rep := b.close(func(last string) string { return "timeout: " + last })
	written, dropped, reasons, lastErr := rep.Written, rep.Dropped, rep.Reasons, rep.Err
	want := map[string]int64{
		"buffer full (5 points) while InfluxDB was failing: HTTP 503 Service Unavailable": 2,
		"buffer full (5 points): writes to InfluxDB did not keep up":                      1,
		"rejected by InfluxDB: HTTP 400 Bad Request: bad":                                 1,
		"timeout: HTTP 400 Bad Request: bad":                                              5,
	}
	if written != 2 || dropped != 9 || !reflect.DeepEqual(reasons, want) || lastErr != "HTTP 400 Bad Request: bad" {
		t.Errorf("written %d, dropped %d, reasons %v, last error %q", written, dropped, reasons, lastErr)
	}
	b.push(item{})
	if again := b.close(nil); again.Written != written || again.Dropped != dropped {
		t.Errorf("a push or close after close changed the account: %d written, %d dropped", again.Written, again.Dropped)
	}
}

// The reasons are bounded, whatever the errors.
func TestBufferReasonsBounded(t *testing.T) {
	b := newBuffer(10, 10)
	for i := range 100 {
		b.pending++
		b.rejected(1, 0, fmt.Sprint("error ", i))
	}
	rep := b.close(func(string) string { return "" })
	dropped, reasons := rep.Dropped, rep.Reasons
	if dropped != 100 || len(reasons) != output.MaxDropReasons || reasons[otherReasons] != 100-output.MaxDropReasons+1 {
		t.Errorf("%d dropped, reasons %v", dropped, reasons)
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		err   error
		retry bool
		wait  time.Duration
	}{
		{http2.NewError(errors.New("dial tcp: connection refused")), true, 0},
		{&http2.Error{StatusCode: http.StatusServiceUnavailable}, true, 0},
		{&http2.Error{StatusCode: http.StatusInternalServerError}, true, 0},
		{&http2.Error{StatusCode: http.StatusTooManyRequests, RetryAfter: 3}, true, 3 * time.Second},
		{&http2.Error{StatusCode: http.StatusTooManyRequests, RetryAfter: 3600}, true, maxRetryAfter},
		{&http2.Error{StatusCode: http.StatusBadRequest}, false, 0},
		{&http2.Error{StatusCode: http.StatusNotFound}, false, 0},
		{&http2.Error{StatusCode: http.StatusRequestEntityTooLarge}, false, 0},
		{errors.New("is NaN"), false, 0},
	}
	for _, tt := range tests {
		if retry, wait := retryable(tt.err); retry != tt.retry || wait != tt.wait {
			t.Errorf("retryable(%#v) = %v, %s; want %v, %s", tt.err, retry, wait, tt.retry, tt.wait)
		}
	}
}

func TestPartiallyWritten(t *testing.T) {
	tests := []struct {
		err  error
		n    int
		want int
	}{
		{&http2.Error{StatusCode: 400, Code: "400 Bad Request", Message: `partial write: field type conflict: input field "ttft" on measurement "llm_request" is type float, already exists as type integer dropped=2`}, 5, 3},
		{&http2.Error{StatusCode: 400, Code: "400 Bad Request", Message: "partial write: dropped=9"}, 5, 0},
		{&http2.Error{StatusCode: 400, Code: "400 Bad Request", Message: "unable to parse"}, 5, 0},
		{errors.New("partial write: dropped=1"), 5, 0},
	}
	for _, tt := range tests {
		if got := partiallyWritten(tt.err, tt.n); got != tt.want {
			t.Errorf("partiallyWritten(%v, %d) = %d, want %d", tt.err, tt.n, got, tt.want)
		}
	}
}

func TestJitter(t *testing.T) {
	for d := minBackoff; d <= maxBackoff; d *= 2 {
		for range 100 {
			if j := jitter(d); j < d/2 || j > d {
				t.Fatalf("jitter(%s) = %s", d, j)
			}
		}
	}
}
