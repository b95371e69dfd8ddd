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
// A request with Arrivals counts its output tokens as they arrive, for the
// run's live figures: one per token-bearing chunk, with one atomic add on
// a counter looked up once per request, then what the final count has
// beyond the chunks once the request completed.
//
// # Failures and retries
//
// Every failure is reported in the Result with an ErrorClass: connect, dns,
// tls, timeout (Config.Timeout, the total), idle_timeout (Config.IdleTimeout:
// a body that stops bringing bytes once started), http_4xx, http_429 (its
// Retry-After in Result.RetryAfter), http_5xx, stream_error (an error inside
// a 2xx response), cut (the connection closed before the end), decode, and
// invalid_request; canceled when the caller's context ended. An API key or
// other credential header value never appears in its message.
//
// The client retries a request only under an opt-in RetryPolicy
// (Config.Retry, Request.Retry), and only when no token had arrived; the
// Result is then the final attempt's, timed from that attempt's start,
// with Attempts and the classes of the attempts Retried. The only other
// re-send is net/http's own redial when a reused keep-alive connection
// turns out to be closed before any byte of the request was written on it,
// which the server never saw (and, net/http's rule, after a broken reused
// connection when the request carries an Idempotency-Key header).
//
// # Transport
//
// Each Client has its own connection pool with no cap below the load
// (unless Config.MaxConns), keep-alive, proxies from the environment and
// no compression. It speaks HTTP/1.1 unless Config.HTTP2; Config.TLS
// trusts extra CAs or skips verification.
//
// # Scripts and the run
//
// The package is plain Go, usable without JavaScript; its binding, the
// module scripts import as 'llm', is the package llmjs. Its llm.stream()
// returns the Result as an object built from Result's fields, and hands a
// Record of each request that ended (Result.Record) to the run's hooks:
// the one record that the per-request outputs, the timeline and the live
// aggregates read; and the Result itself to a consumer that needs more of
// it (llmrun bench). A warmup iteration's requests reach only the run's
// observer.
package llm
