package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
)

// prepared is a request ready to send.
type prepared struct {
	api    API
	url    string
	body   []byte
	stream bool
	model  string
}

// prepare builds the JSON body of req, leaving req.Body unchanged: it adds
// "stream": true unless the body sets "stream", "stream_options":
// {"include_usage": true} to a streaming request that does not set
// "stream_options", and the client's model unless the body names one.
func (c *Client) prepare(req Request) (prepared, error) {
	api, err := requestAPI(req)
	if err != nil {
		return prepared{}, err
	}
	p := prepared{api: api, url: c.endpoints[api], stream: true}
	body := make(map[string]any, len(req.Body)+3)
	maps.Copy(body, req.Body)
	if v, ok := body["stream"]; ok {
		if p.stream, ok = v.(bool); !ok {
			return p, fmt.Errorf(`"stream" must be a boolean, not %T`, v)
		}
	} else {
		body["stream"] = true
	}
	if _, ok := body["stream_options"]; p.stream && !ok {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	if _, ok := body["model"]; !ok && c.model != "" {
		body["model"] = c.model
	}
	p.model, _ = body["model"].(string)
	if p.body, err = json.Marshal(body); err != nil {
		return p, fmt.Errorf("encoding the request body: %w", err)
	}
	return p, nil
}

// requestAPI returns the API a request uses: the one it names, else
// ChatCompletions for a body with "messages", Completions for one with
// "prompt".
func requestAPI(req Request) (API, error) {
	switch req.API {
	case ChatCompletions, Completions:
		return req.API, nil
	case "":
	default:
		return "", fmt.Errorf("unknown API %q (want %q or %q)", req.API, ChatCompletions, Completions)
	}
	if _, ok := req.Body["messages"]; ok {
		return ChatCompletions, nil
	}
	if _, ok := req.Body["prompt"]; ok {
		return Completions, nil
	}
	return "", errors.New(`the request body needs "messages" (chat completions) or "prompt" (completions)`)
}
