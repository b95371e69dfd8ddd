package llmjs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
)

// sessionSource is llm.sessions(options): agentic sessions as a workload.
// Each run() is one session on a conversation of its own: turns of user
// messages (synthetic, or a dataset's), the think time between them, and
// in each turn as many tool rounds as drawn, whose tool calls the model
// really makes and synthetic tool messages answer.
type sessionSource struct {
	in   *instance
	call string
	conv conversationOptions
	// turns, userTokens, toolCalls and toolTokens draw a session's number
	// of turns, a user message's and a tool message's length in words, and
	// a turn's tool rounds.
	turns, userTokens, toolCalls, toolTokens drawFunc
	// userMessages, when set, returns a session's user messages (and so
	// its number of turns) instead of synthetic ones.
	userMessages goja.Callable
	// tools are the tools sent with every request when toolCalls is set.
	tools  goja.Value
	header string
	// rng draws the synthetic shapes and texts: from the run's seed, the
	// VU and the source's ordinal in the VU, so a run is reproducible.
	rng     *rand.Rand
	ordinal int
	metrics *sessionMetrics
}

// sessionOptions are llm.sessions()'s options.
type sessionOptions struct {
	System         string     `js:"system"`
	ThinkTime      goja.Value `js:"thinkTime"`
	Client         goja.Value `js:"client"`
	Turns          goja.Value `js:"turns"`
	UserTokens     goja.Value `js:"userTokens"`
	ToolCalls      goja.Value `js:"toolCalls"`
	ToolTokens     goja.Value `js:"toolTokens"`
	UserMessages   goja.Value `js:"userMessages"`
	Tools          goja.Value `js:"tools"`
	AffinityHeader goja.Value `js:"affinityHeader"`
}

// Defaults of llm.sessions()' options.
const (
	defaultSessionTurns   = 4
	defaultUserTokens     = 64
	defaultToolTokens     = 128
	defaultAffinityHeader = "x-session-id"
	// maxSessionTurns, maxToolRounds and maxMessageWords bound a
	// session's turns, a turn's tool rounds and a message's words, as a
	// guard against a distribution that draws nonsense (a billion
	// requests, or a message of gigabytes).
	maxSessionTurns = 10000
	maxToolRounds   = 100
	maxMessageWords = 1 << 20
)

// defaultTool is the tool a session offers when toolCalls is set and the
// options name no tools.
var defaultTool = map[string]any{
	"type": "function",
	"function": map[string]any{
		"name":        "lookup",
		"description": "Looks up a fact.",
		"parameters": map[string]any{
			"type":       "object",
			"properties": map[string]any{"query": map[string]any{"type": "string"}},
			"required":   []any{"query"},
		},
	},
}

// drawFunc draws a non-negative whole number.
type drawFunc func() (int, error)

// newSessions is llm.sessions(options).
func (i *instance) newSessions(opts goja.Value) *goja.Object {
	rt := i.vu.Runtime()
	const call = "llm.sessions(options)"
	var o sessionOptions
	if given(opts) {
		if err := rt.ExportTo(opts, &o); err != nil {
			panic(rt.NewTypeError("%s: %v", call, err))
		}
	}
	i.sessionSources++
	s := &sessionSource{
		in: i, call: call, ordinal: i.sessionSources,
		conv: conversationOptions{System: o.System, ThinkTime: o.ThinkTime, Client: o.Client},
		rng:  rand.New(rand.NewPCG(uint64(i.module.Seed), uint64(i.vu.ID())<<20|uint64(i.sessionSources))),
	}
	i.conversationOf(call, s.conv) // checks the options now, in the init code
	s.turns = s.distribution(rt, "turns", o.Turns, defaultSessionTurns, maxSessionTurns)
	s.userTokens = s.distribution(rt, "userTokens", o.UserTokens, defaultUserTokens, maxMessageWords)
	s.toolCalls = s.distribution(rt, "toolCalls", o.ToolCalls, 0, maxToolRounds)
	s.toolTokens = s.distribution(rt, "toolTokens", o.ToolTokens, defaultToolTokens, maxMessageWords)
	if given(o.UserMessages) {
		fn, ok := goja.AssertFunction(o.UserMessages)
		if !ok {
			panic(rt.NewTypeError("%s: userMessages must be a function returning a session's user messages", call))
		}
		s.userMessages = fn
	}
	if given(o.ToolCalls) {
		s.tools = o.Tools
		if !given(o.Tools) {
			s.tools = rt.ToValue([]any{defaultTool})
		}
	}
	s.header = defaultAffinityHeader
	if given(o.AffinityHeader) {
		s.header = o.AffinityHeader.String()
		if s.header != "" {
			if err := llm.CheckHeaders(map[string]string{s.header: "x"}); err != nil {
				panic(rt.NewTypeError("%s: affinityHeader: %v", call, err))
			}
		}
	}
	s.metrics = registerSessionMetrics(i.vu.Registry())
	obj := rt.NewObject()
	must(obj.Set("run", s.run))
	return obj
}

