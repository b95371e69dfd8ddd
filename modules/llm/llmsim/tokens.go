package llmsim

// Prompt token approximation; see the package documentation.
const (
	bytesPerToken  = 4
	tokensPerMsg   = 3 // each chat message's framing (role, separators)
	tokensForReply = 3 // the priming of the assistant's reply
)

// textTokens approximates the tokens of a text of n bytes: ceil(n/4), at
// least 1.
func textTokens(n int) int {
	return max(1, (n+bytesPerToken-1)/bytesPerToken)
}

// chatTokens approximates the prompt tokens of a chat conversation.
func chatTokens(msgs []chatMessage) int {
	n := tokensForReply
	for _, m := range msgs {
		n += tokensPerMsg
		if m.Content > 0 {
			n += textTokens(int(m.Content))
		}
	}
	return n
}
