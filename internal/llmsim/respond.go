package llmsim

import (
	"context"
	"net/http"
	"strings"
)

// usage is OpenAI's usage block, with prompt_tokens_details.cached_tokens
// (as vLLM gives it) when the prefix cache is on.
type usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// newUsage returns the usage of n.
func newUsage(n tokenCounts) usage {
	u := usage{PromptTokens: n.prompt, CompletionTokens: n.output, TotalTokens: n.prompt + n.output}
	if n.cached >= 0 {
		u.PromptTokensDetails = &promptTokensDetails{n.cached}
	}
	return u
}

// choice is the single choice of a whole response: Message for chat, Text
// for completions.
type choice struct {
	Index        int               `json:"index"`
	Message      *assistantMessage `json:"message,omitempty"`
	Text         *string           `json:"text,omitempty"`
	Logprobs     any               `json:"logprobs"`
	FinishReason string            `json:"finish_reason"`
}

// assistantMessage is a chat response's message.
type assistantMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls is the call of the tool the request required (toolcall.go).
	ToolCalls []wholeToolCall `json:"tool_calls,omitempty"`
}

// respond answers c with one JSON body once the engine has made all its
// tokens. It reports whether the client left before.
func (c *completion) respond(ctx context.Context, w http.ResponseWriter) (gaveUp bool) {
	total := c.seq.outputTokens
	for have := 0; have < total; {
		n, err := c.engine.wait(ctx, c.seq, have)
		if err != nil {
			if ctx.Err() != nil {
				return true
			}
			unavailable(err).write(w)
			return false
		}
		have = n
	}

	var b strings.Builder
	for range total {
		b.WriteString(c.text.word())
	}
	text := b.String()
	if c.api.whole != nil {
		writeJSON(w, http.StatusOK, c.api.whole(c, text))
		return false
	}
	ch := choice{FinishReason: c.finish}
	if c.api.chat {
		ch.Message = &assistantMessage{Role: "assistant", Content: text[1:]} // an answer starts without a space
		if c.job.toolCall != "" {
			ch.Message, ch.FinishReason = c.toolCallMessage(text[1:]), "tool_calls"
		}
	} else {
		ch.Text = &text
	}
	writeJSON(w, http.StatusOK, struct {
		ID      string    `json:"id"`
		Object  string    `json:"object"`
		Created int64     `json:"created"`
		Model   string    `json:"model"`
		Choices [1]choice `json:"choices"`
		Usage   usage     `json:"usage"`
	}{c.id, c.api.object, c.created, c.job.model, [1]choice{ch}, newUsage(c.counts())})
	return false
}
