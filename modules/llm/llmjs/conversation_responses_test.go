package llmjs

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/llmrun/llmrun/modules/llm"
)

// bodyRecorder is a proxy to a server that records the JSON body of each
// request it passes on.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies []map[string]any
}

// start starts the proxy to target, closed with the test.
func (b *bodyRecorder) start(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(data, &body) // a body that is no object is recorded as nil
		b.mu.Lock()
		b.bodies = append(b.bodies, body)
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(data))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (b *bodyRecorder) last() map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bodies[len(b.bodies)-1]
}

// A Responses conversation sends each turn's message alone, continuing
// the last reply by its id; with store: false, it sends the history.
func TestConversationContinuesResponses(t *testing.T) {
	rec := &bodyRecorder{}
	base := rec.start(t, startSim(t).URL())
	m, _ := newRecordedModule(t, llm.Config{BaseURL: base, Model: jsModel})
	v := newJSVU(t, m)
	v.Run(`const chat = llm.conversation({ api: 'responses', system: 'Be terse.' });`)
	var ids []string
	for turn := 1; turn <= 3; turn++ {
		got := v.Run(`(() => { const r = chat.send('question ` + itoa(turn) + `', { max_output_tokens: 4, ignore_eos: true });
			return JSON.stringify([r.ok, r.api, r.responseId, r.error || '']); })()`).String()
		var r []any
		if err := json.Unmarshal([]byte(got), &r); err != nil || r[0] != true || r[1] != "responses" || r[2] == "" {
			t.Fatalf("turn %d: result %s", turn, got)
		}
		body := rec.last()
		if body["input"] != "question "+itoa(turn) || body["instructions"] != "Be terse." {
			t.Errorf("turn %d: body %v, want only the new question and the instructions", turn, body)
		}
		if prev, sent := body["previous_response_id"]; turn == 1 && sent || turn > 1 && prev != ids[turn-2] {
			t.Errorf("turn %d: previous_response_id %v, want the id of turn %d, %v", turn, prev, turn-1, ids)
		}
		ids = append(ids, r[2].(string))
	}
	if n := v.Run(`chat.messages.length`).ToInteger(); n != 7 {
		t.Errorf("history of %d messages, want the system message and 3 turns of 2", n)
	}
	// store: false keeps nothing on the server: the history is sent.
	v.Run(`chat.send('last', { max_output_tokens: 4, store: false })`)
	body := rec.last()
	input, _ := body["input"].([]any)
	if _, sent := body["previous_response_id"]; sent || len(input) != 8 {
		t.Errorf("store false: body %v, want the 8 messages of the history and no previous_response_id", body)
	}
	v.Run(`chat.reset(); chat.send('anew', { max_output_tokens: 2 })`)
	if _, sent := rec.last()["previous_response_id"]; sent {
		t.Errorf("after reset, the turn continued an old response: %v", rec.last())
	}
	for _, bad := range []string{`llm.conversation({ api: 'nope' })`, `llm.conversation({ api: 'responses' }).send('x', { input: 'y' })`} {
		if _, err := v.Runtime().RunString(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// A script's Responses request against the simulator: its times, usage
// and tool call reach the result and the metrics as a chat request's do.
func TestResponsesFromAScript(t *testing.T) {
	srv, m := startJSSim(t)
	v := newJSVU(t, m)
	v.Run(`const resp = llm.client({ api: 'responses', baseURL: '` + srv.URL() + `' });`)
	r := stream(t, v, `resp.stream({ input: 'hello there', max_output_tokens: 6, ignore_eos: true }, { itl: true, text: true })`)
	if !r.OK || r.API != "responses" || r.OutputTokens != 6 || r.PromptTokens == 0 || r.TTFT <= 0 || len(r.ITL) != 5 || r.Text == nil || *r.Text == "" {
		t.Errorf("text response %+v", r)
	}
	got := v.Run(`JSON.stringify(resp.stream({ input: 'weather?', max_output_tokens: 3, ignore_eos: true,
		tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }], tool_choice: 'required' }).toolCalls)`).String()
	var calls []llm.ToolCall
	if err := json.Unmarshal([]byte(got), &calls); err != nil || len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Arguments == "" {
		t.Errorf("tool calls %s", got)
	}
	if s := v.Stats("llm_ttft"); s == nil || s.Count != 2 {
		t.Errorf("llm_ttft %+v, want a sample of each request", s)
	}
}

// A Responses server that gives its replies no id (a gateway's, or one
// that stores nothing) leaves nothing to continue: the next turn sends
// the whole history, as with store: false, instead of failing or sending
// the new message alone.
func TestConversationResponsesWithoutIDs(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"response","status":"completed","output":[{"type":"message","role":"assistant",`+
			`"content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":3,"output_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	m, _ := newRecordedModule(t, llm.Config{BaseURL: srv.URL, Model: jsModel})
	v := newJSVU(t, m)
	v.Run(`const chat = llm.conversation({ api: 'responses', system: 'Be terse.' });`)
	for _, q := range []string{"first", "second"} {
		if got := v.Run(`(() => { const r = chat.send('` + q + `', { stream: false }); return r.ok + ' ' + (r.error || ''); })()`).String(); got != "true " {
			t.Fatalf("%s: %s", q, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || bodies[0]["input"] != "first" {
		t.Fatalf("bodies %v", bodies)
	}
	input, _ := bodies[1]["input"].([]any)
	if _, sent := bodies[1]["previous_response_id"]; sent || len(input) != 4 {
		t.Errorf("second turn: body %v, want the 4 messages of the history (system, first, its reply, second) and no previous_response_id", bodies[1])
	}
}
