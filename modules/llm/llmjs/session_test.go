package llmjs

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/modulestest"
)

// sentRequest is a chat request as the server received it.
type sentRequest struct {
	Session  string
	Header   http.Header
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	} `json:"messages"`
	ToolChoice string `json:"tool_choice"`
}

// recordingSim starts the simulator behind a 127.0.0.1 proxy that records
// each request's body and session header, and a module that sends to it.
func recordingSim(t *testing.T, seed int64) (*Module, func() []sentRequest) {
	return failingSim(t, seed, 0)
}

// failingSim is recordingSim whose proxy answers its failAt-th request (from
// 1; 0: none) with a 503 instead of passing it on.
func failingSim(t *testing.T, seed int64, failAt int) (*Module, func() []sentRequest) {
	t.Helper()
	sim := startSim(t)
	target, err := url.Parse(sim.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var sent []sentRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := sentRequest{Session: r.Header.Get("x-session-id"), Header: r.Header.Clone()}
		if err := json.Unmarshal(data, &req); err != nil {
			t.Errorf("request body %s: %v", data, err)
		}
		mu.Lock()
		sent = append(sent, req)
		n := len(sent)
		mu.Unlock()
		if n == failAt {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	m, _ := newRecordedModule(t, llm.Config{BaseURL: srv.URL, Model: jsModel})
	m.Seed = seed
	return m, func() []sentRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]sentRequest(nil), sent...)
	}
}

// TestSessionFeedsRepliesAndToolCalls runs two synthetic sessions of 3
// turns with 2 tool rounds each: every request of a session carries its
// affinity id, the next request's messages hold the previous reply's real
// text and a tool message per tool call id, and the figures count it all.
func TestSessionFeedsRepliesAndToolCalls(t *testing.T) {
	m, sent := recordingSim(t, 7)
	v := newJSVU(t, m)
	v.Run(`const src = llm.sessions({ turns: 3, toolCalls: 2, userTokens: 12, toolTokens: 20, system: 'You are an agent.' });`)
	var figures []struct {
		ID    string
		OK    bool
		Turns []struct{ Turn, Requests, ToolCalls, PromptTokens, CachedTokens int }
	}
	for it := range 2 {
		v.State().Iteration = int64(it)
		s := v.Run(`JSON.stringify(src.run({ max_tokens: 8, ignore_eos: true }))`).String()
		var f struct {
			ID    string
			OK    bool
			Turns []struct{ Turn, Requests, ToolCalls, PromptTokens, CachedTokens int }
		}
		if err := json.Unmarshal([]byte(s), &f); err != nil {
			t.Fatalf("figures %s: %v", s, err)
		}
		figures = append(figures, f)
	}
	reqs := sent()
	if len(reqs) != 2*3*3 {
		t.Fatalf("%d requests, want 2 sessions × 3 turns × (2 tool rounds + the answer)", len(reqs))
	}
	for k, f := range figures {
		if !f.OK || len(f.Turns) != 3 {
			t.Fatalf("session %d: %+v", k, f)
		}
		for _, turn := range f.Turns {
			if turn.Requests != 3 || turn.ToolCalls != 2 || turn.PromptTokens == 0 {
				t.Errorf("session %d turn %+v: want 3 requests, 2 tool calls and the server's prompt tokens", k, turn)
			}
		}
		if f.Turns[2].PromptTokens <= f.Turns[0].PromptTokens {
			t.Errorf("session %d: context did not grow: %+v", k, f.Turns)
		}
		for _, r := range reqs[k*9 : k*9+9] {
			if r.Session != f.ID || f.ID == "" {
				t.Errorf("session %d sent x-session-id %q, want its id %q", k, r.Session, f.ID)
			}
		}
	}
	if figures[0].ID == figures[1].ID {
		t.Errorf("two sessions share the id %q", figures[0].ID)
	}
	// Each request's history is the previous one's plus what came back.
	for k := 1; k < len(reqs); k++ {
		prev, cur := reqs[k-1], reqs[k]
		if k%9 == 0 {
			continue // a new session
		}
		if len(cur.Messages) <= len(prev.Messages) {
			t.Fatalf("request %d: history did not grow", k)
		}
		reply := cur.Messages[len(prev.Messages)]
		if reply.Role != "assistant" {
			t.Fatalf("request %d: message after the previous request's is %+v, want the reply", k, reply)
		}
		if prev.ToolChoice == "required" {
			if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].ID == "" {
				t.Fatalf("request %d: reply %+v lacks the tool call the server made", k, reply)
			}
			answer := cur.Messages[len(prev.Messages)+1]
			if answer.Role != "tool" || answer.ToolCallID != reply.ToolCalls[0].ID || len(strings.Fields(answer.Content)) != 20 {
				t.Errorf("request %d: tool message %+v, want 20 words answering %s", k, answer, reply.ToolCalls[0].ID)
			}
		} else if reply.Content == "" || len(strings.Fields(reply.Content)) != 8 {
			t.Errorf("request %d: reply %q, want the 8 words the server sent", k, reply.Content)
		}
	}
	if s := v.Stats("llm_session_turns"); s == nil || s.Count != 2 || s.Sum != 6 {
		t.Errorf("llm_session_turns %+v, want 2 sessions of 3 turns", s)
	}
	for _, turn := range []string{"1", "2", "3"} {
		if s := v.Stats("llm_session_context_tokens", "turn", turn); s == nil || s.Count != 6 {
			t.Errorf("llm_session_context_tokens{turn:%s} %+v, want a sample per request", turn, s)
		}
		if s := v.Stats("llm_session_cache_hit", "turn", turn); s == nil || s.Count != 6 {
			t.Errorf("llm_session_cache_hit{turn:%s} %+v, want a sample per request", turn, s)
		}
	}
	if s := v.Stats("llm_session_cache_hit", "turn", "3"); s == nil || s.Sum/float64(s.Count) < 0.5 {
		t.Errorf("llm_session_cache_hit{turn:3} %+v: the prefix cache should serve most of a late turn's history", s)
	}
}

