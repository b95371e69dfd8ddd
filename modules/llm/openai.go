package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// chunk is one OpenAI stream chunk of /v1/chat/completions or
// /v1/completions, or a whole non-streaming response of either. Values are
// kept raw, as slices of the decoded bytes when chunkScanner read them:
// decoding allocates no strings, and only the few values that are needed
// (finish reason, usage, error, kept text) are decoded further. A chunk is
// valid until the bytes it was decoded from change.
type chunk struct {
	Choices []choice        `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	// Error is set in an error chunk: {"error": {"message": ...}}.
	Error json.RawMessage `json:"error"`
	// Object is "error" in vLLM's older unwrapped error chunk, whose
	// Message says what went wrong: {"object": "error", "message": ...}.
	Object  json.RawMessage `json:"object"`
	Message json.RawMessage `json:"message"`
}

type choice struct {
	// Text is the generated text of /v1/completions.
	Text json.RawMessage `json:"text"`
	// Delta is a chat stream chunk's increment.
	Delta message `json:"delta"`
	// Message is a non-streaming chat response's whole answer.
	Message      message         `json:"message"`
	FinishReason json.RawMessage `json:"finish_reason"`
}

type message struct {
	Content json.RawMessage `json:"content"`
	// ReasoningContent (DeepSeek, older vLLM) and Reasoning (newer vLLM,
	// OpenRouter) carry reasoning text.
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
}

// usage is the server's token accounting.
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		// CachedTokens are the prompt tokens served from the server's
		// prefix cache (OpenAI, vLLM). Set it to absentCount before
		// decoding: it stays so when the usage leaves it out (or gives
		// null).
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// optionalInt is an integer that a JSON document may leave out: set
// reports whether it gave one (null counts as left out).
type optionalInt struct {
	n   int
	set bool
}

func (o *optionalInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = optionalInt{}
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 0)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*o = optionalInt{int(n), true}
	return nil
}

// orAbsent returns the integer, or absentCount when it was left out.
func (o optionalInt) orAbsent() int {
	if !o.set {
		return absentCount
	}
	return o.n
}

// chunkDecoder decodes chunks one after another into a reused chunk: with
// chunkScanner, which allocates nothing, or, for the shapes it leaves,
// with encoding/json. It keeps one json.Decoder, whose state, unlike
// json.Unmarshal's, survives from one value to the next.
type chunkDecoder struct {
	src bytes.Reader
	dec *json.Decoder
	// grown is set once a chunk larger than maxPooledBuffer was decoded
	// by encoding/json: the decoder's buffer and the chunk's fields have
	// grown to its size, so the reader holding them must not go back to
	// the pool.
	grown bool
}

// decode parses data, one JSON value with no surrounding space, into c.
func (d *chunkDecoder) decode(data []byte, c *chunk) error {
	c.reset()
	if len(data) >= choiceScanFrom && choicesLen(data, maxChoices) > maxChoices {
		return fmt.Errorf("more than %d choices", maxChoices)
	}
	if scanChunk(data, c) {
		return nil
	}
	c.reset()
	if len(data) > maxPooledBuffer {
		// A huge chunk the scanner left, rare, is decoded by
		// json.Unmarshal: the decoder would copy it into its buffer
		// first, doubling what it costs.
		d.grown = true
		return json.Unmarshal(data, c)
	}
	if d.dec == nil {
		d.dec = json.NewDecoder(&d.src)
	}
	d.src.Reset(data)
	start := d.dec.InputOffset()
	err := d.dec.Decode(c)
	if err == nil && d.dec.InputOffset()-start != int64(len(data)) {
		err = errors.New("invalid data after the JSON value")
	}
	if err != nil {
		d.dec = nil // it may hold the rest of data, or a sticky error
	}
	return err
}

// reset clears every field of c, of every choice its slice can hold:
// decoding into a reused value keeps the fields the new JSON lacks. The
// values become nil rather than empty: they may be slices of the bytes of
// an earlier chunk, which encoding/json must not append into.
func (c *chunk) reset() {
	all := c.Choices[:cap(c.Choices)]
	clear(all)
	*c = chunk{Choices: all[:0]}
}

// tokens reports whether the chunk carries generated output: reasoning
// text, and answer output (text, content or a tool-call delta). A role-only
// chunk or one with empty content carries neither.
func (c *chunk) tokens() (reasoning, answer bool) {
	for i := range c.Choices {
		ch := &c.Choices[i]
		for _, m := range [2]*message{&ch.Delta, &ch.Message} {
			reasoning = reasoning || present(m.ReasoningContent) || present(m.Reasoning)
			answer = answer || present(m.Content) || present(m.ToolCalls)
		}
		answer = answer || present(ch.Text)
	}
	return reasoning, answer
}

// appendText appends the chunk's answer text (content or text, not
// reasoning) to dst, as far as dst may grow (appendUnquoted's limit).
func (c *chunk) appendText(dst []byte, limit int) ([]byte, error) {
	for i := range c.Choices {
		ch := &c.Choices[i]
		for _, raw := range [3]json.RawMessage{ch.Text, ch.Delta.Content, ch.Message.Content} {
			if !present(raw) {
				continue
			}
			var err error
			if dst, err = appendUnquoted(dst, raw, limit); err != nil {
				return dst, fmt.Errorf("text: %w", err)
			}
		}
	}
	return dst, nil
}

// appendUnquoted appends the string that raw, a valid JSON value, holds
// to dst; dst is returned unchanged with the error when raw is not a
// string. Once dst would pass limit bytes, only the start of the string
// is appended, taking dst past limit by one character at most (so that a
// cut made at limit is seen and falls on a character boundary): a huge
// string costs what is kept of it, not its size. A string without escapes
// in valid UTF-8, as most chunks' text is, is appended as it is,
// allocating nothing; others are decoded by encoding/json, which also
// turns invalid UTF-8 into U+FFFD.
func appendUnquoted(dst []byte, raw json.RawMessage, limit int) ([]byte, error) {
	room := max(limit-len(dst)+1, 0)
	if len(raw) >= 2 && raw[0] == '"' {
		inner := raw[1 : len(raw)-1]
		if len(inner) > room {
			n := room
			for n < len(inner) && !utf8.RuneStart(inner[n]) {
				n++
			}
			inner = inner[:n]
		}
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return append(dst, inner...), nil
		}
		raw = quotedPrefix(raw, room)
	}
	s, err := jsonString(raw)
	if err != nil {
		return dst, err
	}
	return append(dst, s...), nil
}

// quotedPrefix returns the start of raw, a valid JSON string, that
// decodes to at least its first n bytes (by one character at most),
// exactly as the whole string decodes them, closed by a quote of its own
// (raw itself when it is no longer). It is cut between units that decode
// on their own: a byte, a UTF-8 character, an invalid byte (U+FFFD), an
// escape, or a surrogate pair's two escapes.
func quotedPrefix(raw json.RawMessage, n int) json.RawMessage {
	i := 1
	for decoded := 0; decoded < n; {
		switch c := raw[i]; {
		case c == '"':
			return raw
		case c == '\\' && raw[i+1] == 'u':
			r := rune(hex4(raw[i+2 : i+6]))
			i += 6
			switch {
			case !utf16.IsSurrogate(r):
				decoded += utf8.RuneLen(r)
			case len(raw) >= i+6 && raw[i] == '\\' && raw[i+1] == 'u' && utf16.DecodeRune(r, rune(hex4(raw[i+2:i+6]))) != utf8.RuneError:
				decoded, i = decoded+4, i+6
			default:
				decoded += 3 // U+FFFD
			}
		case c == '\\':
			decoded, i = decoded+1, i+2
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(raw[i:])
			decoded, i = decoded+utf8.RuneLen(r), i+size
		default:
			decoded, i = decoded+1, i+1
		}
	}
	if raw[i] == '"' {
		return raw
	}
	return append(raw[:i:i], '"')
}

// hex4 is the value of four hexadecimal digits, checked by the JSON
// scanner or decoder that found them.
func hex4(b []byte) int {
	v, _ := strconv.ParseUint(string(b), 16, 16)
	return int(v)
}

// finishReason returns the last finish reason in the chunk, "" if none.
func (c *chunk) finishReason() (string, error) {
	var raw json.RawMessage
	for i := range c.Choices {
		if present(c.Choices[i].FinishReason) {
			raw = c.Choices[i].FinishReason
		}
	}
	if raw == nil {
		return "", nil
	}
	switch string(raw) { // the usual reasons, without decoding nor allocating
	case `"stop"`:
		return "stop", nil
	case `"length"`:
		return "length", nil
	case `"tool_calls"`:
		return "tool_calls", nil
	}
	reason, err := jsonString(raw)
	if err != nil {
		return "", fmt.Errorf("finish_reason: %w", err)
	}
	return reason, nil
}

// errorMessage returns the message of an error chunk, and false for a
// chunk that is not an error.
func (c *chunk) errorMessage() (string, bool) {
	switch {
	case present(c.Error):
		return apiErrorMessage(c.Error), true
	case string(c.Object) == `"error"`:
		return apiErrorMessage(c.Message), true
	}
	return "", false
}

// apiErrorMessage extracts the message of an OpenAI error object (or
// string), falling back to its raw JSON.
func apiErrorMessage(raw json.RawMessage) string {
	if !present(raw) {
		return "error without a message"
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	if s, err := jsonString(raw); err == nil && s != "" {
		return s
	}
	return string(raw)
}

// jsonString decodes a JSON string.
func jsonString(raw json.RawMessage) (string, error) {
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// present reports whether a raw JSON value carries something: not absent,
// null, an empty string, an empty array or an empty object.
func present(raw json.RawMessage) bool {
	switch {
	case len(raw) == 0:
		return false
	case raw[0] == '"':
		return len(raw) > 2
	case raw[0] == '[' || raw[0] == '{':
		return len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0
	default:
		return string(raw) != "null"
	}
}
