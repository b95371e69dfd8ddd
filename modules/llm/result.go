package llm

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

// API names the wire protocol a request uses.
type API string

// Supported APIs.
const (
	// ChatCompletions is OpenAI's POST /v1/chat/completions.
	ChatCompletions API = "chat"
	// Completions is OpenAI's POST /v1/completions.
	Completions API = "completions"
	// OllamaChat is Ollama's POST /api/chat: newline-delimited JSON.
	OllamaChat API = "ollama-chat"
	// OllamaGenerate is Ollama's POST /api/generate: newline-delimited
	// JSON.
	OllamaGenerate API = "ollama-generate"
	// TGI is Hugging Face Text Generation Inference's POST
	// /generate_stream (SSE), or POST /generate with "stream": false.
	TGI API = "tgi"
)

// Request is one generation request. Body holds the JSON fields sent to the
// server as the user gave them, in its API's format (OpenAI: messages or
// prompt, max_tokens, temperature, ignore_eos, ...; Ollama: messages or
// prompt, options; TGI: inputs, parameters); the client adds the API's
// streaming flag and defaults where they are missing: OpenAI's "stream",
// "stream_options" and "model", Ollama's "stream" and "model", TGI's
// parameters.details.
type Request struct {
	// API selects the protocol and endpoint (one of APIs); empty means the
	// client's (Config.API), else inferred from Body: "messages" → chat,
	// "prompt" → completions.
	API API
	// Body is the JSON request body.
	Body map[string]any
	// Headers are extra HTTP headers for this request only.
	Headers map[string]string
	// Timeout overrides the client's total request timeout when > 0.
	Timeout time.Duration
	// IdleTimeout overrides the client's idle timeout when > 0; < 0
	// (NoIdleTimeout) means none for this request; 0 keeps the client's.
	IdleTimeout time.Duration
	// Retry, when not nil, replaces the client's retry policy for this
	// request.
	Retry *RetryPolicy
	// KeepText asks for the generated text in Result.Text.
	KeepText bool
	// Arrivals, when not nil, counts the response's output tokens as they
	// arrive, into the counter of the request's model: one for each
	// token-bearing chunk of a stream as its bytes are parsed, then, once
	// the request completed, what its OutputTokens has beyond those
	// chunks (a server that sends several tokens per chunk, a
	// non-streamed answer). Nothing is ever taken back: the chunks of a
	// request that then fails or is cut stay counted, since they were
	// generated.
	Arrivals TokenArrivals
}

// ErrorClass classifies a failed request. The empty class means success.
type ErrorClass string

// Error classes, counted per class in the summary.
const (
	ErrNone        ErrorClass = ""
	ErrConnect     ErrorClass = "connect"      // the connection could not be opened (refused, unreachable, dial timeout), DNS and TLS apart
	ErrDNS         ErrorClass = "dns"          // the server's name could not be resolved
	ErrTLS         ErrorClass = "tls"          // the TLS handshake failed (unknown authority, bad certificate, alert, not TLS)
	ErrTimeout     ErrorClass = "timeout"      // the request timeout (Config.Timeout, Request.Timeout) passed
	ErrIdleTimeout ErrorClass = "idle_timeout" // no byte of the response body for the idle timeout, once the body had started
	ErrHTTP4xx     ErrorClass = "http_4xx"     // 4xx status other than 429
	ErrHTTP429     ErrorClass = "http_429"     // rate limited; Result.RetryAfter holds the server's Retry-After
	ErrHTTP5xx     ErrorClass = "http_5xx"     // 5xx status
	ErrStreamError ErrorClass = "stream_error" // an error event or error object in the stream (or in a 2xx JSON response)
	ErrCut         ErrorClass = "cut"          // the connection closed (or reset) before the end of the response, headers included
	ErrDecode      ErrorClass = "decode"       // a chunk or response that is not valid JSON of the expected shape, an oversized line, an unexpected content type or status (1xx, 3xx), a body plainly of another kind (gzip, HTML, an SSH banner, binary), an implausible count from the server, a redirect not followed
	ErrCanceled    ErrorClass = "canceled"     // the caller's context ended: the run stopped the request (end of graceful stop, Ctrl-C); not a failure of the server
	// ErrInvalidRequest is a request the client refused to send: no
	// "messages" nor "prompt" to infer the API from, an unknown API, a
	// "stream" that is not a boolean, a body that is not valid JSON, a
	// header whose name or value HTTP does not allow, or an invalid retry
	// policy.
	ErrInvalidRequest ErrorClass = "invalid_request"
	// ErrUnknown is the class outputs write for a failed request that
	// has none.
	ErrUnknown ErrorClass = "unknown"
)

