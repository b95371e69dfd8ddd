package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// failure is an error with the class it is counted under.
type failure struct {
	class ErrorClass
	err   error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// timeoutError is the cause of a request context canceled by the client's
// own total timeout.
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string { return "request timed out after " + e.after.String() }

// idleTimeoutError is the cause of a request context canceled by the
// client's idle timeout.
type idleTimeoutError struct{ after time.Duration }

func (e *idleTimeoutError) Error() string {
	return "no data from the server for " + e.after.String() + " (idle timeout)"
}

// classify returns the class of a failed request and its message; phase
// says what the client was doing. When the request's context is done, that
// is the reason whatever error it caused: the client's own timeouts are
// timeout and idle_timeout; any other end of the caller's context
// (canceled, or past its deadline: the run stopping at the end of a
// graceful stop, Ctrl-C) is canceled. Otherwise a *failure keeps its
// class, and any other error gets the class otherwise.
func classify(ctx context.Context, err error, phase string, otherwise ErrorClass) (ErrorClass, string) {
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		var te *timeoutError
		var ie *idleTimeoutError
		switch {
		case errors.As(cause, &te):
			return ErrTimeout, fmt.Sprintf("%s: %v", phase, cause)
		case errors.As(cause, &ie):
			return ErrIdleTimeout, fmt.Sprintf("%s: %v", phase, cause)
		}
		return ErrCanceled, fmt.Sprintf("%s: canceled: %v", phase, cause)
	}
	var f *failure
	var ue *url.Error
	switch {
	case errors.As(err, &f) && errors.As(err, &ue): // the redirect policy's
		return f.class, fmt.Sprintf("%s: %v", phase, f)
	case errors.As(err, &f):
		return f.class, err.Error()
	}
	return otherwise, fmt.Sprintf("%s: %v", phase, err)
}

// sendClass is the class of an error of http.Client.Do, which failed before
// any response: dns, tls or connect when no connection was had (dnsErr and
// tlsErr are what the trace saw fail), decode when the server answered
// something that is not HTTP (an SSH banner), cut when the connection
// broke before the response.
func sendClass(err error, connected bool, dnsErr, tlsErr error) ErrorClass {
	var dnsError *net.DNSError
	switch {
	case dnsErr != nil || errors.As(err, &dnsError):
		return ErrDNS
	case tlsErr != nil || isTLSError(err):
		return ErrTLS
	case strings.Contains(err.Error(), "malformed HTTP "):
		return ErrDecode // the server does not speak HTTP
	case errors.Is(err, errHeadTooLarge), strings.Contains(err.Error(), "server response headers exceeded"):
		return ErrDecode // net/http's Transport words its own bound so
	case connected:
		return ErrCut
	}
	return ErrConnect
}

// isTLSError reports whether err is a failure of the TLS handshake: a
// certificate the client does not trust, a peer that does not speak TLS,
// or an alert either side sent.
func isTLSError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		header    tls.RecordHeaderError
		alert     tls.AlertError
		ech       *tls.ECHRejectionError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		op        *net.OpError
	)
	switch {
	case errors.As(err, &verify), errors.As(err, &header), errors.As(err, &alert), errors.As(err, &ech),
		errors.As(err, &authority), errors.As(err, &hostname), errors.As(err, &invalid):
		return true
	case errors.As(err, &op):
		// crypto/tls reports an alert as a *net.OpError "remote error"
		// (received) or "local error" (sent) around an unexported type.
		return (op.Op == "remote error" || op.Op == "local error") && strings.HasPrefix(op.Err.Error(), "tls:")
	}
	return false
}

// readClass is the class of an error reading a response body: decode for
// an oversized SSE line or event, cut for anything else (the connection
// closed or was reset before the end).
func readClass(err error) ErrorClass {
	if errors.Is(err, ErrTooLong) {
		return ErrDecode
	}
	return ErrCut
}

// truncated reports whether err says the body ended early.
func truncated(err error) bool {
	return err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)
}

// maxErrorLen bounds a request's error message, in bytes once escaped.
const maxErrorLen = 8 << 10

