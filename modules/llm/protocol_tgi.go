package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"time"
)

// tgiProtocol is Hugging Face Text Generation Inference's native API:
// POST /generate_stream, whose SSE events each carry one token,
// {"token": {"id", "text", "logprob", "special"}, "generated_text": null,
// "details": null}, the last one with the whole "generated_text" and
// "details" {"finish_reason", "generated_tokens", ...}; or POST /generate
// ("stream": false in the body), one JSON object with "generated_text"
// and "details". The body is {"inputs": "...", "parameters": {...}}.
type tgiProtocol struct{}

// endpoint puts /generate_stream or /generate under the server's root.
func (tgiProtocol) endpoint(base *url.URL, _ API, stream bool) string {
	root := serverRoot(base, false)
	if stream {
		return root.JoinPath("generate_stream").String()
	}
	return root.JoinPath("generate").String()
}

// prepare takes "stream" out of the body (it picks the endpoint; true
// when absent) and sets parameters.details to true unless the body sets
// it, so that the final event brings the generated token count. TGI's
// requests name no model: the client's is only the model reported.
func (tgiProtocol) prepare(p *prepared, body map[string]any, model string) error {
	var err error
	if p.stream, err = streamFlag(body); err != nil {
		return err
	}
	delete(body, "stream")
	params, err := parametersOf(body)
	if err != nil {
		return err
	}
	if _, ok := params["details"]; !ok {
		params["details"] = true
	}
	body["parameters"] = params
	p.model = model
	if m, ok := body["model"].(string); ok {
		p.model = m
	}
	return nil
}

// tgiEvent is one event of a TGI stream, or a whole /generate response.
type tgiEvent struct {
	Token *struct {
		Text    json.RawMessage `json:"text"`
		Special bool            `json:"special"`
	} `json:"token"`
	GeneratedText json.RawMessage `json:"generated_text"`
	Details       *struct {
		FinishReason    string `json:"finish_reason"`
		GeneratedTokens *int   `json:"generated_tokens"`
	} `json:"details"`
	Error json.RawMessage `json:"error"`
}

// decodeTGI decodes one event's data or a response.
func decodeTGI(data []byte, e *tgiEvent) error {
	*e = tgiEvent{}
	if err := json.Unmarshal(data, e); err != nil {
		return err
	}
	if e.Token != nil && len(e.Token.Text) > 0 && string(e.Token.Text) != "null" {
		if _, err := jsonString(e.Token.Text); err != nil {
			return fmt.Errorf("token text: %w", err)
		}
	}
	return nil
}

// final reports whether the event ends the stream: it has the generated
// text or details.
func (e *tgiEvent) final() bool {
	return present(e.GeneratedText) || string(e.GeneratedText) == `""` || e.Details != nil
}

// read reads an SSE stream, or a whole JSON response.
func (tgiProtocol) read(rr *responseReader, contentType string, body io.Reader, keepText bool, res *Result) error {
	return readSSEOrJSON(contentType, res,
		func() error { return rr.readTGI(body, keepText, res) },
		func() error { return rr.readTGIJSON(body, keepText, res) })
}

// tgiFinish fills res's finish reason and token counts from the final
// event.
func tgiFinish(e *tgiEvent, res *Result) {
	var generated *int
	if e.Details != nil {
		res.FinishReason, generated = e.Details.FinishReason, e.Details.GeneratedTokens
	}
	finishOutput(res, generated)
}

// readTGI reads a /generate_stream response: every event with a
// non-special token is one token, timestamped as it is parsed.
func (rr *responseReader) readTGI(body io.Reader, keepText bool, res *Result) error {
	rr.tgi = tgiStream{}
	return rr.readStream(rr.sseReader(body), &rr.tgi, res.Start, keepText, res)
}

// tgiStream is the stream format of /generate_stream: its state is the
// event last decoded.
type tgiStream struct{ e tgiEvent }

func (s *tgiStream) unit(rr *responseReader, u streamUnit, n int, now time.Duration, res *Result) (bool, error) {
	data := bytes.TrimSpace(u.data)
	if len(data) == 0 {
		return false, nil
	}
	if u.typ == "error" {
		return false, errorEventFailure(data)
	}
	if err := decodeTGI(data, &s.e); err != nil {
		return false, eventDecodeFailure(n+1, err, data)
	}
	if present(s.e.Error) {
		return false, streamErrorFailure(s.e.Error)
	}
	token := s.e.Token != nil && !s.e.Token.Special
	rr.tc.tick(res, now, false, token)
	if token && rr.keepText && present(s.e.Token.Text) {
		rr.appendKept(s.e.Token.Text) // checked by decodeTGI
	}
	if !s.e.final() {
		return false, nil
	}
	tgiFinish(&s.e, res)
	rr.keepTextIn(res)
	return true, nil
}

// end fails every stream that stopped before its final event.
func (*tgiStream) end(_ *responseReader, err error, n int, _ *Result) error {
	return &failure{ErrCut, fmt.Errorf("the stream ended after %d events, before the final one (generated_text, details): %w", n, err)}
}

// readTGIJSON reads a whole /generate response.
func (rr *responseReader) readTGIJSON(body io.Reader, keepText bool, res *Result) error {
	var e tgiEvent
	if err := rr.readWhole(body, res.Start, res, func(doc []byte) error { return decodeTGI(doc, &e) }); err != nil {
		return err
	}
	if present(e.Error) {
		return responseErrorFailure(e.Error)
	}
	answer := present(e.GeneratedText)
	whole(res, false, answer)
	tgiFinish(&e, res)
	if keepText && answer {
		text, err := jsonString(e.GeneratedText)
		if err != nil {
			return &failure{ErrDecode, fmt.Errorf("generated_text: %w", err)}
		}
		res.Text = text
	}
	return nil
}