// ErrorClasses are every failure class, in the order of the docs.
var ErrorClasses = []ErrorClass{
	ErrConnect, ErrDNS, ErrTLS, ErrTimeout, ErrIdleTimeout, ErrHTTP4xx, ErrHTTP429, ErrHTTP5xx,
	ErrStreamError, ErrCut, ErrDecode, ErrInvalidRequest, ErrCanceled,
}

// TokenSource says where Result.OutputTokens came from.
type TokenSource string

// Token sources, in order of preference.
const (
	TokensFromUsage     TokenSource = "usage"     // the server's count: OpenAI's usage block, Ollama's eval_count, TGI's details.generated_tokens
	TokensFromTokenizer TokenSource = "tokenizer" // the client's tokenizer (Config.Tokenizer) run over the generated text
	TokensFromChunks    TokenSource = "chunks"    // one token per token-bearing chunk
)

// ToolCall is one tool (function) call of a response.
type ToolCall struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Name string `json:"name"`
	// Arguments is the call's arguments as the model wrote them: usually
	// a JSON object, not checked.
	Arguments string `json:"arguments"`
}

// Timings are the connection phases of a request's final attempt, in
// milliseconds. DNS, Connect and TLS are 0 when a keep-alive connection was
// reused.
type Timings struct {
	// Queue is the time from the request start until a connection was
	// available: about 0 when an idle keep-alive connection was reused at
	// once, DNS + Connect + TLS and more when one was opened.
	Queue float64 `json:"queue"`
	// DNS is the name lookup (0 for an IP address).
	DNS float64 `json:"dns"`
	// Connect is the TCP connect, to the server or its proxy.
	Connect float64 `json:"connect"`
	// TLS is the TLS handshake (https).
	TLS float64 `json:"tls"`
	// TTFB is request start → first response byte (headers).
	TTFB float64 `json:"ttfb"`
}

// timingsOf converts the connection phases the transport measured.
func timingsOf(p transport.Phases) Timings {
	return Timings{Queue: ms(p.Queue), DNS: ms(p.DNS), Connect: ms(p.Connect), TLS: ms(p.TLS), TTFB: ms(p.TTFB)}
}

