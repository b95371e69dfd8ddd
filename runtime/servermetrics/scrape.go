// Package servermetrics reads a server's own Prometheus metrics beside a
// run: one scrape of a /metrics URL (Scrape), a Scraper that polls its
// targets on an interval from goroutines of its own and takes named
// snapshots (marks) when the run asks, and the window math over its
// snapshots (counter deltas, gauge means and maxima, histogram quantiles)
// by metric name and labels.
//
// The data model is the Prometheus project's own: a snapshot's families
// are the map[string]*dto.MetricFamily that expfmt's text parser makes.
// What the metrics mean (which engine, which name is the queue) is
// runtime/servermetrics/engines' part; this package knows only names,
// labels and types.
package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/redact"
)

// DefaultTimeout bounds one scrape when no other timeout is given.
const DefaultTimeout = 2 * time.Second

// MaxBody is the most of a response body a scrape reads: a vLLM
// exposition is tens of KiB, one with thousands of label sets a few MiB.
const MaxBody = 8 << 20

// acceptHeader asks for the classic text format, which every engine
// serves and expfmt's text parser reads.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// snippetLen bounds the part of a malformed body quoted in its error.
const snippetLen = 120

// Snapshot is one scrape's metrics and when they were read: the time the
// response's head arrived, just after the server wrote its figures.
type Snapshot struct {
	Time     time.Time
	Families map[string]*dto.MetricFamily
}

// Kind is what made a scrape fail.
type Kind string

// The kinds of failure. A scrape that ends because its caller stopped
// (the Scraper's Stop) is KindCanceled, which counts as no failure.
const (
	KindRefused   Kind = "refused"   // the connection was refused
	KindTimeout   Kind = "timeout"   // no whole answer within the timeout
	KindStatus    Kind = "status"    // an HTTP status other than 2xx
	KindTooLarge  Kind = "too_large" // a body over MaxBody
	KindMalformed Kind = "malformed" // a body that is not Prometheus metrics
	KindTransport Kind = "transport" // another failure to talk to it: DNS, reset, TLS
	KindCanceled  Kind = "canceled"  // the caller stopped waiting
)

// ScrapeError is a scrape that failed, of one Kind. Its text is safe to
// print: the URL's credentials are redacted and the server's bytes
// escaped.
type ScrapeError struct {
	URL     string // the target, its credentials redacted
	Kind    Kind
	Status  int    // the HTTP status, for KindStatus
	Snippet string // the start of the line that failed (KindMalformed) or of the body (KindStatus), escaped
	Err     error  // the cause
}

func (e *ScrapeError) Error() string {
	msg := fmt.Sprintf("scraping %s: %s: %v", e.URL, e.Kind, e.Err)
	if e.Snippet != "" {
		msg += fmt.Sprintf(" (%q)", e.Snippet)
	}
	return msg
}

func (e *ScrapeError) Unwrap() error { return e.Err }

