package llmsim

import (
	"encoding/json"
	"strings"
)

// Tool calls: a chat request with tools and tool_choice "required" (or
// {"type":"function","function":{"name":…}}) is answered, streamed or
// not, with one call of the first (or the named) tool instead of text:
// its arguments are {"query":"…"} around the output's words, and the
// finish reason is "tool_calls". Any other tool_choice ("auto", "none", none)
// answers with text, so that a client decides deterministically when the
// model calls a tool.

// toolRequest is the part of a request that asks for a tool call.
type toolRequest struct {
	Tools      []json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage   `json:"tool_choice"`
}

// toolCallName is the name of the tool that the chat request with body
// data must call ("" when it answers with text), by calledFunction's
// rule.
func toolCallName(data []byte) (string, *apiError) {
	if !jsonHasKey(data, "tool_choice") {
		return "", nil
	}
	var r toolRequest
	if err := json.Unmarshal(data, &r); err != nil {
		return "", badRequest("tools", "tools and tool_choice: %v", err)
	}
	return calledFunction(r.Tools, r.ToolChoice, chatFunctionName)
}

// chatFunctionName is the name of a chat tool or tool_choice:
// {"type":"function","function":{"name":…}}.
func chatFunctionName(data []byte) (string, error) {
	var o struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	err := json.Unmarshal(data, &o)
	return o.Function.Name, err
}

// responsesFunctionName is the name of a Responses tool or tool_choice:
// {"type":"function","name":…}.
func responsesFunctionName(data []byte) (string, error) {
	var o struct {
		Name string `json:"name"`
	}
	err := json.Unmarshal(data, &o)
	return o.Name, err
}

// calledFunction returns the function a reply calls, of the chat
// completions and the Responses API alike (nameOf reads a tool's or a
// tool_choice's name in the API's shape): with tools given and
// tool_choice "required", the first tool's; with tool_choice naming a
// function, that one; "" otherwise (a text reply: llmsim does not decide
// to call a tool on its own).
func calledFunction(tools []json.RawMessage, choice json.RawMessage, nameOf func([]byte) (string, error)) (string, *apiError) {
	if len(tools) == 0 || len(choice) == 0 {
		return "", nil
	}
	switch {
	case string(choice) == `"required"`:
		name, err := nameOf(tools[0])
		if err != nil || name == "" {
			return "", badRequest("tools", "tools[0] must be a function tool with a name")
		}
		return name, nil
	case choice[0] == '{':
		name, err := nameOf(choice)
		if err != nil {
			return "", badRequest("tool_choice", "tool_choice: %v", err)
		}
		return name, nil
	}
	return "", nil
}

// wholeToolCall is a tool call of a whole (non-streamed) chat response.
type wholeToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolCallMessage is the message of a whole response that calls c's tool
// with the output's words.
func (c *completion) toolCallMessage(words string) *assistantMessage {
	call := wholeToolCall{ID: c.toolCallID(), Type: "function"}
	call.Function.Name = c.job.toolCall
	call.Function.Arguments = `{"query":"` + words + `"}`
	return &assistantMessage{Role: "assistant", ToolCalls: []wholeToolCall{call}}
}

// toolCallID is the id of c's tool call.
func (c *completion) toolCallID() string { return "call_" + c.id }

// jsonHasKey is a quick test that data may have key, before decoding it
// again.
func jsonHasKey(data []byte, key string) bool {
	return strings.Contains(string(data), `"`+key+`"`)
}

// toolCallEncoder is the encoder of a chat stream that answers with a call
// of tool name: the output's words are fragments of its arguments.
type toolCallEncoder struct {
	openaiEncoder
	id, name string
}

func (e toolCallEncoder) token(word string, first, last bool) {
	c := e.chunkEncoder
	if first {
		e.role()
	}
	c.openChoice()
	c.buf = append(c.buf, `"delta":{"tool_calls":[{"index":0,`...)
	if first {
		// The call's first chunk names it and carries the first word.
		c.buf = append(c.buf, `"id":"`...)
		c.buf = append(c.buf, e.id...)
		c.buf = append(c.buf, `","type":"function","function":{"name":`...)
		name, _ := json.Marshal(e.name) // a string always marshals
		c.buf = append(c.buf, name...)
		c.buf = append(c.buf, `,`...)
		word = `{\"query\":\"` + word[1:]
	} else {
		c.buf = append(c.buf, `"function":{`...)
	}
	if last {
		word += `\"}`
	}
	c.buf = append(c.buf, `"arguments":"`...)
	c.buf = append(c.buf, word...)
	c.buf = append(c.buf, `"}}]},"logprobs":null,"finish_reason":null`...)
	c.buf = append(c.buf, c.tail...)
}

func (e toolCallEncoder) end(_ string, n tokenCounts) {
	e.openaiEncoder.end("tool_calls", n)
}
