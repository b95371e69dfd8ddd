package llmsim

import (
	"encoding/json"
	"io"
	"strconv"
	"time"
)

// Ollama's native API: POST /api/chat and POST /api/generate, streamed as
// newline-delimited JSON.
var (
	ollamaChatAPI = &api{
		parse:      func(data []byte, s *Server) (job, *apiError) { return parseOllama(data, true, s) },
		newEncoder: func(c *completion) encoder { return newOllamaEncoder(c, true) },
		streamOnly: true,
		chat:       true,
	}
	ollamaGenerateAPI = &api{
		parse:      func(data []byte, s *Server) (job, *apiError) { return parseOllama(data, false, s) },
		newEncoder: func(c *completion) encoder { return newOllamaEncoder(c, false) },
		streamOnly: true,
	}
)

// ollamaOptions are the generation options llmsim honours: Ollama's
// num_predict (the maximum of generated tokens; -1, -2 or absent: the
// server's default), and, as llmsim extensions, OpenAI's ignore_eos and
// min_tokens.
type ollamaOptions struct {
	NumPredict *int `json:"num_predict"`
	IgnoreEOS  bool `json:"ignore_eos"`
	MinTokens  int  `json:"min_tokens"`
}

// parseOllama reads and validates an Ollama chat (chat true) or generate
// request. "stream" is true when absent, as in Ollama.
func parseOllama(data []byte, chat bool, s *Server) (job, *apiError) {
	cfg := &s.cfg
	var body struct {
		Model    string        `json:"model"`
		Messages []chatMessage `json:"messages"`
		Prompt   *string       `json:"prompt"`
		Stream   *bool         `json:"stream"`
		Options  ollamaOptions `json:"options"`
		ollamaOptions
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return job{}, badRequest("", "invalid request body: %v", err)
	}
	j := job{model: body.Model, stream: body.Stream == nil || *body.Stream}
	if j.model == "" {
		j.model = cfg.Model
	}
	j.ignoreEOS = body.Options.IgnoreEOS || body.IgnoreEOS
	j.minTokens = max(body.Options.MinTokens, body.MinTokens)
	input := "prompt"
	var p prompt
	var err error
	if chat {
		if len(body.Messages) == 0 {
			return job{}, badRequest("messages", "messages must be a non-empty array")
		}
		input = "messages"
		p, err = s.prompter.chat(content{}, body.Messages)
	} else {
		if body.Prompt == nil {
			return job{}, badRequest("prompt", "prompt is required")
		}
		p, err = s.prompter.text(*body.Prompt)
	}
	if err != nil {
		return job{}, badRequest(input, "%v", err)
	}
	j.setPrompt(p)
	maxTokens := body.Options.NumPredict
	if maxTokens != nil && *maxTokens < 0 {
		maxTokens = nil
	}
	return j, j.limit(cfg, maxTokens, "num_predict", input)
}

// ollamaEncoder formats an Ollama stream's lines.
type ollamaEncoder struct {
	chat    bool
	head    []byte // opens every line: {"model":…,"created_at":…,
	started time.Time
	first   time.Time // of the first token
	buf     []byte
}

func newOllamaEncoder(c *completion, chat bool) *ollamaEncoder {
	model, _ := json.Marshal(c.job.model) // a string always marshals
	head := append([]byte(`{"model":`), model...)
	head = append(head, `,"created_at":"`...)
	head = time.Now().UTC().AppendFormat(head, time.RFC3339Nano)
	head = append(head, `",`...)
	return &ollamaEncoder{chat: chat, head: head, started: c.arrived, buf: make([]byte, 0, 512)}
}

func (e *ollamaEncoder) contentType() string { return "application/x-ndjson" }

// text adds a line with the given (JSON-safe) text and done.
func (e *ollamaEncoder) text(s string, done bool) {
	e.buf = append(e.buf, e.head...)
	if e.chat {
		e.buf = append(e.buf, `"message":{"role":"assistant","content":"`...)
		e.buf = append(e.buf, s...)
		e.buf = append(e.buf, `"},`...)
	} else {
		e.buf = append(e.buf, `"response":"`...)
		e.buf = append(e.buf, s...)
		e.buf = append(e.buf, `",`...)
	}
	e.buf = strconv.AppendBool(append(e.buf, `"done":`...), done)
}

func (e *ollamaEncoder) token(word string, first, _ bool) {
	if first {
		e.first = time.Now()
		word = word[1:] // an answer starts without a space
	}
	e.text(word, false)
	e.buf = append(e.buf, "}\n"...)
}

// end adds the final line: done, its reason, counts and durations (ns).
func (e *ollamaEncoder) end(reason string, n tokenCounts) {
	now := time.Now()
	if e.first.IsZero() {
		e.first = now
	}
	e.text("", true)
	e.buf = append(e.buf, `,"done_reason":"`...)
	e.buf = append(e.buf, reason...)
	for _, f := range []struct {
		name string
		v    int64
	}{
		{`","total_duration":`, int64(now.Sub(e.started))},
		{`,"load_duration":`, 0},
		{`,"prompt_eval_count":`, int64(n.prompt)},
		{`,"prompt_eval_duration":`, int64(e.first.Sub(e.started))},
		{`,"eval_count":`, int64(n.output)},
		{`,"eval_duration":`, int64(now.Sub(e.first))},
	} {
		e.buf = strconv.AppendInt(append(e.buf, f.name...), f.v, 10)
	}
	e.buf = append(e.buf, "}\n"...)
}

func (e *ollamaEncoder) malformed() {
	e.buf = append(e.buf, e.head...)
	e.buf = append(e.buf, '\n')
}

func (e *ollamaEncoder) fail(name string) {
	msg, _ := json.Marshal("llmsim injected fault " + name) // a string always marshals
	e.buf = append(e.buf, `{"error":`...)
	e.buf = append(e.buf, msg...)
	e.buf = append(e.buf, "}\n"...)
}

func (e *ollamaEncoder) writeOut(w io.Writer) error {
	_, err := w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}
