package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// tritonProtocol is NVIDIA Triton Inference Server's generate extension:
// POST /v2/models/{model}[/versions/{version}]/generate_stream, whose SSE
// events are each one response of the model, {"model_name": "...",
// "model_version": "1", "text_output": "..."} (the TensorRT-LLM and vLLM
// backends' output; "output" is read as well), or POST .../generate, one
// such object. The body maps the model's inputs and a "parameters" object:
// {"text_input": "...", "max_tokens": 64, "parameters": {"stream": true}}.
// Triton's stream has no terminator: it ends when the server closes it
// after the final response, so a stream cut between two events reads as a
// (shorter) complete one. An {"error": "..."} event is a stream error.
// Triton reports no token counts: output tokens are counted by chunks,
// unless the responses carry the vLLM backend's num_output_tokens (asked
// for with "return_num_output_tokens": true), summed over a stream's
// responses; num_input_tokens gives the prompt tokens.
type tritonProtocol struct{}

// tritonModelSlot stands for the model's path segments in the endpoints
// computed once per client; prepared.url replaces it per request.
const tritonModelSlot = "llmrun-triton-model"

// endpoint puts /v2/models/{model}/generate_stream or /generate under the
// server's root, with tritonModelSlot for the model.
func (tritonProtocol) endpoint(base *url.URL, _ API, stream bool) string {
	root := serverRoot(base, false)
	if stream {
		return root.JoinPath("v2", "models", tritonModelSlot, "generate_stream").String()
	}
	return root.JoinPath("v2", "models", tritonModelSlot, "generate").String()
}

// modelURL returns u, an endpoint, for the request's model: the body's
// "model" (taken out of the body, since Triton would take it for a model
// input) or the client's, and its "model_version", if any.
func (tritonProtocol) modelURL(u string, model, version string) string {
	seg := url.PathEscape(model)
	if version != "" {
		seg += "/versions/" + url.PathEscape(version)
	}
	return strings.Replace(u, tritonModelSlot, seg, 1)
}

// prepare takes "model" and "model_version" out of the body (they go in
// the path; a request needs a model, from the body or the client), picks
// the endpoint from parameters.stream, else the body's "stream" (an input
// of TensorRT-LLM's ensemble, left in the body), else streams; and sets
// parameters.stream to that choice unless it is set (the vLLM backend's
// streaming switch).
func (tritonProtocol) prepare(p *prepared, body map[string]any, model string) error {
	if m, ok := body["model"]; ok {
		s, ok := m.(string)
		if !ok {
			return fmt.Errorf(`"model" must be a string, not %T`, m)
		}
		model = s
		delete(body, "model")
	}
	if model == "" {
		return fmt.Errorf(`the triton API needs a model for its path /v2/models/{model}/...: give "model" in the body or the client's model option`)
	}
	p.model = model
	if v, ok := body["model_version"]; ok {
		switch v := v.(type) {
		case string:
			p.modelVersion = v
		case float64, int, int64:
			p.modelVersion = fmt.Sprint(v)
		default:
			return fmt.Errorf(`"model_version" must be a string or a number, not %T`, v)
		}
		delete(body, "model_version")
	}
	params, err := parametersOf(body)
	if err != nil {
		return err
	}
	p.stream = true
	if v, ok := params["stream"]; ok {
		s, ok := v.(bool)
		if !ok {
			return fmt.Errorf(`"parameters.stream" must be a boolean, not %T`, v)
		}
		p.stream = s
	} else if v, ok := body["stream"]; ok {
		s, ok := v.(bool)
		if !ok {
			return fmt.Errorf(`"stream" must be a boolean, not %T`, v)
		}
		p.stream = s
	}
	if _, ok := params["stream"]; !ok {
		params["stream"] = p.stream
	}
	body["parameters"] = params
	return nil
}

// tritonResponse is one event of a Triton stream, or a whole /generate
// response; fields other than these are ignored.
type tritonResponse struct {
	TextOutput      json.RawMessage `json:"text_output"`
	Output          json.RawMessage `json:"output"`
	NumOutputTokens json.RawMessage `json:"num_output_tokens"`
	NumInputTokens  json.RawMessage `json:"num_input_tokens"`
	FinishReason    json.RawMessage `json:"finish_reason"`
	Error           json.RawMessage `json:"error"`
}

