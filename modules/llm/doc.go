// Package llm is llmrun's LLM client: it sends generation requests to
// OpenAI-compatible servers, reads their streamed responses (SSE), takes a
// timestamp for every token-bearing chunk as its bytes are read, and returns
// one Result per request with TTFT, TPOT, ITL, E2E and token counts.
//
// # Measurements
//
// The request start is when the HTTP transport asks for a connection, just
// before the request is written (Timings.Queue is the wait for that
// connection). From it:
//
//   - TTFT: to the first chunk carrying generated text, reasoning text or a
//     tool-call delta. A role-only chunk or one with empty content is not a
//     token. TTFO: to the first answer (non-reasoning) token.
//   - E2E: to the end of the stream: the "[DONE]" event, or the end of the
//     connection after a chunk with a finish_reason.
//   - ITL: each gap between consecutive token-bearing chunks.
//   - TPOT: (E2E − TTFT) / (OutputTokens − 1), when OutputTokens > 1.
//   - OutputTokens: usage.completion_tokens when the server sends usage
//     (streaming requests ask for it with stream_options.include_usage),
//     else the number of token-bearing chunks.
//
// A request whose body says "stream": false, or a server that answers JSON
// to a streaming request, gets one whole response: its answer arrives at
// its end, so TTFT = TTFO = E2E, and it has no ITL nor TPOT.
//
// # Failures and retries
//
// The client never retries a request. The only re-send is net/http's own
// redial when a reused keep-alive connection turns out to be closed before
// any byte of the request was written on it, which the server never saw
// (and, net/http's rule, after a broken reused connection when the request
// carries an Idempotency-Key header).
// Every failure is reported in the Result with an ErrorClass; an API key or
// other credential header value never appears in its message.
//
// The package is plain Go, usable without JavaScript; js.go beside it is the
// thin binding that scripts import as 'llm'.
package llm
