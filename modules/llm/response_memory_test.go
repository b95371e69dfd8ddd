package llm

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// allocatedBy reports the bytes allocated while f ran (the server's
// included: it writes from a small buffer).
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
		t.Skip("sends 64 MiB responses")
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
			if per := float64(allocated) / float64(size); per > tc.bound {
				t.Errorf("a response of %d MiB allocated %d MiB (%.2f times its size), want at most %.1f times",
					size>>20, allocated>>20, per, tc.bound)
			}
		})
	}
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
