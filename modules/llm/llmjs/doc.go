// Package llmjs is the JavaScript binding of the LLM client (modules/llm):
// the module scripts import as 'llm'. It reads llm.client(),
// llm.stream() and llm.conversation()'s arguments into the client's
// Config and Request, refusing bad ones with a TypeError that names the
// option; it sends each request on the VU's goroutine, records its
// samples, hands what the run keeps of it to the run's Hooks (a Record
// for the outputs, the Result for a Go consumer, the outcome for the
// early stop, the arriving tokens for the live figures), and returns the
// Result to the script as an object made from Result's json tags
// (jsobject.go), one mapping computed once.
package llmjs
