package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// Responses is OpenAI's Responses API: POST /v1/responses, streamed as
// typed SSE events, or one JSON response object with "stream": false.
const Responses API = "responses"

// responsesProtocol is OpenAI's Responses API (vLLM and SGLang serve it
// too). The body is {"model", "input" (a string or message items),
// "instructions"?, "max_output_tokens"?, "tools"?, "previous_response_id"?,
// "store"?, "stream"}. A stream is SSE events named by their "type":
// response.created (the response's id), response.output_item.added (a
// function_call item brings its call_id and name),
// response.output_text.delta (answer text), response.reasoning_text.delta
// and response.reasoning_summary_text.delta (reasoning),
// response.function_call_arguments.delta (a tool call's arguments, an
// answer chunk), then response.completed or response.incomplete, whose
// response holds the usage; response.failed and error events are a
// stream_error, other events are skipped. A whole response is the
// response object, its output a list of items.
type responsesProtocol struct{}

// endpoint puts /v1/responses under the API root.
func (responsesProtocol) endpoint(base *url.URL, _ API, _ bool) string {
	return serverRoot(base, false).JoinPath("v1", "responses").String()
}

// prepare adds "stream": true unless the body sets "stream", and the
// client's model unless the body names one; a body without "input" is
// refused.
func (responsesProtocol) prepare(p *prepared, body map[string]any, model string) error {
	var err error
	if p.stream, err = streamFlag(body); err != nil {
		return err
	}
	p.model = defaultModel(body, model)
	if v, ok := body["input"]; !ok || v == nil {
		return errors.New(`the Responses API requires "input" in the request body (a string, or message items)`)
	}
	return nil
}

// read reads an SSE stream, or a whole JSON response object.
func (responsesProtocol) read(rr *responseReader, contentType string, body io.Reader, keepText bool, res *Result) error {
	return readSSEOrJSON(contentType, res,
		func() error { return rr.readResponses(body, keepText, res) },
		func() error { return rr.readResponsesJSON(body, keepText, res) })
}

// responsesUsage is the usage of a response object.
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens optionalInt `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        *int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// responsesItem is an output item: a message (its content parts), a
// reasoning item (its content and summary parts) or a function call.
type responsesItem struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Content   []responsesPart `json:"content"`
	Summary   []responsesPart `json:"summary"`
}

// responsesPart is a content or summary part of an item.
type responsesPart struct {
	Type string          `json:"type"`
	Text json.RawMessage `json:"text"`
}

// responsesObject is a response object: the one of response.created,
// response.completed, response.incomplete and response.failed events, or
// a whole response.
type responsesObject struct {
	ID                string          `json:"id"`
	Status            string          `json:"status"`
	Usage             *responsesUsage `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error  json.RawMessage `json:"error"`
	Output []responsesItem `json:"output"`
}

// take records the response's id, and, once it ended, its finish reason
// and usage; it returns the output tokens the usage reported, nil when
// none.
func (o *responsesObject) take(res *Result) *int {
	if o.ID != "" {
		res.ResponseID = o.ID
	}
	res.FinishReason = o.Status
	if o.IncompleteDetails != nil && o.IncompleteDetails.Reason != "" {
		res.FinishReason = o.IncompleteDetails.Reason
	}
	u := o.Usage
	if u == nil {
		return nil
	}
	res.PromptTokens = u.InputTokens
	res.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
	res.setCachedTokens(u.InputTokensDetails.CachedTokens.orAbsent())
	return u.OutputTokens
}

// failure is the failure a failed response reports.
func (o *responsesObject) failure(where string) error {
	return &failure{ErrStreamError, fmt.Errorf("%s: the response failed: %s", where, apiErrorMessage(o.Error))}
}

// responsesEvent is one event of a Responses stream.
type responsesEvent struct {
	Type        string           `json:"type"`
	Delta       json.RawMessage  `json:"delta"`
	OutputIndex int              `json:"output_index"`
	Item        *responsesItem   `json:"item"`
	Response    *responsesObject `json:"response"`
	// An error event's fields.
	Code    json.RawMessage `json:"code"`
	Message json.RawMessage `json:"message"`
}

// decodeResponsesEvent decodes one event's data, checking the delta it
// carries.
func decodeResponsesEvent(data []byte, e *responsesEvent) error {
	*e = responsesEvent{}
	if scanDeltaEvent(data, e) {
		return nil // its delta a string or null
	}
	*e = responsesEvent{}
	if err := json.Unmarshal(data, e); err != nil {
		return err
	}
	if present(e.Delta) {
		if _, err := jsonString(e.Delta); err != nil {
			return fmt.Errorf("delta: %w", err)
		}
	}
	return nil
}