// minDerivedSecret is the shortest base URL query value treated as a
// secret: shorter ones ("1", "on") would blank out unrelated text.
const minDerivedSecret = 4

// redact replaces every secret in msg. secrets are longest first
// (longestFirst), so that no part of a longer one survives the replacement
// of a shorter one.
func redact(msg string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[REDACTED]")
		}
	}
	return msg
}

// longestFirst sorts secrets as redact takes them.
func longestFirst(secrets []string) {
	slices.SortStableFunc(secrets, func(a, b string) int { return len(b) - len(a) })
}

// cleanMessage is msg, an error message that may quote a server's bytes,
// with its secrets redacted, then made safe to print: see escapeText.
func cleanMessage(msg string, secrets []string) string {
	return escapeText(redact(msg, secrets), maxErrorLen)
}

// secretForms appends to dst the forms a secret travels in: as is,
// URL-encoded (query and path escaping) and base64-encoded (standard and
// URL alphabets, padded or not).
func secretForms(dst []string, secret string) []string {
	if secret == "" {
		return dst
	}
	forms := []string{
		secret,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.RawStdEncoding.EncodeToString([]byte(secret)),
		base64.URLEncoding.EncodeToString([]byte(secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
	}
	for _, f := range forms {
		if !slices.Contains(dst, f) {
			dst = append(dst, f)
		}
	}
	return dst
}

// urlSecrets appends the secrets a base URL holds, in all their forms
// (secretForms): its password, its user:password pair (sent as Basic
// auth), and the value of every query parameter.
func urlSecrets(dst []string, u *url.URL) []string {
	if u.User != nil {
		if pass, ok := u.User.Password(); ok && pass != "" {
			dst = secretForms(dst, pass)
			dst = secretForms(dst, u.User.Username()+":"+pass)
		}
	}
	for _, values := range u.Query() {
		for _, v := range values {
			if len(v) >= minDerivedSecret {
				dst = secretForms(dst, v)
			}
		}
	}
	return dst
}

// escapeText makes text that may hold a server's bytes safe to print on a
// terminal and to store: control characters (escape sequences, NUL, CR,
// LF), Unicode line separators and bidirectional controls are written as
// \xNN or \uNNNN, bytes that are not UTF-8 as \xNN. A text longer than
// limit bytes once escaped is cut, and says so.
func escapeText(text string, limit int) string {
	const cut = "... (truncated)"
	var scratch [6]byte
	clean := 0
	for clean < len(text) {
		r, size := utf8.DecodeRuneInString(text[clean:])
		if _, escaped := escapeRune(scratch[:0], r, size, text[clean]); escaped {
			break
		}
		clean += size
	}
	if clean == len(text) && len(text) <= limit-len(cut) {
		return text
	}
	var b strings.Builder
	b.Grow(min(len(text), limit))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		piece, escaped := escapeRune(scratch[:0], r, size, text[i])
		n := size
		if escaped {
			n = len(piece)
		}
		if b.Len()+n > limit-len(cut) {
			b.WriteString(cut)
			break
		}
		if escaped {
			b.Write(piece)
		} else {
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeRune appends to dst how escapeText writes r, the rune of size
// bytes starting with the byte first, and reports whether it is escaped;
// dst needs a capacity of 6 not to grow.
func escapeRune(dst []byte, r rune, size int, first byte) ([]byte, bool) {
	switch {
	case r == utf8.RuneError && size == 1:
		return appendHex(append(dst, `\x`...), uint32(first), 2), true
	case r == '\n':
		return append(dst, `\n`...), true
	case r == '\r':
		return append(dst, `\r`...), true
	case r == '\t':
		return append(dst, `\t`...), true
	case r < 0x100 && unicode.IsControl(r):
		return appendHex(append(dst, `\x`...), uint32(r), 2), true
	case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029':
		return appendHex(append(dst, `\u`...), uint32(r), 4), true
	}
	return dst, false
}

// appendHex appends v in hexadecimal, as digits digits.
func appendHex(dst []byte, v uint32, digits int) []byte {
	const hex = "0123456789abcdef"
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hex[v>>shift&0xf])
	}
	return dst
}
