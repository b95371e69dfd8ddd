package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/llmrun/llmrun/internal/redact"

	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

// failure is an error with the class it is counted under.
type failure struct {
	class ErrorClass
	err   error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

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
		var te *transport.TimeoutError
		var ie *transport.IdleTimeoutError
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
	case errors.Is(err, transport.ErrHeadTooLarge), strings.Contains(err.Error(), "server response headers exceeded"):
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

// bodyCut ends a message whose quoted body statusError cut.
const bodyCut = "… (cut)"

// cleanError is msg, an error message that may quote a server's bytes,
// with its secrets redacted (also the start of one where the quoted body
// was cut), then made safe to print (redact.Escape).
func cleanError(msg string, secrets redact.Secrets) string {
	if text, ok := strings.CutSuffix(msg, bodyCut); ok {
		msg = secrets.RedactCut(text) + bodyCut
	}
	return secrets.Clean(msg, maxErrorLen)
}
