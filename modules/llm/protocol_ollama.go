package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"time"
)

// ollamaProtocol is Ollama's native API: POST /api/chat and POST
// /api/generate, streamed as newline-delimited JSON (Content-Type
// application/x-ndjson): one object per token, {"message": {"role":
// "assistant", "content": "..."}, "done": false} for chat and
// {"response": "...", "done": false} for generate, then a final object
// with "done": true, "done_reason", "prompt_eval_count", "eval_count" and
// the server's durations in nanoseconds. With "stream": false the whole
// answer is one such final object (application/json).
type ollamaProtocol struct{}

// endpoint puts /api/chat or /api/generate under the server's root.
func (ollamaProtocol) endpoint(base *url.URL, api API, _ bool) string {
	root := serverRoot(base, true)
	if api == OllamaGenerate {
		return root.JoinPath("api", "generate").String()
	}
	return root.JoinPath("api", "chat").String()
}

// prepare adds "stream": true unless the body sets "stream", and the
// client's model unless the body names one.
func (ollamaProtocol) prepare(p *prepared, body map[string]any, model string) error {
	var err error
	if p.stream, err = streamFlag(body); err != nil {
		return err
	}
	p.model = defaultModel(body, model)
	return nil
}

// ollamaChunk is one line of an Ollama stream, or a whole response.
type ollamaChunk struct {
	Message struct {
		Content   json.RawMessage `json:"content"`
		Thinking  json.RawMessage `json:"thinking"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	} `json:"message"`
	Response           json.RawMessage `json:"response"`
	Thinking           json.RawMessage `json:"thinking"`
	Done               bool            `json:"done"`
	DoneReason         string          `json:"done_reason"`
	PromptEvalCount    *int            `json:"prompt_eval_count"`
	EvalCount          *int            `json:"eval_count"`
	TotalDuration      int64           `json:"total_duration"`
	LoadDuration       int64           `json:"load_duration"`
	PromptEvalDuration int64           `json:"prompt_eval_duration"`
	EvalDuration       int64           `json:"eval_duration"`
	Error              json.RawMessage `json:"error"`
}

// decodeOllama decodes one line or response.
func decodeOllama(data []byte, c *ollamaChunk) error {
	*c = ollamaChunk{}
	return json.Unmarshal(data, c)
}

// tokens reports whether the chunk carries reasoning (thinking) and answer
// output (content, response or tool calls).
func (c *ollamaChunk) tokens() (reasoning, answer bool) {
	reasoning = present(c.Message.Thinking) || present(c.Thinking)
	answer = present(c.Message.Content) || present(c.Response) || present(c.Message.ToolCalls)
	return reasoning, answer
}

// appendText appends the chunk's answer text to dst, as far as dst may
// grow (appendUnquoted's limit).
func (c *ollamaChunk) appendText(dst []byte, limit int) ([]byte, error) {
	for _, raw := range [2]json.RawMessage{c.Message.Content, c.Response} {
		if present(raw) {
			var err error
			if dst, err = appendUnquoted(dst, raw, limit); err != nil {
				return dst, fmt.Errorf("text: %w", err)
			}
		}
	}
	return dst, nil
}

// final fills res from the final (done) object: finish reason, token
// counts and the server's timings.
func (c *ollamaChunk) final(res *Result) {
	res.FinishReason = c.DoneReason
	if res.FinishReason == "" {
		res.FinishReason = "stop"
	}
	if c.PromptEvalCount != nil {
		res.PromptTokens = *c.PromptEvalCount
	}
	res.ServerTimings = map[string]float64{
		"total":      ms(time.Duration(c.TotalDuration)),
		"load":       ms(time.Duration(c.LoadDuration)),
		"promptEval": ms(time.Duration(c.PromptEvalDuration)),
		"eval":       ms(time.Duration(c.EvalDuration)),
	}
	finishOutput(res, c.EvalCount)
}

// read reads an NDJSON stream, or a whole JSON response.
func (ollamaProtocol) read(rr *responseReader, contentType string, body io.Reader, keepText bool, res *Result) error {
	switch mt := mediaType(contentType); {
	case mt == "application/x-ndjson" || mt == "application/jsonl" || mt == "application/jsonlines":
		return rr.readNDJSON(body, keepText, res)
	case isJSON(mt):
		return rr.readOllamaJSON(body, keepText, res)
	}
	return contentTypeError(res, contentType, "application/x-ndjson or application/json")
}

// readNDJSON reads an Ollama stream, timestamping each token-bearing line
// as it is parsed.
func (rr *responseReader) readNDJSON(body io.Reader, keepText bool, res *Result) error {
	rr.ollama = ollamaStream{}
	return rr.readStream(rr.ndjsonReader(body), &rr.ollama, res.Start, keepText, res)
}

// ollamaStream is the stream format of Ollama's NDJSON: its state is the
// line last decoded.
type ollamaStream struct{ c ollamaChunk }

func (s *ollamaStream) unit(rr *responseReader, u streamUnit, n int, now time.Duration, res *Result) (bool, error) {
	if err := decodeOllama(u.data, &s.c); err != nil {
		if rr.nd.Unterminated() {
			return false, &failure{ErrCut, fmt.Errorf("the stream ended inside line %d: %s", n+1, snippet(u.data))}
		}
		return false, &failure{ErrDecode, fmt.Errorf("stream line %d: %w: %s", n+1, err, snippet(u.data))}
	}
	if present(s.c.Error) {
		return false, streamErrorFailure(s.c.Error)
	}
	reasoning, answer := s.c.tokens()
	rr.tc.tick(res, now, reasoning, answer)
	if rr.keepText && answer {
		var err error
		if rr.text, err = s.c.appendText(rr.text, maxKeptText); err != nil {
			return false, &failure{ErrDecode, err}
		}
		rr.text = rr.bound(rr.text)
	}
	if !s.c.Done {
		return false, nil
	}
	s.c.final(res)
	rr.keepTextIn(res)
	return true, nil
}

// end fails every stream that stopped before its "done" line.
func (*ollamaStream) end(_ *responseReader, _ error, n int, _ *Result) error {
	return &failure{ErrCut, fmt.Errorf(`the stream ended after %d lines, before "done": true: %w`, n, io.ErrUnexpectedEOF)}
}

// readOllamaJSON reads a whole ("stream": false) response.
func (rr *responseReader) readOllamaJSON(body io.Reader, keepText bool, res *Result) error {
	var c ollamaChunk
	if err := rr.readWhole(body, res.Start, res, func(doc []byte) error { return decodeOllama(doc, &c) }); err != nil {
		return err
	}
	if present(c.Error) {
		return responseErrorFailure(c.Error)
	}
	reasoning, answer := c.tokens()
	whole(res, reasoning, answer)
	c.final(res)
	if keepText && answer {
		text, err := c.appendText(nil, maxJSONResponse) // counted whole, then cut
		if err != nil {
			return &failure{ErrDecode, err}
		}
		res.Text = string(text)
	}
	return nil
}
