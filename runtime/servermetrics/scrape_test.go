package servermetrics

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/llmrun/llmrun/internal/redact"
	"github.com/llmrun/llmrun/internal/refused"
)

// vllmText is the recorded vLLM exposition of testdata (see its README).
func vllmText(t testing.TB) []byte {
	t.Helper()
	body, err := os.ReadFile("testdata/vllm.prom")
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// serve starts a server on 127.0.0.1 answering with handler; it is
// closed when the test ends.
func serve(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// stalled returns a handler that blocks until the test ends or the
// client goes, having first written head (if any) of its body.
func stalled(t *testing.T, head string) http.HandlerFunc {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(w http.ResponseWriter, r *http.Request) {
		if head != "" {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write([]byte(head))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
}

// text answers body as the text format.
func text(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(body)
	}
}

func TestScrapeFailures(t *testing.T) {
	tests := []struct {
		name    string
		url     func(t *testing.T) string
		timeout time.Duration
		kind    Kind
		status  int
		snippet string // the snippet must contain it
	}{
		{name: "refused", url: func(t *testing.T) string { return refused.URL(t) + "/metrics" }, kind: KindRefused},
		{name: "stalls before answering", url: func(t *testing.T) string { return serve(t, stalled(t, "")) }, timeout: 100 * time.Millisecond, kind: KindTimeout},
		{name: "stalls in the body", url: func(t *testing.T) string { return serve(t, stalled(t, "vllm:num_requests_running 1\n")) }, timeout: 100 * time.Millisecond, kind: KindTimeout},
		{name: "500", url: func(t *testing.T) string {
			return serve(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "engine dead", http.StatusInternalServerError)
			})
		}, kind: KindStatus, status: 500, snippet: "engine dead"},
		{name: "404", url: func(t *testing.T) string { return serve(t, http.NotFound) }, kind: KindStatus, status: 404},
		{name: "50 MiB with a length", url: func(t *testing.T) string {
			return serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(50<<20))
				w.Write([]byte("x 1\n"))
			})
		}, kind: KindTooLarge},
		{name: "malformed value", url: func(t *testing.T) string {
			return serve(t, text([]byte("# TYPE vllm:x gauge\nvllm:x{model_name=\"m\"} 1\nvllm:x{model_name=\"n\"} not-a-number\n")))
		}, kind: KindMalformed, snippet: `vllm:x{model_name="n"} not-a-number`},
		{name: "malformed with control characters", url: func(t *testing.T) string {
			return serve(t, text([]byte("\x1b[2J\x1b]0;owned\x07 1\n")))
		}, kind: KindMalformed, snippet: `\x1b[2J\x1b]0;owned\x07 1`},
		{name: "a long malformed line is cut", url: func(t *testing.T) string {
			return serve(t, text([]byte("x{a=\""+strings.Repeat("b", 500)+" 1\n")))
		}, kind: KindMalformed, snippet: "x{a=\"bbbb"},
		{name: "HTML page", url: func(t *testing.T) string {
			return serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte("<!DOCTYPE html><html><body>Sign in</body></html>\n"))
			})
		}, kind: KindMalformed, snippet: "<!DOCTYPE html>"},
		{name: "JSON", url: func(t *testing.T) string {
			return serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"running": 3}`))
			})
		}, kind: KindMalformed, snippet: `{"running": 3}`},
		{name: "protobuf not delimited", url: func(t *testing.T) string {
			return serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", string(expfmt.FmtProtoText))
				w.Write([]byte("name: \"x\"\n"))
			})
		}, kind: KindMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Scrape(t.Context(), nil, tt.url(t), tt.timeout)
			var scrapeErr *ScrapeError
			if !errors.As(err, &scrapeErr) {
				t.Fatalf("error %v (%T), want a *ScrapeError", err, err)
			}
			if scrapeErr.Kind != tt.kind {
				t.Fatalf("kind %q, want %q: %v", scrapeErr.Kind, tt.kind, err)
			}
			if scrapeErr.Status != tt.status {
				t.Errorf("status %d, want %d", scrapeErr.Status, tt.status)
			}
			if !strings.Contains(scrapeErr.Snippet, tt.snippet) {
				t.Errorf("snippet %q, want it to contain %q", scrapeErr.Snippet, tt.snippet)
			}
			if len(scrapeErr.Snippet) > 2*snippetLen {
				t.Errorf("snippet of %d bytes, more than %d", len(scrapeErr.Snippet), 2*snippetLen)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07\n") {
				t.Errorf("the error holds control characters: %q", err.Error())
			}
		})
	}
}

// A body of 50 MiB sent without a length fails once MaxBody was read:
// the server could not write it all. Moving MaxBody took over 10 s under
// the race detector on a loaded host: the scrape may take until the
// test's deadline, and the server writes blocks of 64 KiB of lines, not
// a line a Write.
func TestScrapeStopsReadingAtTheCap(t *testing.T) {
	timeout := time.Hour
	if deadline, ok := t.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	written := make(chan int, 1)
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		line := "vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 1\n"
		block := []byte(strings.Repeat(line, 64<<10/len(line)))
		n := 0
		for n < 50<<20 {
			k, err := w.Write(block)
			n += k
			if err != nil {
				break
			}
		}
		written <- n
	})
	_, err := Scrape(t.Context(), nil, url, timeout)
	var scrapeErr *ScrapeError
	if !errors.As(err, &scrapeErr) || scrapeErr.Kind != KindTooLarge {
		t.Fatalf("error %v, want a too_large failure", err)
	}
	if !strings.Contains(err.Error(), "8 MiB") {
		t.Errorf("the error does not name the cap: %v", err)
	}
	if n := <-written; n >= 50<<20 {
		t.Errorf("the server wrote all %d bytes: the scrape read past its cap", n)
	}
}

func TestScrapeRedactsTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "token "+r.URL.Query().Get("token")+" refused", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	target := strings.Replace(srv.URL, "http://", "http://user:hunter2pass@", 1) + "/metrics?token=sk-abcdef123"
	_, err := Scrape(t.Context(), nil, target, 0)
	if err == nil {
		t.Fatal("a 403 did not fail")
	}
	for _, secret := range []string{"hunter2pass", "sk-abcdef123"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
}

func TestScrapeFormats(t *testing.T) {
	var proto bytes.Buffer
	enc := expfmt.NewEncoder(&proto, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, f := range parseText(t, string(vllmText(t)), time.Time{}).Families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(vllmText(t))
	zw.Close()
	tests := []struct {
		name        string
		contentType string
		encoding    string
		body        []byte
		family      string // a family it must have, with one value
		value       float64
	}{
		{name: "text 0.0.4", contentType: "text/plain; version=0.0.4; charset=utf-8", body: vllmText(t), family: "vllm:num_requests_running", value: 37},
		{name: "no content type", body: vllmText(t), family: "vllm:num_requests_waiting", value: 4},
		{name: "gzip", contentType: "text/plain; version=0.0.4", encoding: "gzip", body: zipped.Bytes(), family: "vllm:num_requests_running", value: 37},
		{name: "delimited protobuf", contentType: string(expfmt.FmtProtoDelim), body: proto.Bytes(), family: "vllm:num_preemptions_total", value: 3},
		{name: "OpenMetrics 1.0", contentType: string(expfmt.FmtOpenMetrics_1_0_0),
			body:   []byte("# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total{engine=\"0\"} 3.0\nvllm:num_preemptions_created{engine=\"0\"} 1.7e9\n# EOF\n"),
			family: "vllm:num_preemptions_total", value: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if got := r.Header.Get("Accept"); !strings.HasPrefix(got, "text/plain;version=0.0.4") {
					t.Errorf("Accept %q, want the text format first", got)
				}
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				if tt.encoding != "" {
					w.Header().Set("Content-Encoding", tt.encoding)
				}
				w.Write(tt.body)
			})
			before := time.Now()
			snap, err := Scrape(t.Context(), nil, url, 0)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Time.Before(before) || snap.Time.After(time.Now()) {
				t.Errorf("snapshot time %v is not the scrape's", snap.Time)
			}
			got, ok := Sum(snap, Selector{Name: tt.family})
			if !ok || got != tt.value {
				t.Errorf("%s = %v (%v), want %v; families %d", tt.family, got, ok, tt.value, len(snap.Families))
			}
		})
	}
}

// The recorded exposition parses whole, its histograms with their
// buckets.
func TestScrapeVLLMExposition(t *testing.T) {
	snap, err := Scrape(t.Context(), nil, serve(t, text(vllmText(t))), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(snap.Families); got != 37 {
		t.Errorf("%d families, want 37 (its TYPE lines)", got)
	}
	ttft := snap.Families["vllm:time_to_first_token_seconds"]
	if ttft.GetType() != dto.MetricType_HISTOGRAM || len(ttft.GetMetric()) != 1 {
		t.Fatalf("TTFT family %v", ttft)
	}
	if n := ttft.GetMetric()[0].GetHistogram().GetSampleCount(); n != 1000 {
		t.Errorf("TTFT count %d, want 1000", n)
	}
	if got, _ := Sum(snap, Selector{Name: "vllm:request_success_total", Labels: map[string]string{"finished_reason": "length"}}); got != 288 {
		t.Errorf("requests ended by length %v, want 288", got)
	}
}

// A scrape canceled by its caller is KindCanceled, not a timeout.
func TestScrapeCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	go func() {
		<-started
		cancel()
	}()
	_, err := Scrape(ctx, nil, url, time.Hour)
	var scrapeErr *ScrapeError
	if !errors.As(err, &scrapeErr) || scrapeErr.Kind != KindCanceled {
		t.Fatalf("error %v, want a canceled scrape", err)
	}
}

// Whatever a body holds, reading it never panics, and what a failure
// quotes of it is escaped and bounded.
func FuzzParse(f *testing.F) {
	f.Add([]byte("# TYPE x counter\nx_total{a=\"b\"} 1\n"), "text/plain; version=0.0.4")
	f.Add([]byte("x{a=\"\x1b[31m\"} NaN\ny 1 2 3\n"), "")
	f.Add([]byte("\xff\xfe\x00\n\n\n"), "application/openmetrics-text; version=1.0.0")
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"x\"} 1\n"), "text/plain")
	f.Add([]byte("\x05\x0a\x01x"), string(expfmt.FmtProtoDelim))
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		header := http.Header{"Content-Type": {contentType}}
		_, line, err := parse(body, header)
		if err == nil {
			return
		}
		quoted := snippet(body, line, redact.Secrets{})
		if len(quoted) > 2*snippetLen || strings.ContainsAny(quoted, "\x00\x1b\n\r") {
			t.Errorf("snippet %q of line %d is not bounded and escaped", quoted, line)
		}
	})
}
