package llmsim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Each fault is seen here by a raw HTTP/1.1 client on its own connection,
// so that nothing between the test and the wire retries or hides an error.

// rawPost sends a chat request, with X-Llmsim-Fault: fault unless fault is
// empty, on a new connection that the test closes, and returns the
// connection, a reader of its response and when the request was sent.
func rawPost(t *testing.T, r *Running, fault string, body map[string]any) (net.Conn, *bufio.Reader, time.Time) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(r.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second)) // bounds every test
	header := ""
	if fault != "" {
		header = FaultHeader + ": " + fault + "\r\n"
	}
	start := time.Now()
	if _, err := fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: llmsim\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s",
		len(data), header, data); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn), start
}

// faultResponse posts a request with the fault and reads the response's
// head.
func faultResponse(t *testing.T, r *Running, fault string, body map[string]any) (*http.Response, time.Time) {
	t.Helper()
	_, br, start := rawPost(t, r, fault, body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, start
}

// event is a stream event's data and when it was read, after the request
// was sent.
type event struct {
	data string
	at   time.Duration
}

// streamWithFault streams a chat request of n tokens with the fault and
// returns its events and the error that ended it, nil for a clean end.
func streamWithFault(t *testing.T, r *Running, fault string, n int) ([]event, error) {
	t.Helper()
	resp, start := faultResponse(t, r, fault, chatBody("hi", map[string]any{"max_tokens": n, "ignore_eos": true, "stream": true}))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var events []event
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		switch {
		case errors.Is(err, io.EOF) && line == "":
			return events, nil
		case err != nil:
			return events, err
		case line == "\n":
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not a data line: %.100q", line)
		}
		events = append(events, event{strings.TrimSuffix(data, "\n"), time.Since(start)})
	}
}

// tokenEvents returns the indexes of the events that are chunks carrying
// a token.
func tokenEvents(events []event) []int {
	var idx []int
	for i, e := range events {
		var c chunk
		if json.Unmarshal([]byte(e.data), &c) == nil && c.tokenText() != "" {
			idx = append(idx, i)
		}
	}
	return idx
}

// finished reports whether the events hold a finish chunk or [DONE].
func finished(events []event) bool {
	for _, e := range events {
		var c chunk
		if e.data == "[DONE]" || json.Unmarshal([]byte(e.data), &c) == nil && len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
			return true
		}
	}
	return false
}

// wantFaults checks the server's fault counts.
func wantFaults(t *testing.T, r *Running, want map[string]uint64) {
	t.Helper()
	if got := r.Server().Stats().Faults; !maps.Equal(got, want) {
		t.Errorf("Stats.Faults %v, want %v", got, want)
	}
}

func TestFaultRefuse(t *testing.T) {
	r := listen(t, fastConfig())
	conn, _, _ := rawPost(t, r, "refuse", chatBody("hi", nil))
	data, err := io.ReadAll(conn)
	if len(data) > 0 || err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read %q, %v; want the connection closed without a byte", data, err)
	}
	wantFaults(t, r, map[string]uint64{"refuse": 1})
	if st := r.Server().Stats(); st.Received != 0 {
		t.Errorf("a refused request was queued: %+v", st)
	}
}

func TestFaultReset(t *testing.T) {
	r := listen(t, fastConfig())
	events, err := streamWithFault(t, r, "reset;after=4", 10)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("stream ended with %v, want a connection reset", err)
	}
	if n := len(tokenEvents(events)); n != 4 || finished(events) {
		t.Errorf("%d tokens (finished %t) before the reset, want 4 and no end", n, finished(events))
	}
	wantFaults(t, r, map[string]uint64{"reset": 1})
}

func TestFaultHTTPStatus(t *testing.T) {
	for _, tc := range []struct {
		fault       string
		stream      bool
		status      int
		retryAfter  string
		kind, code  string
		faultCounts map[string]uint64
	}{
		{"http_429;retry_after=7", true, 429, "7", "requests", "rate_limit_exceeded", map[string]uint64{"http_429": 1}},
		{"http_429", false, 429, "1", "requests", "rate_limit_exceeded", map[string]uint64{"http_429": 1}},
		{"http_5xx", true, 500, "", "server_error", "", map[string]uint64{"http_5xx": 1}},
		{"http_5xx;status=503", false, 503, "", "server_error", "", map[string]uint64{"http_5xx": 1}},
	} {
		r := listen(t, fastConfig())
		resp, _ := faultResponse(t, r, tc.fault, chatBody("hi", map[string]any{"stream": tc.stream}))
		var body errorBody
		err := json.NewDecoder(resp.Body).Decode(&body)
		if err != nil || resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter ||
			resp.Header.Get("Content-Type") != "application/json" || body.Error.Type != tc.kind ||
			(body.Error.Code == nil) != (tc.code == "") || !strings.Contains(body.Error.Message, "llmsim injected fault") {
			t.Errorf("%s: %d, Retry-After %q, %s, %+v, %v", tc.fault, resp.StatusCode, resp.Header.Get("Retry-After"),
				resp.Header.Get("Content-Type"), body, err)
		}
		if body.Error.Code != nil && *body.Error.Code != tc.code {
			t.Errorf("%s: code %q, want %q", tc.fault, *body.Error.Code, tc.code)
		}
		wantFaults(t, r, tc.faultCounts)
	}
}

