package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/llmrun/llmrun/internal/jsonstr"
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
	// documents is the number of documents a rerank request sends.
	documents int
	// arrived counts the output tokens as they arrive
	// (Request.Arrivals' counter of the model); nil when not counted.
	arrived *metrics.CounterShard
	// result, when set, is the Result each attempt fills rather than a
	// new one, and itl the empty slice its ITL starts as (StreamInto).
	result *Result
	itl    []float64
	// images are what the body sends of images.
	images imageFigures
}

// prepare builds the JSON body of req into p with its API's adapter, leaving
// req.Body unchanged: it prepares a copy of its top level. The body may
// be the caller's, or a script object's own Go map (an object of
// llmrun/config exports to the map behind it), which the request must
// not change.
func (c *Client) prepare(req *Request, p *prepared) error {
	api, err := c.requestAPI(req)
	if err != nil {
		return err
	}
	*p = prepared{api: api, proto: protocols[api], stream: true}
	body := bodyMaps.Get().(map[string]any)
	defer putBodyMap(body)
	maps.Copy(body, req.Body)
	if err := mergeExtraBody(body); err != nil {
		return err
	}
	if err := p.proto.prepare(p, body, c.model); err != nil {
		return err
	}
	if p.images, err = countImages(body); err != nil {
		return err
	}
	p.url = c.endpoints[endpointKey{api, p.stream}]
	if m, ok := p.proto.(modelPather); ok {
		p.url = m.modelURL(p.url, p.model, p.modelVersion) // the model is in the path
	}
	if p.body, err = encodeBody(body); err != nil {
		return fmt.Errorf("encoding the request body: %w", err)
	}
	return nil
}

// bodyMaps are the maps prepare copies bodies' top levels to. A copy is
// needed only until encoded (what prepare keeps of it are strings), so
// one serves request after request.
var bodyMaps = sync.Pool{New: func() any { return make(map[string]any, 8) }}

// maxPooledBodyKeys bounds the maps bodyMaps keeps: one a body of more
// top-level fields grew is left to the collector.
const maxPooledBodyKeys = 32

// putBodyMap gives body back to bodyMaps, emptied.
func putBodyMap(body map[string]any) {
	if len(body) <= maxPooledBodyKeys {
		clear(body)
		bodyMaps.Put(body)
	}
}

// encodeBody is json.Marshal(body), byte for byte, without its reflection
// over every map entry (two allocations each, and a sort): the values a
// script's object exports to (maps, arrays, strings, numbers, booleans
// and null) are appended directly, by a pooled bodyEncoder; any other
// value goes through encoding/json, as do the bodies that would fail
// there.
func encodeBody(body map[string]any) ([]byte, error) {
	e := bodyEncoders.Get().(*bodyEncoder)
	e.buf = e.buf[:0]
	ok := e.value(body, 0)
	var out []byte
	if ok {
		out = bytes.Clone(e.buf)
	}
	if cap(e.buf) <= maxPooledBuffer && cap(e.keys) <= maxPooledKeys { // put back only once done with buf
		bodyEncoders.Put(e)
	}
	if !ok {
		return json.Marshal(body)
	}
	return out, nil
}

// bodyEncoder appends a body's JSON to buf. keys holds the keys of the
// objects being appended, one after the other, each object's sorted: in
// a frame of its own, each object's keys made every level of a body's
// nesting some 600 bytes deep on the VU's stack.
type bodyEncoder struct {
	buf  []byte
	keys []string
}

// bodyEncoders are the encoders of encodeBody; one whose buffer a huge
// prompt grew past maxPooledBuffer, or whose keys a huge object grew past
// maxPooledKeys, is left to the collector, not kept.
var bodyEncoders = sync.Pool{New: func() any { return new(bodyEncoder) }}

// maxPooledKeys bounds the keys' slice a pooled bodyEncoder keeps (4 KiB).
const maxPooledKeys = 256

// maxBodyDepth is the deepest nesting bodyEncoder.value encodes itself; deeper
// (a cycle included) is left to encoding/json and its error.
const maxBodyDepth = 64

// value appends v as encoding/json encodes it; false when v holds a value
// it leaves to encoding/json: another type, a NaN or an infinity, or
// nesting deeper than maxBodyDepth.
func (e *bodyEncoder) value(v any, depth int) bool {
	if depth > maxBodyDepth {
		return false
	}
	ok := true
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, v)
	case string:
		e.buf = jsonstr.Append(e.buf, v, true)
	case int64:
		e.buf = strconv.AppendInt(e.buf, v, 10)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case float64:
		e.buf, ok = appendJSONFloat(e.buf, v)
	case []any:
		return e.array(v, depth)
	case map[string]any:
		return e.object(v, depth)
	default:
		return false
	}
	return ok
}

// array appends a as encoding/json does.
func (e *bodyEncoder) array(a []any, depth int) bool {
	if a == nil {
		e.buf = append(e.buf, "null"...)
		return true
	}
	e.buf = append(e.buf, '[')
	for i, item := range a {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if !e.value(item, depth+1) {
			return false
		}
	}
	e.buf = append(e.buf, ']')
	return true
}

// object appends m with its keys sorted, as encoding/json does.
func (e *bodyEncoder) object(m map[string]any, depth int) bool {
	if m == nil {
		e.buf = append(e.buf, "null"...)
		return true
	}
	start := len(e.keys)
	defer func() {
		clear(e.keys[start:]) // a pooled encoder holds no body's keys
		e.keys = e.keys[:start]
	}()
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys[start:])
	e.buf = append(e.buf, '{')
	for i := range len(m) {
		k := e.keys[start+i] // the values' objects append to e.keys
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = jsonstr.Append(e.buf, k, true)
		e.buf = append(e.buf, ':')
		if !e.value(m[k], depth+1) {
			return false
		}
	}
	e.buf = append(e.buf, '}')
	return true
}

// appendJSONFloat appends f as encoding/json does (ES6 number formatting);
// false for a NaN or an infinity, which it rejects.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
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
func (c *Client) requestAPI(req *Request) (API, error) {
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
