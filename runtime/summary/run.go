package summary

// ErrorCount is one distinct error message and how often it happened: a
// script error, or one message of a class of failed requests. Messages
// that differ only by ids are one (internal/errorkey), shown as the first
// seen.
type ErrorCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// ChainStop is a chain of scenarios (startAfter) stopped before its end:
// a sweep stopped by options.capacity.stop.
type ChainStop struct {
	// After is the scenario whose end stopped the chain, Reason why.
	After  string `json:"after"`
	Reason string `json:"reason"`
	// Skipped are the scenarios that started after it, directly or not,
	// and so never started, in the order they would have.
	Skipped []string `json:"skipped"`
}

// Probe is what one small request sent before a run (the preflight)
// showed of a target: whether it answers, and how it streams. Its figures
// are in no statistic of the run.
type Probe struct {
	// Target is the base URL the client sends to, without secrets; API
	// (an llm API name: "chat", "completions", ...) and Model are those
	// of the probe's request.
	Target string `json:"target"`
	API    string `json:"api"`
	Model  string `json:"model,omitempty"`
	OK     bool   `json:"ok"`
	// Status, Class and Error describe a failed probe (Status 0: no
	// response; Class an error class: "http_5xx", "timeout", ...).
	Status int    `json:"status,omitempty"`
	Class  string `json:"error_class,omitempty"`
	Error  string `json:"error,omitempty"`
	// Fatal says that the failure is one load cannot fix (refused, DNS,
	// TLS, a 4xx other than 429, an unknown model, an answer that is not
	// the API's, a stream with no token in it): the run must not start.
	// Fix says what to change.
	Fatal bool   `json:"fatal,omitempty"`
	Fix   string `json:"fix,omitempty"`
	// ModelListed is "yes" when the server's model list names Model, "no"
	// when it lists others, "" when it has no list or none was needed.
	ModelListed string `json:"model_listed,omitempty"`
	// TTFT and E2E are the probe's own, in milliseconds.
	TTFT float64 `json:"ttft_ms,omitempty"`
	E2E  float64 `json:"e2e_ms,omitempty"`
	// Stream says whether the answer was streamed; UsageReported whether
	// it carried the server's token counts (else llmrun counts chunks or
	// uses --tokenizer); TokensPerChunk is output tokens per token-bearing
	// chunk (> 1: the server batches tokens into chunks, and ITL measures
	// chunks); Reasoning whether reasoning fields came (TTFT then differs
	// from TTFO); PrefixCacheReported whether the usage reports the
	// prompt tokens served from a prefix cache.
	Stream              bool    `json:"stream"`
	UsageReported       bool    `json:"usage_reported"`
	OutputTokens        int     `json:"output_tokens,omitempty"`
	TokensPerChunk      float64 `json:"tokens_per_chunk,omitempty"`
	Reasoning           bool    `json:"reasoning"`
	PrefixCacheReported bool    `json:"prefix_cache_reported"`
}
