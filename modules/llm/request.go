package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/llmrun/llmrun/modules/metrics"
)

// prepared is a request ready to send.
type prepared struct {
	api    API
	proto  protocol
	url    string
	body   []byte
	stream bool
	model  string
	// modelVersion is the model version a Triton request names, if any.
	modelVersion string
	// arrived counts the output tokens as they arrive
	// (Request.Arrivals' counter of the model); nil when not counted.
	arrived *metrics.CounterShard
}

// prepare builds the JSON body of req with its API's adapter, leaving
// req.Body unchanged.
func (c *Client) prepare(req Request) (prepared, error) {
	api, err := c.requestAPI(req)
	if err != nil {
		return prepared{}, err
	}
	p := prepared{api: api, proto: protocols[api], stream: true}
	body := make(map[string]any, len(req.Body)+3)
	maps.Copy(body, req.Body)
	if err := mergeExtraBody(body); err != nil {
		return p, err
	}
	if err := p.proto.prepare(&p, body, c.model); err != nil {
		return p, err
	}
	p.url = c.endpoints[endpointKey{api, p.stream}]
	if m, ok := p.proto.(modelPather); ok {
		p.url = m.modelURL(p.url, p.model, p.modelVersion) // the model is in the path
	}
	if p.body, err = json.Marshal(body); err != nil {
		return p, fmt.Errorf("encoding the request body: %w", err)
	}
	return p, nil
}

// mergeExtraBody lifts the fields of "extra_body" into the body, as
// OpenAI's Python client does: the escape hatch for a server's own request
// fields. They replace fields of the same name.
func mergeExtraBody(body map[string]any) error {
	extra, ok := body["extra_body"]
	if !ok {
		return nil
	}
	m, ok := extra.(map[string]any)
	if !ok {
		return fmt.Errorf(`"extra_body" must be an object of fields to add to the request body, not %T`, extra)
	}
	delete(body, "extra_body")
	maps.Copy(body, m)
	return nil
}

// endpointKey indexes a client's endpoint URLs.
type endpointKey struct {
	api    API
	stream bool
}

// streamFlag reads the body's boolean "stream", setting it to true when
// absent; it returns the flag.
func streamFlag(body map[string]any) (bool, error) {
	v, ok := body["stream"]
	if !ok {
		body["stream"] = true
		return true, nil
	}
	stream, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf(`"stream" must be a boolean, not %T`, v)
	}
	return stream, nil
}

// defaultModel sets the body's "model" to model unless it names one, and
// returns the model named.
func defaultModel(body map[string]any, model string) string {
	if _, ok := body["model"]; !ok && model != "" {
		body["model"] = model
	}
	m, _ := body["model"].(string)
	return m
}

// requestAPI returns the API a request uses: the one it names, else the
// client's (Config.API), else ChatCompletions for a body with "messages",
// Completions for one with "prompt".
func (c *Client) requestAPI(req Request) (API, error) {
	api := req.API
	if api == "" {
		api = c.api
	}
	if api != "" {
		if _, ok := protocols[api]; !ok {
			return "", unknownAPI(api)
		}
		return api, nil
	}
	if _, ok := req.Body["messages"]; ok {
		return ChatCompletions, nil
	}
	if _, ok := req.Body["prompt"]; ok {
		return Completions, nil
	}
	return "", errors.New(`the request body needs "messages" (chat completions) or "prompt" (completions), or name its API (api option)`)
}

// unknownAPI is the error of an API name that is not one of APIs.
func unknownAPI(api API) error {
	names := make([]string, len(APIs))
	for i, a := range APIs {
		names[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Errorf("unknown API %q (want %s)", api, strings.Join(names, ", "))
}
