package llmsim

import (
	"container/list"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// responsesAPI is OpenAI's Responses API: POST /v1/responses, streamed
// ("stream": true) as typed SSE events, or one JSON response object.
var responsesAPI = &api{
	parse:      parseResponses,
	newEncoder: func(c *completion) encoder { return newResponsesEncoder(c) },
	whole:      responsesWhole,
	idPrefix:   "resp_",
}

// maxStoredResponses bounds the responses kept for previous_response_id:
// the least recently used one goes first.
const maxStoredResponses = 4096

// responseStore keeps the conversation of each stored response (its
// input, with the one it continued, and its reply) by id, for a later
// request's previous_response_id. The zero value is empty and ready.
type responseStore struct {
	mu    sync.Mutex
	order list.List // of *storedResponse, most recently used first
	byID  map[string]*list.Element
}

type storedResponse struct {
	id       string
	messages []chatMessage
}

// get returns the conversation stored under id.
func (st *responseStore) get(id string) ([]chatMessage, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e, ok := st.byID[id]
	if !ok {
		return nil, false
	}
	st.order.MoveToFront(e)
	return e.Value.(*storedResponse).messages, true
}

// put stores messages under id, dropping the least recently used
// response beyond maxStoredResponses.
func (st *responseStore) put(id string, messages []chatMessage) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byID == nil {
		st.byID = map[string]*list.Element{}
	}
	st.byID[id] = st.order.PushFront(&storedResponse{id, messages})
	for st.order.Len() > maxStoredResponses {
		last := st.order.Back()
		st.order.Remove(last)
		delete(st.byID, last.Value.(*storedResponse).id)
	}
}

// responsesTurn is what a Responses request adds to its job: the
// conversation it sends (what previous_response_id continues, then its
// input), whether its response is stored, and the function its reply
// calls ("" for a text reply).
type responsesTurn struct {
	messages []chatMessage
	store    bool
	call     string
}

// Roles of the messages a Responses request's input holds.
var (
	roleUser      = hashRole([]byte(`"user"`))
	roleAssistant = hashRole([]byte(`"assistant"`))
)

// responsesItem is an item of a request's input: a message (its role and
// content, a string or input_text/output_text parts), or a function call's
// output (its output text, as the tool's message).
type responsesItem struct {
	Type    string          `json:"type"`
	Role    json.RawMessage `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  string          `json:"output"`
}

// message returns the chat message of the item.
func (it *responsesItem) message() (chatMessage, error) {
	if it.Type == "function_call_output" {
		return chatMessage{Role: hashRole([]byte(`"tool"`)), Content: content(it.Output)}, nil
	}
	m := chatMessage{Role: roleUser}
	if len(it.Role) > 0 {
		m.Role = hashRole(it.Role)
	}
	if len(it.Content) == 0 {
		return m, nil
	}
	if it.Content[0] == '"' {
		s, err := jsonString(it.Content)
		m.Content = content(s)
		return m, err
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return m, fmt.Errorf("content must be a string or an array of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	m.Content = content(b.String())
	return m, nil
}

// responsesInput decodes a request's input: a string (one user message)
// or an array of items.
func responsesInput(raw json.RawMessage) ([]chatMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("input is required")
	}
	if raw[0] == '"' {
		s, err := jsonString(raw)
		return []chatMessage{{Role: roleUser, Content: content(s)}}, err
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("input must be a string or an array of items: %w", err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("input must not be empty")
	}
	msgs := make([]chatMessage, 0, len(items))
	for i := range items {
		m, err := items[i].message()
		if err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// parseResponses reads and validates a Responses request: "model",
// "input", "instructions" (a system message, not carried to a later
// response, as in OpenAI's API), "max_output_tokens",
// "previous_response_id" (an unknown one is a 404), "store" (true when
// absent), "tools" and "tool_choice", and, as for chat, ignore_eos and
// min_tokens. "stream" is false when absent, as in OpenAI's API.
func parseResponses(data []byte, s *Server) (job, *apiError) {
	cfg := &s.cfg
	var body struct {
		Model              string            `json:"model"`
		Input              json.RawMessage   `json:"input"`
		Instructions       content           `json:"instructions"`
		MaxOutputTokens    *int              `json:"max_output_tokens"`
		PreviousResponseID string            `json:"previous_response_id"`
		Store              *bool             `json:"store"`
		Stream             bool              `json:"stream"`
		Tools              []json.RawMessage `json:"tools"`
		ToolChoice         json.RawMessage   `json:"tool_choice"`
		IgnoreEOS          bool              `json:"ignore_eos"`
		MinTokens          int               `json:"min_tokens"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return job{}, badRequest("", "invalid request body: %v", err)
	}
	input, err := responsesInput(body.Input)
	if err != nil {
		return job{}, badRequest("input", "%v", err)
	}
	var msgs []chatMessage
	if id := body.PreviousResponseID; id != "" {
		prev, ok := s.stored.get(id)
		if !ok {
			return job{}, &apiError{status: http.StatusNotFound, param: "previous_response_id",
				message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
		}
		msgs = append(msgs, prev...)
	}
	msgs = append(msgs, input...)
	call, aerr := calledFunction(body.Tools, body.ToolChoice)
	if aerr != nil {
		return job{}, aerr
	}
	j := job{model: body.Model, stream: body.Stream, ignoreEOS: body.IgnoreEOS, minTokens: body.MinTokens,
		responses: &responsesTurn{messages: msgs, store: body.Store == nil || *body.Store, call: call}}
	if j.model == "" {
		j.model = cfg.Model
	}
	p, err := s.prompter.chat(body.Instructions, msgs)
	if err != nil {
		return job{}, badRequest("input", "%v", err)
	}
	j.setPrompt(p)
	return j, j.limit(cfg, body.MaxOutputTokens, "max_output_tokens", "input")
}

