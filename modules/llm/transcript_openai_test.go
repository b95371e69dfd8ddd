package llm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Transcripts in the formats vLLM, SGLang and OpenAI stream (written from
// their public API documentation), replayed one byte at a time.
func TestOpenAITranscripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                  string
		class                 ErrorClass
		tokens, chunks        int
		prompt, reasoning     int
		reason, text          string
		firstAnswerAfterFirst bool // TTFO later than TTFT: reasoning came first
	}{
		// A role-only first chunk is not a token; usage arrives in a last
		// chunk with no choices.
		{"testdata/openai-chat-vllm.sse", ErrNone, 6, 4, 17, 0, "stop", "Continuous batching keeps GPUs busy.", false},
		// CRLF line ends and a comment line.
		{"testdata/openai-completions-crlf.sse", ErrNone, 3, 3, 4, 0, "length", " upon a time", false},
		// reasoning_content deltas count as tokens; the answer comes after.
		{"testdata/openai-chat-reasoning.sse", ErrNone, 7, 3, 9, 6, "stop", "4", true},
		// tool_calls deltas are generated output.
		{"testdata/openai-chat-tools.sse", ErrNone, 12, 3, 60, 0, "tool_calls", "", false},
		// An error object mid-stream.
		{"testdata/openai-chat-error.sse", ErrStreamError, 0, 1, 0, 0, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			res := replay(t, tc.file, "text/event-stream")
			if res.Class != tc.class {
				t.Fatalf("class %q (%s), want %q", res.Class, res.Error, tc.class)
			}
			if res.Chunks != tc.chunks {
				t.Errorf("token-bearing chunks %d, want %d", res.Chunks, tc.chunks)
			}
			if tc.class != ErrNone {
				return
			}
			if res.OutputTokens != tc.tokens || res.TokenSource != TokensFromUsage || res.PromptTokens != tc.prompt || res.ReasoningTokens != tc.reasoning {
				t.Errorf("tokens %d (%s), prompt %d, reasoning %d; want %d from usage, %d, %d",
					res.OutputTokens, res.TokenSource, res.PromptTokens, res.ReasoningTokens, tc.tokens, tc.prompt, tc.reasoning)
			}
			if res.FinishReason != tc.reason || res.Text != tc.text {
				t.Errorf("finish %q text %q, want %q %q", res.FinishReason, res.Text, tc.reason, tc.text)
			}
			if res.TTFT <= 0 || res.E2E < res.TTFT || len(res.ITL) != tc.chunks-1 {
				t.Errorf("ttft %v e2e %v itl %d gaps", res.TTFT, res.E2E, len(res.ITL))
			}
			if tc.firstAnswerAfterFirst && !(res.TTFO > res.TTFT) {
				t.Errorf("ttfo %v should come after ttft %v", res.TTFO, res.TTFT)
			}
		})
	}
	res := replay(t, "testdata/openai-chat-tools.sse", "text/event-stream")
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_weather" || res.ToolCalls[0].Arguments != `{"city": "Paris"}` || res.ToolCalls[0].ID != "call_abc" {
		t.Errorf("tool calls %+v", res.ToolCalls)
	}
}

// Engine-specific fields pass through as they are, and extra_body's fields
// are lifted into the body (OpenAI's Python client's escape hatch).
func TestRequestExtrasPassThrough(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	c.Stream(t.Context(), Request{Body: map[string]any{
		"prompt": "p", "ignore_eos": true, "min_tokens": 8,
		"extra_body": map[string]any{"top_k": 20, "repetition_penalty": 1.1, "min_tokens": 16},
	}})
	want := `{"ignore_eos":true,"min_tokens":16,"model":"m","prompt":"p","repetition_penalty":1.1,"stream":true,"stream_options":{"include_usage":true},"top_k":20}`
	if got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
	res := c.Stream(t.Context(), Request{Body: map[string]any{"prompt": "p", "extra_body": "top_k=20"}})
	if res.Class != ErrInvalidRequest || !strings.Contains(res.Error, "extra_body") {
		t.Errorf("a non-object extra_body: %s %s", res.Class, res.Error)
	}
}

// FuzzOpenAIStream feeds arbitrary bytes, seeded with the transcripts in
// testdata, through the whole OpenAI stream path: it must never panic, and
// what it reports must hold together.
func FuzzOpenAIStream(f *testing.F) {
	seedTranscripts(f, "testdata/openai-*.sse")
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, func(rr *responseReader, body io.Reader, res *Result) error {
			return openaiProtocol{}.read(rr, "text/event-stream", body, true, res)
		})
		if res == nil {
			return
		}
		if res.Chunks < 0 || res.OutputTokens < 0 || len(res.ITL) != max(res.Chunks-1, 0) || res.E2E < res.TTFT {
			t.Fatalf("inconsistent result %+v", res)
		}
	})
}

// Reasoning is reported apart from the answer: the server's count when its
// usage has one, else the reasoning-only chunks, in llm_reasoning_tokens.
func TestReasoningTokensReportedApart(t *testing.T) {
	t.Parallel()
	m := RegisterMetrics(metrics.NewRegistry())
	for _, tc := range []struct {
		file            string
		chunks, metric  int
		fromUsageTokens int
	}{
		{"testdata/openai-chat-reasoning.sse", 2, 6, 6}, // usage: reasoning_tokens 6
		{"testdata/anthropic-messages.sse", 2, 2, 0},    // Anthropic's usage does not split them
		{"testdata/openai-chat-vllm.sse", 0, 0, 0},      // no reasoning at all
	} {
		var res *Result
		if strings.HasPrefix(tc.file, "testdata/anthropic") {
			res = replayAnthropic(t, tc.file)
		} else {
			res = replay(t, tc.file, "text/event-stream")
		}
		if res.ReasoningChunks != tc.chunks || res.ReasoningTokens != tc.fromUsageTokens {
			t.Errorf("%s: reasoning chunks %d tokens %d, want %d and %d", tc.file, res.ReasoningChunks, res.ReasoningTokens, tc.chunks, tc.fromUsageTokens)
		}
		got := 0.0
		for _, s := range m.AppendSamples(nil, nil, res) {
			if s.Metric == m.ReasoningTokens {
				got += s.Value
			}
		}
		if got != float64(tc.metric) {
			t.Errorf("%s: llm_reasoning_tokens %g, want %d", tc.file, got, tc.metric)
		}
	}
}
