package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Anthropic is Anthropic's Messages API: POST /v1/messages, streamed as
// SSE events (message_start, content_block_*, message_delta,
// message_stop), or one JSON message with "stream": false.
const Anthropic API = "anthropic"

// AnthropicVersion is the anthropic-version header sent with Anthropic
// requests that set none.
const AnthropicVersion = "2023-06-01"

// anthropicProtocol is Anthropic's Messages API: POST /v1/messages with
// the API key in "x-api-key" (not "Authorization: Bearer") and an
// "anthropic-version" header. The body is {"model", "max_tokens",
// "messages", "system"?, "stream"}; max_tokens is required, as Anthropic
// requires it: the client refuses (invalid_request) a body without it
// rather than invent the output length a benchmark measures. A stream is
// SSE: message_start (message.usage.input_tokens), then per content block
// content_block_start, content_block_delta (text_delta: answer tokens,
// thinking_delta: reasoning tokens, input_json_delta: tool-use input, an
// answer chunk) and content_block_stop, then message_delta
// (delta.stop_reason, usage.output_tokens) and message_stop; ping events
// and event types unknown to the client are skipped, and an error event
// ({"type":"error","error":{"type","message"}}, overloaded_error
// included) is a stream_error. A whole response is one message object
// with its content blocks and usage.
type anthropicProtocol struct{}

// endpoint puts /v1/messages under the API root.
func (anthropicProtocol) endpoint(base *url.URL, _ API, _ bool) string {
	return serverRoot(base, false).JoinPath("v1", "messages").String()
}

// prepare adds "stream": true unless the body sets "stream", and the
// client's model unless the body names one; a body without "max_tokens"
// is refused.
func (anthropicProtocol) prepare(p *prepared, body map[string]any, model string) error {
	var err error
	if p.stream, err = streamFlag(body); err != nil {
		return err
	}
	p.model = defaultModel(body, model)
	if v, ok := body["max_tokens"]; !ok || v == nil {
		return errors.New(`the Anthropic Messages API requires "max_tokens" in the request body`)
	}
	return nil
}

// setHeaders sends the client's API key as x-api-key, in place of the
// "Authorization: Bearer" the client sets, unless the request sets
// x-api-key itself, and adds anthropic-version unless set.
func (anthropicProtocol) setHeaders(h http.Header, apiKey string) {
	if apiKey != "" && h.Get("X-Api-Key") == "" {
		if h.Get("Authorization") == "Bearer "+apiKey {
			h.Del("Authorization")
		}
		h.Set("X-Api-Key", apiKey)
	}
	if h.Get("Anthropic-Version") == "" {
		h.Set("Anthropic-Version", AnthropicVersion)
	}
}

// headerSetter is an adapter whose requests need headers of their own
// (authentication, versions), set on each request's headers after the
// client's and the request's own; apiKey is Config.APIKey.
type headerSetter interface {
	setHeaders(h http.Header, apiKey string)
}

