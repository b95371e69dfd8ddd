package llm

import (
	"io"
	"net/url"
	"strings"
)

// openaiProtocol is OpenAI's chat completions (POST /v1/chat/completions)
// and completions (POST /v1/completions): SSE chunks ending with
// "data: [DONE]", or a whole JSON response.
type openaiProtocol struct{}

// endpoint puts the path under the API root, which ends in "/v1".
func (openaiProtocol) endpoint(base *url.URL, api API, _ bool) string {
	root := v1Root(base)
	if api == Completions {
		return root.JoinPath("completions").String()
	}
	return root.JoinPath("chat", "completions").String()
}

// includeUsage is the "stream_options" openaiProtocol adds, one value for
// every request, never changed: the body that holds it is only encoded.
var includeUsage = map[string]any{"include_usage": true}

// prepare adds "stream": true unless the body sets "stream",
// "stream_options": {"include_usage": true} to a streaming request that
// does not set "stream_options", and the client's model unless the body
// names one.
func (openaiProtocol) prepare(p *prepared, body map[string]any, model string) error {
	var err error
	if p.stream, err = streamFlag(body); err != nil {
		return err
	}
	if _, ok := body["stream_options"]; p.stream && !ok {
		body["stream_options"] = includeUsage
	}
	p.model = defaultModel(body, model)
	return nil
}

// read reads an event stream, or a whole JSON response (asked for with
// "stream": false, or a server that does not stream).
func (openaiProtocol) read(rr *responseReader, contentType string, body io.Reader, keepText bool, res *Result) error {
	return readSSEOrJSON(contentType, res,
		func() error { return rr.readSSE(body, res.Start, keepText, res) },
		func() error { return rr.readJSON(body, res.Start, keepText, res) })
}

// isJSON reports whether a media type is JSON's.
func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}
