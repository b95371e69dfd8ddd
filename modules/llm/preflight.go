package llm

import (
	"context"
	"fmt"
	"net/url"
	"slices"
)

// probeMaxTokens bounds the answer of a preflight request: enough for a
// reasoning model to show its reasoning fields, small enough to cost
// nothing.
const probeMaxTokens = 16

// Probe is what one small request sent before a run (the preflight)
// showed of a target: whether it answers, and how it streams. Its figures
// are in no statistic of the run.
type Probe struct {
	// Target is the base URL the client sends to, without secrets; API
	// and Model are those of the probe's request.
	Target string `json:"target"`
	API    API    `json:"api"`
	Model  string `json:"model,omitempty"`
	OK     bool   `json:"ok"`
	// Status, Class and Error describe a failed probe (Status 0: no
	// response).
	Status int        `json:"status,omitempty"`
	Class  ErrorClass `json:"error_class,omitempty"`
	Error  string     `json:"error,omitempty"`
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

// Probe sends one small streamed request to the client's server, with its
// default model and API (chat when it has none), and reports what it
// showed. ctx bounds it, besides the client's own timeout.
func (c *Client) Probe(ctx context.Context) Probe {
	api := c.api
	if api == "" {
		api = ChatCompletions
	}
	p := Probe{Target: redactedURL(c.base), API: api, Model: c.model}
	res := c.Stream(ctx, Request{API: api, Body: probeBody(api)})
	if res.Model != "" {
		p.Model = res.Model
	}
	p.OK, p.Status, p.Class, p.Error = res.OK, res.Status, res.Class, res.Error
	if !res.OK {
		p.Fatal, p.Fix = fatal(res, p.Target)
		if (res.Status == 401 || res.Status == 403) && !c.sendsCredentials() {
			p.Fix = "the server asks for credentials and the run sent none: export the API key in OPENAI_API_KEY, or in a variable of your own named with --api-key-env (a script's client: llm.client({ apiKey }) or headers)"
		}
		if p.Class == ErrHTTP4xx && p.Model != "" {
			p.ModelListed = c.modelListed(ctx, p.Model)
			if p.ModelListed == "no" {
				p.Fix = fmt.Sprintf("the server does not serve model %q (see %s): pass --model with one it lists", p.Model, c.models)
			}
		}
		return p
	}
	p.TTFT, p.E2E, p.Stream = res.TTFT, res.E2E, res.Stream
	p.UsageReported = res.TokenSource == TokensFromUsage
	p.OutputTokens = res.OutputTokens
	if p.UsageReported && res.Chunks > 0 && res.Stream {
		p.TokensPerChunk = float64(res.OutputTokens) / float64(res.Chunks)
	}
	p.Reasoning = res.ReasoningChunks > 0 || res.ReasoningTokens > 0
	p.PrefixCacheReported = res.cachedReported
	return p
}

// probeBody is the body of a preflight request in api's format: a short
// question, a small answer, no sampling; nothing engine-specific
// (ignore_eos), which some servers refuse.
func probeBody(api API) map[string]any {
	const question = "Reply with one word: hello."
	messages := []any{map[string]any{"role": "user", "content": question}}
	switch api {
	case Completions:
		return map[string]any{"prompt": question, "max_tokens": probeMaxTokens, "temperature": 0}
	case OllamaChat:
		return map[string]any{"messages": messages, "options": map[string]any{"num_predict": probeMaxTokens, "temperature": 0}}
	case OllamaGenerate:
		return map[string]any{"prompt": question, "options": map[string]any{"num_predict": probeMaxTokens, "temperature": 0}}
	case TGI:
		return map[string]any{"inputs": question, "parameters": map[string]any{"max_new_tokens": probeMaxTokens}}
	case Triton:
		return map[string]any{"text_input": question, "max_tokens": probeMaxTokens}
	case Embeddings:
		return map[string]any{"input": question}
	case Rerank:
		return map[string]any{"query": question, "documents": []any{"hello"}}
	case TEIRerank:
		return map[string]any{"query": question, "texts": []any{"hello"}}
	case Responses:
		return map[string]any{"input": question, "max_output_tokens": probeMaxTokens, "temperature": 0}
	default: // chat, anthropic
		return map[string]any{"messages": messages, "max_tokens": probeMaxTokens, "temperature": 0}
	}
}

// sendsCredentials says whether the client's requests carry anything
// that may be a credential: an API key, a header of the user's, or a user
// in the base URL.
func (c *Client) sendsCredentials() bool {
	for k := range c.header {
		if k != "Content-Type" && k != "User-Agent" {
			return true
		}
	}
	return c.base != nil && c.base.User != nil
}

// fatal says whether a failed probe shows a fault that no load could fix,
// and what to fix.
func fatal(res *Result, target string) (bool, string) {
	switch res.Class {
	case ErrConnect:
		return true, fmt.Sprintf("nothing accepts connections at %s: start the server, or correct --base-url (host and port)", target)
	case ErrDNS:
		return true, fmt.Sprintf("the host name of %s does not resolve: correct --base-url", target)
	case ErrTLS:
		return true, "the TLS handshake failed: check http:// against https://; to trust a private CA, give a script's client llm.client({ tls: { caFile: 'ca.pem' } }), and for --base-url add the CA to the system's trust store (or, on Linux, set SSL_CERT_FILE to a PEM bundle, which replaces the system's)"
	case ErrInvalidRequest:
		return true, "llmrun could not build the request: " + res.Error
	case ErrDecode:
		if res.answeredNothing {
			return true, fmt.Sprintf("%s answered the preflight's request for up to %d tokens with no token, which no load explains: check that it serves the model (--model) and generates; --no-preflight runs anyway, and every request of the run then fails the same way (decode)", target, probeMaxTokens)
		}
		return true, fmt.Sprintf("the answer is not one of the %s API: is %s a serving endpoint, and the API (llm.client({ api })) the server's?", res.API, target)
	case ErrHTTP4xx:
		switch res.Status {
		case 401, 403:
			return true, "the server refused the credentials: put the API key in an environment variable and name it with --api-key-env (default OPENAI_API_KEY)"
		case 404:
			return true, fmt.Sprintf("not found: check the path of --base-url (llmrun adds /v1/... to %s) and the model", target)
		default:
			return true, "the server refused the request: see its message"
		}
	}
	// Timeouts, 429, 5xx and cut streams may pass once the server has
	// warmed up or has room: the run goes on, and shows them.
	return false, ""
}

// modelListed reports whether the server's model list (GET /v1/models)
// names model: "yes", "no", or "" when there is no list to ask.
func (c *Client) modelListed(ctx context.Context, model string) string {
	models, err := c.Models(ctx)
	switch {
	case err != nil:
		return ""
	case slices.Contains(models, model):
		return "yes"
	default:
		return "no"
	}
}

// RedactURL returns raw with its user info's password and every query
// value hidden (API keys sometimes travel there), so that it can be
// printed and stored; raw as it is when it is not a URL.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return raw
	}
	return redactedURL(u)
}

// redactedURL is u as RedactURL shows it.
func redactedURL(u *url.URL) string {
	c := *u
	if q := c.Query(); len(q) > 0 {
		for k := range q {
			q.Set(k, "xxxxx")
		}
		c.RawQuery = q.Encode()
	}
	return c.Redacted()
}
