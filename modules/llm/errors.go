package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// failure is an error with the class it is counted under.
type failure struct {
	class ErrorClass
	err   error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// timeoutError is the cause of a request context canceled by the client's
// own timeout.
type timeoutError struct{ after string }

func (e *timeoutError) Error() string { return "request timed out after " + e.after }

// classify returns the class of a failed request and its message; phase
// says what the client was doing. When the request's context is done, that
// is the reason whatever error it caused: the client's own timeout is a
// timeout; any other end of the caller's context (canceled, or past its
// deadline: the run stopping at the end of a graceful stop, Ctrl-C) is
// canceled. Otherwise a *failure keeps its class, and any other error gets
// the class otherwise.
func classify(ctx context.Context, err error, phase string, otherwise ErrorClass) (ErrorClass, string) {
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		var te *timeoutError
		if errors.As(cause, &te) {
			return ErrTimeout, fmt.Sprintf("%s: %v", phase, cause)
		}
		return ErrCanceled, fmt.Sprintf("%s: canceled: %v", phase, cause)
	}
	var f *failure
	if errors.As(err, &f) {
		return f.class, err.Error()
	}
	return otherwise, fmt.Sprintf("%s: %v", phase, err)
}

// redact replaces every secret in msg.
func redact(msg string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[REDACTED]")
		}
	}
	return msg
}
