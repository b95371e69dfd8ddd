package llmsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fastConfig is a configuration with short steps, for tests that don't
// measure timing.
func fastConfig() Config {
	cfg := DefaultConfig()
	cfg.PrefillBase = time.Millisecond
	cfg.PrefillPerToken = 0
	cfg.DecodeBase = time.Millisecond
	cfg.DecodePerSeq = 0
	return cfg
}

// listen starts a server for the test and closes it at the test's end.
func listen(t testing.TB, cfg Config) *Running {
	t.Helper()
	r, err := Listen(t.Context(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// testClient is an HTTP client with enough idle connections for many
// concurrent streams, which reaches the servers of listenInBubble too.
func testClient(t testing.TB) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 4096, DialContext: dialTest}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post sends body as JSON to path.
func post(ctx context.Context, c *http.Client, url, path string, body any) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.Do(req)
}

// chunk is an OpenAI stream chunk. Decoding rejects unknown fields, so it
// also checks the chunk's shape.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         *string         `json:"text"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// tokenText returns the text a chunk carries, "" if none.
func (c *chunk) tokenText() string {
	if len(c.Choices) == 0 {
		return ""
	}
	switch ch := c.Choices[0]; {
	case ch.Delta != nil && ch.Delta.Content != nil:
		return *ch.Delta.Content
	case ch.Text != nil:
		return *ch.Text
	}
	return ""
}

// streamed is what a client saw of one stream.
type streamed struct {
	start  time.Time // just before the request was sent
	raw    []string  // each event's data
	chunks []chunk   // the events before [DONE], decoded
	// tokenAt holds, for each token-bearing chunk, its arrival time after
	// the request start.
	tokenAt []time.Duration
	e2e     time.Duration
	done    bool // ended with data: [DONE]
}

func (s *streamed) ttft() time.Duration { return s.tokenAt[0] }

func (s *streamed) text() string {
	var b strings.Builder
	for i := range s.chunks {
		b.WriteString(s.chunks[i].tokenText())
	}
	return b.String()
}

// finishReason returns the finish reason of the stream's last choice.
func (s *streamed) finishReason() string {
	for i := len(s.chunks) - 1; i >= 0; i-- {
		if ch := s.chunks[i].Choices; len(ch) > 0 && ch[0].FinishReason != nil {
			return *ch[0].FinishReason
		}
	}
	return ""
}

// stream posts a streaming request and reads the whole stream, strictly:
// every event must be one `data: ` line followed by a blank line.
func stream(ctx context.Context, c *http.Client, url, path string, body map[string]any) (*streamed, error) {
	body["stream"] = true
	start := time.Now()
	resp, err := post(ctx, c, url, path, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		return nil, fmt.Errorf("Content-Type %q", ct)
	}
	s := &streamed{start: start}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) && line == "" {
			s.e2e = time.Since(start)
			return s, nil
		}
		if err != nil {
			return s, err
		}
		at := time.Since(start)
		if s.done {
			return s, fmt.Errorf("event after [DONE]: %q", line)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !strings.HasSuffix(data, "\n") {
			return s, fmt.Errorf("not a data line: %q", line)
		}
		if blank, err := br.ReadString('\n'); blank != "\n" {
			return s, fmt.Errorf("event not followed by a blank line: %q, %v", blank, err)
		}
		data = strings.TrimSuffix(data, "\n")
		s.raw = append(s.raw, data)
		if data == "[DONE]" {
			s.done = true
			continue
		}
		var ch chunk
		dec := json.NewDecoder(strings.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ch); err != nil {
			return s, fmt.Errorf("chunk %q: %w", data, err)
		}
		s.chunks = append(s.chunks, ch)
		if ch.tokenText() != "" {
			s.tokenAt = append(s.tokenAt, at)
		}
	}
}

// mustStream is stream for the test goroutine.
func mustStream(t testing.TB, r *Running, path string, body map[string]any) *streamed {
	t.Helper()
	s, err := stream(t.Context(), testClient(t), r.URL(), path, body)
	if err != nil {
		t.Fatal(err)
	}
	if !s.done {
		t.Fatal("stream ended without [DONE]")
	}
	return s
}

// response is a whole (non-streamed) response.
type response struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Text         *string         `json:"text"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
	} `json:"choices"`
	Usage usage `json:"usage"`
}

// text returns the response's generated text.
func (r *response) text() string {
	if m := r.Choices[0].Message; m != nil {
		return m.Content
	}
	return *r.Choices[0].Text
}

// complete posts a non-streaming request and decodes the response strictly.
func complete(t testing.TB, r *Running, path string, body map[string]any) *response {
	t.Helper()
	resp, err := post(t.Context(), testClient(t), r.URL(), path, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var out response
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("response %s: %v", data, err)
	}
	if len(out.Choices) != 1 {
		t.Fatalf("%d choices, want 1", len(out.Choices))
	}
	return &out
}

// eventually polls cond until it holds, failing the test after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(timeout); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func chatBody(content string, extra map[string]any) map[string]any {
	body := map[string]any{"messages": []map[string]any{{"role": "user", "content": content}}}
	maps.Copy(body, extra)
	return body
}

func completionsBody(prompt any, extra map[string]any) map[string]any {
	body := map[string]any{"prompt": prompt}
	maps.Copy(body, extra)
	return body
}

// getStats reads the simulator's GET /stats.
func getStats(t *testing.T, r *Running) Stats {
	t.Helper()
	resp, err := testClient(t).Get(r.URL() + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}