// decodeTriton decodes one event's data or a response, checking the
// fields read.
func decodeTriton(data []byte, r *tritonResponse) error {
	*r = tritonResponse{}
	if err := json.Unmarshal(data, r); err != nil {
		return err
	}
	if _, err := tritonText(nil, r.TextOutput); err != nil {
		return fmt.Errorf("text_output: %w", err)
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"num_output_tokens", r.NumOutputTokens}, {"num_input_tokens", r.NumInputTokens}} {
		if _, err := tritonCount(f.raw); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// text returns the response's output: text_output, else output when it is
// text.
func (r *tritonResponse) text() json.RawMessage {
	if present(r.TextOutput) {
		return r.TextOutput
	}
	if len(r.Output) > 0 && (r.Output[0] == '"' || r.Output[0] == '[') {
		if _, err := tritonText(nil, r.Output); err == nil {
			return r.Output
		}
	}
	return nil
}

// tritonText appends a text output to dst: a string, or an array of
// strings (an output of more than one element), concatenated.
func tritonText(dst []byte, raw json.RawMessage) ([]byte, error) {
	if !present(raw) {
		return dst, nil
	}
	if raw[0] == '[' {
		var parts []string
		if err := json.Unmarshal(raw, &parts); err != nil {
			return dst, err
		}
		for _, s := range parts {
			dst = append(dst, s...)
		}
		return dst, nil
	}
	s, err := jsonString(raw)
	return append(dst, s...), err
}

// tritonCount reads a count output: a number from 0 to maxReportedTokens,
// or an array of one; absentCount when absent (or not a count).
func tritonCount(raw json.RawMessage) (int, error) {
	if !present(raw) {
		return absentCount, nil
	}
	var n int
	if raw[0] == '[' {
		var ns []int
		if err := json.Unmarshal(raw, &ns); err != nil || len(ns) != 1 {
			return absentCount, fmt.Errorf("want a count, got %s", snippet(raw))
		}
		n = ns[0]
	} else if err := json.Unmarshal(raw, &n); err != nil {
		return absentCount, fmt.Errorf("want a count, got %s", snippet(raw))
	}
	if n < 0 || n > maxReportedTokens {
		return absentCount, fmt.Errorf("want a count from 0 to %d, got %d", maxReportedTokens, n)
	}
	return n, nil
}

// tritonReason reads a finish_reason output: a string or an array of one.
func tritonReason(raw json.RawMessage) string {
	if !present(raw) {
		return ""
	}
	var parts []string
	if raw[0] == '[' && json.Unmarshal(raw, &parts) == nil && len(parts) > 0 {
		return parts[0]
	}
	s, _ := jsonString(raw)
	return s
}

// tritonTally accumulates the counts and finish reason of a response's
// events.
type tritonTally struct {
	output, input int // absentCount: none seen
	reason        string
}

func (t *tritonTally) add(r *tritonResponse) {
	if n, _ := tritonCount(r.NumOutputTokens); n != absentCount { // checked by decodeTriton
		t.output = sumCounts(max(t.output, 0), n)
	}
	if n, _ := tritonCount(r.NumInputTokens); n != absentCount {
		t.input = n
	}
	if s := tritonReason(r.FinishReason); s != "" {
		t.reason = s
	}
}

// finish fills res's counts and finish reason.
func (t *tritonTally) finish(res *Result) {
	var reported *int
	if t.output != absentCount {
		reported = &t.output
	}
	if t.input != absentCount {
		res.PromptTokens = t.input
	}
	res.FinishReason = t.reason
	finishOutput(res, reported)
}

// read reads an SSE stream, or a whole JSON response.
func (tritonProtocol) read(rr *responseReader, contentType string, body io.Reader, keepText bool, res *Result) error {
	return readSSEOrJSON(contentType, res,
		func() error { return rr.readTriton(body, keepText, res) },
		func() error { return rr.readTritonJSON(body, keepText, res) })
}

// readTriton reads a /generate_stream response: every event with output
// text is one token-bearing chunk, timestamped as it is parsed. The stream
// ends well when it closes between events, after at least one.
func (rr *responseReader) readTriton(body io.Reader, keepText bool, res *Result) error {
	rr.triton = tritonStream{tally: tritonTally{output: absentCount, input: absentCount}}
	s := &rr.triton
	return rr.readStream(rr.sseReader(body), s, res.Start, keepText, res)
}

// tritonStream is the stream format of Triton's generate_stream: its
// state is the response last decoded, the counts of those seen, and how
// many events had data (events without data are not counted).
type tritonStream struct {
	r      tritonResponse
	tally  tritonTally
	events int
}

func (s *tritonStream) unit(rr *responseReader, u streamUnit, _ int, now time.Duration, res *Result) (bool, error) {
	if u.typ == "error" {
		return false, errorEventFailure(u.data)
	}
	data := bytes.TrimSpace(u.data)
	if len(data) == 0 {
		return false, nil
	}
	s.events++
	if err := decodeTriton(data, &s.r); err != nil {
		return false, eventDecodeFailure(s.events, err, data)
	}
	if present(s.r.Error) {
		return false, streamErrorFailure(s.r.Error)
	}
	text := s.r.text()
	rr.tc.tick(res, now, false, present(text))
	if rr.keepText {
		rr.text, _ = tritonText(rr.text, text) // checked by decodeTriton
		rr.text = rr.bound(rr.text)
	}
	s.tally.add(&s.r)
	return false, nil
}

// end ends well a stream closed between events, after at least one.
func (s *tritonStream) end(rr *responseReader, err error, _ int, res *Result) error {
	if err == io.EOF && s.events > 0 {
		s.tally.finish(res)
		rr.keepTextIn(res)
		return nil
	}
	return &failure{ErrCut, fmt.Errorf("the stream ended after %d events, inside an event or before any: %w", s.events, io.ErrUnexpectedEOF)}
}

// readTritonJSON reads a whole /generate response.
func (rr *responseReader) readTritonJSON(body io.Reader, keepText bool, res *Result) error {
	var r tritonResponse
	if err := rr.readWhole(body, res.Start, res, func(doc []byte) error { return decodeTriton(doc, &r) }); err != nil {
		return err
	}
	if present(r.Error) {
		return responseErrorFailure(r.Error)
	}
	text := r.text()
	whole(res, false, present(text))
	tally := tritonTally{output: absentCount, input: absentCount}
	tally.add(&r)
	tally.finish(res)
	if keepText {
		b, _ := tritonText(nil, text)
		res.Text = string(b)
	}
	return nil
}

// Triton is NVIDIA Triton Inference Server's generate extension: POST
// /v2/models/{model}/generate_stream (SSE), or .../generate when
// parameters.stream (or the body's "stream") is false.
const Triton API = "triton"

// modelPather is an adapter whose endpoint has the model in its path.
type modelPather interface {
	modelURL(u, model, version string) string
}
