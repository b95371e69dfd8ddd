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

	"github.com/llmrun/llmrun/modules/llm"
)

// sentRequest is a chat request as the server received it.
type sentRequest struct {
	Session  string
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
		req := sentRequest{Session: r.Header.Get("x-session-id")}
		if err := json.Unmarshal(data, &req); err != nil {
			t.Errorf("request body %s: %v", data, err)
		}
		mu.Lock()
		sent = append(sent, req)
		mu.Unlock()
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
