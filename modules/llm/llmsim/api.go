package llmsim

// api describes what differs between the chat and completions endpoints'
// responses.
type api struct {
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
