package llm

import (
	"fmt"
	"io"
	"maps"
	"mime"
	"net/url"
	"strings"
	"time"

	"github.com/llmrun/llmrun/modules/metrics"

	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

// protocol is one wire protocol's adapter: it builds a request's JSON body
// and endpoint, and reads the response into a Result through the shared
// timing machinery (tokenClock, finishTiming).
type protocol interface {
	// endpoint returns the URL of api's requests given the base URL the
	// client was configured with (already checked), and whether body
	// streams.
	endpoint(base *url.URL, api API, stream bool) string
	// prepare builds the body sent for req from its user-given fields
	// (a copy the adapter may change), filling p's body, stream and model.
	// model is the client's default model.
	prepare(p *prepared, body map[string]any, model string) error
	// read reads a 2xx response with the given Content-Type into res,
	// whose Start is set. A failure is returned as a *failure, or an
	// error of body.
	read(rr *responseReader, contentType string, body io.Reader, keepText bool, res *Result) error
}

// protocols maps each API to its adapter.
var protocols = map[API]protocol{
	ChatCompletions: openaiProtocol{},
	Completions:     openaiProtocol{},
	OllamaChat:      ollamaProtocol{},
	OllamaGenerate:  ollamaProtocol{},
	TGI:             tgiProtocol{},
	Anthropic:       anthropicProtocol{},
	Triton:          tritonProtocol{},
	Embeddings:      embeddingsProtocol{},
	Rerank:          rerankProtocol{},
	TEIRerank:       rerankProtocol{},
	Responses:       responsesProtocol{},
}

// APIs lists every supported API, in the order of the docs.
var APIs = []API{ChatCompletions, Completions, OllamaChat, OllamaGenerate, TGI, Anthropic, Triton, Embeddings,
	Rerank, TEIRerank, Responses}

// serverRoot returns base without a trailing "/v1" or, when api is an
// Ollama one, "/api": the root under which Ollama and TGI serve.
func serverRoot(base *url.URL, ollama bool) *url.URL {
	u := *base
	u.Path = strings.TrimRight(u.Path, "/")
	u.Path = strings.TrimSuffix(u.Path, "/v1")
	if ollama {
		u.Path = strings.TrimSuffix(u.Path, "/api")
	}
	return &u
}

// v1Root returns base with "/v1" added unless it ends with it: the root
// under which the OpenAI-style APIs (chat, completions, embeddings,
// rerank) serve.
func v1Root(base *url.URL) *url.URL {
	u := *base
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	return &u
}

// tokenClock timestamps the token-bearing units of one response (SSE
// events, NDJSON lines) as their bytes are parsed: TTFT, TTFO, ITL and
// Chunks; and counts each into arrived, when set, as it arrives. Its times
// are durations since start on the monotonic clock: where the connection
// tells them (received), when the bytes arrived on the machine (so that
// the client's own delays, a busy CPU or goroutines queued behind others,
// are not the server's latency), else when the reader returned them.
type tokenClock struct {
	start    time.Time
	last     time.Duration // of the last token-bearing unit
	latest   time.Duration // the latest time now returned
	answered bool          // an answer (non-reasoning) token arrived
	arrived  *metrics.CounterShard
	received transport.ReceiveClock // nil: the reader's own times
}

// now returns the time since the response's start of what the reader
// has just returned, err its error, and records it as the response's E2E
// so far: a reader calls it as soon as each unit's bytes are read, or
// reading them failed. Data is timed by its receive time where known; a
// failure (a timeout, a connection closed) when the reader saw it. Times
// never go back: a receive time is put on the monotonic clock of the
// current time, which the wall clock it was read on may move against by
// nanoseconds between two readings.
func (tc *tokenClock) now(res *Result, err error) time.Duration {
	at := time.Now()
	if tc.received != nil && err == nil {
		at = tc.received.ReceivedBy(at)
	}
	elapsed := max(at.Sub(tc.start), tc.latest)
	tc.latest = elapsed
	res.E2E = ms(elapsed)
	return elapsed
}

// tick records a unit that arrived at now (since start) carrying
// reasoning and/or answer tokens; one with neither is not counted.
func (tc *tokenClock) tick(res *Result, now time.Duration, reasoning, answer bool) {
	if reasoning || answer {
		if res.Chunks == 0 {
			res.TTFT = ms(now)
		} else {
			res.addGap(ms(now - tc.last))
		}
		tc.last = now
		res.Chunks++
		if tc.arrived != nil {
			tc.arrived.Add(1)
		}
		if reasoning && !answer {
			res.ReasoningChunks++
		}
	}
	if answer && !tc.answered {
		tc.answered = true
		res.TTFO = ms(now)
	}
}

// whole records the one answer of a non-streamed response, at its end:
// TTFT = TTFO = E2E.
func whole(res *Result, reasoning, answer bool) {
	if reasoning || answer {
		res.Chunks = 1
		res.TTFT = res.E2E
	}
	if answer {
		res.TTFO = res.E2E
	}
}

// finishOutput sets res's output tokens, reported when the server
// reported them (from its usage), else one per chunk; then TPOT.
func finishOutput(res *Result, reported *int) {
	res.OutputTokens, res.TokenSource = res.Chunks, TokensFromChunks
	if reported != nil {
		res.OutputTokens, res.TokenSource = *reported, TokensFromUsage
	}
	finishTiming(res)
}

// finishTiming sets res.TPOT once its output tokens are known.
func finishTiming(res *Result) {
	if res.Stream && res.Chunks > 0 && res.OutputTokens > 1 {
		res.TPOT = (res.E2E - res.TTFT) / float64(res.OutputTokens-1)
	}
}

// mediaType returns a Content-Type's media type, without parameters.
// The types servers send bare are returned as they are, without the map
// of parameters mime.ParseMediaType makes.
func mediaType(contentType string) string {
	switch contentType {
	case "text/event-stream", "application/json", "application/x-ndjson":
		return contentType
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// contentTypeError is the failure of a response of an unexpected content
// type.
func contentTypeError(res *Result, contentType, want string) error {
	res.E2E = ms(time.Since(res.Start))
	return &failure{ErrDecode, fmt.Errorf("unexpected content type %q, want %s", contentType, want)}
}

// readSSEOrJSON reads a response with sse when it is an event stream, with
// whole when it is one JSON document, and fails as decode otherwise.
func readSSEOrJSON(contentType string, res *Result, sse, whole func() error) error {
	switch mt := mediaType(contentType); {
	case mt == "text/event-stream":
		return sse()
	case isJSON(mt):
		return whole()
	}
	return contentTypeError(res, contentType, "text/event-stream or application/json")
}

// parametersOf returns a copy of the body's "parameters" object (TGI's and
// Triton's generation settings), empty when it has none, for the adapter
// to add its own.
func parametersOf(body map[string]any) (map[string]any, error) {
	v, ok := body["parameters"]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	given, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`"parameters" must be an object, not %T`, v)
	}
	params := make(map[string]any, len(given)+1)
	maps.Copy(params, given)
	return params, nil
}
