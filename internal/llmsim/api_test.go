package llmsim

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

func TestChatStreamFormat(t *testing.T) {
	r := listen(t, fastConfig())
	s := mustStream(t, r, "/v1/chat/completions", chatBody("Hello there", map[string]any{
		"model": "any-model", "max_tokens": 5, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true},
	}))

	// role, 5 tokens, finish, usage
	if len(s.chunks) != 8 {
		t.Fatalf("%d chunks, want 8:\n%s", len(s.chunks), strings.Join(s.raw, "\n"))
	}
	first := s.chunks[0]
	for i, c := range s.chunks {
		if c.ID != first.ID || c.Created != first.Created || c.Object != "chat.completion.chunk" || c.Model != "any-model" {
			t.Errorf("chunk %d: id %q created %d object %q model %q", i, c.ID, c.Created, c.Object, c.Model)
		}
		if i < 7 && !strings.HasSuffix(s.raw[i], `,"usage":null}`) {
			t.Errorf("chunk %d lacks usage null: %s", i, s.raw[i])
		}
	}
	if !strings.HasPrefix(first.ID, "chatcmpl-") {
		t.Errorf("id %q", first.ID)
	}

	role := first.Choices[0]
	if role.Delta == nil || role.Delta.Role == nil || *role.Delta.Role != "assistant" ||
		role.Delta.Content == nil || *role.Delta.Content != "" || role.FinishReason != nil {
		t.Errorf("first chunk is not role-only: %s", s.raw[0])
	}
	for i, c := range s.chunks[1:6] {
		ch := c.Choices[0]
		if ch.Delta == nil || ch.Delta.Role != nil || ch.Delta.Content == nil || *ch.Delta.Content == "" ||
			ch.FinishReason != nil || string(ch.Logprobs) != "null" {
			t.Errorf("token chunk %d: %s", i, s.raw[i+1])
		}
	}
	if got := s.text(); strings.HasPrefix(got, " ") || len(strings.Fields(got)) != 5 {
		t.Errorf("text %q: want 5 words without a leading space", got)
	}
	if s.raw[6] != `{"id":"`+first.ID+`","object":"chat.completion.chunk","created":`+jsonInt(first.Created)+
		`,"model":"any-model","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}],"usage":null}` {
		t.Errorf("finish chunk: %s", s.raw[6])
	}
	u := s.chunks[7]
	if u.Choices == nil || len(u.Choices) != 0 || u.Usage == nil {
		t.Fatalf("usage chunk: %s", s.raw[7])
	}
	// "Hello there" is 2 tokens in cl100k_base, plus 3 for the message and
	// 3 for the reply; the prefix cache is on, and empty.
	if want := (usage{8, 5, 13, &promptTokensDetails{0}}); !reflect.DeepEqual(*u.Usage, want) {
		t.Errorf("usage %+v, want %+v", *u.Usage, want)
	}
	if len(s.tokenAt) != 5 {
		t.Errorf("%d token-bearing chunks, want 5", len(s.tokenAt))
	}
}

