package llm

import "encoding/json"

// chunkScanner reads an OpenAI chunk in the shapes servers send, without
// allocating and without reflection: the few values the client reads become
// slices of the chunk's own bytes, every other value is only validated. It
// gives up (ok false) on anything it does not read exactly as encoding/json
// would — a syntax error, an escaped or non-ASCII key, nesting deeper than
// maxScanDepth, a second "choices", a null or a non-object where the chunk
// type has a list or a struct, space around the chunk — and the decoder then
// leaves that chunk to encoding/json, which decides and words any error.
type chunkScanner struct {
	data []byte
	pos  int
}

// maxScanDepth is the deepest nesting of an unknown value the scanner
// follows (the bits of a uint64); deeper values go to encoding/json.
const maxScanDepth = 64

// scanChunk fills c, reset, from data and reports whether it could; when it
// could not, c holds some of data's values and must be reset again.
func scanChunk(data []byte, c *chunk) bool {
	s := chunkScanner{data: data}
	return s.chunk(c) && s.pos == len(data)
}

func (s *chunkScanner) chunk(c *chunk) bool {
	sawChoices := false
	return s.object(func(key []byte) bool {
		switch {
		case keyIs(key, "choices"):
			// encoding/json decodes a second list over the first one's
			// choices; that is left to it.
			if sawChoices {
				return false
			}
			sawChoices = true
			return s.choices(c)
		case keyIs(key, "usage"):
			return s.raw(&c.Usage)
		case keyIs(key, "error"):
			return s.raw(&c.Error)
		case keyIs(key, "object"):
			return s.raw(&c.Object)
		case keyIs(key, "message"):
			return s.raw(&c.Message)
		}
		return s.skip()
	})
}

// choices reads a list of choices into c.Choices, reusing the elements its
// capacity holds (reset ones).
func (s *chunkScanner) choices(c *chunk) bool {
	if !s.consume('[') {
		return false
	}
	s.space()
	if s.consume(']') {
		return true
	}
	for {
		s.space()
		if len(c.Choices) < cap(c.Choices) {
			c.Choices = c.Choices[:len(c.Choices)+1]
		} else {
			c.Choices = append(c.Choices, choice{})
		}
		ch := &c.Choices[len(c.Choices)-1]
		switch {
		case s.literal("null"): // encoding/json leaves the choice empty
		case !s.choice(ch):
			return false
		}
		if !s.next(']') {
			return false
		}
		if s.data[s.pos-1] == ']' {
			return true
		}
	}
}

func (s *chunkScanner) choice(ch *choice) bool {
	return s.object(func(key []byte) bool {
		switch {
		case keyIs(key, "text"):
			return s.raw(&ch.Text)
		case keyIs(key, "delta"):
			return s.message(&ch.Delta)
		case keyIs(key, "message"):
			return s.message(&ch.Message)
		case keyIs(key, "finish_reason"):
			return s.raw(&ch.FinishReason)
		}
		return s.skip()
	})
}

// message reads a delta or a message into m: a null leaves m as it is, and
// a repeated key overwrites, as with encoding/json.
func (s *chunkScanner) message(m *message) bool {
	if s.literal("null") {
		return true
	}
	return s.object(func(key []byte) bool {
		switch {
		case keyIs(key, "content"):
			return s.raw(&m.Content)
		case keyIs(key, "reasoning_content"):
			return s.raw(&m.ReasoningContent)
		case keyIs(key, "reasoning"):
			return s.raw(&m.Reasoning)
		case keyIs(key, "tool_calls"):
			return s.raw(&m.ToolCalls)
		}
		return s.skip()
	})
}

// object reads the object that starts here, calling read for each of its
// keys to read the value that follows.
func (s *chunkScanner) object(read func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		switch {
		case !ok:
			return false
		case done:
			return true
		case !read(key):
			return false
		}
	}
}

// keyIs reports whether key, plain ASCII, names the field name (lower
// case): encoding/json matches keys to fields regardless of case.
func keyIs(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range len(key) {
		if c := key[i]; c != name[i] && !('A' <= c && c <= 'Z' && c+'a'-'A' == name[i]) {
			return false
		}
	}
	return true
}

// member reads the next key of an object whose '{' is consumed, and the
// ':' after it; done is set instead when the object ends. first is set for
// the object's first member. The key must be plain: ASCII, no escapes.
func (s *chunkScanner) member(first bool) (key []byte, done, ok bool) {
	s.space()
	if !first {
		if !s.next('}') {
			return nil, false, false
		}
		if s.data[s.pos-1] == '}' {
			return nil, true, true
		}
		s.space()
	} else if s.consume('}') {
		return nil, true, true
	}
	start := s.pos + 1
	plain, ok := s.str()
	if !ok || !plain {
		return nil, false, false
	}
	key = s.data[start : s.pos-1]
	s.space()
	if !s.consume(':') {
		return nil, false, false
	}
	s.space()
	return key, false, true
}

// next consumes the ',' between two members or elements, or the closing
// end that ends them.
func (s *chunkScanner) next(end byte) bool {
	s.space()
	return s.consume(',') || s.consume(end)
}

// raw points *dst at the value that starts here, once it is validated.
func (s *chunkScanner) raw(dst *json.RawMessage) bool {
	start := s.pos
	if !s.skip() {
		return false
	}
	*dst = s.data[start:s.pos:s.pos]
	return true
}