// Result is what one request measured. Times are milliseconds as float64,
// measured from the request start (just before the request is written) of
// its final attempt: a retried request's failed attempts and the waits
// between them are in none of its times. Definitions follow
// docs/metrics.md.
//
// Its fields are also the object llm.stream() returns to scripts, built
// from them (jsResults): each field a property named by its json tag,
// in field order, whatever omitempty says, except as its js tag says: "-"
// leaves it out, "optional" leaves it out unless the script asked for it
// (stream()'s itl option), "if=Field" leaves it out while Field is zero.
// Adding a field adds it to scripts' results; what outputs keep of a
// request is its Record.
type Result struct {
	OK     bool       `json:"ok"`
	Status int        `json:"status"`
	Error  string     `json:"error,omitempty"`
	Class  ErrorClass `json:"errorClass,omitempty"`
	// RetryAfter is the server's Retry-After of an error response (429,
	// 503), in seconds; 0 when it sent none.
	RetryAfter float64 `json:"retryAfter,omitempty"`
	// Attempts is how many times the request was sent: 1, or more when
	// the retry policy retried it. Every measurement is of the final
	// attempt.
	Attempts int `json:"attempts"`
	// Retried holds the class of each attempt that failed and was
	// retried, in order (len(Retried) == Attempts-1).
	Retried []ErrorClass `json:"retried,omitempty"`
	// Proto is the HTTP version of the response: "HTTP/1.1", "HTTP/2.0";
	// "" when none arrived.
	Proto string `json:"proto,omitempty"`

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

	// Chunks counts the token-bearing chunks received.
	Chunks int `json:"chunks"`
	// OutputTokens is the number of generated tokens, from TokenSource.
	OutputTokens int `json:"outputTokens"`
	// PromptTokens is the server's prompt token count (usage), 0 if unknown.
	PromptTokens int `json:"promptTokens"`
	// CachedTokens is the share of PromptTokens that the server reports as
	// served from its prefix cache (OpenAI's
	// usage.prompt_tokens_details.cached_tokens, Anthropic's
	// cache_read_input_tokens); 0 if unknown.
	CachedTokens int `json:"cachedTokens"`
	// RequestedPromptTokens is the prompt's length as the script gave it
	// (stream()'s promptTokens option: the length it synthesized), 0 when
	// not given; the summary compares it with PromptTokens.
	RequestedPromptTokens int `json:"requestedPromptTokens,omitempty" js:"-"`
	// UniquePrompt says that the script declared the prompt unique
	// (stream()'s uniquePrompt option: made by prompts.synthetic without a
	// shared prefix), so that the summary can tell when a server served
	// it from its prefix cache.
	UniquePrompt bool `json:"uniquePrompt,omitempty" js:"-"`
	// cachedReported is set when the server reported CachedTokens, 0
	// included: only then does llm_cached_tokens get a sample.
	cachedReported bool
	// ReasoningTokens is the server's count of reasoning tokens among the
	// output tokens (usage.completion_tokens_details), 0 if unknown.
	ReasoningTokens int `json:"reasoningTokens"`
	// ReasoningChunks counts the token-bearing chunks that carried only
	// reasoning (thinking) text: the client's own count, for servers whose
	// usage does not split reasoning from answer tokens.
	ReasoningChunks int `json:"reasoningChunks"`
	// TokenSource says where OutputTokens came from.
	TokenSource  TokenSource `json:"tokenSource"`
	FinishReason string      `json:"finishReason,omitempty"`
	// Text is the generated answer text (content or text; not reasoning
	// nor tool calls), only when Request.KeepText was set.
	Text string `json:"text,omitempty"`
	// TextTruncated says that Text, the reasoning text kept for the
	// tokenizer, or the tool calls' arguments (together) passed
	// maxKeptText (1 MiB) and were cut there; the token counts stay
	// exact, from usage or the chunks (the tokenizer does not count a cut
	// text).
	TextTruncated bool `json:"textTruncated,omitempty"`
	// CheckTokens is a second count of the output tokens of a request
	// whose OutputTokens came from usage: the tokenizer's when the client
	// has one (CheckSource "tokenizer"), else, for a streamed response, its
	// token-bearing chunks (CheckSource "chunks"); 0 and "" otherwise. The
	// summary warns when the two sums disagree.
	CheckTokens int         `json:"checkTokens,omitempty" js:",if=CheckSource"`
	CheckSource TokenSource `json:"checkSource,omitempty" js:",if=CheckSource"`
	// ToolCalls are the tool calls the model made, assembled from their
	// streamed deltas (OpenAI's tool_calls), in index order; nil when none.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ResponseID is the id of a Responses API response (API responses),
	// which a later request continues with "previous_response_id"; ""
	// otherwise.
	ResponseID string `json:"responseId,omitempty" js:",if=ResponseID"`

	// Embeddings and Dimensions are an embeddings response's number of
	// vectors and their dimension (API embeddings); 0 otherwise.
	Embeddings int `json:"embeddings,omitempty"`
	Dimensions int `json:"dimensions,omitempty"`

	// Documents is the number of documents a rerank request sent (APIs
	// rerank and tei-rerank), whether scored or cut by top_n; 0
	// otherwise.
	Documents int `json:"documents,omitempty" js:",if=Documents"`
	// Rerank holds a rerank response's scores, in the server's order
	// (best first for vLLM and TEI); nil otherwise.
	Rerank []RerankScore `json:"rerank,omitempty" js:",if=Documents"`
	// ImageCount, ImageBytes and ImagePixels are what the request sent of
	// images in its messages' content parts: how many, their bytes (each
	// data URL's decoded length) and their pixels (width × height, from
	// each image's header); an image sent by http(s) URL counts in
	// ImageCount only. 0 without images.
	ImageCount  int `json:"imageCount,omitempty"`
	ImageBytes  int `json:"imageBytes,omitempty"`
	ImagePixels int `json:"imagePixels,omitempty"`

	Timings Timings `json:"timings"`

	// ServerTimings are the durations the server reported about the
	// request, in milliseconds, where its protocol has them: Ollama's
	// "total" (total_duration), "load" (load_duration), "promptEval"
	// (prompt_eval_duration) and "eval" (eval_duration). nil when none.
	ServerTimings map[string]float64 `json:"serverTimings,omitempty"`

	// ITL holds each gap between consecutive token-bearing chunks, up to
	// maxExactITL (4096) of them: the first ones.
	ITL []float64 `json:"itl,omitempty" js:",optional"`
	// ITLFolded counts the gaps beyond ITL's first maxExactITL, which
	// are kept folded into fixed-size log buckets (itlFold): they count in
	// llm_itl and in the request's ITL mean and p99 all the same, within
	// ±0.5 %.
	ITLFolded int `json:"itlFolded,omitempty" js:",optional"`
	itlFold   *itlFold
	// attempt is the number of the client's attempt the Result holds
	// (attempts), which a record's ITLGaps checks; 0 for a Result not
	// filled by the client.
	attempt uint64

	// Start is the time of the final attempt's start (with a monotonic
	// reading).
	Start time.Time `json:"-"`
	// answeredNothing marks a stream that ended with nothing in it
	// (errAnsweredNothing), for the preflight's fix; its message may be
	// redacted or cut, a flag is not.
	answeredNothing bool
}

