package llmjs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// words returns a user message of about n cl100k tokens.
func words(n int) string {
	return strings.TrimSpace(strings.Repeat("tell me more ", n/3))
}

// TestConversationGrowsItsHistory holds a three-turn conversation with the
// simulator: each turn sends the whole history (so the server's prompt
// grows by the previous question and the model's real reply), is tagged
// with its turn number, and the server's prefix cache serves the history.
func TestConversationGrowsItsHistory(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	v.Run(`const chat = llm.conversation({ system: 'You are terse.' });`)
	var prompts []int
	for turn := 1; turn <= 3; turn++ {
		r := stream(t, v, `chat.send('`+words(60)+`', { max_tokens: 24, ignore_eos: true })`)
		if !r.OK || r.OutputTokens != 24 {
			t.Fatalf("turn %d: %+v", turn, r)
		}
		prompts = append(prompts, r.PromptTokens)
		if got := v.Run(`chat.turn`).ToInteger(); got != int64(turn) {
			t.Errorf("after turn %d, chat.turn = %d", turn, got)
		}
		key := "model:" + jsModel + ",scenario:test,turn:" + itoa(turn)
		if s := v.Series("llm_ttft"); s[key] == nil || s[key].Count != 1 {
			t.Errorf("turn %d: no llm_ttft sample tagged %s in %v", turn, key, s)
		}
	}
	// Each turn adds the previous question (60 tokens) and answer (24),
	// with their chat framing.
	for i := 1; i < len(prompts); i++ {
		if grow := prompts[i] - prompts[i-1]; grow < 84 || grow > 84+12 {
			t.Errorf("prompt tokens by turn %v: turn %d grew by %d, want the 84 tokens of the last turn plus framing", prompts, i+1, grow)
		}
	}
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal([]byte(v.Run(`JSON.stringify(chat.messages)`).String()), &msgs); err != nil {
		t.Fatal(err)
	}
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m.Role
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,user,assistant,user,assistant" {
		t.Errorf("history roles %s", got)
	}
	if msgs[2].Content == "" {
		t.Error("the assistant's reply was not kept in the history")
	}
	if cached := v.Stats("llm_cached_tokens", "turn", "3"); cached == nil || cached.Sum < 64 {
		t.Errorf("turn 3's cached tokens %+v: the simulator's prefix cache should serve the history", cached)
	}
}

// TestConversationFailedTurn: a failed turn is recorded and counted as a
// turn, and leaves the history as it was.
func TestConversationFailedTurn(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	v.Run(`const chat = llm.conversation();`)
	if r := stream(t, v, `chat.send('first', { max_tokens: 4 })`); !r.OK {
		t.Fatalf("first turn %+v", r)
	}
	r := stream(t, v, `chat.send('second', { max_tokens: 4 }, { headers: { 'X-Llmsim-Fault': 'http_5xx' }, tags: { kind: 'x' } })`)
	if r.OK || r.ErrorClass != "http_5xx" {
		t.Fatalf("the faulty turn %+v", r)
	}
	if got := v.Run(`chat.turn + ' ' + chat.messages.length`).String(); got != "2 2" {
		t.Errorf("after a failed second turn: turn and history length %q, want \"2 2\"", got)
	}
	if s := v.Stats("llm_errors", "turn", "2", "kind", "x"); s == nil || s.Sum != 1 {
		t.Errorf("the failed turn's llm_errors: %+v", s)
	}
	if _, err := v.Runtime().RunString(`chat.send('third', { max_tokens: 4 }, { throw: true, headers: { 'X-Llmsim-Fault': 'http_5xx' } })`); err == nil {
		t.Error("a failed turn with throw: true did not throw")
	}
	if got := v.Run(`chat.turn + ' ' + chat.messages.length`).String(); got != "3 2" {
		t.Errorf("after a third turn that threw: turn and history length %q, want \"3 2\"", got)
	}
}

