package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
)

// embeddingsProtocol is OpenAI's embeddings: POST /v1/embeddings with
// {"model", "input"} (a string, an array of strings, an array of token
// ids or an array of such arrays), answered with one JSON object:
// {"object": "list", "data": [{"object": "embedding", "index": 0,
// "embedding": [0.1, ...]}], "model": "...", "usage": {"prompt_tokens",
// "total_tokens"}}. Nothing is streamed nor generated: the Result has E2E
// (TTFT, TPOT and ITL are not applicable and stay 0, with no samples),
// the prompt tokens from usage, and the number of vectors and their
// dimension. An "embedding" given as a base64 string
// ("encoding_format": "base64") counts 4 bytes (a float32) per dimension.
type embeddingsProtocol struct{}

// endpoint puts /embeddings under the API root, which ends in "/v1".
func (embeddingsProtocol) endpoint(base *url.URL, _ API, _ bool) string {
	root := v1Root(base)
	return root.JoinPath("embeddings").String()
}

// prepare adds the client's model unless the body names one; the request
// is never streamed, and a body's "stream" is refused.
func (embeddingsProtocol) prepare(p *prepared, body map[string]any, model string) error {
	if _, ok := body["stream"]; ok {
		return fmt.Errorf(`the embeddings API does not stream: remove "stream" from the body`)
	}
	if _, ok := body["input"]; !ok {
		return fmt.Errorf(`the embeddings API needs "input" in the body`)
	}
	p.stream = false
	p.model = defaultModel(body, model)
	return nil
}

// embeddingsResponse is a whole embeddings response.
type embeddingsResponse struct {
	Data []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// read reads the whole JSON response.
func (embeddingsProtocol) read(rr *responseReader, contentType string, body io.Reader, _ bool, res *Result) error {
	if !isJSON(mediaType(contentType)) {
		return contentTypeError(res, contentType, "application/json")
	}
	var r embeddingsResponse
	if err := rr.readWhole(body, res.Start, res, func(doc []byte) error { return json.Unmarshal(doc, &r) }); err != nil {
		return err
	}
	if present(r.Error) {
		return responseErrorFailure(r.Error)
	}
	if r.Data == nil {
		return &failure{ErrDecode, fmt.Errorf(`response without "data": %s`, snippet(rr.body))}
	}
	res.Embeddings = len(r.Data)
	for i, d := range r.Data {
		n, err := embeddingDimension(d.Embedding)
		if err != nil {
			return &failure{ErrDecode, fmt.Errorf("data[%d].embedding: %w", i, err)}
		}
		if i > 0 && n != res.Dimensions {
			return &failure{ErrDecode, fmt.Errorf("data[%d].embedding has %d dimensions, data[0] %d", i, n, res.Dimensions)}
		}
		res.Dimensions = n
	}
	if r.Usage != nil {
		res.PromptTokens = r.Usage.PromptTokens
	}
	return nil
}

// embeddingDimension counts an embedding's elements: an array of numbers
// (already checked as JSON, so its commas count them) or a base64 string
// of float32s.
func embeddingDimension(raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return 0, fmt.Errorf("missing")
	case raw[0] == '"':
		s, err := jsonString(raw)
		if err != nil {
			return 0, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return 0, fmt.Errorf("base64: %w", err)
		}
		if len(b)%4 != 0 {
			return 0, fmt.Errorf("%d bytes of base64, not float32s", len(b))
		}
		return len(b) / 4, nil
	case raw[0] == '[':
		inner := bytes.TrimSpace(raw[1 : len(raw)-1])
		if len(inner) == 0 {
			return 0, nil
		}
		if bytes.ContainsAny(inner, "[{\"") {
			return 0, fmt.Errorf("want an array of numbers, got %s", snippet(raw))
		}
		return bytes.Count(inner, []byte{','}) + 1, nil
	}
	return 0, fmt.Errorf("want an array of numbers or a base64 string, got %s", snippet(raw))
}

// Embeddings is OpenAI's POST /v1/embeddings: one JSON response, no
// tokens generated.
const Embeddings API = "embeddings"