// End is the time the request ended: its start plus E2E.
func (r *Result) End() time.Time {
	return r.Start.Add(time.Duration(r.E2E * float64(time.Millisecond)))
}

// setCachedTokens records the cached prompt tokens the server reported;
// absentCount means it reported none.
func (r *Result) setCachedTokens(n int) {
	if n != absentCount {
		r.CachedTokens, r.cachedReported = n, true
	}
}

// CachedReported says that the server reported CachedTokens, 0 included.
func (r *Result) CachedReported() bool { return r.cachedReported }

// reasoningTokens is the reasoning share of the output: the server's count
// when it gave one, else the reasoning-only chunks.
func (r *Result) reasoningTokens() int {
	if r.ReasoningTokens > 0 {
		return r.ReasoningTokens
	}
	return r.ReasoningChunks
}

// uncountedTokens is the part of a completed request's output tokens that
// its arrivals (Request.Arrivals) did not count as they arrived: a stream
// counted one per token-bearing chunk, so what OutputTokens has beyond its
// chunks; a non-streamed answer counted none, so all of them. Never
// negative: a count below the chunks takes nothing back.
func (r *Result) uncountedTokens() int {
	counted := 0
	if r.Stream {
		counted = r.Chunks
	}
	return max(r.OutputTokens-counted, 0)
}

// maxReportedTokens bounds every token count a server reports about one
// response: a count outside 0..maxReportedTokens is not a count but a
// broken or hostile server, and sums of such counts over a run would
// overflow.
const maxReportedTokens = math.MaxInt32

// absentCount stands for a count the server left out.
const absentCount = math.MinInt

// sumCounts adds counts a server reported, without overflow: a negative
// part is returned as is, and a sum over maxReportedTokens is returned
// as maxReportedTokens+1, both for checkServerNumbers to refuse.
func sumCounts(parts ...int) int {
	sum := 0
	for _, p := range parts {
		if p < 0 {
			return p
		}
		sum += min(p, maxReportedTokens+1)
	}
	return min(sum, maxReportedTokens+1)
}

// errAnsweredNothing is the failure of a stream that ended with nothing
// in it (answeredNothing).
var errAnsweredNothing = errors.New("the stream ended with no token, no usage and no finish reason (a bare data: [DONE]): the server answered nothing")

// answeredNothing says whether a streamed answer ended with no token, no
// count of the server's and no finish reason: not an answer that was
// empty (a finish reason says the model stopped), but none at all, which
// no request asking for tokens can take as a success. An embeddings
// response is never streamed.
func answeredNothing(res *Result) bool {
	return res.Stream && res.Chunks == 0 && res.ReasoningChunks == 0 && res.OutputTokens == 0 && res.FinishReason == ""
}

// checkServerNumbers refuses the counts and durations a server reported
// that cannot be true: a negative or absurdly large token count, a
// negative or infinite duration. The request then fails as decode rather
// than adding figures that would corrupt the run's sums, and each refused
// number is cleared (a count made 0, a duration left out), so that the
// result a script sees carries none of the numbers the summary refused.
// It returns the first refusal.
func (r *Result) checkServerNumbers() error {
	counts := []struct {
		name string
		n    *int
	}{
		{"output tokens", &r.OutputTokens},
		{"prompt tokens", &r.PromptTokens},
		{"cached prompt tokens", &r.CachedTokens},
		{"reasoning tokens", &r.ReasoningTokens},
	}
	var err error
	refuse := func(e error) {
		if err == nil {
			err = e
		}
	}
	for _, c := range counts {
		switch n := *c.n; {
		case n < 0:
			refuse(fmt.Errorf("the server reported %d %s: a count cannot be negative", n, c.name))
			*c.n = 0
		case n > maxReportedTokens:
			refuse(fmt.Errorf("the server reported more than %d %s for one response: not a plausible count", maxReportedTokens, c.name))
			*c.n = 0
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.ServerTimings)) {
		if v := r.ServerTimings[name]; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			refuse(fmt.Errorf("the server reported %v ms as the %s duration: not a plausible duration", v, name))
			delete(r.ServerTimings, name)
		}
	}
	return err
}
