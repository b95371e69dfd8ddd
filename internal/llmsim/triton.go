package llmsim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// Triton Inference Server's generate extension: POST
// /v2/models/{model}[/versions/{version}]/generate_stream (SSE, one event
// per token) and .../generate (one JSON object), as the TensorRT-LLM and
// vLLM backends answer them.

// tritonRoutes adds Triton's endpoints to mux.
func (s *Server) tritonRoutes(mux *http.ServeMux) {
	for _, prefix := range []string{"/v2/models/{model}", "/v2/models/{model}/versions/{version}"} {
		for _, stream := range []bool{true, false} {
			path := "POST " + prefix + "/generate"
			if stream {
				path += "_stream"
			}
			mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
				s.generate(w, r, newTritonAPI(r.PathValue("model"), r.PathValue("version"), stream))
			})
		}
	}
}

// newTritonAPI returns the api of one Triton request to model (version
// "": the default, reported as "1"), streamed or not.
func newTritonAPI(model, version string, stream bool) *api {
	if version == "" {
		version = "1"
	}
	var opts tritonOptions
	return &api{
		parse: func(data []byte, s *Server) (job, *apiError) {
			j, o, err := parseTriton(data, s, stream)
			j.model, opts = model, o
			return j, err
		},
		newEncoder: func(c *completion) encoder { return newTritonEncoder(c, version, opts) },
		whole: func(c *completion, text string) any {
			e := newTritonEncoder(c, version, opts)
			e.object(text[1:], c.seq.outputTokens, c.finish) // an answer starts without a space
			return json.RawMessage(e.buf)
		},
	}
}

// tritonOptions are the vLLM backend's optional outputs a request asks
// for.
type tritonOptions struct {
	ReturnFinishReason    bool `json:"return_finish_reason"`
	ReturnNumInputTokens  bool `json:"return_num_input_tokens"`
	ReturnNumOutputTokens bool `json:"return_num_output_tokens"`
}

// tritonParams are the generation parameters llmsim honours, top-level
// (inputs of TensorRT-LLM's ensemble) or in "parameters" (the vLLM
// backend's sampling parameters): max_tokens and, as llmsim extensions,
// ignore_eos and min_tokens.
type tritonParams struct {
	MaxTokens *int `json:"max_tokens"`
	IgnoreEOS bool `json:"ignore_eos"`
	MinTokens int  `json:"min_tokens"`
}

// parseTriton reads and validates a Triton generate request: "text_input"
// is required; /generate_stream streams and /generate does not, whatever
// "stream" says.
func parseTriton(data []byte, s *Server, stream bool) (job, tritonOptions, *apiError) {
	var body struct {
		TextInput  *string      `json:"text_input"`
		Parameters tritonParams `json:"parameters"`
		tritonParams
		tritonOptions
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return job{}, tritonOptions{}, badRequest("", "invalid request body: %v", err)
	}
	if body.TextInput == nil {
		return job{}, tritonOptions{}, badRequest("text_input", "text_input is required")
	}
	maxTokens := body.MaxTokens
	if body.Parameters.MaxTokens != nil {
		maxTokens = body.Parameters.MaxTokens
	}
	p, err := s.prompter.text(*body.TextInput)
	if err != nil {
		return job{}, tritonOptions{}, badRequest("text_input", "%v", err)
	}
	j := job{
		stream:    stream,
		ignoreEOS: body.IgnoreEOS || body.Parameters.IgnoreEOS,
		minTokens: max(body.MinTokens, body.Parameters.MinTokens),
	}
	j.setPrompt(p)
	return j, body.tritonOptions, j.limit(&s.cfg, maxTokens, "max_tokens", "text_input")
}

// tritonEncoder formats a Triton stream's events, or a whole response.
// The stream has no terminator: it ends when the server closes it after
// the last token's event.
type tritonEncoder struct {
	head         []byte // opens every object: {"model_name":…,"model_version":…,
	opts         tritonOptions
	promptTokens int
	reason       string
	buf          []byte
}

func newTritonEncoder(c *completion, version string, opts tritonOptions) *tritonEncoder {
	model, _ := json.Marshal(c.job.model) // a string always marshals
	v, _ := json.Marshal(version)
	head := append([]byte(`{"model_name":`), model...)
	head = append(head, `,"model_version":`...)
	head = append(head, v...)
	head = append(head, `,"sequence_end":false,"sequence_id":0,"sequence_start":false,`...)
	return &tritonEncoder{head: head, opts: opts, promptTokens: c.job.promptTokens, reason: c.finish, buf: make([]byte, 0, 256)}
}

func (e *tritonEncoder) contentType() string { return "text/event-stream" }

// object adds one response object with the given (JSON-safe) text, of
// outputTokens tokens; reason is the finish reason when it is the last.
func (e *tritonEncoder) object(text string, outputTokens int, reason string) {
	e.buf = append(e.buf, e.head...)
	if e.opts.ReturnFinishReason && reason != "" {
		e.buf = append(e.buf, `"finish_reason":"`...)
		e.buf = append(e.buf, reason...)
		e.buf = append(e.buf, `",`...)
	}
	if e.opts.ReturnNumInputTokens {
		e.buf = strconv.AppendInt(append(e.buf, `"num_input_tokens":`...), int64(e.promptTokens), 10)
		e.buf = append(e.buf, ',')
	}
	if e.opts.ReturnNumOutputTokens {
		e.buf = strconv.AppendInt(append(e.buf, `"num_output_tokens":`...), int64(outputTokens), 10)
		e.buf = append(e.buf, ',')
	}
	e.buf = append(e.buf, `"text_output":"`...)
	e.buf = append(e.buf, text...)
	e.buf = append(e.buf, `"}`...)
}

func (e *tritonEncoder) token(word string, first, last bool) {
	if first {
		word = word[1:] // an answer starts without a space
	}
	reason := ""
	if last {
		reason = e.reason
	}
	e.buf = append(e.buf, "data: "...)
	e.object(word, 1, reason)
	e.buf = append(e.buf, "\n\n"...)
}

func (e *tritonEncoder) end(string, tokenCounts) {}

func (e *tritonEncoder) malformed() {
	e.buf = append(e.buf, "data: {\"text_output\":\n\n"...)
}

func (e *tritonEncoder) fail(name string) {
	msg, _ := json.Marshal("llmsim injected fault " + name) // a string always marshals
	e.buf = append(e.buf, `data: {"error":`...)
	e.buf = append(e.buf, msg...)
	e.buf = append(e.buf, "}\n\n"...)
}

func (e *tritonEncoder) writeOut(w io.Writer) error {
	_, err := w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}