// anthropicUsage is Anthropic's usage block. The prompt's tokens are
// input_tokens plus the cached ones, which input_tokens leaves out; those
// read from the cache are Result.CachedTokens.
type anthropicUsage struct {
	InputTokens              *int        `json:"input_tokens"`
	CacheCreationInputTokens int         `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     optionalInt `json:"cache_read_input_tokens"`
	OutputTokens             *int        `json:"output_tokens"`
}

// promptTokens returns the prompt's token count and whether it is known.
func (u *anthropicUsage) promptTokens() (int, bool) {
	if u == nil || u.InputTokens == nil {
		return 0, false
	}
	return sumCounts(*u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens.n), true
}

// anthropicBlock is a content block (content_block_start's, or one of a
// whole message's content) or a content_block_delta's delta.
type anthropicBlock struct {
	Type        string          `json:"type"`
	Text        json.RawMessage `json:"text"`
	Thinking    json.RawMessage `json:"thinking"`
	PartialJSON json.RawMessage `json:"partial_json"`
	Input       json.RawMessage `json:"input"`
}

// tokens reports whether the block or delta carries reasoning (thinking)
// or answer (text, tool-use input) output.
func (b *anthropicBlock) tokens() (reasoning, answer bool) {
	switch b.Type {
	case "thinking", "thinking_delta":
		return present(b.Thinking), false
	case "text", "text_delta":
		return false, present(b.Text)
	case "input_json_delta":
		return false, present(b.PartialJSON)
	case "tool_use", "server_tool_use":
		return false, present(b.Input)
	}
	return false, false
}

// anthropicMessage is message_start's message.
type anthropicMessage struct {
	Usage *anthropicUsage `json:"usage"`
}

// take takes the prompt's token counts of message_start's message, when
// there is one.
func (m *anthropicMessage) take(res *Result) {
	if m == nil || m.Usage == nil {
		return
	}
	if n, ok := m.Usage.promptTokens(); ok {
		res.PromptTokens = n
	}
	res.setCachedTokens(m.Usage.CacheReadInputTokens.orAbsent())
}

// anthropicEvent is one event of a stream, or a whole message (whose
// type is "message"), or an error.
type anthropicEvent struct {
	Type         string            `json:"type"`
	Message      *anthropicMessage `json:"message"`
	ContentBlock *anthropicBlock   `json:"content_block"`
	// Delta is a content_block_delta's block delta, or message_delta's
	// {"stop_reason", "stop_sequence"}.
	Delta *struct {
		anthropicBlock
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error json.RawMessage `json:"error"`
	// A whole message's fields.
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
}

// decodeAnthropic decodes one event's data or a response, checking the
// text it carries.
func decodeAnthropic(data []byte, e *anthropicEvent) error {
	*e = anthropicEvent{}
	if err := json.Unmarshal(data, e); err != nil {
		return err
	}
	check := func(b *anthropicBlock) error {
		if present(b.Text) {
			if _, err := jsonString(b.Text); err != nil {
				return fmt.Errorf("text: %w", err)
			}
		}
		return nil
	}
	if e.ContentBlock != nil {
		if err := check(e.ContentBlock); err != nil {
			return err
		}
	}
	if e.Delta != nil {
		if err := check(&e.Delta.anthropicBlock); err != nil {
			return err
		}
	}
	for i := range e.Content {
		if err := check(&e.Content[i]); err != nil {
			return err
		}
	}
	return nil
}

// anthropicErrorMessage formats an error object {"type", "message"}.
func anthropicErrorMessage(raw json.RawMessage) string {
	var obj struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) != nil || obj.Type == "" {
		return apiErrorMessage(raw)
	}
	msg := obj.Type + ": " + obj.Message
	if obj.Type == "overloaded_error" {
		msg += " (the server was overloaded mid-response; Anthropic reports it in the stream of an HTTP 200)"
	}
	return msg
}

// read reads an SSE stream, or a whole JSON message.
func (anthropicProtocol) read(rr *responseReader, contentType string, body io.Reader, keepText bool, res *Result) error {
	return readSSEOrJSON(contentType, res,
		func() error { return rr.readAnthropic(body, keepText, res) },
		func() error { return rr.readAnthropicJSON(body, keepText, res) })
}

// readAnthropic reads a Messages stream, timestamping each token-bearing
// event as it is parsed.
func (rr *responseReader) readAnthropic(body io.Reader, keepText bool, res *Result) error {
	rr.anthropic = anthropicStream{}
	return rr.readStream(rr.sseReader(body), &rr.anthropic, res.Start, keepText, res)
}

// anthropicStream is the stream format of the Messages API: its state is
// the event last decoded and the output tokens message_delta reported.
type anthropicStream struct {
	e      anthropicEvent
	output *int
}

func (s *anthropicStream) unit(rr *responseReader, u streamUnit, n int, now time.Duration, res *Result) (bool, error) {
	data := bytes.TrimSpace(u.data)
	if len(data) == 0 {
		if u.typ == "error" {
			return false, &failure{ErrStreamError, errors.New("error event in the stream, without data")}
		}
		return false, nil
	}
	if err := s.decode(u.typ, data, n); err != nil {
		return false, err
	}
	var block *anthropicBlock
	switch s.e.Type {
	case "message_start":
		s.e.Message.take(res)
	case "content_block_start":
		block = s.e.ContentBlock
	case "content_block_delta":
		if s.e.Delta != nil {
			block = &s.e.Delta.anthropicBlock
		}
	case "message_delta":
		s.messageDelta(res)
	case "message_stop":
		s.finish(rr, res)
		return true, nil
	}
	if block == nil {
		return false, nil // ping, content_block_stop, unknown events
	}
	reasoning, answer := block.tokens()
	rr.tc.tick(res, now, reasoning, answer)
	if rr.keepText && answer && present(block.Text) {
		rr.appendKept(block.Text) // checked by decodeAnthropic
	}
	return false, nil
}

// decode decodes event n's data, typ the event's type, into s.e, whose
// type is typ when the data names none; an error event is a failure.
func (s *anthropicStream) decode(typ string, data []byte, n int) error {
	if err := decodeAnthropic(data, &s.e); err != nil {
		if typ == "error" {
			return errorEventFailure(data)
		}
		return eventDecodeFailure(n+1, err, data)
	}
	if s.e.Type == "" {
		s.e.Type = typ
	}
	if s.e.Type == "error" || typ == "error" || present(s.e.Error) {
		return &failure{ErrStreamError, fmt.Errorf("error event in the stream: %s", anthropicErrorMessage(s.e.Error))}
	}
	return nil
}

// messageDelta takes message_delta's stop reason and usage.
func (s *anthropicStream) messageDelta(res *Result) {
	if s.e.Delta != nil && s.e.Delta.StopReason != "" {
		res.FinishReason = s.e.Delta.StopReason
	}
	u := s.e.Usage
	if u == nil {
		return
	}
	if u.OutputTokens != nil {
		n := *u.OutputTokens
		s.output = &n
	}
	if n, ok := u.promptTokens(); ok && n != 0 {
		res.PromptTokens = n
	}
	res.setCachedTokens(u.CacheReadInputTokens.orAbsent())
}

// finish completes res once the stream ended well.
func (s *anthropicStream) finish(rr *responseReader, res *Result) {
	finishOutput(res, s.output)
	rr.keepTextIn(res)
}

// end ends well a stream that message_delta brought a stop_reason before
// it was cut.
func (s *anthropicStream) end(rr *responseReader, err error, n int, res *Result) error {
	if res.FinishReason != "" {
		s.finish(rr, res)
		return nil
	}
	return &failure{ErrCut, fmt.Errorf("the stream ended after %d events, before message_stop: %w", n, err)}
}

// readAnthropicJSON reads a whole ("stream": false) message.
func (rr *responseReader) readAnthropicJSON(body io.Reader, keepText bool, res *Result) error {
	var e anthropicEvent
	if err := rr.readWhole(body, res.Start, res, func(doc []byte) error { return decodeAnthropic(doc, &e) }); err != nil {
		return err
	}
	if e.Type == "error" || present(e.Error) {
		return &failure{ErrStreamError, fmt.Errorf("error in the response: %s", anthropicErrorMessage(e.Error))}
	}
	var reasoning, answer bool
	var text strings.Builder
	for i := range e.Content {
		r, a := e.Content[i].tokens()
		reasoning, answer = reasoning || r, answer || a
		if a && present(e.Content[i].Text) {
			s, _ := jsonString(e.Content[i].Text) // checked by decodeAnthropic
			text.WriteString(s)
		}
	}
	whole(res, reasoning, answer)
	res.FinishReason = e.StopReason
	var output *int
	if e.Usage != nil {
		output = e.Usage.OutputTokens
		if n, ok := e.Usage.promptTokens(); ok {
			res.PromptTokens = n
		}
		res.setCachedTokens(e.Usage.CacheReadInputTokens.orAbsent())
	}
	finishOutput(res, output)
	if keepText {
		res.Text = text.String()
	}
	return nil
}
