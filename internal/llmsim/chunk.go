package llmsim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// chunkEncoder formats one stream's server-sent events into a reused
// buffer, with no encoding/json and no allocation on the per-token path.
type chunkEncoder struct {
	api *api
	// head opens every chunk: `data: {"id":…,"object":…,"created":…,"model":…`.
	head []byte
	// tail closes every chunk with choices: `}]` (plus `,"usage":null`
	// when the stream ends with usage) and `}` and the blank line.
	tail string
	buf  []byte
}

// newChunkEncoder returns the encoder of one stream of a's chunks.
func newChunkEncoder(a *api, id string, created int64, model string, includeUsage bool) *chunkEncoder {
	head := append([]byte(`data: {"id":"`), id...)
	head = append(head, `","object":"`...)
	head = append(head, a.chunkObject...)
	head = append(head, `","created":`...)
	head = strconv.AppendInt(head, created, 10)
	head = append(head, `,"model":`...)
	quoted, _ := json.Marshal(model) // a string always marshals
	head = append(head, quoted...)
	tail := "}]}\n\n"
	if includeUsage {
		tail = `}],"usage":null}` + "\n\n"
	}
	return &chunkEncoder{api: a, head: head, tail: tail, buf: make([]byte, 0, 512)}
}

// openChoice starts a chunk with one choice.
func (c *chunkEncoder) openChoice() {
	c.buf = append(c.buf, c.head...)
	c.buf = append(c.buf, `,"choices":[{"index":0,`...)
}

// role adds the chat stream's role-only first chunk.
func (c *chunkEncoder) role() {
	c.openChoice()
	c.buf = append(c.buf, `"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null`...)
	c.buf = append(c.buf, c.tail...)
}

// token adds a chunk carrying text, which must need no JSON escaping.
func (c *chunkEncoder) token(text string) {
	c.openChoice()
	c.buf = append(c.buf, c.api.textOpen...)
	c.buf = append(c.buf, text...)
	c.buf = append(c.buf, c.api.textClose...)
	c.buf = append(c.buf, `"logprobs":null,"finish_reason":null`...)
	c.buf = append(c.buf, c.tail...)
}

// finish adds the chunk carrying the finish reason.
func (c *chunkEncoder) finish(reason string) {
	c.openChoice()
	c.buf = append(c.buf, c.api.finishOpen...)
	c.buf = append(c.buf, `"logprobs":null,"finish_reason":"`...)
	c.buf = append(c.buf, reason...)
	c.buf = append(c.buf, '"')
	c.buf = append(c.buf, c.tail...)
}

// usage adds the usage-only chunk, with prompt_tokens_details.cached_tokens
// when the prefix cache is on.
func (c *chunkEncoder) usage(n tokenCounts) {
	c.buf = append(c.buf, c.head...)
	c.buf = append(c.buf, `,"choices":[],"usage":{"prompt_tokens":`...)
	c.buf = strconv.AppendInt(c.buf, int64(n.prompt), 10)
	c.buf = append(c.buf, `,"completion_tokens":`...)
	c.buf = strconv.AppendInt(c.buf, int64(n.output), 10)
	c.buf = append(c.buf, `,"total_tokens":`...)
	c.buf = strconv.AppendInt(c.buf, int64(n.prompt+n.output), 10)
	if n.cached >= 0 {
		c.buf = append(c.buf, `,"prompt_tokens_details":{"cached_tokens":`...)
		c.buf = strconv.AppendInt(c.buf, int64(n.cached), 10)
		c.buf = append(c.buf, '}')
	}
	c.buf = append(c.buf, "}}\n\n"...)
}

// malformed adds a chunk cut short: an event whose data is not JSON.
func (c *chunkEncoder) malformed() {
	c.openChoice()
	c.buf = append(c.buf, "\n\n"...)
}

// event adds an event with the given JSON data.
func (c *chunkEncoder) event(data []byte) {
	c.buf = append(c.buf, "data: "...)
	c.buf = append(c.buf, data...)
	c.buf = append(c.buf, "\n\n"...)
}

// done adds the terminating `data: [DONE]` event.
func (c *chunkEncoder) done() {
	c.buf = append(c.buf, "data: [DONE]\n\n"...)
}

// writeOut writes the buffered events to w and empties the buffer.
func (c *chunkEncoder) writeOut(w io.Writer) error {
	_, err := w.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// openaiEncoder is the encoder of an OpenAI chat or completions stream.
type openaiEncoder struct {
	*chunkEncoder
	chat, includeUsage bool
}

func (e openaiEncoder) contentType() string { return "text/event-stream" }

func (e openaiEncoder) token(word string, first, _ bool) {
	if first && e.chat {
		e.role()
		word = word[1:] // an answer starts without a space
	}
	e.chunkEncoder.token(word)
}

func (e openaiEncoder) end(reason string, n tokenCounts) {
	e.finish(reason)
	if e.includeUsage {
		e.usage(n)
	}
	e.done()
}

func (e openaiEncoder) fail(name string) {
	data, _ := json.Marshal(faultError(name, http.StatusInternalServerError).body()) // always marshals
	e.event(data)
}
