package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// toolCallDelta is one element of an OpenAI tool_calls array: a streamed
// delta (index, and the id, type and name in the first delta of a call,
// then fragments of its arguments) or a whole call of a non-streamed
// message (no index: its position).
type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolCallBuilder assembles one tool call from its deltas.
type toolCallBuilder struct {
	id, typ, name string
	args          []byte
}

// toolCalls assembles a response's tool calls, by index. Its builders, and
// their argument buffers, are reused from one response to the next.
type toolCalls struct {
	calls  []toolCallBuilder
	deltas []toolCallDelta
	// kept is the bytes of arguments the calls hold, at most
	// maxKeptText; cut is set once some were dropped (or a name cut).
	kept int
	cut  bool
}

// maxToolName bounds a tool call's name (which a server may stream in
// fragments), id and type.
const maxToolName = 1 << 10

// short returns s cut to maxToolName bytes, noting a cut.
func (tc *toolCalls) short(s string) string {
	if len(s) <= maxToolName {
		return s
	}
	tc.cut = true
	return strings.Clone(s[:runeCut(s, maxToolName)])
}

func (tc *toolCalls) reset() {
	for i := range tc.calls {
		tc.calls[i] = toolCallBuilder{args: tc.calls[i].args[:0]}
	}
	tc.calls = tc.calls[:0]
	tc.kept, tc.cut = 0, false
}

// appendArgs appends a fragment of a call's arguments, as much of it as
// maxKeptText leaves room for.
func (tc *toolCalls) appendArgs(c *toolCallBuilder, args string) {
	if room := maxKeptText - tc.kept; len(args) > room {
		args, tc.cut = args[:runeCut(args, room)], true
	}
	c.args = append(c.args, args...)
	tc.kept += len(args)
}

// maxToolCallIndex bounds the index of a tool call delta, so that a bad
// server cannot make the client allocate without bound.
const maxToolCallIndex = 1024

// maxToolDeltas is how many tool call deltas one tool_calls array may
// hold; toolDeltaScanFrom is the length from which an array is counted
// before it is decoded: each element takes two bytes at least (a value
// and a comma or the closing bracket), so a shorter array, as every
// delta a server streams, cannot hold more.
const (
	maxToolDeltas     = maxToolCallIndex + 1
	toolDeltaScanFrom = 2 * (maxToolDeltas + 1)
)

// add merges a tool_calls array into the calls.
func (tc *toolCalls) add(raw json.RawMessage) error {
	if len(raw) >= toolDeltaScanFrom && jsonArrayLen(raw, maxToolDeltas) > maxToolDeltas {
		return fmt.Errorf("tool_calls: more than %d calls in one delta", maxToolDeltas)
	}
	// Unmarshal reuses the elements the slice can hold without zeroing
	// them: clear them, or a field a delta lacks would keep the last one's.
	clear(tc.deltas[:cap(tc.deltas)])
	tc.deltas = tc.deltas[:0]
	if err := json.Unmarshal(raw, &tc.deltas); err != nil {
		return fmt.Errorf("tool_calls: %w", err)
	}
	for pos := range tc.deltas {
		d := &tc.deltas[pos]
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i > maxToolCallIndex {
			return fmt.Errorf("tool_calls: index %d out of range", i)
		}
		tc.merge(i, d)
	}
	return nil
}

// merge merges d into the call of index i, 0 ≤ i ≤ maxToolCallIndex.
func (tc *toolCalls) merge(i int, d *toolCallDelta) {
	for len(tc.calls) <= i {
		if len(tc.calls) < cap(tc.calls) {
			tc.calls = tc.calls[:len(tc.calls)+1]
		} else {
			tc.calls = append(tc.calls, toolCallBuilder{})
		}
	}
	c := &tc.calls[i]
	if c.id == "" {
		c.id = tc.short(d.ID)
	}
	if c.typ == "" {
		c.typ = tc.short(d.Type)
	}
	// The name comes whole in the first delta; a server that repeats
	// it in later deltas does not double it, one that streams it in
	// fragments gets them joined.
	if n := d.Function.Name; n != "" && n != c.name {
		c.name = tc.short(c.name + n)
	}
	tc.appendArgs(c, d.Function.Arguments)
}

// result returns the assembled calls, nil when none. A call's type
// defaults to "function".
func (tc *toolCalls) result() []ToolCall {
	if len(tc.calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(tc.calls))
	for i, c := range tc.calls {
		if c.typ == "" {
			c.typ = "function"
		}
		out[i] = ToolCall{ID: c.id, Type: c.typ, Name: c.name, Arguments: string(c.args)}
	}
	return out
}

// appendToolCalls merges the chunk's tool calls (stream deltas and whole
// messages' calls) into tc.
func (c *chunk) appendToolCalls(tc *toolCalls) error {
	for i := range c.Choices {
		ch := &c.Choices[i]
		for _, raw := range [2]json.RawMessage{ch.Delta.ToolCalls, ch.Message.ToolCalls} {
			if present(raw) {
				if err := tc.add(raw); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// appendReasoning appends the chunk's reasoning text to dst, as far as
// dst may grow (appendUnquoted's limit).
func (c *chunk) appendReasoning(dst []byte, limit int) ([]byte, error) {
	for i := range c.Choices {
		ch := &c.Choices[i]
		for _, raw := range [4]json.RawMessage{ch.Delta.ReasoningContent, ch.Delta.Reasoning, ch.Message.ReasoningContent, ch.Message.Reasoning} {
			if !present(raw) {
				continue
			}
			var err error
			if dst, err = appendUnquoted(dst, raw, limit); err != nil {
				return dst, fmt.Errorf("reasoning: %w", err)
			}
		}
	}
	return dst, nil
}

// begin readies rr for an OpenAI response.
func (rr *responseReader) begin() {
	rr.usage, rr.text = rr.usage[:0], rr.text[:0]
	rr.tools.reset()
}
