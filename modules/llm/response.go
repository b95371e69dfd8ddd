package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/llmrun/llmrun/modules/metrics"

	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

const (
	// maxJSONResponse bounds a non-streaming response body.
	maxJSONResponse = 64 << 20
	// maxPooledBuffer is the largest buffer a pooled responseReader keeps.
	maxPooledBuffer = 256 << 10
	// snippetLen bounds the bad data quoted in a decode error.
	snippetLen = 200
	// maxKeptText bounds each text a response accumulates: its answer
	// text, its reasoning text (kept for the tokenizer), and the
	// arguments of its tool calls together. Beyond it they are cut
	// (Result.TextTruncated); the token counts stay exact.
	maxKeptText = 1 << 20
)

// responseReader reads one response body into a Result, taking a timestamp
// for every token-bearing chunk as soon as its bytes are parsed. Readers
// are pooled so that their buffers are allocated once, not per request.
type responseReader struct {
	sse   *SSEReader
	nd    *NDJSONReader // made on first use
	dec   chunkDecoder
	chunk chunk
	usage json.RawMessage // the last usage block seen
	text  []byte
	body  []byte // a non-streaming response
	// declared is the length of the body the response declared, -1 when
	// it declared none.
	declared int64
	// tools assembles the tool calls; reasoning holds the reasoning text
	// when countText is set (the client counts tokens with a tokenizer).
	tools     toolCalls
	reasoning []byte
	countText bool
	// cut is set once a text passed maxKeptText and was cut.
	cut bool
	// head records the first bytes of the body, for misread.
	head headRecorder
	// arrived counts the response's token-bearing chunks as they arrive;
	// nil when they are not counted.
	arrived *metrics.CounterShard
	// received tells when what the connection delivered arrived; nil when
	// it cannot (then the reader's own time is the token's).
	received transport.ReceiveClock
	// tc times the units of the stream being read, and keepText says
	// whether its answer text is kept (readStream).
	tc       tokenClock
	keepText bool
	// The state of the stream formats other than OpenAI's, kept here so
	// that reading a stream allocates none: each is reset as its stream
	// begins.
	anthropic anthropicStream
	ollama    ollamaStream
	tgi       tgiStream
	triton    tritonStream
	responses responsesStream
}

var responseReaders = sync.Pool{
	New: func() any { return &responseReader{sse: NewSSEReader(nil), declared: -1} },
}

func getResponseReader() *responseReader {
	return responseReaders.Get().(*responseReader)
}

// release returns rr to the pool unless a huge response grew its buffers.
func (rr *responseReader) release() {
	rr.sse.Reset(nil)
	rr.arrived, rr.received, rr.head.r, rr.declared = nil, nil, nil, -1
	rr.tc = tokenClock{}
	// The last chunk's fields are slices of the line it was read from:
	// dropping them lets a huge line's buffer go with the request.
	rr.chunk.reset()
	if rr.nd != nil {
		rr.nd.Reset(nil)
		if cap(rr.nd.buf) > maxPooledBuffer {
			rr.nd = nil
		}
	}
	if rr.poolable() {
		responseReaders.Put(rr)
	}
}

// poolable reports whether rr's buffers are small enough to be kept for
// the next request: a reader that held one huge line or body would keep
// its memory for as long as it is reused.
func (rr *responseReader) poolable() bool {
	return !rr.dec.grown && cap(rr.sse.buf) <= maxPooledBuffer && cap(rr.sse.data) <= maxPooledBuffer &&
		cap(rr.text) <= maxPooledBuffer && cap(rr.body) <= maxPooledBuffer && cap(rr.reasoning) <= maxPooledBuffer
}

// clock returns the token clock of a response that started at start,
// counting its token-bearing chunks into rr.arrived, its times the
// receive times of rr.received where it tells them.
func (rr *responseReader) clock(start time.Time) tokenClock {
	return tokenClock{start: start, arrived: rr.arrived, received: rr.received}
}

// readSSE reads a streamed (SSE) response of OpenAI's chunks. It fills
// res's measurements, times taken from start; res.E2E is the time until
// the end of the stream, or until the failure. A failure is returned as a
// *failure.
func (rr *responseReader) readSSE(body io.Reader, start time.Time, keepText bool, res *Result) error {
	return rr.readStream(rr.sseReader(body), openaiStream{}, start, keepText, res)
}

