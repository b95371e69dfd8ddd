package llm

import "time"

// API names the wire protocol a request uses.
type API string

// Supported APIs.
const (
	// ChatCompletions is OpenAI's POST /v1/chat/completions.
	ChatCompletions API = "chat"
	// Completions is OpenAI's POST /v1/completions.
	Completions API = "completions"
)

// Request is one generation request. Body holds the JSON fields sent to the
// server as the user gave them (messages or prompt, max_tokens, temperature,
// ignore_eos, ...); the client adds "stream", "stream_options" and a default
// "model" where they are missing.
type Request struct {
	// API selects the endpoint; empty means inferred from Body: "messages"
	// → chat, "prompt" → completions.
	API API
	// Body is the JSON request body.
	Body map[string]any
	// Headers are extra HTTP headers for this request only.
	Headers map[string]string
	// Timeout overrides the client's total request timeout when > 0.
	Timeout time.Duration
	// KeepText asks for the generated text in Result.Text.
	KeepText bool
}

// ErrorClass classifies a failed request. The empty class means success.
type ErrorClass string

// Error classes, counted per class in the summary.
const (
	ErrNone     ErrorClass = ""
	ErrConnect  ErrorClass = "connect"  // could not connect (refused, DNS, TLS)
	ErrTimeout  ErrorClass = "timeout"  // the request timeout (Config.Timeout, Request.Timeout) passed
	ErrHTTP4xx  ErrorClass = "http_4xx" // 4xx status other than 429
	ErrHTTP429  ErrorClass = "http_429" // rate limited
	ErrHTTP5xx  ErrorClass = "http_5xx" // 5xx status
	ErrStream   ErrorClass = "stream"   // error event in the stream, or the stream was cut before its end
	ErrDecode   ErrorClass = "decode"   // a chunk or response that is not valid JSON of the expected shape, an unexpected content type or status (1xx, 3xx)
	ErrCanceled ErrorClass = "canceled" // the caller's context ended: the run stopped the request (end of graceful stop, Ctrl-C); not a failure of the server
	// ErrInvalidRequest is a request the client refused to send: no
	// "messages" nor "prompt" to infer the API from, an unknown API, a
	// "stream" that is not a boolean, or a body that is not valid JSON.
	ErrInvalidRequest ErrorClass = "invalid_request"
)

// TokenSource says where Result.OutputTokens came from.
type TokenSource string

// Token sources, in order of preference.
const (
	TokensFromUsage  TokenSource = "usage"  // the server's usage block
	TokensFromChunks TokenSource = "chunks" // one token per token-bearing chunk
)

// Timings are the connection phases of a request, in milliseconds.
type Timings struct {
	// Queue is the time from the request start until a connection was
	// available: about 0 when an idle keep-alive connection was reused at
	// once, Connect and more when one was opened.
	Queue float64 `json:"queue"`
	// Connect is the time to open a new connection, TCP and TLS (0 when
	// reused).
	Connect float64 `json:"connect"`
	// TTFB is request start → first response byte (headers).
	TTFB float64 `json:"ttfb"`
}

// Result is what one request measured. Times are milliseconds as float64,
// measured from the request start (just before the request is written).
// Definitions follow docs/metrics.md.
type Result struct {
	OK     bool       `json:"ok"`
	Status int        `json:"status"`
	Error  string     `json:"error,omitempty"`
	Class  ErrorClass `json:"errorClass,omitempty"`

	API   API    `json:"api"`
	Model string `json:"model"`

	// Stream reports whether the response was streamed (SSE). A
	// non-streamed response brings its whole answer at its end: TTFT =
	// TTFO = E2E, and there is no TPOT nor ITL.
	Stream bool `json:"stream"`

	// TTFT is request start → first chunk carrying generated text,
	// reasoning text or a tool-call delta; 0 when no token arrived.
	TTFT float64 `json:"ttft"`
	// TTFO is request start → first answer (non-reasoning) token; equal to
	// TTFT without reasoning, 0 when no answer token arrived.
	TTFO float64 `json:"ttfo"`
	// TPOT is (E2E − TTFT) / (OutputTokens − 1) for a streamed response
	// with a token, 0 unless OutputTokens > 1.
	TPOT float64 `json:"tpot"`
	// E2E is request start → end of the response ([DONE], or the close
	// of a stream after its finish_reason); for a failed request, the time
	// until the failure.
	E2E float64 `json:"e2e"`
	// ITL holds each gap between consecutive token-bearing chunks.
	ITL []float64 `json:"itl,omitempty"`

	// Chunks counts the token-bearing chunks received.
	Chunks int `json:"chunks"`
	// OutputTokens is the number of generated tokens, from TokenSource.
	OutputTokens int         `json:"outputTokens"`
	TokenSource  TokenSource `json:"tokenSource"`
	// PromptTokens is the server's prompt token count (usage), 0 if unknown.
	PromptTokens int `json:"promptTokens"`
	// ReasoningTokens is the server's count of reasoning tokens among the
	// output tokens (usage.completion_tokens_details), 0 if unknown.
	ReasoningTokens int    `json:"reasoningTokens"`
	FinishReason    string `json:"finishReason,omitempty"`
	// Text is the generated answer text (content or text; not reasoning
	// nor tool calls), only when Request.KeepText was set.
	Text string `json:"text,omitempty"`

	Timings Timings `json:"timings"`

	// Start is the time of the request start (with a monotonic reading).
	Start time.Time `json:"-"`
}

// End is the time the request ended: its start plus E2E.
func (r *Result) End() time.Time {
	return r.Start.Add(time.Duration(r.E2E * float64(time.Millisecond)))
}