func jsonInt(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCompletionsStreamFormat(t *testing.T) {
	r := listen(t, fastConfig())
	s := mustStream(t, r, "/v1/completions", completionsBody("Once upon a time", map[string]any{
		"max_tokens": 4, "ignore_eos": true,
	}))
	if len(s.chunks) != 5 {
		t.Fatalf("%d chunks, want 5 (4 tokens, finish):\n%s", len(s.chunks), strings.Join(s.raw, "\n"))
	}
	for i, c := range s.chunks {
		if c.Object != "text_completion" || c.Model != "llmsim-1" || !strings.HasPrefix(c.ID, "cmpl-") {
			t.Errorf("chunk %d: %s", i, s.raw[i])
		}
		if strings.Contains(s.raw[i], "usage") {
			t.Errorf("chunk %d mentions usage though not asked: %s", i, s.raw[i])
		}
		ch := c.Choices[0]
		if ch.Delta != nil || ch.Text == nil {
			t.Errorf("chunk %d is not a text completion: %s", i, s.raw[i])
		}
		if last := i == len(s.chunks)-1; last != (ch.FinishReason != nil) || last != (*ch.Text == "") {
			t.Errorf("chunk %d: %s", i, s.raw[i])
		}
	}
	if got := s.text(); !strings.HasPrefix(got, " ") || len(strings.Fields(got)) != 4 {
		t.Errorf("text %q: want 4 words continuing the prompt", got)
	}
	if s.finishReason() != "length" {
		t.Errorf("finish reason %q", s.finishReason())
	}
}

func TestIgnoreEOSGivesMaxTokens(t *testing.T) {
	cfg := fastConfig()
	cfg.OutputMean = 1 // natural ends would be short
	r := listen(t, cfg)
	for _, n := range []int{1, 2, 17, 100} {
		s := mustStream(t, r, "/v1/chat/completions", chatBody("hi", map[string]any{
			"max_tokens": n, "ignore_eos": true,
			"stream_options": map[string]any{"include_usage": true},
		}))
		if len(s.tokenAt) != n || s.chunks[len(s.chunks)-1].Usage.CompletionTokens != n || s.finishReason() != "length" {
			t.Errorf("max_tokens %d: %d tokens, usage %+v, finish %q", n, len(s.tokenAt), s.chunks[len(s.chunks)-1].Usage, s.finishReason())
		}
	}
	// max_completion_tokens wins over max_tokens for chat.
	s := mustStream(t, r, "/v1/chat/completions", chatBody("hi", map[string]any{
		"max_tokens": 3, "max_completion_tokens": 6, "ignore_eos": true,
	}))
	if len(s.tokenAt) != 6 {
		t.Errorf("max_completion_tokens 6: %d tokens", len(s.tokenAt))
	}
	// Without max_tokens: the default, capped by the context length.
	cfg.MaxModelLen, cfg.DefaultMaxTokens = 100, 50
	r = listen(t, cfg)
	for prompt, want := range map[int]int{4: 50, 80: 20} {
		s := mustStream(t, r, "/v1/completions", completionsBody(make([]int, prompt), map[string]any{"ignore_eos": true}))
		if len(s.tokenAt) != want {
			t.Errorf("prompt %d, no max_tokens: %d tokens, want %d", prompt, len(s.tokenAt), want)
		}
	}
}

func TestNaturalLength(t *testing.T) {
	cfg := fastConfig()
	cfg.OutputMean = 5
	r := listen(t, cfg)
	stops := 0
	for range 20 {
		resp := complete(t, r, "/v1/completions", completionsBody("x", map[string]any{"max_tokens": 200}))
		n, reason := resp.Usage.CompletionTokens, resp.Choices[0].FinishReason
		if n < 1 || n > 200 || (reason == "stop") != (n < 200) || len(strings.Fields(resp.text())) != n {
			t.Fatalf("%d tokens, finish %q, text %q", n, reason, resp.text())
		}
		if reason == "stop" {
			stops++
		}
	}
	if stops < 19 { // P(an exponential with mean 5 reaches 200) ≈ e^-40
		t.Errorf("only %d of 20 requests stopped naturally", stops)
	}

	resp := complete(t, r, "/v1/completions", completionsBody("x", map[string]any{"max_tokens": 60, "min_tokens": 50}))
	if n := resp.Usage.CompletionTokens; n < 50 || n > 60 {
		t.Errorf("min_tokens 50, max_tokens 60: %d tokens", n)
	}

	cfg.OutputMean = 1e6
	r = listen(t, cfg)
	resp = complete(t, r, "/v1/completions", completionsBody("x", map[string]any{"max_tokens": 3}))
	if resp.Usage.CompletionTokens != 3 || resp.Choices[0].FinishReason != "length" {
		t.Errorf("long natural output: %d tokens, finish %q", resp.Usage.CompletionTokens, resp.Choices[0].FinishReason)
	}
}

func TestNonStreaming(t *testing.T) {
	r := listen(t, fastConfig())
	chat := complete(t, r, "/v1/chat/completions", chatBody("Hello", map[string]any{
		"model": "m", "max_tokens": 7, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true}, // ignored without stream
	}))
	if chat.Object != "chat.completion" || chat.Model != "m" || !strings.HasPrefix(chat.ID, "chatcmpl-") {
		t.Errorf("chat response %+v", chat)
	}
	m := chat.Choices[0].Message
	if m == nil || m.Role != "assistant" || strings.HasPrefix(m.Content, " ") || len(strings.Fields(m.Content)) != 7 ||
		chat.Choices[0].FinishReason != "length" || chat.Choices[0].Text != nil {
		t.Errorf("chat choice %+v", chat.Choices[0])
	}
	if want := (usage{7, 7, 14, &promptTokensDetails{0}}); !reflect.DeepEqual(chat.Usage, want) {
		t.Errorf("chat usage %+v, want %+v", chat.Usage, want)
	}

	text := complete(t, r, "/v1/completions", completionsBody("Hello", map[string]any{"max_tokens": 3, "ignore_eos": true}))
	if text.Object != "text_completion" || text.Choices[0].Message != nil || len(strings.Fields(text.text())) != 3 {
		t.Errorf("completions response %+v", text)
	}
	if want := (usage{1, 3, 4, &promptTokensDetails{0}}); !reflect.DeepEqual(text.Usage, want) {
		t.Errorf("completions usage %+v, want %+v", text.Usage, want)
	}
}

