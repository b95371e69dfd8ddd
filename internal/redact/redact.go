// Package redact removes secrets from text that may quote a server's
// bytes, in every form a server may echo them, and makes such text safe to
// print. It is the one redaction of llmrun: the llm client, the Hugging
// Face downloads and the InfluxDB output all clean their messages with it.
package redact

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Mask is what a secret is replaced with.
const Mask = "[REDACTED]"

// MinDerived is the shortest value treated as a secret when it is only
// derived from where it sits (a URL's query value): shorter ones ("1",
// "on") would blank out unrelated text. Secrets given as such (an API
// key, a token, a password) are redacted whatever their length.
const MinDerived = 4

// Secrets is a set of secrets, each held in every form it may travel in
// (see Add). The zero value holds none. A Secrets is not modified once
// shared: Add makes a new backing array, so a copy can be extended
// without touching the original.
type Secrets struct {
	forms []string // ASCII lower-cased, longest first, unique
}

// Add adds secret in the forms a server may echo it in: as is;
// URL-encoded by Go's query and path escaping, Python's quote() (with '/'
// kept, its default, and with nothing kept), JavaScript's
// encodeURIComponent; base64 (standard and URL alphabets, padded or not).
// Redact matches every form in any ASCII case, which also covers escapes
// written %2f rather than %2F. An empty secret is ignored.
func (s *Secrets) Add(secret string) {
	if secret == "" {
		return
	}
	b := []byte(secret)
	forms := []string{
		secret,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		percentEncode(secret, "/"),
		percentEncode(secret, ""),
		percentEncode(secret, "!'()*"),
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
	}
	all := slices.Clone(s.forms)
	for _, f := range forms {
		f = asciiLower(f)
		if !slices.Contains(all, f) {
			all = append(all, f)
		}
	}
	slices.SortStableFunc(all, func(a, b string) int { return len(b) - len(a) })
	s.forms = all
}

// AddBasic adds the credentials of Basic authentication: the password,
// and the user:password pair, which travels in base64 in an
// Authorization header that a server's 401 may echo.
func (s *Secrets) AddBasic(user, password string) {
	if password == "" {
		return
	}
	s.Add(password)
	s.Add(user + ":" + password)
}

// AddURL adds the secrets u holds: its user info's password and
// user:password pair (Go sends them as Basic authentication), and the
// value of every query parameter MinDerived bytes or longer. A nil u holds
// none.
func (s *Secrets) AddURL(u *url.URL) {
	if u == nil {
		return
	}
	if u.User != nil {
		if pass, ok := u.User.Password(); ok {
			s.AddBasic(u.User.Username(), pass)
		}
	}
	for _, values := range u.Query() {
		for _, v := range values {
			if len(v) >= MinDerived {
				s.Add(v)
			}
		}
	}
}

// AddRawURL is AddURL of raw parsed; a raw that does not parse adds
// nothing.
func (s *Secrets) AddRawURL(raw string) {
	if u, err := url.Parse(raw); err == nil {
		s.AddURL(u)
	}
}

// Redact replaces every form of every secret in msg with Mask, in any
// ASCII case, longest first so that no part of a longer one survives the
// replacement of a shorter one.
func (s Secrets) Redact(msg string) string {
	if len(s.forms) == 0 {
		return msg
	}
	lower := asciiLower(msg)
	for _, f := range s.forms {
		for from := 0; ; {
			i := strings.Index(lower[from:], f)
			if i < 0 {
				break
			}
			i += from
			msg = msg[:i] + Mask + msg[i+len(f):]
			lower = lower[:i] + Mask + lower[i+len(f):]
			from = i + len(Mask)
		}
	}
	return msg
}

// RedactCut is Redact of text that was cut at its end (the start of a
// body read up to a bound): the start of a secret's form left at the
// end, MinDerived bytes or longer, is replaced with Mask too.
func (s Secrets) RedactCut(text string) string {
	text = s.Redact(text)
	lower, longest := asciiLower(text), 0
	for _, f := range s.forms {
		for n := min(len(f)-1, len(lower)); n >= MinDerived && n > longest; n-- {
			if strings.HasSuffix(lower, f[:n]) {
				longest = n
			}
		}
	}
	if longest == 0 {
		return text
	}
	return text[:len(text)-longest] + Mask
}

// Clean is msg with its secrets redacted, then made safe to print (see
// Escape), cut at limit bytes.
func (s Secrets) Clean(msg string, limit int) string {
	return Escape(s.Redact(msg), limit)
}

// asciiLower is s with its ASCII letters lower-cased: the same length in
// bytes, so that an index in it is one in s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// percentEncode is s with every byte escaped as %XX except ASCII letters,
// digits, "-_.~" (unreserved in RFC 3986) and the bytes of safe: Python's
// urllib.parse.quote(s, safe) and, with safe "!'()*", JavaScript's
// encodeURIComponent.
func percentEncode(s, safe string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-_.~", c) >= 0, strings.IndexByte(safe, c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}