// deltaEventTypes are the types of the events scanDeltaEvent reads: those
// of a type, a delta and an output index, most of a stream's events.
var deltaEventTypes = [...]string{
	"response.output_text.delta", "response.reasoning_text.delta",
	"response.reasoning_summary_text.delta", "response.function_call_arguments.delta",
}

// scanDeltaEvent is decodeResponsesEvent's fast path: it reads a delta
// event into e, reset, without allocating or reflection (its delta a
// slice of data, a string or null), and reports whether it could. Any other event, or data
// it does not read exactly as encoding/json would, is left to
// encoding/json (see chunkScanner).
func scanDeltaEvent(data []byte, e *responsesEvent) bool {
	s := chunkScanner{data: data}
	ok := s.object(func(key []byte) bool {
		switch {
		case keyIs(key, "type"):
			start := s.pos + 1
			if plain, ok := s.str(); !ok || !plain {
				return false
			}
			e.Type = deltaEventType(data[start : s.pos-1])
			return e.Type != ""
		case keyIs(key, "delta"):
			return s.raw(&e.Delta) && (e.Delta[0] == '"' || string(e.Delta) == "null")
		case keyIs(key, "output_index"):
			return s.int(&e.OutputIndex)
		case keyIs(key, "item"), keyIs(key, "response"), keyIs(key, "code"), keyIs(key, "message"):
			return false
		}
		return s.skip()
	})
	return ok && s.pos == len(data) && e.Type != ""
}

// deltaEventType is the one of deltaEventTypes that typ spells; "" for
// another type.
func deltaEventType(typ []byte) string {
	for _, t := range deltaEventTypes {
		if string(typ) == t {
			return t
		}
	}
	return ""
}

// readResponses reads a Responses stream, timestamping each delta event
// as it is parsed.
func (rr *responseReader) readResponses(body io.Reader, keepText bool, res *Result) error {
	rr.responses = responsesStream{calls: rr.responses.calls[:0]}
	return rr.readStream(rr.sseReader(body), &rr.responses, res.Start, keepText, res)
}

// responsesStream is the stream format of the Responses API: its state is
// the event last decoded and the output index of each function call, in
// the order the calls came (a call's position is its tool call index).
type responsesStream struct {
	e     responsesEvent
	calls []int
}

func (s *responsesStream) unit(rr *responseReader, u streamUnit, n int, now time.Duration, res *Result) (bool, error) {
	if ok, err := s.decode(u, n); !ok {
		return false, err
	}
	switch s.e.Type {
	case "response.output_text.delta":
		rr.tc.tick(res, now, false, present(s.e.Delta))
		if rr.keepText && present(s.e.Delta) {
			rr.appendKept(s.e.Delta) // checked by decodeResponsesEvent
		}
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		rr.tc.tick(res, now, present(s.e.Delta), false)
		if rr.countText && present(s.e.Delta) {
			text, _ := jsonString(s.e.Delta) // checked by decodeResponsesEvent
			rr.reasoning = rr.bound(append(rr.reasoning, text...))
		}
	case "response.output_item.added":
		return false, s.itemAdded(rr, now, res)
	case "response.function_call_arguments.delta":
		rr.tc.tick(res, now, false, present(s.e.Delta))
		if err := s.arguments(rr, s.e.OutputIndex, s.e.Delta); err != nil {
			return false, err
		}
	case "response.created", "response.in_progress":
		if s.e.Response != nil && s.e.Response.ID != "" {
			res.ResponseID = s.e.Response.ID
		}
	case "response.completed", "response.incomplete":
		s.finish(rr, res)
		return true, nil
	case "response.failed", "error":
		return false, s.failure()
	}
	return false, nil
}

// failure is what a response.failed or an error event reports.
func (s *responsesStream) failure() error {
	if s.e.Type == "error" {
		msg := apiErrorMessage(s.e.Message)
		if present(s.e.Code) {
			msg = string(s.e.Code) + ": " + msg
		}
		return &failure{ErrStreamError, fmt.Errorf("error event in the stream: %s", msg)}
	}
	if s.e.Response == nil {
		return &failure{ErrStreamError, errors.New("response.failed event without a response")}
	}
	return s.e.Response.failure("in the stream")
}

