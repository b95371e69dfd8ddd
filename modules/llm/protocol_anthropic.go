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

// anthropicEvent is one event of a stream, or a whole message (whose
// type is "message"), or an error.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *anthropicBlock `json:"content_block"`
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

// anthropicFinish sets res's token counts and TPOT: output tokens from
// usage when the server gave them, else one per chunk.
func anthropicFinish(res *Result, output *int) {
	res.OutputTokens, res.TokenSource = res.Chunks, TokensFromChunks
	if output != nil {
		res.OutputTokens, res.TokenSource = *output, TokensFromUsage
	}
	finishTiming(res)
}

// readAnthropic reads a Messages stream, timestamping each token-bearing
// event as it is parsed.
func (rr *responseReader) readAnthropic(body io.Reader, keepText bool, res *Result) error {
	rr.sse.Reset(body)
	rr.text = rr.text[:0]
	res.Stream = true
	clock := rr.clock(res.Start)
	var e anthropicEvent
	var output *int
	finished := false // message_delta brought a stop_reason
	done := func() error {
		anthropicFinish(res, output)
		if keepText {
			res.Text = string(rr.text)
		}
		return nil
	}
	for events := 0; ; events++ {
		ev, err := rr.sse.Next()
		now := clock.now(res, err)
		if err != nil {
			switch {
			case finished && truncated(err):
				return done()
			case truncated(err):
				return &failure{ErrCut, fmt.Errorf("the stream ended after %d events, before message_stop: %w", events, err)}
			}
			return &failure{readClass(err), fmt.Errorf("reading the stream after %d events: %w", events, err)}
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			if ev.Type == "error" {
				return &failure{ErrStreamError, errors.New("error event in the stream, without data")}
			}
			continue
		}
		if err := decodeAnthropic(data, &e); err != nil {
			if ev.Type == "error" {
				return &failure{ErrStreamError, fmt.Errorf("error event in the stream: %s", snippet(data))}
			}
			return &failure{ErrDecode, fmt.Errorf("stream event %d: %w: %s", events+1, err, snippet(data))}
		}
		typ := e.Type
		if typ == "" {
			typ = ev.Type
		}
		if typ == "error" || ev.Type == "error" || present(e.Error) {
			return &failure{ErrStreamError, fmt.Errorf("error event in the stream: %s", anthropicErrorMessage(e.Error))}
		}
		var block *anthropicBlock
		switch typ {
		case "message_start":
			if e.Message != nil {
				if n, ok := e.Message.Usage.promptTokens(); ok {
					res.PromptTokens = n
				}
				if e.Message.Usage != nil {
					res.setCachedTokens(e.Message.Usage.CacheReadInputTokens.orAbsent())
				}
			}
		case "content_block_start":
			block = e.ContentBlock
		case "content_block_delta":
			if e.Delta != nil {
				block = &e.Delta.anthropicBlock
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				res.FinishReason, finished = e.Delta.StopReason, true
			}
			if e.Usage != nil {
				if e.Usage.OutputTokens != nil {
					n := *e.Usage.OutputTokens
					output = &n
				}
				if n, ok := e.Usage.promptTokens(); ok && n != 0 {
					res.PromptTokens = n
				}
				res.setCachedTokens(e.Usage.CacheReadInputTokens.orAbsent())
			}
		case "message_stop":
			return done()
		}
		if block == nil {
			continue // ping, content_block_stop, unknown events
		}
		reasoning, answer := block.tokens()
		clock.tick(res, now, reasoning, answer)
		if keepText && answer && present(block.Text) {
			s, _ := jsonString(block.Text) // checked by decodeAnthropic
			rr.text = rr.bound(append(rr.text, s...))
		}
	}
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
	anthropicFinish(res, output)
	if keepText {
		res.Text = text.String()
	}
	return nil
}
