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

// toolRequest is the part of a chat request that asks for a tool call.
type toolRequest struct {
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

// toolCallName is the name of the tool that the request with body data
// must call; "" when it answers with text.
func toolCallName(data []byte) string {
	if !jsonHasKey(data, "tool_choice") {
		return ""
	}
	var r toolRequest
	if json.Unmarshal(data, &r) != nil || len(r.Tools) == 0 {
		return ""
	}
	var choice struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	switch {
	case string(r.ToolChoice) == `"required"`:
		return r.Tools[0].Function.Name
	case json.Unmarshal(r.ToolChoice, &choice) == nil && choice.Function.Name != "":
		return choice.Function.Name
	}
	return ""
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
