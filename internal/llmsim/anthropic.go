package llmsim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// anthropicAPI is Anthropic's Messages API: POST /v1/messages, streamed
// ("stream": true) as SSE events, or one JSON message.
var anthropicAPI = &api{
	parse:      parseAnthropic,
	newEncoder: func(c *completion) encoder { return newAnthropicEncoder(c) },
	whole:      anthropicMessage,
	idPrefix:   "msg_",
}

// parseAnthropic reads and validates a Messages request: "model",
// "messages", "system" (a string or text blocks) and "max_tokens", which
// is required as in Anthropic's API, and, as llmsim extensions,
// ignore_eos and min_tokens. "stream" is false when absent, as in
// Anthropic's API. Authentication headers are not checked.
func parseAnthropic(data []byte, s *Server) (job, *apiError) {
	cfg := &s.cfg
	var body struct {
		Model     string        `json:"model"`
		Messages  []chatMessage `json:"messages"`
		System    content       `json:"system"`
		MaxTokens *int          `json:"max_tokens"`
		Stream    bool          `json:"stream"`
		IgnoreEOS bool          `json:"ignore_eos"`
		MinTokens int           `json:"min_tokens"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return job{}, badRequest("", "invalid request body: %v", err)
	}
	if len(body.Messages) == 0 {
		return job{}, badRequest("messages", "messages: must be a non-empty array")
	}
	if body.MaxTokens == nil {
		return job{}, badRequest("max_tokens", "max_tokens: Field required")
	}
	j := job{model: body.Model, stream: body.Stream, ignoreEOS: body.IgnoreEOS, minTokens: body.MinTokens}
	if j.model == "" {
		j.model = cfg.Model
	}
	p, err := s.prompter.chat(body.System, body.Messages)
	if err != nil {
		return job{}, badRequest("messages", "%v", err)
	}
	j.setPrompt(p)
	return j, j.limit(cfg, body.MaxTokens, "max_tokens", "messages")
}

// anthropicStopReason maps the engine's finish reason to Anthropic's.
func anthropicStopReason(finish string) string {
	if finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

// anthropicUsage is Anthropic's usage block. As in Anthropic's API,
// input_tokens leaves out the prompt tokens read from the cache, given
// when the prefix cache is on.
type anthropicUsage struct {
	InputTokens              int  `json:"input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens,omitempty"`
	OutputTokens             int  `json:"output_tokens"`
}

// newAnthropicUsage returns the usage of n.
func newAnthropicUsage(n tokenCounts) anthropicUsage {
	u := anthropicUsage{InputTokens: n.prompt, OutputTokens: n.output}
	if n.cached >= 0 {
		u.InputTokens -= n.cached
		u.CacheCreationInputTokens, u.CacheReadInputTokens = new(0), &n.cached
	}
	return u
}

// appendAnthropicUsage appends the opening of a message_start usage block's
// fields, up to output_tokens' value.
func appendAnthropicUsage(buf []byte, n tokenCounts) []byte {
	buf = append(buf, `"usage":{"input_tokens":`...)
	if n.cached < 0 {
		buf = strconv.AppendInt(buf, int64(n.prompt), 10)
	} else {
		buf = strconv.AppendInt(buf, int64(n.prompt-n.cached), 10)
		buf = append(buf, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":`...)
		buf = strconv.AppendInt(buf, int64(n.cached), 10)
	}
	return append(buf, `,"output_tokens":`...)
}

// anthropicMessage is the body of a whole ("stream": false) response.
func anthropicMessage(c *completion, text string) any {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	return struct {
		ID           string         `json:"id"`
		Type         string         `json:"type"`
		Role         string         `json:"role"`
		Model        string         `json:"model"`
		Content      []block        `json:"content"`
		StopReason   string         `json:"stop_reason"`
		StopSequence *string        `json:"stop_sequence"`
		Usage        anthropicUsage `json:"usage"`
	}{c.id, "message", "assistant", c.job.model, []block{{"text", text[1:]}}, // an answer starts without a space
		anthropicStopReason(c.finish), nil, newAnthropicUsage(c.counts())}
}

// anthropicEncoder formats a Messages stream's events: message_start
// (whose usage gives the prompt's tokens, the cached ones apart),
// content_block_start and a ping (sent with the first token), one
// content_block_delta (text_delta) per token, then content_block_stop,
// message_delta (stop_reason, usage.output_tokens) and message_stop.
type anthropicEncoder struct {
	c       *completion
	started bool // message_start is out
	buf     []byte
}

func newAnthropicEncoder(c *completion) *anthropicEncoder {
	return &anthropicEncoder{c: c, buf: make([]byte, 0, 1024)}
}

// start adds the events that open the stream, unless added already. They
// wait for the first token (or a fault that strikes before it): the
// prompt's cached tokens are known once the engine admitted the request.
func (e *anthropicEncoder) start() {
	if e.started {
		return
	}
	e.started = true
	c := e.c
	id, _ := json.Marshal(c.id)           // a string always marshals
	model, _ := json.Marshal(c.job.model) // a string always marshals
	e.buf = append(e.buf, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"...)
	e.buf = append(e.buf, id...)
	e.buf = append(e.buf, `,"type":"message","role":"assistant","model":`...)
	e.buf = append(e.buf, model...)
	e.buf = append(e.buf, `,"content":[],"stop_reason":null,"stop_sequence":null,`...)
	e.buf = appendAnthropicUsage(e.buf, c.counts())
	e.buf = append(e.buf, "1}}}\n\n"...)
	e.buf = append(e.buf, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"...)
	e.buf = append(e.buf, "event: ping\ndata: {\"type\": \"ping\"}\n\n"...)
}

func (e *anthropicEncoder) contentType() string { return "text/event-stream" }

func (e *anthropicEncoder) token(word string, first, _ bool) {
	e.start()
	if first {
		word = word[1:] // an answer starts without a space
	}
	e.buf = append(e.buf, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""...)
	e.buf = append(e.buf, word...)
	e.buf = append(e.buf, "\"}}\n\n"...)
}

func (e *anthropicEncoder) end(reason string, n tokenCounts) {
	e.start()
	e.buf = append(e.buf, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"...)
	e.buf = append(e.buf, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""...)
	e.buf = append(e.buf, anthropicStopReason(reason)...)
	e.buf = append(e.buf, `","stop_sequence":null},"usage":{"output_tokens":`...)
	e.buf = strconv.AppendInt(e.buf, int64(n.output), 10)
	e.buf = append(e.buf, "}}\n\n"...)
	e.buf = append(e.buf, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
}

func (e *anthropicEncoder) malformed() {
	e.start()
	e.buf = append(e.buf, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":\n\n"...)
}

// fail adds an Anthropic error event.
func (e *anthropicEncoder) fail(name string) {
	e.start()
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Type, body.Error.Type = "error", "api_error"
	body.Error.Message = "llmsim injected fault " + name + ": " + http.StatusText(http.StatusInternalServerError)
	data, _ := json.Marshal(body) // always marshals
	e.buf = append(e.buf, "event: error\ndata: "...)
	e.buf = append(e.buf, data...)
	e.buf = append(e.buf, "\n\n"...)
}

func (e *anthropicEncoder) writeOut(w io.Writer) error {
	_, err := w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}