// openaiStream is the stream format of OpenAI's chunks: SSE events, each
// one chunk, until "data: [DONE]"; a stream cut after a finish_reason
// ended well. Its state is the responseReader's (chunk, usage, tools).
type openaiStream struct{}

func (openaiStream) unit(rr *responseReader, u streamUnit, n int, now time.Duration, res *Result) (bool, error) {
	if u.typ == "error" {
		return false, errorEventFailure(u.data)
	}
	data := bytes.TrimSpace(u.data)
	switch {
	case len(data) == 0: // keep-alive
		return false, nil
	case string(data) == "[DONE]":
		return true, rr.finish(res, rr.keepText)
	}
	if err := rr.dec.decode(data, &rr.chunk); err != nil {
		return false, eventDecodeFailure(n+1, err, data)
	}
	if msg, ok := rr.chunk.errorMessage(); ok {
		return false, &failure{ErrStreamError, errors.New("error in the stream: " + msg)}
	}
	reasoning, answer := rr.chunk.tokens()
	rr.tc.tick(res, now, reasoning, answer)
	return false, rr.take(res, rr.keepText && answer)
}

// end ends well a stream that a finish_reason came before it was cut.
func (openaiStream) end(rr *responseReader, err error, n int, res *Result) error {
	if res.FinishReason != "" {
		return rr.finish(res, rr.keepText)
	}
	return &failure{ErrCut, fmt.Errorf("the stream ended after %d events, before [DONE] or a finish_reason: %w", n, err)}
}

// errorEventFailure is the failure of a stream that sent an SSE error
// event, whose data is data.
func errorEventFailure(data []byte) error {
	return &failure{ErrStreamError, fmt.Errorf("error event in the stream: %s", snippet(data))}
}

// eventDecodeFailure is the failure of a stream whose nth event's data
// does not decode.
func eventDecodeFailure(n int, err error, data []byte) error {
	return &failure{ErrDecode, fmt.Errorf("stream event %d: %w: %s", n, err, snippet(data))}
}

// readWhole reads a whole (non-streamed) response body, up to
// maxJSONResponse bytes, sets E2E when it ends, and decodes it with decode;
// a decode error is a decode failure quoting the start of the body.
func (rr *responseReader) readWhole(body io.Reader, start time.Time, res *Result, decode func(doc []byte) error) error {
	res.Stream = false
	var more bool
	var err error
	rr.body, more, err = readAtMost(rr.body[:0], body, maxJSONResponse, rr.declared)
	clock := rr.clock(start)
	clock.now(res, err)
	if err != nil {
		return &failure{readClass(err), fmt.Errorf("reading the response: %w", err)}
	}
	if more {
		return &failure{ErrDecode, fmt.Errorf("response larger than %d bytes", maxJSONResponse)}
	}
	if err := decode(bytes.TrimSpace(rr.body)); err != nil {
		return &failure{ErrDecode, fmt.Errorf("response: %w: %s", err, snippet(rr.body))}
	}
	return nil
}

// readAtMost appends what r holds to dst, up to limit bytes, and reports
// whether r held more. dst grows at once to size, the length the response
// declared, when it is known (not negative), else by doubling; never past
// limit: a response that does not end takes the limit, not twice it.
func readAtMost(dst []byte, r io.Reader, limit int, size int64) (_ []byte, more bool, err error) {
	if size >= 0 {
		// One more byte, so that the end is read without growing dst.
		dst = slices.Grow(dst, max(int(min(size, int64(limit)))+1-len(dst), 0))
	}
	for len(dst) < limit {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, min(max(cap(dst), 4096), limit-len(dst)))
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), limit)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, false, nil
		}
		if err != nil {
			return dst, false, err
		}
	}
	more, err = holdsMore(r)
	return dst, more, err
}

// holdsMore reads one byte of r to tell whether it holds more.
func holdsMore(r io.Reader) (bool, error) {
	var b [1]byte
	for {
		n, err := r.Read(b[:])
		switch {
		case n > 0:
			return true, nil
		case err == io.EOF:
			return false, nil
		case err != nil:
			return false, err
		}
	}
}