// Scrape reads target's metrics once with client (nil: a client of its
// own), within timeout (DefaultTimeout when zero or less) or ctx's end.
// The body is read up to MaxBody and parsed by expfmt: the classic text
// format, OpenMetrics 1.0 as that parser reads it (a counter is then an
// untyped family named with its _total, the name the classic format
// gives it), or delimited protobuf. Every failure is a *ScrapeError.
func Scrape(ctx context.Context, client *http.Client, target string, timeout time.Duration) (Snapshot, error) {
	var secrets redact.Secrets
	secrets.AddRawURL(target)
	shown := secrets.Clean(target, 512)
	fail := func(kind Kind, err error) (Snapshot, error) {
		// The error names the target once: net/http's own wrapping would
		// name it again ("Get URL: ...").
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return Snapshot{}, &ScrapeError{URL: shown, Kind: kind, Err: errors.New(secrets.Clean(err.Error(), 1024))}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if client == nil {
		client = defaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fail(KindTransport, err)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := client.Do(req)
	if err != nil {
		return fail(transportKind(ctx, err), err)
	}
	defer resp.Body.Close()
	at := time.Now()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, snippetLen+1))
		return Snapshot{}, &ScrapeError{URL: shown, Kind: KindStatus, Status: resp.StatusCode, Err: fmt.Errorf("HTTP status %s", secrets.Clean(resp.Status, 128)), Snippet: snippet(head, 1, secrets)}
	}
	if resp.ContentLength > MaxBody {
		return fail(KindTooLarge, fmt.Errorf("the body is %d bytes (Content-Length), more than the %s a scrape reads", resp.ContentLength, capped.Size(MaxBody)))
	}
	body, err := readBody(resp, target)
	if err != nil {
		var tooLarge *capped.TooLargeError
		if errors.As(err, &tooLarge) {
			return fail(KindTooLarge, fmt.Errorf("the body is larger than %s, the most a scrape reads", capped.Size(MaxBody)))
		}
		return fail(transportKind(ctx, err), fmt.Errorf("reading the body: %w", err))
	}
	families, line, err := parse(body, resp.Header)
	if err != nil {
		return Snapshot{}, &ScrapeError{URL: shown, Kind: KindMalformed, Err: errors.New(secrets.Clean(err.Error(), 512)), Snippet: snippet(body, line, secrets)}
	}
	return Snapshot{Time: at, Families: families}, nil
}

// defaultClient is the client of a Scrape given none: net/http's
// defaults, with the connection to each target kept between scrapes.
var defaultClient = &http.Client{}

// readBody reads resp's body whole, failing with a *capped.TooLargeError
// beyond MaxBody.
func readBody(resp *http.Response, name string) ([]byte, error) {
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	_, err := buf.ReadFrom(capped.NewReader(resp.Body, name, MaxBody))
	return buf.Bytes(), err
}

// transportKind classifies a failure to get or read a response.
func transportKind(ctx context.Context, err error) Kind {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return KindCanceled
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return KindTimeout
	}
	return KindTransport
}

// parse reads body as the format its header names. It returns the line
// a text parse failed on (0 when it is not known).
func parse(body []byte, header http.Header) (map[string]*dto.MetricFamily, int, error) {
	mediaType, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	switch mediaType {
	case "text/html", "application/json", "application/xml", "text/xml":
		return nil, 1, fmt.Errorf("the response is of content type %q, not Prometheus metrics", mediaType)
	case expfmt.ProtoType:
		families, err := decodeProto(body, expfmt.ResponseFormat(header))
		return families, 0, err
	}
	// UTF8Validation takes the classic names (vLLM's, with ':') and the
	// quoted UTF-8 names of the text format 1.0 alike.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		var parseErr expfmt.ParseError
		if errors.As(err, &parseErr) {
			return nil, parseErr.Line, err
		}
		return nil, 0, err
	}
	return families, 0, nil
}

// decodeProto reads body as delimited protobuf MetricFamily messages.
func decodeProto(body []byte, format expfmt.Format) (map[string]*dto.MetricFamily, error) {
	if format.FormatType() != expfmt.TypeProtoDelim {
		return nil, fmt.Errorf("the response's protobuf encoding %q is not the delimited one", string(format))
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	families := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return families, nil
		}
		if err != nil {
			return nil, fmt.Errorf("protobuf message %d: %w", len(families)+1, err)
		}
		families[mf.GetName()] = &mf
	}
}

// snippet is the start of body's line number line (1-based), escaped,
// its secrets redacted; "" when line is 0 or beyond the body.
func snippet(body []byte, line int, secrets redact.Secrets) string {
	if line <= 0 {
		return ""
	}
	rest := body
	for range line - 1 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return ""
		}
		rest = rest[i+1:]
	}
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	text := string(rest[:min(len(rest), snippetLen)])
	if len(rest) > snippetLen {
		text = secrets.RedactCut(text) + "…"
	}
	return secrets.Clean(text, 2*snippetLen)
}