func TestFaultStall(t *testing.T) {
	r := listen(t, fastConfig())
	const stall = 300 * time.Millisecond
	events, err := streamWithFault(t, r, "stall;after=3;duration=300ms", 10)
	tokens := tokenEvents(events)
	if err != nil || len(tokens) != 10 || events[len(events)-1].data != "[DONE]" {
		t.Fatalf("%d tokens, %v; want the whole stream after the stall", len(tokens), err)
	}
	if at := events[tokens[3]].at; at < stall {
		t.Errorf("fourth token at %v, before the %v stall ended", at, stall)
	}
	wantFaults(t, r, map[string]uint64{"stall": 1})
}

func TestFaultStallForever(t *testing.T) {
	r := listen(t, fastConfig())
	conn, br, _ := rawPost(t, r, "stall;after=2;duration=forever", chatBody("hi", map[string]any{"max_tokens": 20000, "ignore_eos": true, "stream": true}))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := bufio.NewReader(resp.Body)
	for tokens := 0; tokens < 2; {
		line, err := body.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			tokens++
		}
	}
	conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	for {
		line, err := body.ReadString('\n')
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if line != "\n" || err != nil {
			t.Fatalf("read %q, %v during the stall; want nothing but the blank line ending an event", line, err)
		}
	}
	wantFaults(t, r, map[string]uint64{"stall": 1})

	conn.Close() // the client gives up: its slot frees
	eventually(t, 5*time.Second, "the slot freed", func() bool { st := r.Server().Stats(); return st.Running == 0 && st.Canceled == 1 })
	if st := r.Server().Stats(); st.GivenUp != 0 {
		t.Errorf("a client that left a stalled answer counted among those that gave up on a sound one: %+v", st)
	}
}

func TestFaultMalformed(t *testing.T) {
	r := listen(t, fastConfig())
	events, err := streamWithFault(t, r, "malformed;after=2", 5)
	bad := -1
	for i, e := range events {
		if !json.Valid([]byte(e.data)) && e.data != "[DONE]" {
			if bad >= 0 {
				t.Errorf("events %d and %d are both malformed", bad, i)
			}
			bad = i
		}
	}
	tokens := tokenEvents(events)
	if err != nil || len(tokens) != 5 || events[len(events)-1].data != "[DONE]" {
		t.Fatalf("%d tokens, %v; want the stream to go on after the malformed chunk", len(tokens), err)
	}
	if bad < 0 || bad < tokens[1] || bad > tokens[2] {
		t.Errorf("malformed event at %d, want it between the second and third tokens (%v)", bad, tokens)
	}
	var c chunk
	if bad >= 0 && json.Unmarshal([]byte(events[bad].data), &c) == nil {
		t.Errorf("malformed chunk decodes: %s", events[bad].data)
	}
	wantFaults(t, r, map[string]uint64{"malformed": 1})
}

func TestFaultBigLine(t *testing.T) {
	r := listen(t, fastConfig())
	events, err := streamWithFault(t, r, "big_line", 5)
	if err != nil || events[len(events)-1].data != "[DONE]" {
		t.Fatalf("%v; want the stream to go on after the big line", err)
	}
	tokens := tokenEvents(events)
	if len(tokens) != 6 {
		t.Fatalf("%d token chunks, want 5 and the big one", len(tokens))
	}
	big := events[tokens[1]].data
	var c chunk
	if err := json.Unmarshal([]byte(big), &c); err != nil || len(big) < 2<<20 || len(c.tokenText()) < 2<<20 {
		t.Errorf("second token chunk is %d bytes with %d of content, %v; want a valid chunk of 2 MiB", len(big), len(c.tokenText()), err)
	}
	wantFaults(t, r, map[string]uint64{"big_line": 1})
}

func TestFaultSlowHeaders(t *testing.T) {
	r := listen(t, fastConfig())
	const delay = 300 * time.Millisecond
	resp, start := faultResponse(t, r, "slow_headers;duration=300ms", chatBody("hi", map[string]any{"max_tokens": 3}))
	if took := time.Since(start); took < delay {
		t.Errorf("headers after %v, before the %v delay", took, delay)
	}
	var out response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || len(out.Choices) != 1 {
		t.Errorf("%d %+v %v; want the response after the delay", resp.StatusCode, out, err)
	}
	wantFaults(t, r, map[string]uint64{"slow_headers": 1})
}