// skip validates the value that starts here and moves past it. Its
// containers' kinds are bits of a uint64 (set for an object), so nesting
// stops at maxScanDepth.
func (s *chunkScanner) skip() bool {
	var objects uint64
	depth := 0
	for {
		// A value starts here.
		s.space()
		if s.pos >= len(s.data) {
			return false
		}
		switch c := s.data[s.pos]; {
		case c == '{' || c == '[':
			if depth == maxScanDepth {
				return false
			}
			s.pos++
			s.space()
			if s.consume(c + 2) { // '}' and ']' follow '{' and '[' by two
				break
			}
			if c == '{' {
				objects |= 1 << depth
				if !s.key() {
					return false
				}
			} else {
				objects &^= 1 << depth
			}
			depth++
			continue
		case c == '"':
			if _, ok := s.str(); !ok {
				return false
			}
		case c == 't':
			if !s.literal("true") {
				return false
			}
		case c == 'f':
			if !s.literal("false") {
				return false
			}
		case c == 'n':
			if !s.literal("null") {
				return false
			}
		default:
			if !s.number() {
				return false
			}
		}
		// A value ended: close the containers it ends, or move on to the
		// next member or element.
		for {
			if depth == 0 {
				return true
			}
			inObject := objects&(1<<(depth-1)) != 0
			end := byte(']')
			if inObject {
				end = '}'
			}
			if !s.next(end) {
				return false
			}
			if s.data[s.pos-1] == end {
				depth--
				continue
			}
			if inObject {
				s.space()
				if !s.key() {
					return false
				}
			}
			break
		}
	}
}

// key reads any key of an object and the ':' after it.
func (s *chunkScanner) key() bool {
	if _, ok := s.str(); !ok {
		return false
	}
	s.space()
	return s.consume(':')
}

// str moves past the string that starts here, validating it as
// encoding/json does (no control characters, known escapes; other bytes,
// even invalid UTF-8, pass). plain reports a string of ASCII without
// escapes.
func (s *chunkScanner) str() (plain, ok bool) {
	if !s.consume('"') {
		return false, false
	}
	plain = true
	d := s.data
	for i := s.pos; i < len(d); i++ {
		for i < len(d) && plainByte[d[i]] {
			i++
		}
		if i == len(d) {
			break
		}
		switch c := d[i]; {
		case c == '"':
			s.pos = i + 1
			return plain, true
		case c < 0x20:
			return false, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if i++; i >= len(d) {
				return false, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) || !isHex(d[i+1]) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) {
					return false, false
				}
				i += 4
			default:
				return false, false
			}
		}
	}
	return false, false
}

// plainByte marks the bytes a string holds as they are: ASCII, neither a
// control character, a quote nor a backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number moves past the JSON number that starts here.
func (s *chunkScanner) number() bool {
	s.consume('-')
	switch {
	case s.consume('0'):
	case s.pos < len(s.data) && '1' <= s.data[s.pos] && s.data[s.pos] <= '9':
		s.digits()
	default:
		return false
	}
	if s.consume('.') && !s.digits() {
		return false
	}
	if s.consume('e') || s.consume('E') {
		if !s.consume('+') {
			s.consume('-')
		}
		return s.digits()
	}
	return true
}

// digits moves past one or more digits.
func (s *chunkScanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

// literal consumes word (true, false, null) if it comes next.
func (s *chunkScanner) literal(word string) bool {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return false
	}
	s.pos += len(word)
	return true
}

// consume moves past c if it comes next.
func (s *chunkScanner) consume(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// space moves past JSON white space. Most calls find none: a byte above
// ' ' ends them at one test.
func (s *chunkScanner) space() {
	for s.pos < len(s.data) && s.data[s.pos] <= ' ' {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// scanUsage fills u from data, an OpenAI usage, as json.Unmarshal(data, u)
// would, and reports whether it could. It gives up as scanChunk does, and
// on a count that is not a plain integer of at most maxScanDigits digits
// or null, and on details that are neither an object nor null; u may then
// hold some of data's values, and encoding/json decides.
func scanUsage(data []byte, u *usage) bool {
	s := chunkScanner{data: data}
	return s.usage(u) && s.pos == len(data)
}

func (s *chunkScanner) usage(u *usage) bool {
	return s.object(func(key []byte) bool {
		switch {
		case keyIs(key, "prompt_tokens"):
			return s.count(&u.PromptTokens)
		case keyIs(key, "completion_tokens"):
			return s.count(&u.CompletionTokens)
		case keyIs(key, "prompt_tokens_details"):
			return s.countIn("cached_tokens", &u.PromptTokensDetails.CachedTokens)
		case keyIs(key, "completion_tokens_details"):
			return s.countIn("reasoning_tokens", &u.CompletionTokensDetails.ReasoningTokens)
		}
		return s.skip()
	})
}

// countIn reads an object, or null, whose member name is a count read
// into *n.
func (s *chunkScanner) countIn(name string, n *int) bool {
	if s.literal("null") {
		return true
	}
	return s.object(func(key []byte) bool {
		if keyIs(key, name) {
			return s.count(n)
		}
		return s.skip()
	})
}

// maxScanDigits is the most digits of a count the scanner reads itself:
// fewer than overflow an int64.
const maxScanDigits = 18

// count reads a plain integer into *n, or null, which leaves *n.
func (s *chunkScanner) count(n *int) bool {
	if s.literal("null") {
		return true
	}
	start := s.pos
	if !s.number() {
		return false
	}
	digits := s.data[start:s.pos]
	negative := digits[0] == '-'
	if negative {
		digits = digits[1:]
	}
	if len(digits) > maxScanDigits {
		return false
	}
	v := 0
	for _, c := range digits {
		if c < '0' || c > '9' { // a fraction or an exponent
			return false
		}
		v = v*10 + int(c-'0')
	}
	if negative {
		v = -v
	}
	*n = v
	return true
}
