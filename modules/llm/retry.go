package llm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Retry defaults.
const (
	// DefaultRetryBase is the wait before the first retry unless
	// Backoff.Base sets one.
	DefaultRetryBase = 500 * time.Millisecond
	// DefaultRetryMax caps the wait before a retry unless Backoff.Max sets
	// another cap.
	DefaultRetryMax = 10 * time.Second
)

// DefaultRetryOn are the classes a retry policy retries unless its On says
// otherwise: a server that could not be reached, or that said to come back.
var DefaultRetryOn = []ErrorClass{ErrConnect, ErrHTTP429, ErrHTTP5xx}

// RetryPolicy is an opt-in retry of failed requests; the zero policy never
// retries. A request is retried only when its attempt failed with a class
// in On before any token arrived: a stream that was cut, or that failed,
// after its first token is never sent again. Each attempt has its own
// timeouts (Config.Timeout, Config.IdleTimeout); the end of the caller's
// context stops the retries, its wait included.
type RetryPolicy struct {
	// Attempts is the most times a request is sent, the first included:
	// 3 retries a failed request up to twice. 0 and 1 never retry.
	Attempts int `json:"attempts,omitempty"`
	// On lists the classes retried; empty means DefaultRetryOn (connect,
	// http_429, http_5xx). canceled and invalid_request are never retried.
	On []ErrorClass `json:"on,omitempty"`
	// Backoff spaces the attempts.
	Backoff Backoff `json:"backoff"`
}

// Backoff is the wait before a retry: Base·2^(n−1) before the nth retry,
// capped at Max, less a random part of up to half of it (jitter, so that
// requests that failed together are not retried together). A Retry-After
// the server sent with the failed attempt is the least wait; one longer
// than Max ends the retries (the server asked for a longer pause than the
// policy allows), unless IgnoreRetryAfter.
type Backoff struct {
	// Base is the wait before the first retry; 0 means DefaultRetryBase.
	Base time.Duration `json:"base,omitempty"`
	// Max caps every wait; 0 means DefaultRetryMax.
	Max time.Duration `json:"max,omitempty"`
	// IgnoreRetryAfter makes the backoff alone decide the wait.
	IgnoreRetryAfter bool `json:"ignoreRetryAfter,omitempty"`
}

// Check says what is wrong with p, nil when a client (Config.Retry) or a
// request (Request.Retry) accepts it.
func (p RetryPolicy) Check() error {
	_, err := p.normalize()
	return err
}

// normalize checks p and returns it with its defaults filled in.
func (p RetryPolicy) normalize() (RetryPolicy, error) {
	if p.Attempts < 0 {
		return p, fmt.Errorf("retry: negative attempts %d", p.Attempts)
	}
	if len(p.On) == 0 {
		p.On = DefaultRetryOn
	}
	for _, class := range p.On {
		switch {
		case class == ErrCanceled || class == ErrInvalidRequest:
			return p, fmt.Errorf("retry: %s is never retried", class)
		case !slices.Contains(ErrorClasses, class):
			return p, fmt.Errorf("retry: unknown error class %q (want one of %s)", class, retryable())
		}
	}
	b := &p.Backoff
	if b.Base < 0 || b.Max < 0 {
		return p, errors.New("retry: negative backoff")
	}
	if b.Base == 0 {
		b.Base = DefaultRetryBase
	}
	if b.Max == 0 {
		b.Max = max(DefaultRetryMax, b.Base)
	}
	if b.Base > b.Max {
		return p, fmt.Errorf("retry: backoff base %s above its max %s", b.Base, b.Max)
	}
	return p, nil
}

// retryable lists the classes a policy may retry, for error messages.
func retryable() string {
	var names []string
	for _, c := range ErrorClasses {
		if c != ErrCanceled && c != ErrInvalidRequest {
			names = append(names, string(c))
		}
	}
	return strings.Join(names, ", ")
}

// retries reports whether a normalized policy retries the failed attempt
// res: a class it lists, and no token received.
func (p *RetryPolicy) retries(res *Result) bool {
	return !res.OK && res.Chunks == 0 && slices.Contains(p.On, res.Class)
}

// wait returns the wait before retry n (from 1) of a normalized policy,
// given the failed attempt's Retry-After (0: none); ok is false when the
// server asked for a longer pause than Max.
func (p *RetryPolicy) wait(n int, retryAfter time.Duration) (d time.Duration, ok bool) {
	b := p.Backoff
	d = b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	d -= rand.N(d/2 + 1)
	if retryAfter > 0 && !b.IgnoreRetryAfter {
		if retryAfter > b.Max {
			return 0, false
		}
		d = max(d, retryAfter)
	}
	return d, true
}

// maxRetryAfter bounds a Retry-After in seconds, against overflow.
const maxRetryAfter = 1 << 30

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date;
// ok is false when there is none or it is not valid.
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		return time.Duration(min(secs, maxRetryAfter)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
