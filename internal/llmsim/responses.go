package llmsim

import (
	"container/list"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
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
// content, a string or input_text, output_text and input_image parts, read
// as a chat message's), or a function call's
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
		return chatMessage{Role: hashRole([]byte(`"tool"`)), Content: content{text: it.Output}}, nil
	}
	m := chatMessage{Role: roleUser}
	if len(it.Role) > 0 {
		m.Role = hashRole(it.Role)
	}
	if len(it.Content) == 0 {
		return m, nil
	}
	err := json.Unmarshal(it.Content, &m.Content) // its errors name the part
	return m, err
}

// responsesInput decodes a request's input: a string (one user message)
// or an array of items.
func responsesInput(raw json.RawMessage) ([]chatMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("input is required")
	}
	if raw[0] == '"' {
		s, err := jsonString(raw)
		return []chatMessage{{Role: roleUser, Content: content{text: s}}}, err
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
	call, aerr := calledFunction(body.Tools, body.ToolChoice, responsesFunctionName)
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

func newResponsesUsage(n tokenCounts) responsesUsage {
	u := responsesUsage{InputTokens: n.prompt, OutputTokens: n.output, TotalTokens: n.prompt + n.output}
	u.InputTokensDetails.CachedTokens = max(n.cached, 0)
	return u
}

// The response objects and events are written by hand, as the other
// encoders write theirs: a reply's text, made of the vocabulary's words,
// needs no escaping, and a stream repeats it whole in its last events
// (2 MiB of it with the big_line fault).

// appendResponse appends c's response object with the given status; once
// it ended (ended), its output item holding output, its usage n, and, for
// an incomplete one, why; failure, when not "", is its error's message.
func (c *completion) appendResponse(buf []byte, status string, ended bool, output string, n tokenCounts, failure string) []byte {
	buf = append(buf, `{"id":"`...)
	buf = append(buf, c.id...)
	buf = append(buf, `","object":"response","created_at":`...)
	buf = strconv.AppendInt(buf, c.created, 10)
	buf = append(buf, `,"status":"`...)
	buf = append(buf, status...)
	buf = append(buf, `","model":`...)
	buf = appendJSON(buf, c.job.model)
	buf = append(buf, `,"output":[`...)
	if ended {
		buf = c.appendItem(buf, "completed", output)
	}
	buf = append(buf, `],"incomplete_details":`...)
	if status == "incomplete" {
		buf = append(buf, `{"reason":"max_output_tokens"}`...)
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"error":`...)
	if failure != "" {
		buf = appendJSON(buf, struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}{"server_error", failure})
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"usage":`...)
	if ended {
		buf = appendJSON(buf, newResponsesUsage(n))
	} else {
		buf = append(buf, "null"...)
	}
	return append(buf, '}')
}

// appendItem appends the output item of c's reply with the given status,
// holding output (its text, or its call's arguments) once completed.
func (c *completion) appendItem(buf []byte, status, output string) []byte {
	done := status == "completed"
	if call := c.job.responses.call; call != "" {
		buf = append(buf, `{"id":"fc_`...)
		buf = append(buf, c.id...)
		buf = append(buf, `","type":"function_call","status":"`...)
		buf = append(buf, status...)
		buf = append(buf, `","call_id":"call_`...)
		buf = append(buf, c.id...)
		buf = append(buf, `","name":`...)
		buf = appendJSON(buf, call)
		buf = append(buf, `,"arguments":"`...)
		if done {
			buf = appendArguments(buf, output)
		}
		return append(buf, `"}`...)
	}
	buf = append(buf, `{"id":"msg_`...)
	buf = append(buf, c.id...)
	buf = append(buf, `","type":"message","status":"`...)
	buf = append(buf, status...)
	buf = append(buf, `","role":"assistant","content":[`...)
	if done {
		buf = appendTextPart(buf, output)
	}
	return append(buf, "]}"...)
}

// appendTextPart appends an output_text part holding text.
func appendTextPart(buf []byte, text string) []byte {
	buf = append(buf, `{"type":"output_text","text":"`...)
	buf = append(buf, text...)
	return append(buf, `","annotations":[]}`...)
}

// appendArguments appends, escaped within a JSON string, the arguments
// of a call whose words are text: {"input": "<text>"}.
func appendArguments(buf []byte, text string) []byte {
	buf = append(buf, `{\"input\": \"`...)
	buf = append(buf, text...)
	return append(buf, `\"}`...)
}

// appendJSON appends v as JSON; the values given always marshal.
func appendJSON(buf []byte, v any) []byte {
	data, _ := json.Marshal(v)
	return append(buf, data...)
}

// responsesStatus is the status of a response that ended with the
// engine's finish reason.
func responsesStatus(finish string) string {
	if finish == "length" {
		return "incomplete"
	}
	return "completed"
}

// storeReply stores c's conversation with its reply, text, when the
// request asked for it (store, by default).
func (c *completion) storeReply(text string) {
	if t := c.job.responses; t.store {
		msgs := append(t.messages[:len(t.messages):len(t.messages)], chatMessage{Role: roleAssistant, Content: content{text: text}})
		c.server.stored.put(c.id, msgs)
	}
}

// responsesWhole is the body of a whole ("stream": false) response.
func responsesWhole(c *completion, text string) any {
	text = text[1:] // an answer starts without a space
	c.storeReply(text)
	return json.RawMessage(c.appendResponse(nil, responsesStatus(c.finish), true, text, c.counts(), ""))
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
	text    []byte // the words sent
	buf     []byte
}

func newResponsesEncoder(c *completion) *responsesEncoder {
	return &responsesEncoder{c: c, buf: make([]byte, 0, 1024)}
}

func (e *responsesEncoder) contentType() string { return "text/event-stream" }

// open opens an event of type typ: its event line, and its data's type
// and sequence number, for the caller to add its fields (each after a
// comma) and close.
func (e *responsesEncoder) open(typ string) {
	e.buf = append(e.buf, "event: "...)
	e.buf = append(e.buf, typ...)
	e.buf = append(e.buf, "\ndata: {\"type\":\""...)
	e.buf = append(e.buf, typ...)
	e.buf = append(e.buf, `","sequence_number":`...)
	e.buf = strconv.AppendInt(e.buf, int64(e.seq), 10)
	e.seq++
}

// close closes the event open.
func (e *responsesEncoder) close() { e.buf = append(e.buf, "}\n\n"...) }

// openPart opens an event of type typ about the reply's item: its output
// index and item id, then, for a message, its content index.
func (e *responsesEncoder) openPart(typ string) {
	e.open(typ)
	if e.c.job.responses.call != "" {
		e.buf = append(e.buf, `,"output_index":0,"item_id":"fc_`...)
		e.buf = append(e.buf, e.c.id...)
		e.buf = append(e.buf, '"')
		return
	}
	e.buf = append(e.buf, `,"output_index":0,"item_id":"msg_`...)
	e.buf = append(e.buf, e.c.id...)
	e.buf = append(e.buf, `","content_index":0`...)
}

// response adds an event of type typ carrying the response object.
func (e *responsesEncoder) response(typ, status string, ended bool, output string, n tokenCounts, failure string) {
	e.open(typ)
	e.buf = append(e.buf, `,"response":`...)
	e.buf = e.c.appendResponse(e.buf, status, ended, output, n, failure)
	e.close()
}

// item adds an output_item event of type typ.
func (e *responsesEncoder) item(typ, status, output string) {
	e.open(typ)
	e.buf = append(e.buf, `,"output_index":0,"item":`...)
	e.buf = e.c.appendItem(e.buf, status, output)
	e.close()
}

// start adds the events that open the stream, unless added already.
func (e *responsesEncoder) start() {
	if e.started {
		return
	}
	e.started = true
	e.response("response.created", "in_progress", false, "", tokenCounts{}, "")
	e.item("response.output_item.added", "in_progress", "")
	if e.c.job.responses.call == "" {
		e.openPart("response.content_part.added")
		e.buf = append(e.buf, `,"part":`...)
		e.buf = appendTextPart(e.buf, "")
		e.close()
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
	e.text = append(e.text, word...)
	if e.c.job.responses.call == "" {
		e.openPart("response.output_text.delta")
		e.buf = append(e.buf, `,"delta":"`...)
		e.buf = append(e.buf, word...)
		e.buf = append(e.buf, `","logprobs":[]`...)
		e.close()
		return
	}
	e.openPart("response.function_call_arguments.delta")
	e.buf = append(e.buf, `,"delta":"`...)
	if first {
		e.buf = append(e.buf, `{\"input\": \"`...)
	}
	e.buf = append(e.buf, word...)
	if last {
		e.buf = append(e.buf, `\"}`...)
	}
	e.buf = append(e.buf, '"')
	e.close()
}

func (e *responsesEncoder) end(reason string, n tokenCounts) {
	e.start()
	text := string(e.text)
	if e.c.job.responses.call == "" {
		e.openPart("response.output_text.done")
		e.buf = append(e.buf, `,"text":"`...)
		e.buf = append(e.buf, text...)
		e.buf = append(e.buf, `","logprobs":[]`...)
		e.close()
		e.openPart("response.content_part.done")
		e.buf = append(e.buf, `,"part":`...)
		e.buf = appendTextPart(e.buf, text)
		e.close()
	} else {
		e.openPart("response.function_call_arguments.done")
		e.buf = append(e.buf, `,"arguments":"`...)
		e.buf = appendArguments(e.buf, text)
		e.buf = append(e.buf, '"')
		e.close()
	}
	e.item("response.output_item.done", "completed", text)
	e.c.storeReply(text)
	status := responsesStatus(reason)
	e.response("response."+status, status, true, text, n, "")
}

func (e *responsesEncoder) malformed() {
	e.start()
	e.buf = append(e.buf, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n"...)
}

// fail adds a response.failed event.
func (e *responsesEncoder) fail(name string) {
	e.start()
	e.response("response.failed", "failed", false, "", tokenCounts{}, "llmsim injected fault "+name+": "+http.StatusText(http.StatusInternalServerError))
}

func (e *responsesEncoder) writeOut(w io.Writer) error {
	_, err := w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}
