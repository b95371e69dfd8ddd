package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxBodyBytes bounds a request body.
const maxBodyBytes = 64 << 20

// job is a validated generation request.
type job struct {
	model        string
	promptTokens int
	// blocks and cacheable are the prompt's prefix-cache blocks (see
	// prompt).
	blocks       []uint64
	cacheable    bool
	maxTokens    int
	minTokens    int
	ignoreEOS    bool
	stream       bool
	includeUsage bool
	// toolCall is the tool a streamed chat answer calls (toolcall.go).
	toolCall string
	// responses is a Responses API request's own (responses.go), nil for
	// other APIs.
	responses *responsesTurn
}

// setPrompt sets j's prompt.
func (j *job) setPrompt(p prompt) {
	j.promptTokens, j.blocks, j.cacheable = p.tokens, p.blocks, p.cacheable
}

// requestBody holds the fields of a chat or completions request that the
// simulator honours; others are ignored.
type requestBody struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	Prompt              *promptInput  `json:"prompt"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	MinTokens           int           `json:"min_tokens"`
	IgnoreEOS           bool          `json:"ignore_eos"`
	N                   *int          `json:"n"`
	Stream              bool          `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatMessage is a chat message reduced to what counts for tokens.
type chatMessage struct {
	Role    role    `json:"role"`
	Content content `json:"content"`
}

// content is a message's content: its text (a string, or the text parts
// of a content array joined) and the sizes of its images (image.go).
type content struct {
	text   string
	images []imageSize
}

// UnmarshalJSON accepts a string, null, or an array of content parts of
// which the text parts (chat's "text", the Responses API's "input_text"
// and "output_text") and the images count.
func (c *content) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case 'n':
		*c = content{}
	case '"':
		s, err := jsonString(b)
		if err != nil {
			return err
		}
		*c = content{text: s}
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var texts []string
		*c = content{}
		for i, p := range parts {
			switch p.Type {
			case "text", "input_text", "output_text":
				texts = append(texts, p.Text)
			case "image_url", "image", "input_image":
				size, err := p.imageSize()
				if err != nil {
					return fmt.Errorf("content[%d]: %w", i, err)
				}
				c.images = append(c.images, size)
			}
		}
		c.text = strings.Join(texts, "")
	default:
		return errors.New("message content must be a string, null or an array of parts")
	}
	return nil
}

// jsonString decodes a JSON string, quickly when it has no escapes.
func jsonString(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1]), nil // valid JSON: the decoder checked it
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// promptInput is a completions prompt: a text, or token ids.
type promptInput struct {
	text  string
	ids   []int
	isIDs bool
}

// UnmarshalJSON accepts a string, an array of token ids, or an array
// holding exactly one of those.
func (p *promptInput) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case '"':
		s, err := jsonString(b)
		if err != nil {
			return err
		}
		*p = promptInput{text: s}
		return nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		switch {
		case len(items) == 0:
			return errors.New("prompt must not be empty")
		case items[0][0] != '"' && items[0][0] != '[':
			var ids []int
			if err := json.Unmarshal(b, &ids); err != nil {
				return err
			}
			*p = promptInput{ids: ids, isIDs: true}
			return nil
		case len(items) == 1:
			return p.UnmarshalJSON(items[0])
		}
		return errors.New("batched prompts are not supported; send one prompt per request")
	}
	return errors.New("prompt must be a string or an array of token ids")
}

// promptOf returns the prompt of a completions prompt.
func (pr *prompter) promptOf(p *promptInput) (prompt, error) {
	if p.isIDs {
		return pr.ids(p.ids), nil
	}
	return pr.text(p.text)
}

// readBody reads a request's body.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, badRequest("", "reading the request body: %v", err)
	}
	return data, nil
}

// parseJob reads and validates a chat (chat true) or completions request.
func parseJob(data []byte, chat bool, s *Server) (job, *apiError) {
	cfg := &s.cfg
	var body requestBody
	if err := json.Unmarshal(data, &body); err != nil {
		return job{}, badRequest("", "invalid request body: %v", err)
	}
	j := job{
		model:     body.Model,
		minTokens: body.MinTokens,
		ignoreEOS: body.IgnoreEOS,
		stream:    body.Stream,
	}
	if j.model == "" {
		j.model = cfg.Model
	}
	j.includeUsage = body.Stream && body.StreamOptions != nil && body.StreamOptions.IncludeUsage

	maxTokens, maxParam, input := body.MaxTokens, "max_tokens", "prompt"
	if chat {
		if len(body.Messages) == 0 {
			return job{}, badRequest("messages", "messages must be a non-empty array")
		}
		p, err := s.prompter.chat(content{}, body.Messages)
		if err != nil {
			return job{}, badRequest("messages", "%v", err)
		}
		j.setPrompt(p)
		if body.MaxCompletionTokens != nil {
			maxTokens, maxParam = body.MaxCompletionTokens, "max_completion_tokens"
		}
		input = "messages"
		var aerr *apiError
		if j.toolCall, aerr = toolCallName(data); aerr != nil {
			return job{}, aerr
		}
	} else {
		if body.Prompt == nil {
			return job{}, badRequest("prompt", "prompt is required")
		}
		p, err := s.prompter.promptOf(body.Prompt)
		if err != nil {
			return job{}, badRequest("prompt", "%v", err)
		}
		j.setPrompt(p)
	}

	if body.N != nil && *body.N != 1 {
		return job{}, badRequest("n", "only n=1 is supported, got %d", *body.N)
	}
	return j, j.limit(cfg, maxTokens, maxParam, input)
}

// limit sets j.maxTokens from the requested maximum (nil: none) under the
// model's context length, and checks j.minTokens; param names the maximum's
// field and input the prompt's, for errors.
func (j *job) limit(cfg *Config, maxTokens *int, maxParam, input string) *apiError {
	room := cfg.MaxModelLen - j.promptTokens
	switch {
	case room < 1:
		return badRequest(input, "This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input.",
			cfg.MaxModelLen, j.promptTokens)
	case maxTokens == nil:
		j.maxTokens = min(cfg.DefaultMaxTokens, room)
	case *maxTokens < 1:
		return badRequest(maxParam, "%s must be at least 1, got %d", maxParam, *maxTokens)
	case *maxTokens > room:
		return badRequest(input, "This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the input, %d in the completion). Please reduce the length of the input or completion.",
			cfg.MaxModelLen, j.promptTokens+*maxTokens, j.promptTokens, *maxTokens)
	default:
		j.maxTokens = *maxTokens
	}
	if j.minTokens < 0 || j.minTokens > j.maxTokens {
		return badRequest("min_tokens", "min_tokens must be between 0 and max_tokens (%d), got %d", j.maxTokens, j.minTokens)
	}
	return nil
}