// TestPromptTokens checks the prompt tokens of each kind of prompt, with
// each tokenizer: "bytes" counts ceil(bytes/4) per text, a tokenizer its
// tokens; chat adds 3 per message and 3 for the reply, and an image of
// at most 28×28 pixels 1.
func TestPromptTokens(t *testing.T) {
	chat := map[string]any{"messages": []map[string]any{
		{"role": "system", "content": "You are a terse assistant."},
		{"role": "assistant", "content": nil},
		{"role": "user", "content": []map[string]any{
			{"type": "text", "text": "Tell me"},
			{"type": "image_url", "image_url": map[string]any{"url": testImageURL(t, "png", 28, 28)}},
			{"type": "text", "text": " about tokenizers, please."},
		}},
	}}
	for _, name := range []string{TokenizerBytes, "cl100k_base", "o200k_base"} {
		t.Run(name, func(t *testing.T) {
			cfg := fastConfig()
			cfg.Tokenizer = name
			r := listen(t, cfg)
			count := func(text string) int { return (len(text) + 3) / 4 }
			if name != TokenizerBytes {
				tok, err := tokenizer.Load(name)
				if err != nil {
					t.Fatal(err)
				}
				count = func(text string) int {
					n, err := tok.Count(text)
					if err != nil {
						t.Fatal(err)
					}
					return n
				}
			}
			for _, tc := range []struct {
				name string
				path string
				body map[string]any
				want int
			}{
				{"empty string", "/v1/completions", completionsBody("", nil), 1},
				{"text", "/v1/completions", completionsBody("Once upon a time, in a land far away", nil), count("Once upon a time, in a land far away")},
				{"token ids", "/v1/completions", completionsBody([]int{1, 2, 3, 4, 5}, nil), 5},
				{"one-prompt array", "/v1/completions", completionsBody([]string{"12345678"}, nil), count("12345678")},
				{"one-ids array", "/v1/completions", completionsBody([][]int{{7, 8, 9}}, nil), 3},
				{"chat", "/v1/chat/completions", chat,
					3 + (3 + count("You are a terse assistant.")) + 3 + (3 + count("Tell me about tokenizers, please.") + 1)},
			} {
				tc.body["max_tokens"] = 1
				if got := complete(t, r, tc.path, tc.body).Usage.PromptTokens; got != tc.want {
					t.Errorf("%s: %d prompt tokens, want %d", tc.name, got, tc.want)
				}
			}
		})
	}
}