// distribution reads option name: a number, a function returning one, or
// an object with sample() (a data module distribution), of at most most;
// def when not given.
func (s *sessionSource) distribution(rt *goja.Runtime, name string, v goja.Value, def, most int) drawFunc {
	check := func(x goja.Value) (int, error) {
		f := x.ToFloat()
		if !(f >= 0) || f > 1<<31 {
			return 0, fmt.Errorf("%s: %s: want a whole number ≥ 0, got %s", s.call, name, x)
		}
		if int(f) > most {
			return 0, fmt.Errorf("%s: %s drew %d; at most %d", s.call, name, int(f), most)
		}
		return int(f), nil
	}
	if !given(v) {
		return func() (int, error) { return def, nil }
	}
	fn, ok := goja.AssertFunction(v)
	if obj, isObj := v.(*goja.Object); !ok && isObj {
		fn, ok = goja.AssertFunction(obj.Get("sample"))
		if ok {
			sample := fn
			fn = func(goja.Value, ...goja.Value) (goja.Value, error) { return sample(obj) }
		}
	}
	if ok {
		return func() (int, error) {
			x, err := fn(goja.Undefined())
			if err != nil {
				return 0, err
			}
			return check(x)
		}
	}
	n, err := check(v)
	if err != nil {
		panic(rt.NewTypeError("%v (or a function, or a distribution of the data module)", err))
	}
	return func() (int, error) { return n, nil }
}

// sessionTurn is one turn's figures.
type sessionTurn struct {
	Turn     int
	Requests int
	// ToolCalls counts the tool calls the model made in the turn.
	ToolCalls int
	// PromptTokens and CachedTokens are the server's counts for the
	// turn's last request: the context the turn reached, and its share
	// served from the prefix cache (-1: not reported).
	PromptTokens int
	CachedTokens int
	TTFT         float64
}

// session is what run() returns; OK is false when a failed request or
// the end of the run cut it short.
type session struct {
	ID    string
	OK    bool
	Turns []sessionTurn
	// Duration is the session's wall time, think time included; Think is
	// the think time alone.
	Duration float64
	Think    float64
}

// run is source.run(body, options): one session. body's fields go into
// every request; options are request options, whose headers gain the
// affinity header and whose tags gain turn.
func (s *sessionSource) run(body, opts goja.Value) *goja.Object {
	in := s.in
	rt := in.vu.Runtime()
	st := in.vu.State()
	if st == nil {
		panic(rt.NewTypeError("session.run() cannot be called in the init context"))
	}
	base := copyProps(rt, body, "session.run(body): body must be an object such as { max_tokens: 128 }", func(k string) {
		if k == "messages" || k == "prompt" || k == "tool_choice" {
			panic(rt.NewTypeError("session.run(body): body.%s is the session's own", k))
		}
	})
	o := copyProps(rt, opts, "session.run(body, options): options must be an object", nil)
	headers := copyProps(rt, o.Get("headers"), "session.run(body, options): headers must be an object", nil)
	out := session{ID: sessionID(in.module.Seed, st.VUID, st.Iteration, s.ordinal), OK: true}
	if s.header != "" {
		must(headers.Set(s.header, out.ID))
	}
	must(o.Set("headers", headers))
	must(o.Set("text", true))

	c := in.conversationOf(s.call, s.conv)
	messages, err := s.sessionMessages()
	if err != nil {
		throw(rt, err)
	}
	start := time.Now()
	for turn := 1; turn <= len(messages); turn++ {
		if turn > 1 {
			t0 := time.Now()
			if err := c.pause(); err != nil {
				throw(rt, err)
			}
			out.Think += ms(time.Since(t0))
			if in.vu.Context().Err() != nil {
				out.OK = false // the run stopped the session
				break
			}
		}
		c.turns = turn
		c.history = append(c.history, turnMessage{role: "user", content: messages[turn-1]})
		t, ok, err := s.turn(c, base, o, turn)
		if err != nil {
			throw(rt, err)
		}
		t.Turn = turn
		out.Turns = append(out.Turns, t)
		if !ok {
			out.OK = false
			break
		}
	}
	out.Duration = ms(time.Since(start))
	now := time.Now()
	st.Samples.AddSamples([]metrics.Sample{
		{Metric: s.metrics.turns, Tags: st.Tags, Time: now, Value: float64(len(out.Turns))},
		{Metric: s.metrics.duration, Tags: st.Tags, Time: now, Value: out.Duration},
	})
	return out.object(rt)
}