// calledFunction returns the function a reply calls: with tools given and
// tool_choice "required", the first tool's; with tool_choice naming a
// function, that one; "" otherwise (a text reply: llmsim does not decide
// to call a tool on its own).
func calledFunction(tools []json.RawMessage, choice json.RawMessage) (string, *apiError) {
	if len(tools) == 0 || len(choice) == 0 {
		return "", nil
	}
	var named struct {
		Name string `json:"name"`
	}
	switch {
	case string(choice) == `"required"`:
		if err := json.Unmarshal(tools[0], &named); err != nil || named.Name == "" {
			return "", badRequest("tools", "tools[0] must be a function tool with a name")
		}
		return named.Name, nil
	case choice[0] == '{':
		if err := json.Unmarshal(choice, &named); err != nil {
			return "", badRequest("tool_choice", "tool_choice: %v", err)
		}
		return named.Name, nil
	}
	return "", nil
}

// responsesUsage is a response object's usage; input_tokens_details
// gives the cached tokens (0 when the prefix cache is off).
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

func newResponsesUsage(n tokenCounts) *responsesUsage {
	u := &responsesUsage{InputTokens: n.prompt, OutputTokens: n.output, TotalTokens: n.prompt + n.output}
	u.InputTokensDetails.CachedTokens = max(n.cached, 0)
	return u
}

// responsesOutputItem is an item of a response's output: a message, or a
// function call.
type responsesOutputItem struct {
	ID        string               `json:"id"`
	Type      string               `json:"type"`
	Status    string               `json:"status"`
	Role      string               `json:"role,omitempty"`
	Content   *[]responsesTextPart `json:"content,omitempty"`
	CallID    string               `json:"call_id,omitempty"`
	Name      string               `json:"name,omitempty"`
	Arguments *string              `json:"arguments,omitempty"`
}

type responsesTextPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// responsesObject is a response object.
type responsesObject struct {
	ID                string                `json:"id"`
	Object            string                `json:"object"`
	CreatedAt         int64                 `json:"created_at"`
	Status            string                `json:"status"`
	Model             string                `json:"model"`
	Output            []responsesOutputItem `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Usage *responsesUsage `json:"usage"`
}

// responsesObject returns c's response object with its status; output and usage
// are the caller's.
func (c *completion) responsesObject(status string) responsesObject {
	return responsesObject{ID: c.id, Object: "response", CreatedAt: c.created, Status: status, Model: c.job.model, Output: []responsesOutputItem{}}
}

// responsesEnded fills o, the object of a response that ended with reason after
// output (its text, or its call's arguments): its status, output item and
// usage; and stores the conversation when the request asked.
func (c *completion) responsesEnded(o *responsesObject, reason, output string, n tokenCounts) {
	t := c.job.responses
	o.Status = "completed"
	if reason == "length" {
		o.Status = "incomplete"
		o.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{"max_output_tokens"}
	}
	o.Output = []responsesOutputItem{c.responsesItem("completed", output)}
	o.Usage = newResponsesUsage(n)
	if t.store {
		msgs := append(t.messages[:len(t.messages):len(t.messages)], chatMessage{Role: roleAssistant, Content: content(output)})
		c.server.stored.put(c.id, msgs)
	}
}

// responsesItem is the output item of c's reply holding output.
func (c *completion) responsesItem(status, output string) responsesOutputItem {
	if call := c.job.responses.call; call != "" {
		return responsesOutputItem{ID: "fc_" + c.id, Type: "function_call", Status: status, CallID: "call_" + c.id, Name: call, Arguments: &output}
	}
	parts := []responsesTextPart{}
	if status == "completed" {
		parts = append(parts, responsesTextPart{"output_text", output, []any{}})
	}
	return responsesOutputItem{ID: "msg_" + c.id, Type: "message", Status: status, Role: "assistant", Content: &parts}
}

// responsesWhole is the body of a whole ("stream": false) response.
func responsesWhole(c *completion, text string) any {
	o := c.responsesObject("completed")
	c.responsesEnded(&o, c.finish, replyOf(c, text[1:]), c.counts()) // an answer starts without a space
	return o
}

// replyOf returns the output of a reply whose words are text: the text,
// or, for a function call, its arguments {"input": text}.
func replyOf(c *completion, text string) string {
	if c.job.responses.call == "" {
		return text
	}
	args, _ := json.Marshal(map[string]string{"input": text}) // a string map always marshals
	return string(args)
}

// responsesEncoder formats a Responses stream: response.created,
// response.output_item.added (a message, or a function_call item) and,
// for a message, response.content_part.added, sent with the first token;
// one response.output_text.delta (or response.function_call_arguments.delta)
// per token; then the .done events and response.completed, or
// response.incomplete when max_output_tokens cut the reply, with the
// usage. A fault's error is a response.failed event.
type responsesEncoder struct {
	c       *completion
	started bool
	seq     int
	text    strings.Builder // the words sent
	buf     []byte
}

func newResponsesEncoder(c *completion) *responsesEncoder {
	return &responsesEncoder{c: c, buf: make([]byte, 0, 1024)}
}

func (e *responsesEncoder) contentType() string { return "text/event-stream" }

// event adds an event of type typ whose data is v, with its sequence
// number.
func (e *responsesEncoder) event(typ string, v map[string]any) {
	v["type"], v["sequence_number"] = typ, e.seq
	e.seq++
	data, _ := json.Marshal(v) // maps of strings, numbers and structs always marshal
	e.buf = append(e.buf, "event: "...)
	e.buf = append(e.buf, typ...)
	e.buf = append(e.buf, "\ndata: "...)
	e.buf = append(e.buf, data...)
	e.buf = append(e.buf, "\n\n"...)
}

// start adds the events that open the stream, unless added already.
func (e *responsesEncoder) start() {
	if e.started {
		return
	}
	e.started = true
	c := e.c
	e.event("response.created", map[string]any{"response": c.responsesObject("in_progress")})
	e.event("response.output_item.added", map[string]any{"output_index": 0, "item": c.responsesItem("in_progress", "")})
	if c.job.responses.call == "" {
		e.event("response.content_part.added", map[string]any{"output_index": 0, "item_id": "msg_" + c.id, "content_index": 0,
			"part": responsesTextPart{"output_text", "", []any{}}})
	}
}

// token adds the delta of one word. A function call's arguments are
// {"input": "<the words>"}: the first delta opens them, the last closes
// them.
func (e *responsesEncoder) token(word string, first, last bool) {
	e.start()
	if first {
		word = word[1:] // an answer starts without a space
	}
	e.text.WriteString(word)
	if e.c.job.responses.call == "" {
		e.event("response.output_text.delta", map[string]any{"output_index": 0, "item_id": "msg_" + e.c.id, "content_index": 0, "delta": word, "logprobs": []any{}})
		return
	}
	if first {
		word = `{"input": "` + word
	}
	if last {
		word += `"}`
	}
	e.event("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": "fc_" + e.c.id, "delta": word})
}

func (e *responsesEncoder) end(reason string, n tokenCounts) {
	e.start()
	c := e.c
	output := replyOf(c, e.text.String())
	if c.job.responses.call == "" {
		id := "msg_" + c.id
		e.event("response.output_text.done", map[string]any{"output_index": 0, "item_id": id, "content_index": 0, "text": output, "logprobs": []any{}})
		e.event("response.content_part.done", map[string]any{"output_index": 0, "item_id": id, "content_index": 0,
			"part": responsesTextPart{"output_text", output, []any{}}})
	} else {
		e.event("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": "fc_" + c.id, "arguments": output})
	}
	e.event("response.output_item.done", map[string]any{"output_index": 0, "item": c.responsesItem("completed", output)})
	o := c.responsesObject("")
	c.responsesEnded(&o, reason, output, n)
	e.event("response."+o.Status, map[string]any{"response": o})
}

func (e *responsesEncoder) malformed() {
	e.start()
	e.buf = append(e.buf, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n"...)
}

// fail adds a response.failed event.
func (e *responsesEncoder) fail(name string) {
	e.start()
	o := e.c.responsesObject("failed")
	o.Error = &struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{"server_error", "llmsim injected fault " + name + ": " + http.StatusText(http.StatusInternalServerError)}
	e.event("response.failed", map[string]any{"response": o})
}

func (e *responsesEncoder) writeOut(w io.Writer) error {
	_, err := w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}