// runSessions runs n sessions of a source made by init, as iterations 0,
// 1, … of the VU, and returns their figures.
func runSessions(t *testing.T, v *modulestest.VU, init string, n int) []sessionFigures {
	t.Helper()
	v.Run(`var src = llm.sessions(` + init + `);`)
	out := make([]sessionFigures, n)
	for it := range n {
		v.State().Iteration = int64(it)
		s := v.Run(`JSON.stringify(src.run({ max_tokens: 4, ignore_eos: true }))`).String()
		if err := json.Unmarshal([]byte(s), &out[it]); err != nil {
			t.Fatalf("figures %s: %v", s, err)
		}
	}
	return out
}

// sessionFigures are run()'s figures.
type sessionFigures struct {
	ID        string
	OK        bool
	Duration  float64
	ThinkTime float64
	Turns     []struct{ Turn, Requests, ToolCalls, PromptTokens, CachedTokens int }
}

// TestSessionShapesAreDeterministic: under the same seed, sessions drawn
// from the data module's distributions send the same requests (turns,
// tool rounds, user and tool messages, ids); another seed sends others.
func TestSessionShapesAreDeterministic(t *testing.T) {
	shapes := func(seed int64) string {
		m, sent := recordingSim(t, seed)
		v := modulestest.NewVU(t)
		v.Expose("llm", m)
		v.Expose("data", &data.Module{Seed: seed})
		v.LeaveInit()
		runSessions(t, v, `{ turns: data.lengths.uniform({ min: 1, max: 4 }), userTokens: data.lengths.uniform({ min: 2, max: 30 }),
			toolCalls: data.lengths.uniform({ min: 0, max: 2 }), toolTokens: () => 5 }`, 4)
		var b strings.Builder
		for _, r := range sent() {
			b.WriteString(r.Session + " " + r.ToolChoice + ":")
			for _, msg := range r.Messages {
				if msg.Role != "assistant" { // the simulator's words depend on timing
					b.WriteString(" " + msg.Role + "=" + msg.Content)
				}
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	first, again, other := shapes(7), shapes(7), shapes(8)
	if first != again {
		t.Errorf("seed 7 sent\n%s\nthen\n%s", first, again)
	}
	if first == other {
		t.Errorf("seeds 7 and 8 sent the same sessions:\n%s", first)
	}
	if !strings.Contains(first, "required") || !strings.Contains(first, "none") {
		t.Errorf("no tool rounds drawn in\n%s", first)
	}
}

// TestSessionThinkTimeIsNotLoad: the think time between turns is spent
// idle, outside every request: the requests' E2E and the think time
// together fit in the session's duration, so no latency includes it.
func TestSessionThinkTimeIsNotLoad(t *testing.T) {
	m, _ := recordingSim(t, 1)
	v := newJSVU(t, m)
	f := runSessions(t, v, `{ turns: 3, thinkTime: '150ms', userTokens: 4 }`, 1)[0]
	if !f.OK || len(f.Turns) != 3 {
		t.Fatalf("session %+v", f)
	}
	if f.ThinkTime < 2*150 {
		t.Errorf("think time %g ms, want at least the 2 pauses of 150 ms", f.ThinkTime)
	}
	e2e := v.Stats("llm_e2e")
	if e2e == nil || e2e.Count != 3 {
		t.Fatalf("llm_e2e %+v, want the 3 requests", e2e)
	}
	if e2e.Sum+f.ThinkTime > f.Duration {
		t.Errorf("E2E sum %g + think time %g > session duration %g: a latency included the pause", e2e.Sum, f.ThinkTime, f.Duration)
	}
	if d := v.Stats("llm_session_duration"); d == nil || d.Count != 1 || d.Sum < f.ThinkTime {
		t.Errorf("llm_session_duration %+v, want one session with its think time", d)
	}
}

// TestSessionAffinityHeader: affinityHeader names the header of the
// session's id; an empty name sends none.
func TestSessionAffinityHeader(t *testing.T) {
	for _, tc := range []struct{ option, header string }{
		{`'x-route-key'`, "X-Route-Key"},
		{`''`, ""},
	} {
		m, sent := recordingSim(t, 1)
		v := newJSVU(t, m)
		f := runSessions(t, v, `{ turns: 2, userTokens: 3, affinityHeader: `+tc.option+` }`, 2)
		for k, r := range sent() {
			want := ""
			if tc.header != "" {
				want = f[k/2].ID
			}
			if got := r.Header.Get(tc.header); tc.header != "" && got != want {
				t.Errorf("%s: request %d sent %s %q, want %q", tc.option, k, tc.header, got, want)
			}
			if r.Session != "" {
				t.Errorf("%s: request %d sent x-session-id %q", tc.option, k, r.Session)
			}
		}
	}
}

// TestSessionUserMessages replays a dataset record's conversation: its
// user messages are the turns, the other roles are left out.
func TestSessionUserMessages(t *testing.T) {
	m, sent := recordingSim(t, 1)
	v := newJSVU(t, m)
	f := runSessions(t, v, `{ userMessages: () => [{ role: 'system', content: 'x' }, { role: 'user', content: 'first question' },
		{ role: 'assistant', content: 'recorded answer' }, { role: 'user', content: 'second question' }] }`, 1)[0]
	reqs := sent()
	if len(f.Turns) != 2 || len(reqs) != 2 {
		t.Fatalf("%d turns, %d requests, want 2", len(f.Turns), len(reqs))
	}
	last := reqs[1].Messages
	if len(last) != 3 || last[0].Content != "first question" || last[1].Role != "assistant" || last[1].Content == "recorded answer" || last[2].Content != "second question" {
		t.Errorf("second request's messages %+v, want the two questions around the live answer", last)
	}
}

// TestSessionBadInput: options and bodies that cannot work are refused
// with the option at fault named.
func TestSessionBadInput(t *testing.T) {
	m, _ := recordingSim(t, 1)
	for _, tc := range []struct{ code, want string }{
		{`llm.sessions({ turns: -1 })`, "turns: want a whole number ≥ 0"},
		{`llm.sessions({ userTokens: 'many' })`, "userTokens: want a whole number ≥ 0"},
		{`llm.sessions({ userMessages: 3 })`, "userMessages must be a function"},
		{`llm.sessions({ affinityHeader: 'a b' })`, "affinityHeader"},
		{`llm.sessions().run({ messages: [] })`, "body.messages is the session's own"},
		{`llm.sessions().run({ tool_choice: 'auto' })`, "body.tool_choice is the session's own"},
		{`llm.sessions({ userMessages: () => [3] }).run()`, "userMessages()[0] must be a string or { role, content }"},
		{`llm.sessions({ turns: () => 1e6 }).run()`, "turns drew 1000000; at most 10000"},
		{`llm.sessions({ turns: 1, toolCalls: () => 1e9 }).run({ max_tokens: 1 })`, "toolCalls drew 1000000000; at most 100"},
		{`llm.sessions({ turns: 1, userTokens: 2e9 })`, "userTokens drew 2000000000; at most 1048576"},
		{`llm.sessions({ turns: 1, toolCalls: 1, toolTokens: { sample: () => 1e9 } }).run({ max_tokens: 1 })`, "toolTokens drew 1000000000; at most 1048576"},
		{`llm.sessions({ turns: 2, thinkTime: () => -1 }).run({ max_tokens: 1 })`, "thinkTime(): want milliseconds ≥ 0"},
	} {
		v := newJSVU(t, m)
		_, err := v.Runtime().RunString(tc.code)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.code, err, tc.want)
		}
	}
}

// TestSessionEndsAtAFailedRequest: a failed request ends the session, not
// ok, with the turns sent so far; the next session starts afresh.
func TestSessionEndsAtAFailedRequest(t *testing.T) {
	m, sent := failingSim(t, 1, 2)
	v := newJSVU(t, m)
	f := runSessions(t, v, `{ turns: 3, userTokens: 3 }`, 2)
	if f[0].OK || len(f[0].Turns) != 2 || f[0].Turns[1].PromptTokens != 0 {
		t.Errorf("session with its second request failed: %+v, want not ok after 2 turns, the second without figures", f[0])
	}
	if !f[1].OK || len(f[1].Turns) != 3 {
		t.Errorf("next session %+v, want 3 turns", f[1])
	}
	if reqs := sent(); len(reqs) != 5 || len(reqs[2].Messages) != 1 {
		t.Errorf("%d requests, the third with %d messages: want 2 + 3, the next session from its first message", len(reqs), len(reqs[2].Messages))
	}
}

// A server that streams a tool call without an id (some parsers leave it
// out) still gets, in the next request, the call and a tool message that
// answers it by the same id: the session makes one up, which strict
// servers require.
func TestSessionNamesToolCallsTheServerLeftWithoutID(t *testing.T) {
	var mu sync.Mutex
	var sent []sentRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req sentRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		sent = append(sent, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if req.ToolChoice == "required" {
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"name":"lookup","arguments":"{\"query\":\"kv\"}"}}]},"finish_reason":null}]}`+"\n\n")
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`+"\n\n")
		} else {
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`+"\n\n")
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	m, _ := newRecordedModule(t, llm.Config{BaseURL: srv.URL, Model: jsModel})
	v := newJSVU(t, m)
	f := runSessions(t, v, `{ turns: 1, userTokens: 3, toolCalls: 1 }`, 1)
	mu.Lock()
	defer mu.Unlock()
	if !f[0].OK || len(sent) != 2 {
		t.Fatalf("session %+v after %d requests, want ok after a tool round and the answer", f[0], len(sent))
	}
	msgs := sent[1].Messages
	if len(msgs) != 3 || len(msgs[1].ToolCalls) != 1 || msgs[2].Role != "tool" {
		t.Fatalf("second request's messages %+v, want user, the assistant's call, the tool's answer", msgs)
	}
	if id := msgs[1].ToolCalls[0].ID; id == "" || msgs[2].ToolCallID != id {
		t.Errorf("the call's id %q, the tool message answers %q: want one id, not empty", id, msgs[2].ToolCallID)
	}
}
