package llmjs

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/modules/llm"
)

// conversation is a multi-turn chat session of one VU: its history grows
// by the user's message and the model's reply at every turn, so each
// request carries the whole conversation so far, as a chat client sends it.
type conversation struct {
	in     *instance
	client *llm.Client // nil: the default client
	system string
	// think is the pause before every turn after the first; thinkFn, when
	// set, returns it in milliseconds.
	think   time.Duration
	thinkFn goja.Callable
	// maxTurns, when > 0, starts a new conversation after that many turns.
	maxTurns int

	history []turnMessage
	turns   int

	// api is the conversation's protocol ("" for the client's);
	// lastResponse, for the Responses API, is the id of the last reply,
	// which the next turn continues (conversation_responses.go).
	api          llm.API
	lastResponse string
}

// turnMessage is one entry of a conversation's history: toolCalls are an
// assistant message's tool calls, as the request's tool_calls array;
// toolCallID is the call a tool message answers.
type turnMessage struct {
	role, content string
	toolCalls     []any
	toolCallID    string
}

// conversationOptions are llm.conversation()'s options.
type conversationOptions struct {
	System    string     `js:"system"`
	ThinkTime goja.Value `js:"thinkTime"`
	MaxTurns  int        `js:"maxTurns"`
	Client    goja.Value `js:"client"`
	API       string     `js:"api"`
}

// newConversation is llm.conversation(options): { send(content, body,
// options), reset(), turn, messages }.
func (i *instance) newConversation(opts goja.Value) *goja.Object {
	rt := i.vu.Runtime()
	const call = "llm.conversation(options)"
	var o conversationOptions
	if given(opts) {
		if err := rt.ExportTo(opts, &o); err != nil {
			panic(rt.NewTypeError("%s: %v", call, err))
		}
	}
	c := i.conversationOf(call, o)
	obj := rt.NewObject()
	must(obj.Set("send", c.send))
	must(obj.Set("reset", c.reset))
	must(obj.DefineAccessorProperty("turn", rt.ToValue(func() int { return c.turns }), nil, goja.FLAG_FALSE, goja.FLAG_TRUE))
	must(obj.DefineAccessorProperty("messages", rt.ToValue(func() goja.Value { return c.messagesArray(rt) }), nil, goja.FLAG_FALSE, goja.FLAG_TRUE))
	return obj
}

// conversationOf is a new conversation of o, read for call: its
// TypeError names call and the option at fault.
func (i *instance) conversationOf(call string, o conversationOptions) *conversation {
	rt := i.vu.Runtime()
	if o.MaxTurns < 0 {
		panic(rt.NewTypeError("%s: maxTurns must be ≥ 0, got %d", call, o.MaxTurns))
	}
	c := &conversation{in: i, system: o.System, maxTurns: o.MaxTurns, api: llm.API(o.API)}
	if c.api != "" && !slices.Contains(llm.APIs, c.api) {
		panic(rt.NewTypeError("%s: api: unknown protocol %q", call, o.API))
	}
	if fn, ok := goja.AssertFunction(o.ThinkTime); ok {
		c.thinkFn = fn
	} else if d, set, err := jsDuration(o.ThinkTime); err != nil {
		panic(rt.NewTypeError("%s: thinkTime: %v", call, err))
	} else if set {
		c.think = d
	}
	if given(o.Client) {
		var h *llm.Client
		if cl, ok := o.Client.(*goja.Object); ok {
			if v := cl.Get(clientHandle); v != nil {
				ref, _ := v.Export().(clientRef)
				h = ref.client
			}
		}
		if h == nil {
			panic(rt.NewTypeError("%s: client must be made by llm.client()", call))
		}
		c.client = h
	}
	return c
}

// reset starts a new conversation: empty history, turn 0.
func (c *conversation) reset() {
	c.history, c.turns, c.lastResponse = c.history[:0], 0, ""
}