// declaredLength is the length of the body a response's header declares
// (Content-Length, which net/http holds the body to), -1 when it declares
// none.
func declaredLength(header http.Header) int64 {
	v := header.Get("Content-Length")
	if v == "" { // a stream: ParseInt would allocate its error
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// readJSON reads a whole non-streaming response. Its one answer arrives at
// the end, so TTFT = TTFO = E2E; there is no TPOT nor ITL.
func (rr *responseReader) readJSON(body io.Reader, start time.Time, keepText bool, res *Result) error {
	rr.begin()
	if err := rr.readWhole(body, start, res, func(doc []byte) error { return rr.dec.decode(doc, &rr.chunk) }); err != nil {
		return err
	}
	if msg, ok := rr.chunk.errorMessage(); ok {
		return &failure{ErrStreamError, fmt.Errorf("error in the response: %s", msg)}
	}
	reasoning, answer := rr.chunk.tokens()
	whole(res, reasoning, answer)
	if err := rr.take(res, keepText && answer); err != nil {
		return err
	}
	return rr.finish(res, keepText)
}

// take records the decoded chunk's finish reason, usage and, when asked,
// text.
func (rr *responseReader) take(res *Result, text bool) error {
	reason, err := rr.chunk.finishReason()
	if err != nil {
		return &failure{ErrDecode, err}
	}
	if reason != "" {
		res.FinishReason = reason
	}
	if present(rr.chunk.Usage) {
		rr.usage = append(rr.usage[:0], rr.chunk.Usage...)
	}
	if text {
		if rr.text, err = rr.chunk.appendText(rr.text, maxKeptText); err != nil {
			return &failure{ErrDecode, err}
		}
		rr.text = rr.bound(rr.text)
	}
	if err := rr.chunk.appendToolCalls(&rr.tools); err != nil {
		return &failure{ErrDecode, err}
	}
	if rr.countText {
		if rr.reasoning, err = rr.chunk.appendReasoning(rr.reasoning, maxKeptText); err != nil {
			return &failure{ErrDecode, err}
		}
		rr.reasoning = rr.bound(rr.reasoning)
	}
	return nil
}

// finish completes res once the response ended well: token counts, their
// source, TPOT and the kept text.
func (rr *responseReader) finish(res *Result, keepText bool) error {
	res.OutputTokens, res.TokenSource = res.Chunks, TokensFromChunks
	if len(rr.usage) > 0 {
		u, err := decodeUsage(rr.usage)
		if err != nil {
			return &failure{ErrDecode, fmt.Errorf("usage: %w: %s", err, snippet(rr.usage))}
		}
		res.OutputTokens, res.TokenSource = u.CompletionTokens, TokensFromUsage
		res.PromptTokens = u.PromptTokens
		res.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
		res.setCachedTokens(u.PromptTokensDetails.CachedTokens)
	}
	finishTiming(res)
	if keepText {
		res.Text = string(rr.text)
	}
	res.ToolCalls = rr.tools.result()
	return nil
}

// decodeUsage decodes data, an OpenAI usage, as encoding/json does, its
// cached tokens absentCount when it gives none: with scanUsage, without
// allocating, when it can.
func decodeUsage(data []byte) (usage, error) {
	var u usage
	u.PromptTokensDetails.CachedTokens = absentCount
	if scanUsage(data, &u) {
		return u, nil
	}
	return decodeUsageJSON(data)
}

// decodeUsageJSON is decodeUsage with encoding/json, for the usages
// scanUsage leaves to it (its own function, so that only these allocate
// the usage they decode into).
func decodeUsageJSON(data []byte) (usage, error) {
	var u usage
	u.PromptTokensDetails.CachedTokens = absentCount
	err := json.Unmarshal(data, &u)
	return u, err
}

// bound cuts text, a text the response accumulates, to maxKeptText bytes
// (at a character boundary), noting the cut.
func (rr *responseReader) bound(text []byte) []byte {
	if len(text) <= maxKeptText {
		return text
	}
	rr.cut = true
	return text[:runeCut(text, maxKeptText)]
}

// runeCut is the largest length ≤ n, n < len(text), that does not cut a
// character of text in two.
func runeCut[T string | []byte](text T, n int) int {
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return n
}

// snippet quotes the start of some bad data for an error message.
func snippet(b []byte) string {
	if len(b) > snippetLen {
		return fmt.Sprintf("%q...", b[:snippetLen])
	}
	return fmt.Sprintf("%q", b)
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
