// Package llmsim is a simulated OpenAI-compatible inference server that
// behaves like a continuous-batching engine (vLLM-like). It is llmrun's
// embedded default target, the backbone of its tests and what `llmrun sim`
// serves; like net/http/httptest it is a plain package that depends on the
// rest of llmrun only for its tokenizers (package internal/tokenizer).
//
// # Endpoints
//
//   - POST /v1/chat/completions and POST /v1/completions, streamed as
//     server-sent events when "stream" is true, a single JSON body otherwise.
//   - GET /v1/models lists the configured model.
//   - GET /health answers 200 with an empty body.
//   - GET /stats answers the server's counters (Stats) as JSON, the
//     prefix cache's hits and queries among them, and Config.InstanceID,
//     the name its starter gave it to tell it from another server.
//   - GET /metrics answers the engine's state in vLLM's Prometheus
//     metrics (names, types, labels and buckets of vLLM's
//     PrometheusStatLogger; see metrics.go): running and waiting
//     requests, KV cache usage against Config.KVCacheBlocks, prefix cache
//     queries and hits, prompt and generation tokens, successes by
//     finished_reason, and the per-request histograms (TTFT, inter-token
//     latency, e2e, queue, prefill, decode, inference time). Its counters
//     agree with /stats where both count the same thing.
//   - GET /dcgm/metrics answers as NVIDIA's DCGM exporter would for
//     Config.GPUs simulated GPUs (see dcgm.go): power rising with the
//     running batch, and an energy counter that is its exact integral.
//   - Anthropic's POST /v1/messages, Ollama's POST /api/chat and
//     /api/generate, TGI's POST /generate_stream, Triton's POST
//     /v2/models/{model}[/versions/{version}]/generate_stream and
//     /generate, POST /v1/embeddings, and POST /v1/rerank, /v2/rerank
//     and /rerank (vLLM's rerank, or TEI's for a body with "texts"),
//     from the same engine.
//   - OpenAI's POST /v1/responses (responses.go): the Responses API's
//     events, its responses stored for previous_response_id.
//
// Listen serves them over HTTP/1.1 and, on the same port, HTTP/2 without
// TLS (h2c with prior knowledge).
//
// Any model name is accepted and echoed back in responses; a request
// without one gets Config.Model. Sampling parameters (temperature, top_p,
// ...) are accepted and ignored. Honoured: max_tokens (and, for chat,
// max_completion_tokens, which wins when both are given), min_tokens,
// ignore_eos, stream and stream_options.include_usage (ignored unless
// streaming). Only n = 1 is supported. Malformed requests get 400 with an
// OpenAI-style error body.
//
// # Stream format
//
// Every event is `data: {json}` followed by a blank line, in OpenAI's chunk
// format. A chat stream starts, like vLLM's, with a role-only chunk
// (delta {"role":"assistant","content":""}) sent together with the first
// token; then one chunk per generated token; then a chunk with an empty
// delta (chat) or empty text (completions) carrying finish_reason; then,
// when stream_options.include_usage is set, a chunk with "choices":[] and
// the usage block (every other chunk then carries "usage":null, as
// OpenAI's do); and finally `data: [DONE]`.
//
// # Tokens
//
// Prompt tokens are counted with Config.Tokenizer (--tokenizer), by
// default cl100k_base (o200k_base is the other built-in encoding): a text
// counts its tokens. A chat request counts, for each message, 3 plus the
// tokens of its text content (none when empty; the text parts of a content
// array are joined, other parts count nothing), and 3 more for the
// reply's priming; Anthropic's top-level system prompt counts its tokens
// alone. A plain prompt (completions, Ollama's generate, TGI's inputs,
// Triton's text_input) counts its tokens, at least 1, or one per id when
// given as token ids; so does each input of an embeddings request. The
// tokenizer "bytes" counts ceil(bytes/4) per text instead: no tokenizer,
// the cheapest for load benchmarks, and no prefix cache. Tokenizing costs
// about a microsecond per token; long texts seen before (a shared system
// prompt) are remembered.
//
// Output tokens are words drawn from a fixed vocabulary of common English
// words, each of which is a single token (with or without its leading
// space) in both cl100k_base and o200k_base, so a client that counts tokens
// with a tokenizer agrees with the server's usage. The words and the
// output length come from a random source seeded by Config.Seed and the
// request's arrival number, so a given seed and arrival order always give
// the same text.
//
// Without ignore_eos, the output length is drawn from an exponential
// distribution with mean Config.OutputMean tokens, raised to min_tokens and
// capped at max_tokens; finish_reason is "stop" when the draw ended before
// max_tokens and "length" otherwise. With ignore_eos the output is exactly
// max_tokens long and finish_reason is "length".
//
// # Scheduling
//
// A single engine goroutine simulates continuous batching. Requests join a
// FIFO waiting queue; each engine step admits waiting requests into free
// slots (at most Config.MaxNumSeqs running, and at most
// Config.MaxNumBatchedTokens prompt tokens to prefill per step, though one
// request is always admitted when a slot is free). A step that admitted
// requests is a prefill step: it takes PrefillBase + PrefillPerToken × their
// prompt tokens not in the prefix cache and yields each admitted request's
// first token, while the other running sequences wait. Any other step is
// a decode step: it takes DecodeBase + DecodePerSeq × running sequences and
// yields one token for every running sequence. Steps follow an absolute
// timeline (each deadline is the previous one plus the step's duration),
// so timing does not drift; a loop that falls behind resumes from now
// instead of bursting to catch up. A sequence whose client has gone frees
// its slot at the next step.
//
// So a lone request sees TTFT ≈ PrefillBase + PrefillPerToken × uncached
// prompt tokens and ITL ≈ DecodeBase + DecodePerSeq, and under load
// queueing and the growing batch produce the knee of a real server.
//
// # Prefix cache
//
// Like vLLM's automatic prefix caching, the engine keeps the KV of recent
// prompts in blocks of PrefixBlockTokens (16) tokens, up to
// Config.PrefixCacheBlocks (--prefix-cache-blocks; 0 disables it). A
// prompt's token sequence (for chat, each message's role marker then its
// content's tokens, so that requests sharing a system prompt or a
// conversation's first turns share a prefix; for a plain prompt, its
// tokens) is cut into full blocks, each identified by a chained hash of
// the previous block's hash and its own tokens. When the engine admits a
// request, the leading blocks it finds cached are hits: they are not
// prefilled (PrefillPerToken and MaxNumBatchedTokens count only the
// other tokens), though at least one prompt token always is. After its
// prefill, a request's blocks enter the cache as its most recently used,
// and the least recently used blocks are evicted beyond the capacity, a
// prompt's last blocks before its first. The engine goroutine owns the
// cache; handlers only hash the blocks. Usage reports the cached tokens:
// OpenAI's as "prompt_tokens_details":{"cached_tokens":N} (as vLLM does),
// Anthropic's as cache_read_input_tokens (input_tokens then leaves them
// out), and Stats (GET /stats) counts the prompt tokens looked up and
// found. With the tokenizer "bytes" there are no token ids, so no prefix
// cache, and usage leaves cached tokens out, as it does with the cache
// off. Embeddings requests do not use it.
//
// # Faults
//
// The simulator misbehaves on demand, like the servers and proxies that
// clients must survive. A generation request asks for a fault with the
// header (see ParseFault)
//
//	X-Llmsim-Fault: NAME[;PARAM=VALUE]...
//
// and a server injects faults at random with Config.Faults, one FaultRule
// per fault and rate, given by the repeatable flag
// --fault NAME:RATE[:PARAM=VALUE,...] (see ParseFaultRule). Each request
// draws at most one rule, from a random source seeded by Config.Seed and
// its arrival number, so a run is reproducible; the header, when present,
// replaces the draw. A header that does not parse gets 400. The faults,
// with their parameters at their defaults:
//
//   - refuse: the connection closes without a response, not even a status
//     line.
//   - http_429;retry_after=1: 429 with Retry-After: 1 (seconds) and an
//     OpenAI rate-limit error (type "requests", code
//     "rate_limit_exceeded").
//   - http_5xx;status=500: that status (any of 500 to 599, 503 for
//     instance) with an OpenAI error of type "server_error".
//   - wrong_content_type: 200 with a text/html page.
//   - slow_headers;duration=1s: the request waits that long before it
//     joins the engine's queue, then is answered normally; nothing, headers
//     included, is sent meanwhile.
//
// The other faults strike mid-stream, after `after` tokens (a shorter
// output meets them just before its finish chunk). They apply to streamed
// requests only: a header asking for one on a non-streamed request gets
// 400, and a non-streamed request that draws one is answered normally.
//
//   - reset;after=1: the TCP connection is reset (RST) abruptly.
//   - stall;after=1;duration=1s: nothing is sent for that long, then the
//     stream goes on, with the tokens made meanwhile at once;
//     duration=forever hangs until the client gives up.
//   - malformed;after=1: an event whose data is a chunk cut short, not
//     JSON; then the stream goes on.
//   - big_line;after=1: an extra token chunk whose content is 2 MiB, so a
//     data line over 2 MiB that still parses; then the stream goes on.
//   - error_event;after=1: an OpenAI error event of type "server_error",
//     `data: {"error":{...}}`, then the stream ends, without a finish chunk
//     or [DONE].
//   - early_close;after=1: the response ends cleanly at the HTTP level,
//     without a finish chunk, usage or [DONE].
//
// A fault that answers before the engine never joins its queue; a
// mid-stream fault holds a batch slot like any request and frees it when
// its stream ends. Stats.Faults, also served at GET /stats, counts the
// faults injected, by name.
package llmsim
