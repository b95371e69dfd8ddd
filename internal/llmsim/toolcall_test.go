package llmsim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// answer is what a chat response said: its text, or its tool calls
// assembled from their deltas, and its finish reason.
type answer struct {
	text   string
	calls  []wholeToolCall
	finish string
}

// chatAnswer sends body to the simulator at url and assembles its answer.
func chatAnswer(t *testing.T, url string, body map[string]any) answer {
	t.Helper()
	resp, err := post(t.Context(), testClient(t), url, "/v1/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	type message struct {
		Content   string `json:"content"`
		ToolCalls []struct {
			wholeToolCall
			Index int `json:"index"`
		} `json:"tool_calls"`
	}
	type choice struct {
		Message, Delta message
		FinishReason   *string `json:"finish_reason"`
	}
	var a answer
	add := func(c choice) {
		for _, m := range []message{c.Message, c.Delta} {
			a.text += m.Content
			for _, tc := range m.ToolCalls {
				for len(a.calls) <= tc.Index {
					a.calls = append(a.calls, wholeToolCall{})
				}
				call := &a.calls[tc.Index]
				call.ID += tc.ID
				call.Type += tc.Type
				call.Function.Name += tc.Function.Name
				call.Function.Arguments += tc.Function.Arguments
			}
		}
		if c.FinishReason != nil {
			a.finish = *c.FinishReason
		}
	}
	if body["stream"] != true {
		var whole struct{ Choices []choice }
		if err := json.NewDecoder(resp.Body).Decode(&whole); err != nil || len(whole.Choices) != 1 {
			t.Fatalf("response: %v %+v", err, whole)
		}
		add(whole.Choices[0])
		return a
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct{ Choices []choice }
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		for _, c := range chunk.Choices {
			add(c)
		}
	}
	return a
}

// TestToolCalls: tool_choice "required" or naming a function gets one
// call of the tool, streamed or not, whose arguments are JSON; "auto",
// "none" and no tool_choice get text.
func TestToolCalls(t *testing.T) {
	srv := listen(t, fastConfig())
	tools := []any{
		map[string]any{"type": "function", "function": map[string]any{"name": "lookup"}},
		map[string]any{"type": "function", "function": map[string]any{"name": "fetch"}},
	}
	for _, tc := range []struct {
		name   string
		choice any
		want   string // the tool called; "" for text
	}{
		{"required", "required", "lookup"},
		{"named", map[string]any{"type": "function", "function": map[string]any{"name": "fetch"}}, "fetch"},
		{"auto", "auto", ""},
		{"none", "none", ""},
		{"absent", nil, ""},
	} {
		for _, stream := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "/streamed", false: "/whole"}[stream], func(t *testing.T) {
				body := map[string]any{
					"messages":   []any{map[string]any{"role": "user", "content": "find it"}},
					"max_tokens": 5, "ignore_eos": true, "stream": stream, "tools": tools,
				}
				if tc.choice != nil {
					body["tool_choice"] = tc.choice
				}
				a := chatAnswer(t, srv.URL(), body)
				if tc.want == "" {
					if len(a.calls) != 0 || len(strings.Fields(a.text)) != 5 || a.finish != "length" {
						t.Errorf("answer %+v, want 5 words of text", a)
					}
					return
				}
				if len(a.calls) != 1 || a.text != "" || a.finish != "tool_calls" {
					t.Fatalf("answer %+v, want one tool call and no text", a)
				}
				call := a.calls[0]
				var args struct{ Query string }
				if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil {
					t.Errorf("arguments %q: %v", call.Function.Arguments, err)
				}
				if call.Function.Name != tc.want || call.Type != "function" || !strings.HasPrefix(call.ID, "call_") || len(strings.Fields(args.Query)) != 5 {
					t.Errorf("call %+v, want %s with 5 words of query", call, tc.want)
				}
			})
		}
	}
}

// TestToolCallsBadInput: a chat request whose tool_choice asks for a call
// it does not name properly is a 400 naming the field, as in the
// Responses API, not a text answer.
func TestToolCallsBadInput(t *testing.T) {
	srv := listen(t, fastConfig())
	for _, tc := range []struct {
		name   string
		tools  []any
		choice any
		param  string
	}{
		{"required, tool without a name", []any{map[string]any{"type": "function"}}, "required", "tools"},
		{"required, tool not an object", []any{"lookup"}, "required", "tools"},
		{"tool_choice's function not an object", []any{map[string]any{"type": "function", "function": map[string]any{"name": "a"}}},
			map[string]any{"type": "function", "function": "a"}, "tool_choice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x"}},
				"max_tokens": 2, "tools": tc.tools, "tool_choice": tc.choice}
			resp, err := post(t.Context(), testClient(t), srv.URL(), "/v1/chat/completions", body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var reply struct {
				Error *struct {
					Message string
					Param   *string
				}
			}
			if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || reply.Error == nil || reply.Error.Param == nil || *reply.Error.Param != tc.param {
				t.Errorf("%d %+v, want a 400 naming %s", resp.StatusCode, reply.Error, tc.param)
			}
		})
	}
}