// object is s as the script sees it.
func (s *session) object(rt *goja.Runtime) *goja.Object {
	turns := make([]any, len(s.Turns))
	for k, t := range s.Turns {
		o := rt.NewObject()
		must(o.Set("turn", t.Turn))
		must(o.Set("requests", t.Requests))
		must(o.Set("toolCalls", t.ToolCalls))
		must(o.Set("promptTokens", t.PromptTokens))
		must(o.Set("cachedTokens", t.CachedTokens))
		must(o.Set("ttft", t.TTFT))
		turns[k] = o
	}
	o := rt.NewObject()
	must(o.Set("id", s.ID))
	must(o.Set("ok", s.OK))
	must(o.Set("turns", rt.NewArray(turns...)))
	must(o.Set("duration", s.Duration))
	must(o.Set("thinkTime", s.Think))
	return o
}

// turn sends one turn of c, whose history ends with the user's message:
// its tool rounds (tool_choice "required", then the tool messages that
// answer the calls), then its answer (tool_choice "none"), and adds the
// replies to the history. ok is false when a request failed, which ends
// the session.
func (s *sessionSource) turn(c *conversation, base, o *goja.Object, turn int) (t sessionTurn, ok bool, err error) {
	rt := c.in.vu.Runtime()
	tags := c.in.vu.State().Tags.With("turn", strconv.Itoa(turn))
	rounds, err := s.toolCalls()
	if err != nil {
		return t, false, err
	}
	turnTags := copyProps(rt, o.Get("tags"), "session.run(body, options): tags must be an object", nil)
	must(turnTags.Set("turn", strconv.Itoa(turn)))
	must(o.Set("tags", turnTags))
	for round := 0; round <= rounds; round++ {
		req := copyProps(rt, base, "", nil)
		if s.tools != nil {
			if !given(req.Get("tools")) {
				must(req.Set("tools", s.tools))
			}
			choice := "none" // the turn's answer
			if round < rounds {
				choice = "required" // a tool round
			}
			must(req.Set("tool_choice", choice))
		}
		must(req.Set("messages", c.messagesArray(rt)))
		var (
			reply turnMessage
			calls []llm.ToolCall
			ok    bool
		)
		c.in.streamObserved(c.client, req, o, func(r *llm.Result) {
			t = s.observe(t, r, tags)
			ok, calls = r.OK, slices.Clone(r.ToolCalls)
			reply = turnMessage{role: "assistant", content: r.Text}
		})
		if !ok {
			return t, false, nil
		}
		if len(calls) == 0 {
			c.history = append(c.history, reply)
			return t, true, nil
		}
		answers := make([]turnMessage, 0, len(calls))
		for k, tc := range calls {
			if tc.ID == "" {
				// Some servers' parsers leave the id out; the tool message
				// must name the call it answers, and strict servers refuse
				// one that names none.
				tc.ID = "call_" + strconv.Itoa(turn) + "_" + strconv.Itoa(round) + "_" + strconv.Itoa(k)
			}
			reply.toolCalls = append(reply.toolCalls, map[string]any{
				"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments},
			})
			n, err := s.toolTokens()
			if err != nil {
				return t, false, err
			}
			answers = append(answers, turnMessage{role: "tool", toolCallID: tc.ID, content: s.text(n)})
		}
		c.history = append(append(c.history, reply), answers...)
	}
	return t, true, nil
}

// observe adds request r's figures to the turn's, and sends the samples of
// the turn's context and prefix-cache share.
func (s *sessionSource) observe(t sessionTurn, r *llm.Result, tags *metrics.TagSet) sessionTurn {
	t.Requests++
	t.ToolCalls += len(r.ToolCalls)
	if t.Requests == 1 {
		t.TTFT = r.TTFT
	}
	if !r.OK {
		return t
	}
	t.PromptTokens, t.CachedTokens = r.PromptTokens, -1
	now := time.Now()
	samples := []metrics.Sample{{Metric: s.metrics.context, Tags: tags, Time: now, Value: float64(r.PromptTokens)}}
	if r.CachedReported() {
		t.CachedTokens = r.CachedTokens
		if r.PromptTokens > 0 {
			samples = append(samples, metrics.Sample{Metric: s.metrics.cacheHit, Tags: tags, Time: now,
				Value: float64(r.CachedTokens) / float64(r.PromptTokens)})
		}
	}
	s.in.vu.State().Samples.AddSamples(samples)
	return t
}

