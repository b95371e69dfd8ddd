package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

func TestRequestErrorLogKeepsTheFirstDistinctMessages(t *testing.T) {
	l := newRequestErrorLog()
	for _, m := range []string{"a", "b", "a", "c", "d", "a", "d", "c"} {
		l.Record("http_5xx", m)
	}
	l.Record("timeout", "t")
	want := map[string][]ErrorCount{
		"http_5xx": {{"a", 3}, {"b", 1}, {"c", 2}},
		"timeout":  {{"t", 1}},
	}
	if got := l.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("list %v, want %v (the first 3 distinct per class, with their counts)", got, want)
	}
}

// Messages that differ only by ids are one, shown as the first seen, with
// the count of all; the cap on distinct messages stays.
func TestRequestErrorLogGroupsMessagesByTheirKey(t *testing.T) {
	l := newRequestErrorLog()
	for i := range 100 {
		l.Record("http_5xx", fmt.Sprintf("HTTP 500 Internal Server Error: request chatcmpl-%d failed", i+1))
		l.Record("http_5xx", fmt.Sprintf("HTTP 502 Bad Gateway: upstream %08x-5717-4562-b3fc-2c963f66afa6 reset", i))
	}
	for i := range 10 {
		l.Record("http_5xx", fmt.Sprintf("HTTP 503 Service Unavailable: retry in %d s", i))
	}
	want := map[string][]ErrorCount{"http_5xx": {
		{"HTTP 500 Internal Server Error: request chatcmpl-1 failed", 100},
		{"HTTP 502 Bad Gateway: upstream 00000000-5717-4562-b3fc-2c963f66afa6 reset", 100},
		{"HTTP 503 Service Unavailable: retry in 0 s", 1},
	}}
	if got := l.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("list %v\nwant %v", got, want)
	}
	script := newErrorLog()
	for i := range 2 * maxDistinctErrors {
		script.record(fmt.Sprintf("script.js:4:3: Error: llm: request msg_01XFDUDYJgAACzvnptv%05d: stream ended", i))
	}
	if got, other := script.list(); len(got) != 1 || got[0].Count != 2*maxDistinctErrors || other != 0 {
		t.Errorf("script errors %v, %d other; want one message counted %d times", got, other, 2*maxDistinctErrors)
	}
}

func TestRequestErrorLogIsBounded(t *testing.T) {
	l := newRequestErrorLog()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				l.Record(fmt.Sprintf("class%d", i%100), fmt.Sprintf("message %d from %d ", i, g)+strings.Repeat("é", 1000))
			}
		})
	}
	wg.Wait()
	got := l.list()
	if len(got) != maxErrorClasses {
		t.Errorf("%d classes kept, want at most %d", len(got), maxErrorClasses)
	}
	for class, msgs := range got {
		if len(msgs) != maxMessagesPerClass {
			t.Errorf("%s: %d messages, want %d", class, len(msgs), maxMessagesPerClass)
		}
		for _, m := range msgs {
			if len(m.Message) > maxMessageLen+len("…") || !utf8.ValidString(m.Message) || !strings.HasSuffix(m.Message, "…") {
				t.Errorf("%s: message of %d bytes (valid UTF-8 %v), want at most %d ending in …", class, len(m.Message), utf8.ValidString(m.Message), maxMessageLen)
			}
		}
	}
}

// The messages of failed requests reach the report by class; warmup ones
// are left out as their samples are.
func TestRequestErrorMessagesReachTheReport(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch i := n.Add(1); {
		case i <= 2:
			http.Error(w, "warming", http.StatusInternalServerError)
		case i <= 5:
			http.Error(w, "boom A", http.StatusInternalServerError)
		case i <= 8:
			http.Error(w, fmt.Sprintf("boom %d", i), http.StatusBadGateway)
		default:
			http.Error(w, "no such model", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	cfg := testConfig(t, `
import llm from 'llm';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 10, warmup: 2 } } };
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`, nil, nil)
	cfg.LLM.BaseURL = srv.URL
	rep := mustRun(t, load(t, cfg))
	want := map[string][]ErrorCount{
		"http_5xx": {
			{"HTTP 500 Internal Server Error: boom A", 3},
			{"HTTP 502 Bad Gateway: boom 6", 1},
			{"HTTP 502 Bad Gateway: boom 7", 1},
		},
		"http_4xx": {{"HTTP 404 Not Found: no such model", 2}},
	}
	if !reflect.DeepEqual(rep.RequestErrors, want) {
		t.Errorf("RequestErrors %v\nwant %v", rep.RequestErrors, want)
	}
}

// A server whose error names each request's id (as OpenAI's do) gives one
// message for all its failures, the first one's, counted for all.
func TestRequestErrorsDifferingByIDAreOne(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error": {"message": "The server had an error while processing your request. Sorry about that! (Please include the request ID req_%032x in your message.)", "type": "server_error"}}`, 0xabc000+n.Add(1))
	}))
	defer srv.Close()
	cfg := testConfig(t, `
import llm from 'llm';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 8 } } };
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
`, nil, nil)
	cfg.LLM.BaseURL = srv.URL
	rep := mustRun(t, load(t, cfg))
	msgs := rep.RequestErrors["http_5xx"]
	if len(rep.RequestErrors) != 1 || len(msgs) != 1 || msgs[0].Count != 8 || !strings.Contains(msgs[0].Message, "Please include the request ID req_00000000000000000000000000abc00") {
		t.Errorf("RequestErrors %v, want one http_5xx message, the first seen, counted 8 times", rep.RequestErrors)
	}
}
