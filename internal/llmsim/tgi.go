package llmsim

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// tgiAPI is Hugging Face TGI's POST /generate_stream (SSE).
var tgiAPI = &api{
	parse:      parseTGI,
	newEncoder: func(c *completion) encoder { return &tgiEncoder{reason: c.finish} },
	streamOnly: true,
}

// tgiEOS is the special end-of-sequence token TGI streams when the
// generation ends by itself.
const tgiEOS = "</s>"

// parseTGI reads and validates a TGI request: "inputs" and "parameters",
// of which max_new_tokens (absent: the server's default) and, as llmsim
// extensions, ignore_eos and min_tokens are honoured. "stream" (false)
// may only be absent or true: /generate_stream always streams.
func parseTGI(data []byte, s *Server) (job, *apiError) {
	cfg := &s.cfg
	var body struct {
		Inputs     *string `json:"inputs"`
		Stream     *bool   `json:"stream"`
		Parameters struct {
			MaxNewTokens *int `json:"max_new_tokens"`
			IgnoreEOS    bool `json:"ignore_eos"`
			MinTokens    int  `json:"min_tokens"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return job{}, badRequest("", "invalid request body: %v", err)
	}
	if body.Inputs == nil {
		return job{}, badRequest("inputs", "inputs is required")
	}
	p, err := s.prompter.text(*body.Inputs)
	if err != nil {
		return job{}, badRequest("inputs", "%v", err)
	}
	j := job{
		model:     cfg.Model,
		stream:    body.Stream == nil || *body.Stream,
		ignoreEOS: body.Parameters.IgnoreEOS,
		minTokens: body.Parameters.MinTokens,
	}
	j.setPrompt(p)
	return j, j.limit(cfg, body.Parameters.MaxNewTokens, "max_new_tokens", "inputs")
}

// tgiEncoder formats a TGI stream's events. The last generated token's
// event is the final one (generated_text and details) when the stream
// ends on its length; otherwise a special EOS token's event ends it,
// counted in generated_tokens as TGI does.
type tgiEncoder struct {
	reason string // the stream's finish reason: "length" or "stop"
	index  int
	text   strings.Builder
	buf    []byte
}

func (e *tgiEncoder) contentType() string { return "text/event-stream" }

// event adds one token's event, the final one when details.
func (e *tgiEncoder) event(text string, special, details bool, reason string) {
	e.index++
	e.buf = append(e.buf, `data:{"index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(e.index), 10)
	e.buf = append(e.buf, `,"token":{"id":`...)
	e.buf = strconv.AppendInt(e.buf, int64(1000+e.index), 10)
	e.buf = append(e.buf, `,"text":"`...)
	e.buf = append(e.buf, text...)
	e.buf = append(e.buf, `","logprob":-0.25,"special":`...)
	e.buf = strconv.AppendBool(e.buf, special)
	e.buf = append(e.buf, `},"generated_text":`...)
	if details {
		quoted, _ := json.Marshal(e.text.String()) // a string always marshals
		e.buf = append(e.buf, quoted...)
		e.buf = append(e.buf, `,"details":{"finish_reason":"`...)
		e.buf = append(e.buf, reason...)
		e.buf = append(e.buf, `","generated_tokens":`...)
		e.buf = strconv.AppendInt(e.buf, int64(e.index), 10)
		e.buf = append(e.buf, `,"seed":null}`...)
	} else {
		e.buf = append(e.buf, `null,"details":null`...)
	}
	e.buf = append(e.buf, ",\"top_tokens\":null}\n\n"...)
}

func (e *tgiEncoder) token(word string, first, last bool) {
	if first {
		word = word[1:] // an answer starts without a space
	}
	if len(word) < 1<<10 {
		e.text.WriteString(word)
	}
	e.event(word, false, last && e.reason == "length", "length")
}

func (e *tgiEncoder) end(reason string, _ tokenCounts) {
	if reason != "length" {
		e.event(tgiEOS, true, true, "eos_token")
	}
}

func (e *tgiEncoder) malformed() {
	e.buf = append(e.buf, "data:{\"index\":\n\n"...)
}

func (e *tgiEncoder) fail(name string) {
	msg, _ := json.Marshal("llmsim injected fault " + name) // a string always marshals
	e.buf = append(e.buf, `data:{"error":`...)
	e.buf = append(e.buf, msg...)
	e.buf = append(e.buf, ",\"error_type\":\"generation\"}\n\n"...)
}

func (e *tgiEncoder) writeOut(w io.Writer) error {
	_, err := w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}