// decode decodes unit u, the stream's nth, into s.e; false (and an error
// or none) when it has no event to act on.
func (s *responsesStream) decode(u streamUnit, n int) (bool, error) {
	data := bytes.TrimSpace(u.data)
	if len(data) == 0 {
		if u.typ == "error" {
			return false, &failure{ErrStreamError, errors.New("error event in the stream, without data")}
		}
		return false, nil
	}
	if err := decodeResponsesEvent(data, &s.e); err != nil {
		if u.typ == "error" {
			return false, errorEventFailure(data)
		}
		return false, eventDecodeFailure(n+1, err, data)
	}
	if s.e.Type == "" {
		s.e.Type = u.typ
	}
	return true, nil
}

// itemAdded starts a function call item as the next tool call; its
// arguments, when the item already has some, are its first output.
func (s *responsesStream) itemAdded(rr *responseReader, now time.Duration, res *Result) error {
	it := s.e.Item
	if it == nil || it.Type != "function_call" {
		return nil
	}
	if len(s.calls) > maxToolCallIndex {
		return &failure{ErrDecode, fmt.Errorf("more than %d function calls", maxToolCallIndex+1)}
	}
	i := len(s.calls)
	s.calls = append(s.calls, s.e.OutputIndex)
	d := toolCallDelta{ID: it.CallID, Type: "function"}
	d.Function.Name, d.Function.Arguments = it.Name, it.Arguments
	rr.tools.merge(i, &d)
	rr.tc.tick(res, now, false, it.Arguments != "")
	return nil
}

// arguments appends a fragment of the arguments of the function call at
// output index out.
func (s *responsesStream) arguments(rr *responseReader, out int, delta json.RawMessage) error {
	for i, at := range s.calls {
		if at == out {
			var d toolCallDelta
			d.Function.Arguments, _ = jsonString(delta) // checked by decodeResponsesEvent
			rr.tools.merge(i, &d)
			return nil
		}
	}
	return &failure{ErrDecode, fmt.Errorf("function call arguments for output %d, which is no function call", out)}
}

// finish completes res once the stream ended well.
func (s *responsesStream) finish(rr *responseReader, res *Result) {
	var output *int
	if s.e.Response != nil {
		output = s.e.Response.take(res)
	}
	finishOutput(res, output)
	res.ToolCalls = rr.tools.result()
	rr.keepTextIn(res)
}

// end fails every stream that stopped before response.completed or
// response.incomplete.
func (*responsesStream) end(_ *responseReader, err error, n int, _ *Result) error {
	return &failure{ErrCut, fmt.Errorf("the stream ended after %d events, before response.completed: %w", n, err)}
}

// readResponsesJSON reads a whole ("stream": false) response object.
func (rr *responseReader) readResponsesJSON(body io.Reader, keepText bool, res *Result) error {
	var o responsesObject
	if err := rr.readWhole(body, res.Start, res, func(doc []byte) error { return json.Unmarshal(doc, &o) }); err != nil {
		return err
	}
	if o.Status == "failed" || present(o.Error) {
		return o.failure("in the response")
	}
	rr.tools.reset()
	var reasoning, answer bool
	var text, thought strings.Builder
	for _, it := range o.Output {
		switch it.Type {
		case "message":
			answer = appendParts(&text, it.Content) || answer
		case "reasoning":
			reasoning = appendParts(&thought, it.Content) || reasoning
			reasoning = appendParts(&thought, it.Summary) || reasoning
		case "function_call":
			answer = true
			i := len(rr.tools.calls)
			if i > maxToolCallIndex {
				return &failure{ErrDecode, fmt.Errorf("more than %d function calls", maxToolCallIndex+1)}
			}
			d := toolCallDelta{ID: it.CallID, Type: "function"}
			d.Function.Name, d.Function.Arguments = it.Name, it.Arguments
			rr.tools.merge(i, &d)
		}
	}
	whole(res, reasoning, answer)
	finishOutput(res, o.take(res))
	res.ToolCalls = rr.tools.result()
	if rr.countText {
		rr.reasoning = rr.bound(append(rr.reasoning, thought.String()...))
	}
	if keepText {
		res.Text = text.String()
	}
	return nil
}

// appendParts appends the text of parts to b and reports whether there
// was any.
func appendParts(b *strings.Builder, parts []responsesPart) bool {
	any := false
	for _, p := range parts {
		if s, err := jsonString(p.Text); err == nil && s != "" {
			b.WriteString(s)
			any = true
		}
	}
	return any
}