// TestConversationThinkTimeAndMaxTurns: the think time passes before every
// turn but the first; a function gives it; maxTurns starts anew.
func TestConversationThinkTimeAndMaxTurns(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	v.Run(`let thinks = 0; const chat = llm.conversation({ maxTurns: 2, thinkTime: () => { thinks++; return 150; } });`)
	start := time.Now()
	for range 3 {
		if r := stream(t, v, `chat.send('hi', { max_tokens: 2 })`); !r.OK {
			t.Fatalf("%+v", r)
		}
	}
	if got := v.Run(`thinks + ' ' + chat.turn + ' ' + chat.messages.length`).String(); got != "1 1 2" {
		t.Errorf("thinks, turn, history after 3 sends with maxTurns 2: %q, want \"1 1 2\" (the third send started a new conversation)", got)
	}
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("3 turns with one 150 ms think took %v", el)
	}
	if ttft := v.Stats("llm_ttft", "turn", "2"); ttft == nil || ttft.Max >= 150 {
		t.Errorf("turn 2's TTFT %+v includes the think time", ttft)
	}
}

func TestConversationErrors(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	for _, tc := range []struct{ src, want string }{
		{`llm.conversation({ maxTurns: -1 })`, "maxTurns must be ≥ 0"},
		{`llm.conversation({ thinkTime: 'soon' })`, `thinkTime: "soon" is not a duration`},
		{`llm.conversation({ client: {} })`, "client must be made by llm.client()"},
		{`llm.conversation().send('x', { messages: [] })`, "body.messages is the conversation's own"},
		{`llm.conversation({ thinkTime: () => -1 }).send('x', { max_tokens: 1 }) && llm.conversation({ thinkTime: () => -1 })`, ""},
		{`(() => { const c = llm.conversation({ thinkTime: () => -1 }); c.send('x', { max_tokens: 1 }); c.send('y', { max_tokens: 1 }); })()`, "want milliseconds ≥ 0"},
		{`(() => { const c = llm.conversation({ thinkTime: () => { throw new Error('no think') } }); c.send('x', { max_tokens: 1 }); c.send('y'); })()`, "no think"},
		{`llm.stream({ prompt: 'x', max_tokens: 1 }, { promptTokens: 1.5 })`, "promptTokens must be a whole number"},
	} {
		_, err := v.Runtime().RunString(tc.src)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s\n  threw %v\n  want %q", tc.src, err, tc.want)
		}
	}
	v.EnterInit()
	if _, err := v.Runtime().RunString(`llm.conversation().send('x')`); err == nil || !strings.Contains(err.Error(), "init context") {
		t.Errorf("send in the init context: %v", err)
	}
}

// TestPromptTokensCheck: a request that gives its prompt's length gets it
// compared with the server's count in llm_prompt_tokens_check.
func TestPromptTokensCheck(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	if r := stream(t, v, `llm.stream({ prompt: '`+words(90)+`', max_tokens: 2 }, { promptTokens: 90 })`); !r.OK || r.PromptTokens != 90 {
		t.Fatalf("%+v", r)
	}
	req, usage := v.Stats("llm_prompt_tokens_check", "source", "requested"), v.Stats("llm_prompt_tokens_check", "source", "usage")
	if req == nil || usage == nil || req.Sum != 90 || usage.Sum != 90 {
		t.Errorf("llm_prompt_tokens_check requested %+v, usage %+v; want 90 each", req, usage)
	}
	stream(t, v, `llm.stream({ prompt: 'no length given', max_tokens: 2 })`)
	if req := v.Stats("llm_prompt_tokens_check", "source", "requested"); req.Count != 1 {
		t.Errorf("a request without promptTokens was checked: %+v", req)
	}
}

// A conversation given a client sends with it (here a client of another
// model, which the simulator answers as any), and the object of
// llm.client() shows a script none of the Go client's methods.
func TestConversationSendsWithItsClient(t *testing.T) {
	_, m := startJSSim(t)
	v := newJSVU(t, m)
	v.Run(`const other = llm.client({ model: 'other-model' });
const chat = llm.conversation({ client: other });`)
	if r := stream(t, v, `llm.conversation().send('hello', { max_tokens: 2 })`); !r.OK || r.Model != jsModel {
		t.Fatalf("the default client's conversation: %+v, want model %s", r, jsModel)
	}
	if r := stream(t, v, `chat.send('hello', { max_tokens: 2 })`); !r.OK || r.Model != "other-model" {
		t.Errorf("the conversation of a client of other-model: %+v", r)
	}
	if got := v.Run(`typeof other.__client.Stream + ' ' + Object.keys(other.__client).length`).String(); got != "undefined 0" {
		t.Errorf("the client's handle shows %q, want nothing", got)
	}
}