// send is one turn: after the think time (from the second turn on), it
// sends the history plus content as the user's message, with body's other
// fields (max_tokens, ...), tags the request's samples turn=N, and on
// success appends the message and the reply to the history. A failed turn
// leaves the history as it was; it still counts as a turn.
func (c *conversation) send(content string, body, opts goja.Value) *goja.Object {
	rt := c.in.vu.Runtime()
	if c.in.vu.State() == nil {
		panic(rt.NewTypeError("conversation.send() cannot be called in the init context"))
	}
	if c.maxTurns > 0 && c.turns >= c.maxTurns {
		c.reset()
	}
	if c.turns > 0 {
		if err := c.pause(); err != nil {
			throw(rt, err) // thinkTime() threw, or returned nonsense
		}
	}
	turn := c.turns + 1
	req := copyProps(rt, body, "conversation.send(content, body): body must be an object such as { max_tokens: 128 }", func(k string) {
		if k == "messages" || k == "prompt" || c.api == llm.Responses && (k == "input" || k == "previous_response_id") {
			panic(rt.NewTypeError("conversation.send(content, body): body.%s is the conversation's own; pass the user's message as content", k))
		}
	})
	before := len(c.history)
	c.history = append(c.history, turnMessage{role: "user", content: content})
	// A turn without a reply (failed, or thrown with throw: true) leaves
	// the history as it was.
	defer func() {
		if len(c.history) == before+1 {
			c.history = c.history[:before]
		}
	}()
	if c.api == llm.Responses {
		c.setResponsesInput(rt, req, content)
	} else {
		must(req.Set("messages", c.messagesArray(rt)))
	}

	o := copyProps(rt, opts, "conversation.send(content, body, options): options must be an object", nil)
	tags := copyProps(rt, o.Get("tags"), "conversation.send(content, body, options): tags must be an object", nil)
	must(tags.Set("turn", strconv.Itoa(turn)))
	must(o.Set("tags", tags))
	must(o.Set("text", true)) // the reply joins the history
	if c.api != "" && !given(o.Get("api")) {
		must(o.Set("api", string(c.api)))
	}

	c.turns = turn
	res := c.in.stream(c.client, req, o)
	if res.Get("ok").ToBoolean() {
		c.history = append(c.history, turnMessage{role: "assistant", content: res.Get("text").String()})
		if c.api == llm.Responses {
			c.lastResponse = ""
			if id := res.Get("responseId"); id != nil { // absent when the server gave none
				c.lastResponse = id.String()
			}
		}
	}
	return res
}

// copyProps returns a new object with the properties of v (none when v is
// undefined), throwing a TypeError that says what when v is not an object;
// check, when set, vets each property's name first.
func copyProps(rt *goja.Runtime, v goja.Value, what string, check func(key string)) *goja.Object {
	out := rt.NewObject()
	if !given(v) {
		return out
	}
	src, ok := v.(*goja.Object)
	if !ok {
		panic(rt.NewTypeError(what))
	}
	for _, k := range src.Keys() {
		if check != nil {
			check(k)
		}
		must(out.Set(k, src.Get(k)))
	}
	return out
}

// pause waits the think time, or until the iteration must stop.
func (c *conversation) pause() error {
	d := c.think
	if c.thinkFn != nil {
		v, err := c.thinkFn(goja.Undefined())
		if err != nil {
			return err
		}
		ms := v.ToFloat()
		if !(ms >= 0) {
			return fmt.Errorf("conversation thinkTime(): want milliseconds ≥ 0, got %s", v)
		}
		d = time.Duration(ms * float64(time.Millisecond))
	}
	// An iteration stopped during the pause is interrupted by the engine;
	// the turn's request then ends at once as interrupted.
	wait.Sleep(c.in.vu.Context(), d)
	return nil
}

// messagesArray is the history as the messages of a chat request, after
// the system message when there is one.
func (c *conversation) messagesArray(rt *goja.Runtime) goja.Value {
	out := make([]any, 0, len(c.history)+1)
	add := func(t turnMessage) {
		m := rt.NewObject()
		must(m.Set("role", t.role))
		must(m.Set("content", t.content))
		if t.toolCalls != nil {
			must(m.Set("tool_calls", t.toolCalls))
		}
		if t.toolCallID != "" {
			must(m.Set("tool_call_id", t.toolCallID))
		}
		out = append(out, m)
	}
	if c.system != "" {
		add(turnMessage{role: "system", content: c.system})
	}
	for _, m := range c.history {
		add(m)
	}
	return rt.NewArray(out...)
}

// clientHandle is the hidden property of an llm.client() object that holds
// its *Client, for llm.conversation({ client }).
const clientHandle = "__client"

// clientRef is the value of an llm.client() object's clientHandle: its
// *Client, which a script can neither read nor call. (The *Client itself,
// as goja wraps a Go value, showed the client's Go methods to scripts,
// and cost each VU the reflection of the type.)
type clientRef struct{ client *llm.Client }