func TestFaultWrongContentType(t *testing.T) {
	r := listen(t, fastConfig())
	resp, _ := faultResponse(t, r, "wrong_content_type", chatBody("hi", map[string]any{"stream": true}))
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		!strings.HasPrefix(string(body), "<!DOCTYPE html>") {
		t.Errorf("%d %s %q %v", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
	}
	wantFaults(t, r, map[string]uint64{"wrong_content_type": 1})
}

func TestFaultErrorEvent(t *testing.T) {
	r := listen(t, fastConfig())
	events, err := streamWithFault(t, r, "error_event;after=2", 10)
	if n := len(tokenEvents(events)); err != nil || n != 2 || finished(events) {
		t.Fatalf("%d tokens (finished %t), %v; want 2 then the error and a clean end", n, finished(events), err)
	}
	var last errorBody
	data := events[len(events)-1].data
	if json.Unmarshal([]byte(data), &last) != nil || last.Error.Type != "server_error" ||
		!strings.Contains(last.Error.Message, "error_event") {
		t.Errorf("last event %s, want an OpenAI error", data)
	}
	wantFaults(t, r, map[string]uint64{"error_event": 1})
}

func TestFaultEarlyClose(t *testing.T) {
	r := listen(t, fastConfig())
	for _, tc := range []struct {
		fault  string
		tokens int
	}{
		{"early_close;after=3", 3},
		{"early_close;after=50", 10}, // beyond the output: just before the finish chunk
	} {
		events, err := streamWithFault(t, r, tc.fault, 10)
		if n := len(tokenEvents(events)); err != nil || n != tc.tokens || finished(events) || len(events) != n+1 {
			t.Errorf("%s: %d tokens in %d events (finished %t), %v; want %d after the role chunk, then a clean end",
				tc.fault, n, len(events), finished(events), err, tc.tokens)
		}
	}
	wantFaults(t, r, map[string]uint64{"early_close": 2})
}

func TestFaultHeaderErrors(t *testing.T) {
	r := listen(t, fastConfig())
	for fault, want := range map[string]string{
		"resett":         `invalid X-Llmsim-Fault header "resett": unknown fault "resett"`,
		"reset;after=-2": `invalid X-Llmsim-Fault header "reset;after=-2": after=-2: want a number of tokens, 0 or more`,
		"early_close":    "X-Llmsim-Fault: fault early_close strikes mid-stream and needs a streamed request",
	} {
		resp, _ := faultResponse(t, r, fault, chatBody("hi", nil))
		var body errorBody
		err := json.NewDecoder(resp.Body).Decode(&body)
		if err != nil || resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(body.Error.Message, want) {
			t.Errorf("%s: %d %+v %v; want 400 saying %s", fault, resp.StatusCode, body, err, want)
		}
	}
	if st := r.Server().Stats(); st.Rejected != 3 || st.Received != 0 || len(st.Faults) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A client that leaves a sound answer before it is delivered, streamed or
// not, counts among those that gave up (GivenUp); one that reads its
// answer to the end, or leaves one a fault struck, does not.
func TestClientsThatGaveUpOnASoundAnswer(t *testing.T) {
	r := listen(t, fastConfig())
	long := map[string]any{"max_tokens": 20000, "ignore_eos": true}
	leaves := func(body map[string]any) {
		conn, br, _ := rawPost(t, r, "", body)
		if _, err := br.ReadString('\n'); err != nil { // the status line: the request is under way
			t.Fatal(err)
		}
		conn.Close()
	}
	leaves(chatBody("hi", map[string]any{"max_tokens": 20000, "ignore_eos": true, "stream": true}))
	eventually(t, 5*time.Second, "the streamed answer given up", func() bool { return r.Server().Stats().GivenUp == 1 })

	// A non-streamed answer sends its head with its body: the client
	// leaves while the engine still generates.
	conn, _, _ := rawPost(t, r, "", chatBody("hi", long))
	eventually(t, 5*time.Second, "the request running", func() bool { return r.Server().Stats().Running == 1 })
	conn.Close()
	eventually(t, 5*time.Second, "the whole answer given up", func() bool { return r.Server().Stats().GivenUp == 2 })

	if _, err := streamWithFault(t, r, "", 5); err != nil {
		t.Fatal(err)
	}
	streamWithFault(t, r, "early_close;after=2", 5) // the server closes it after 2 tokens
	wantFaults(t, r, map[string]uint64{"early_close": 1})
	if st := r.Server().Stats(); st.GivenUp != 2 {
		t.Errorf("given up %d, want 2: an answer read whole, or cut by its fault, is not given up", st.GivenUp)
	}
}