// sessionMessages returns a session's user messages: userMessages()'s, or
// synthetic ones of the drawn turns and lengths.
func (s *sessionSource) sessionMessages() ([]string, error) {
	if s.userMessages != nil {
		return s.datasetMessages()
	}
	n, err := s.turns()
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for k := range out {
		words, err := s.userTokens()
		if err != nil {
			return nil, err
		}
		out[k] = s.text(words)
	}
	return out, nil
}

// datasetMessages calls userMessages(): an array of strings, or of
// messages { role, content } of which the user's count (a dataset
// record's messages).
func (s *sessionSource) datasetMessages() ([]string, error) {
	v, err := s.userMessages(goja.Undefined())
	if err != nil {
		return nil, err
	}
	var items []any
	if err := s.in.vu.Runtime().ExportTo(v, &items); err != nil {
		return nil, fmt.Errorf("%s: userMessages() must return an array: %w", s.call, err)
	}
	var out []string
	for k, it := range items {
		switch m := it.(type) {
		case string:
			out = append(out, m)
		case map[string]any:
			if m["role"] == "user" {
				text, ok := m["content"].(string)
				if !ok {
					return nil, fmt.Errorf("%s: userMessages()[%d].content must be a string", s.call, k)
				}
				out = append(out, text)
			}
		default:
			return nil, fmt.Errorf("%s: userMessages()[%d] must be a string or { role, content }, got %T", s.call, k, it)
		}
	}
	if len(out) > maxSessionTurns {
		return nil, fmt.Errorf("%s: userMessages() returned %d user messages; at most %d", s.call, len(out), maxSessionTurns)
	}
	return out, nil
}

// sessionWords are the words of synthetic messages: common English words,
// each one token in the usual tokenizers.
var sessionWords = strings.Fields(`the of and to in is that for it as with was on be by at this
from or an are not have but which one all were when there can more has been if will so what
about out up into than them only other new some time could these two may then first any like
now over such our make well also back after use work way even because good each those day most
find here thing many see long get through much before right too mean old same tell boy follow
came want show also around form three small set put end does another large must big high`)

// text is n synthetic words, drawn from the source's stream.
func (s *sessionSource) text(n int) string {
	var b strings.Builder
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sessionWords[s.rng.IntN(len(sessionWords))])
	}
	return b.String()
}

// sessionID is a session's affinity id: a hash of the run's seed, the VU,
// its iteration and the source's ordinal, so that sessions differ and a
// run under the same seed sends the same ids.
func sessionID(seed, vu, iteration int64, source int) string {
	r := rand.New(rand.NewPCG(uint64(seed)^0x5e55, uint64(vu)<<40^uint64(iteration)<<8^uint64(source)))
	return fmt.Sprintf("%016x", r.Uint64())
}

// streamObserved is stream(), with observe called with the request's
// result before its script object is made (after which the result is
// reused: observe must copy what it keeps).
func (i *instance) streamObserved(c *llm.Client, body, opts goja.Value, observe func(*llm.Result)) *goja.Object {
	var req llm.Request
	call := i.streamRequest(&c, body, opts, &req)
	res := c.StreamInto(i.vu.Context(), &req, spareResults.Get().(*llm.Result), i.itl)
	observe(res)
	return i.streamResult(res, call)
}

// throw rethrows a script's exception as it is, and other errors as Go
// errors.
func throw(rt *goja.Runtime, err error) {
	if ex, ok := err.(*goja.Exception); ok {
		panic(ex)
	}
	panic(rt.NewGoError(err))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sessionMetrics are llm.sessions()'s metrics.
type sessionMetrics struct {
	turns, duration, context, cacheHit *metrics.Metric
}

// registerSessionMetrics registers the session metrics in reg (or gets
// them, when they are registered already).
func registerSessionMetrics(reg *metrics.Registry) *sessionMetrics {
	return &sessionMetrics{
		turns: reg.MustRegister(metrics.Metric{Name: "llm_session_turns", Type: metrics.Trend, Unit: "turns",
			Desc: "turns of each session of llm.sessions() (one sample per session)"}),
		duration: reg.MustRegister(metrics.Metric{Name: "llm_session_duration", Type: metrics.Trend, Contains: metrics.Time, Unit: "ms",
			Desc: "wall time of each session of llm.sessions(), its think time included"}),
		context: reg.MustRegister(metrics.Metric{Name: "llm_session_context_tokens", Type: metrics.Trend, Unit: "tokens",
			Desc: "prompt tokens of each successful request of a session, as the server counted them, tagged turn: the context's growth"}),
		cacheHit: reg.MustRegister(metrics.Metric{Name: "llm_session_cache_hit", Type: metrics.Trend, Unit: "ratio",
			Desc: "share of the prompt tokens of each successful request of a session that the server served from its prefix cache, tagged turn"}),
	}
}
