package llmjs

import "github.com/dop251/goja"

// setResponsesInput sets the input of a Responses API turn whose user
// message is content (the last of the history): with the server storing
// its responses (the default), only content, continuing the last reply by
// its previous_response_id, the system message as the "instructions" of
// every turn (the Responses API does not carry them over to the response
// that continues); with "store": false in the body, which keeps nothing
// to continue, the whole history as message items, the system message
// first. So does a turn after a reply that came without an id (a
// server or gateway that keeps none): there is nothing to continue.
func (c *conversation) setResponsesInput(rt *goja.Runtime, req *goja.Object, content string) {
	store := req.Get("store")
	if given(store) && !store.ToBoolean() || c.lastResponse == "" && len(c.history) > 1 {
		must(req.Set("input", c.messagesArray(rt)))
		return
	}
	if c.system != "" && !given(req.Get("instructions")) {
		must(req.Set("instructions", c.system))
	}
	must(req.Set("input", content))
	if c.lastResponse != "" {
		must(req.Set("previous_response_id", c.lastResponse))
	}
}
