package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// maxRedirects bounds the redirects one request follows.
const maxRedirects = 5

// checkRedirect is the client's redirect policy: a redirect is followed
// only when it keeps the request as sent (a 307 or 308: same method, the
// body replayed) to the same scheme and host (so that no credential header
// goes elsewhere), at most maxRedirects times. Any other redirect fails the
// request as decode, saying where the server pointed to.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	where := redactedURL(req.URL)
	switch {
	case req.Method != first.Method:
		return &failure{ErrDecode, fmt.Errorf("the server redirected to %s (status %d); llmrun does not follow redirects that turn a %s into a %s",
			where, status, first.Method, req.Method)}
	case req.URL.Scheme != first.URL.Scheme || req.URL.Host != first.URL.Host:
		return &failure{ErrDecode, fmt.Errorf("the server redirected to %s (status %d); llmrun does not follow redirects to another host",
			where, status)}
	case len(via) > maxRedirects:
		return &failure{ErrDecode, fmt.Errorf("the server redirected more than %d times (last to %s, status %d)", maxRedirects, where, status)}
	}
	return nil
}

// CheckHeaders reports the first header of h whose name or value HTTP does
// not allow; the value is never quoted, since it may be a credential.
func CheckHeaders(h map[string]string) error {
	for name, value := range h {
		if !httpguts.ValidHeaderFieldName(name) {
			return fmt.Errorf("invalid header name %q", name)
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return fmt.Errorf("header %q has an invalid value: control characters such as CR, LF and NUL are not allowed", name)
		}
	}
	return nil
}

// headLen is how many bytes of a response body a headRecorder keeps.
const headLen = 64

// headRecorder reads a response body, keeping its first bytes so that a
// body that is not what its Content-Type says can be told apart. It lives
// in the pooled responseReader: recording allocates nothing.
type headRecorder struct {
	r    io.Reader
	buf  [headLen]byte
	kept int
}

func (h *headRecorder) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.kept += copy(h.buf[h.kept:], p[:n])
	return n, err
}

// head returns the first bytes read.
func (h *headRecorder) head() []byte { return h.buf[:h.kept] }

// notHTTP is the failure of a request whose server answered, before any
// HTTP response, bytes that plainly are something else (head, the first
// bytes of its connection); nil when they are not.
func notHTTP(head []byte) error {
	what := sniff(head)
	if what == "" {
		return nil
	}
	return &failure{ErrDecode, fmt.Errorf("sending the request: the server does not answer HTTP but %s: it starts with %s", what, snippet(head))}
}

// sniff names what a body starting with head is when it is plainly not
// an LLM server's answer: gzip data, an HTML page, an SSH banner, or
// binary data; "" otherwise.
func sniff(head []byte) string {
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	lower := strings.ToLower(string(trimmed))
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip-compressed data (llmrun asks for no compression)"
	case strings.HasPrefix(lower, "<!doctype html"), strings.HasPrefix(lower, "<html"):
		return "an HTML page"
	case bytes.HasPrefix(head, []byte("SSH-")):
		return "an SSH banner (the port is an SSH server's)"
	case isBinary(head):
		return "binary data"
	}
	return ""
}

// looksLikeJSON reports whether head starts like a JSON object or array.
func looksLikeJSON(head []byte) bool {
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

// isBinary reports whether b holds a NUL or another control character
// that no text protocol sends.
func isBinary(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7f {
			return true
		}
	}
	return false
}

// misread turns the failure err of a response that brought no token into
// a decode failure naming what the body was, when its first bytes (head)
// show it plainly is not the server's answer; otherwise it returns err.
func misread(err error, head []byte, contentType string, res *Result) error {
	var f *failure
	if res.Chunks > 0 || !errors.As(err, &f) || f.class != ErrCut && f.class != ErrDecode {
		return err
	}
	what := sniff(head)
	if what == "" && mediaType(contentType) == "text/event-stream" && looksLikeJSON(head) {
		what = "a JSON document, not an event stream"
	}
	if what == "" {
		return err
	}
	return &failure{ErrDecode, fmt.Errorf("the response, of content type %q, is %s: it starts with %s", contentType, what, snippet(head))}
}

// maxChoices bounds the choices of one OpenAI chunk or response (OpenAI's
// own limit on "n"): each takes a few hundred bytes once decoded, so a
// line of empty choices ("{},{},…") would take 80 times its size.
const maxChoices = 128

// choiceScanFrom is the length of a chunk from which its choices are
// counted before it is decoded: a shorter one cannot hold enough to
// matter.
const choiceScanFrom = 16 << 10

// jsonArrayLen counts the elements of the JSON array that data starts
// with (after spaces), stopping at its end or once it counted more than
// limit; 0 when data does not start with an array. data is not
// validated: the decoder does that.
func jsonArrayLen(data []byte, limit int) int {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 || data[0] != '[' {
		return 0
	}
	n, depth, empty := 0, 0, true
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if depth == 1 && empty && c != ']' {
			n, empty = 1, false
		}
		switch c {
		case '"':
			if i = closingQuote(data, i); i < 0 {
				return n
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return n
			}
		case ',':
			if depth == 1 {
				if n++; n > limit {
					return n
				}
			}
		}
	}
	return n
}

// closingQuote is the index of the quote that ends the JSON string whose
// opening quote is data[open], -1 when the string does not end; escapes
// are skipped, not validated.
func closingQuote(data []byte, open int) int {
	for i := open + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// choicesLen counts, up to a little over limit, the elements of the
// "choices" arrays of the JSON object data: those of its own keys (the
// decoder keeps the last, having decoded each), not of nested objects.
// Linear in len(data): jsonArrayLen reads again only those keys' arrays,
// which do not overlap.
func choicesLen(data []byte, limit int) int {
	const key = `"choices"`
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			if depth == 1 && bytes.HasPrefix(data[i:], []byte(key)) {
				rest := bytes.TrimLeft(data[i+len(key):], " \t\r\n")
				if len(rest) > 0 && rest[0] == ':' {
					if n := jsonArrayLen(rest[1:], limit); n > limit {
						return n
					}
				}
			}
			if i = closingQuote(data, i); i < 0 {
				return 0
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
	}
	return 0
}
