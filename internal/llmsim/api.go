package llmsim

// api describes what differs between the chat and completions endpoints'
// responses.
type api struct {
	// parse reads and validates a request for s; nil means OpenAI's
	// (parseJob).
	parse func(data []byte, s *Server) (job, *apiError)
	// newEncoder returns the encoder of c's stream; nil means OpenAI's.
	newEncoder func(c *completion) encoder
	// whole returns the body of a whole (non-streamed) response with the
	// given text (which starts with a space); nil means OpenAI's.
	whole func(c *completion, text string) any
	// streamOnly refuses "stream": false (the formats whose whole
	// responses llmsim does not write).
	streamOnly  bool
	chat        bool
	idPrefix    string
	object      string // object of a whole (non-streamed) response
	chunkObject string // object of a stream chunk
	// Stream chunk pieces: a token chunk's choice is
	// textOpen + token + textClose + `"logprobs":null,"finish_reason":null`,
	// the final chunk's starts with finishOpen.
	textOpen, textClose, finishOpen string
}

var (
	chatAPI = &api{
		chat:        true,
		idPrefix:    "chatcmpl-",
		object:      "chat.completion",
		chunkObject: "chat.completion.chunk",
		textOpen:    `"delta":{"content":"`,
		textClose:   `"},`,
		finishOpen:  `"delta":{},`,
	}
	completionsAPI = &api{
		idPrefix:    "cmpl-",
		object:      "text_completion",
		chunkObject: "text_completion",
		textOpen:    `"text":"`,
		textClose:   `",`,
		finishOpen:  `"text":"",`,
	}
)

// encoder returns the encoder of c's stream.
func (a *api) encoder(c *completion) encoder {
	if a.newEncoder != nil {
		return a.newEncoder(c)
	}
	enc := openaiEncoder{newChunkEncoder(a, c.id, c.created, c.job.model, c.job.includeUsage), a.chat, c.job.includeUsage}
	if a.chat && c.job.toolCall != "" {
		return toolCallEncoder{enc, c.toolCallID(), c.job.toolCall}
	}
	return enc
}