// TestPromptTokensEndpoints checks that every endpoint that reports
// prompt tokens counts them with the tokenizer: chat formats with their
// framing, plain prompts alone.
func TestPromptTokensEndpoints(t *testing.T) {
	const text = "Once upon a time, in a land far away, lived a tokenizer."
	tok, err := tokenizer.Load("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	n, err := tok.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	chat := tokensForReply + tokensPerMsg + n
	msgs := []map[string]any{{"role": "user", "content": text}}
	r := listen(t, fastConfig())
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		field      string // the JSON field that reports the prompt tokens
		want       int
	}{
		{"ollama chat", "/api/chat", map[string]any{"messages": msgs, "options": map[string]any{"num_predict": 1}}, "prompt_eval_count", chat},
		{"ollama generate", "/api/generate", map[string]any{"prompt": text, "options": map[string]any{"num_predict": 1}}, "prompt_eval_count", n},
		{"anthropic", "/v1/messages", map[string]any{"messages": msgs, "system": text, "max_tokens": 1}, "input_tokens", chat + n},
		{"triton", "/v2/models/m/generate", map[string]any{"text_input": text, "max_tokens": 1, "return_num_input_tokens": true}, "num_input_tokens", n},
		{"embeddings", "/v1/embeddings", map[string]any{"input": []string{text, text}, "dimensions": 4}, "prompt_tokens", 2 * n},
		{"rerank", "/v1/rerank", map[string]any{"query": text, "documents": []string{text, text}}, "total_tokens", 4 * n},
	} {
		resp, err := post(t.Context(), testClient(t), r.URL(), tc.path, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		i := strings.LastIndex(string(b), `"`+tc.field+`":`)
		if resp.StatusCode != http.StatusOK || i < 0 {
			t.Errorf("%s: %d %s", tc.name, resp.StatusCode, b)
			continue
		}
		var got int
		if err := json.NewDecoder(strings.NewReader(string(b[i+len(tc.field)+3:]))).Decode(&got); err != nil || got != tc.want {
			t.Errorf("%s: %s %d (%v), want %d", tc.name, tc.field, got, err, tc.want)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	cfg := fastConfig()
	cfg.Model = "sim-x"
	r := listen(t, cfg)
	c := testClient(t)

	resp, err := c.Get(r.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			Created     int64  `json:"created"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || list.Object != "list" || len(list.Data) != 1 ||
		list.Data[0].ID != "sim-x" || list.Data[0].Object != "model" || list.Data[0].MaxModelLen != cfg.MaxModelLen {
		t.Errorf("models: %d %+v", resp.StatusCode, list)
	}

	resp, err = c.Get(r.URL() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health: %d", resp.StatusCode)
	}
}

func TestBadRequests(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxModelLen, cfg.DefaultMaxTokens = 100, 50
	r := listen(t, cfg)
	c := testClient(t)
	for _, tc := range []struct {
		name, path, body, param string
	}{
		{"invalid JSON", "/v1/chat/completions", `{"messages":`, ""},
		{"not an object", "/v1/completions", `[1,2]`, ""},
		{"no messages", "/v1/chat/completions", `{"model":"m"}`, "messages"},
		{"empty messages", "/v1/chat/completions", `{"messages":[]}`, "messages"},
		{"bad content", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, ""},
		{"no prompt", "/v1/completions", `{"max_tokens":5}`, "prompt"},
		{"null prompt", "/v1/completions", `{"prompt":null}`, "prompt"},
		{"empty ids", "/v1/completions", `{"prompt":[]}`, ""},
		{"batched prompts", "/v1/completions", `{"prompt":["a","b"]}`, ""},
		{"max_tokens 0", "/v1/completions", `{"prompt":"a","max_tokens":0}`, "max_tokens"},
		{"n 2", "/v1/completions", `{"prompt":"a","n":2}`, "n"},
		{"min over max", "/v1/completions", `{"prompt":"a","max_tokens":5,"min_tokens":6}`, "min_tokens"},
		{"prompt too long", "/v1/completions", `{"prompt":"` + strings.Repeat("x ", 400) + `"}`, "prompt"},
		{"context exceeded", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":95}`, "messages"},
	} {
		resp, err := c.Post(r.URL()+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		err = json.Unmarshal(data, &e)
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if resp.StatusCode != http.StatusBadRequest || err != nil || e.Error.Message == "" ||
			e.Error.Type != "invalid_request_error" || param != tc.param {
			t.Errorf("%s: %d %s", tc.name, resp.StatusCode, data)
		}
	}
	if st := r.Server().Stats(); st.Rejected != 14 || st.Received != 0 {
		t.Errorf("stats %+v, want 14 rejected, none received", st)
	}

	resp, err := c.Get(r.URL() + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/chat/completions: %d", resp.StatusCode)
	}
}

func TestDeterministicOutput(t *testing.T) {
	texts := func(seed int64) []string {
		cfg := fastConfig()
		cfg.Seed = seed
		r := listen(t, cfg)
		var out []string
		for range 3 {
			short := map[string]any{"max_tokens": 20}
			out = append(out, mustStream(t, r, "/v1/chat/completions", chatBody("hi", short)).text())
			out = append(out, complete(t, r, "/v1/completions", completionsBody("hi", short)).text())
		}
		return out
	}
	a, b, c := texts(7), texts(7), texts(8)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("request %d differs with the same seed:\n%q\n%q", i, a[i], b[i])
		}
		if a[i] == c[i] {
			t.Errorf("request %d is the same with another seed: %q", i, a[i])
		}
	}
	if a[0] == a[2] {
		t.Errorf("requests 0 and 2 have the same text %q", a[0])
	}
}
