package llm

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/race"
)

// allocatedBy reports the bytes allocated while f ran (the server's
// included: it writes from a small buffer). Under the race detector,
// sync.Pool drops items at random, so that net/http's pooled copy buffers
// are allocated again and again: the tests bound it only without.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWholeResponseAtTheCapTakesItsSize sends a non-streamed answer just
// under the 64 MiB cap, with its length declared and without (chunked): it
// is read into one buffer and decoded in place, its answer text decoded
// only as far as it is kept (1 MiB), so that a request in flight costs
// about the body's size, not three times it (the buffer doubling, a copy
// of the content in the decoded chunk, the whole text appended before
// the cut).
func TestWholeResponseAtTheCapTakesItsSize(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 64 MiB responses: TestWholeResponseOverTheCap covers the cap and the buffer's sizing; only the heap at the cap is left out")
	}
	const head = `{"id":"cmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`
	const tail = `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7}}`
	size := maxJSONResponse - 4096
	for _, tc := range []struct {
		name     string
		declared bool
		bound    float64 // allocated bytes per body byte
	}{
		{"with Content-Length", true, 1.3},
		{"chunked", false, 2.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileServer(t, ChatCompletions, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				if tc.declared {
					w.Header().Set("Content-Length", strconv.Itoa(size))
				}
				io.WriteString(w, head)
				io.Copy(w, &repeatReader{'x', size - len(head) - len(tail)})
				io.WriteString(w, tail)
			})
			req := Request{Body: map[string]any{"model": "m", "messages": chatBody["messages"], "stream": false}, KeepText: true}
			var res *Result
			allocated := allocatedBy(func() { res = c.Stream(t.Context(), req) })
			if !res.OK || res.OutputTokens != 7 || res.FinishReason != "stop" {
				t.Fatalf("class %q (%s), %d tokens, finish %q; want ok with 7 tokens and stop", res.Class, res.Error, res.OutputTokens, res.FinishReason)
			}
			if len(res.Text) != maxKeptText || !res.TextTruncated || strings.Trim(res.Text, "x") != "" {
				t.Errorf("text of %d bytes, truncated %v; want the first %d bytes of the answer, cut", len(res.Text), res.TextTruncated, maxKeptText)
			}
			t.Logf("a response of %s allocated %s", mib(size), mib(int(allocated)))
			if per := float64(allocated) / float64(size); per > tc.bound && !race.Enabled {
				t.Errorf("a response of %d MiB allocated %d MiB (%.2f times its size), want at most %.1f times",
					size>>20, allocated>>20, per, tc.bound)
			}
		})
	}
}

// TestGiantLinesTakeTheirSize streams events whose one data line is close
// to the 4 MiB line cap: the line is read into a buffer that stays with the
// stream, decoded where it lies, and its text kept only up to 1 MiB, so
// that the stream allocates one line's buffer as it grows (twice a line)
// and the kept text, not three or four times each line's size.
func TestGiantLinesTakeTheirSize(t *testing.T) {
	if race.Enabled {
		t.Skip("a measure of allocations, which mean nothing under the race detector: TestLineOverTheCapIsDecode and TestProtocolFaults stream lines of MiBs, SSE and NDJSON, under it, TestGiantLinesTakeTheirSize measures them without -race")
	}
	const lines = 8
	content := strings.Repeat("x", DefaultMaxLineSize-128)
	for _, tc := range []struct {
		name        string
		api         API
		contentType string
		line, last  string
		perLine     float64 // what each line may allocate, in lines
	}{
		// The line decoded in place; the buffer growing once, and the
		// kept text, are 2.5 lines in all: 0.3 of a line each.
		{"SSE", ChatCompletions, "text/event-stream", `data: {"choices":[{"index":0,"delta":{"content":"` + content + `"}}]}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n", 0.4},
		// encoding/json copies the content out of an Ollama line: one
		// line each, and the buffer and the kept text.
		{"NDJSON", OllamaChat, "application/x-ndjson", `{"message":{"role":"assistant","content":"` + content + `"},"done":false}` + "\n",
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","eval_count":8}` + "\n", 1.4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			event := []byte(tc.line) // made once: the server's allocations count too
			c := hostileServer(t, tc.api, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				for range lines {
					w.Write(event)
				}
				io.WriteString(w, tc.last)
			})
			req := hostileRequest(tc.api)
			req.KeepText = true
			var res *Result
			allocated := allocatedBy(func() { res = c.Stream(t.Context(), req) })
			if !res.OK || res.Chunks != lines || len(res.Text) != maxKeptText || !res.TextTruncated {
				t.Fatalf("class %q (%s), %d chunks, text of %d bytes; want ok with %d chunks and the text cut at %d bytes",
					res.Class, res.Error, res.Chunks, len(res.Text), lines, maxKeptText)
			}
			t.Logf("a stream of %d lines of %s allocated %s", lines, mib(len(tc.line)), mib(int(allocated)))
			if per := float64(allocated) / float64(lines*len(tc.line)); per > tc.perLine {
				t.Errorf("a stream of %d lines of %s allocated %s, %.2f lines per line; want at most %.1f",
					lines, mib(len(tc.line)), mib(int(allocated)), per, tc.perLine)
			}
		})
	}
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// declaredLength reads Content-Length, and costs a stream, which declares
// none, no allocation.
func TestDeclaredLength(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int64
	}{{"", -1}, {"0", 0}, {"67104768", 67104768}, {"-5", -1}, {"12x", -1}, {"99999999999999999999", -1}} {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Content-Length", tc.value)
		}
		if got := declaredLength(h); got != tc.want {
			t.Errorf("Content-Length %q: %d, want %d", tc.value, got, tc.want)
		}
	}
	if race.Enabled {
		return // allocation counts are not meaningful under the race detector
	}
	stream := http.Header{"Content-Type": {"text/event-stream"}}
	if n := testing.AllocsPerRun(100, func() { declaredLength(stream) }); n != 0 {
		t.Errorf("%v allocations for a header without Content-Length", n)
	}
}
