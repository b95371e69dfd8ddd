package llm

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fastRetry retries up to attempts times with waits of about a millisecond.
func fastRetry(attempts int, on ...ErrorClass) RetryPolicy {
	return RetryPolicy{Attempts: attempts, On: on, Backoff: Backoff{Base: time.Millisecond, Max: 2 * time.Millisecond}}
}

// script answers the requests in turn with the given handlers, the last
// one for every request after; it counts the requests.
type script struct {
	n        atomic.Int32
	mu       sync.Mutex
	arrivals []time.Time
	steps    []http.HandlerFunc
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(s.n.Add(1)) - 1
	s.mu.Lock()
	s.arrivals = append(s.arrivals, time.Now())
	s.mu.Unlock()
	s.steps[min(i, len(s.steps)-1)](w, r)
}

// gap returns the time between the arrivals of the first two requests.
func (s *script) gap() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrivals[1].Sub(s.arrivals[0])
}

func fail(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, http.StatusText(code), code) }
}

// cutAfter answers a stream of n tokens and closes the connection before
// its end.
func cutAfter(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		for range n {
			send(w, contentChunk("a"))
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		steps    []http.HandlerFunc
		cfg      RetryPolicy
		req      *RetryPolicy
		class    ErrorClass
		attempts int
		retried  []ErrorClass
	}{
		{name: "none by default", steps: []http.HandlerFunc{fail(500), okStream}, class: ErrHTTP5xx, attempts: 1},
		{name: "one attempt is none", steps: []http.HandlerFunc{fail(500), okStream}, cfg: fastRetry(1), class: ErrHTTP5xx, attempts: 1},
		{name: "until it succeeds", steps: []http.HandlerFunc{fail(503), fail(429), okStream}, cfg: fastRetry(5),
			attempts: 3, retried: []ErrorClass{ErrHTTP5xx, ErrHTTP429}},
		{name: "until the attempts run out", steps: []http.HandlerFunc{fail(500)}, cfg: fastRetry(3),
			class: ErrHTTP5xx, attempts: 3, retried: []ErrorClass{ErrHTTP5xx, ErrHTTP5xx}},
		{name: "a class not listed", steps: []http.HandlerFunc{fail(404), okStream}, cfg: fastRetry(3), class: ErrHTTP4xx, attempts: 1},
		{name: "listed classes only", steps: []http.HandlerFunc{fail(500), okStream}, cfg: fastRetry(3, ErrHTTP429), class: ErrHTTP5xx, attempts: 1},
		{name: "cut before any token", steps: []http.HandlerFunc{cutAfter(0), okStream}, cfg: fastRetry(3, ErrCut),
			attempts: 2, retried: []ErrorClass{ErrCut}},
		{name: "never after a token", steps: []http.HandlerFunc{cutAfter(1), okStream}, cfg: fastRetry(3, ErrCut), class: ErrCut, attempts: 1},
		{name: "the request's policy", steps: []http.HandlerFunc{fail(502), okStream}, req: &RetryPolicy{Attempts: 2, Backoff: Backoff{Base: time.Millisecond}},
			attempts: 2, retried: []ErrorClass{ErrHTTP5xx}},
		{name: "the request's policy turns retries off", steps: []http.HandlerFunc{fail(502), okStream}, cfg: fastRetry(3), req: &RetryPolicy{},
			class: ErrHTTP5xx, attempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{steps: tt.steps}
			_, c := newServer(t, s.ServeHTTP, Config{Retry: tt.cfg})
			res := c.Stream(t.Context(), Request{Body: chatBody, Retry: tt.req})
			if res.Class != tt.class || res.OK != (tt.class == ErrNone) || res.Attempts != tt.attempts || !reflect.DeepEqual(res.Retried, tt.retried) {
				t.Errorf("class %q (%s), attempts %d, retried %v; want class %q, attempts %d, retried %v",
					res.Class, res.Error, res.Attempts, res.Retried, tt.class, tt.attempts, tt.retried)
			}
			if got := int(s.n.Load()); got != tt.attempts {
				t.Errorf("the server got %d requests, want %d", got, tt.attempts)
			}
		})
	}
}

func TestRetryConnect(t *testing.T) {
	t.Parallel()
	c := newClient(t, Config{BaseURL: "http://127.0.0.1:1", Retry: fastRetry(2)})
	res := c.Stream(t.Context(), Request{Body: chatBody})
	if res.Class != ErrConnect || res.Attempts != 2 || !reflect.DeepEqual(res.Retried, []ErrorClass{ErrConnect}) {
		t.Errorf("class %q, attempts %d, retried %v; want connect twice", res.Class, res.Attempts, res.Retried)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	slowDown := func(after string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", after)
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}
	}
	t.Run("a lower bound on the wait", func(t *testing.T) {
		s := &script{steps: []http.HandlerFunc{slowDown("1"), okStream}}
		p := fastRetry(2)
		p.Backoff.Max = 5 * time.Second
		_, c := newServer(t, s.ServeHTTP, Config{Retry: p})
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if !res.OK || res.Attempts != 2 || res.RetryAfter != 0 {
			t.Fatalf("ok %v (%s %s), attempts %d, retryAfter %v", res.OK, res.Class, res.Error, res.Attempts, res.RetryAfter)
		}
		if gap := s.gap(); gap < time.Second {
			t.Errorf("retried %v after a Retry-After of 1s", gap)
		}
	})
	t.Run("ignored when asked", func(t *testing.T) {
		s := &script{steps: []http.HandlerFunc{slowDown("1"), okStream}}
		p := fastRetry(2)
		p.Backoff.IgnoreRetryAfter = true
		_, c := newServer(t, s.ServeHTTP, Config{Retry: p})
		if res := c.Stream(t.Context(), Request{Body: chatBody}); !res.OK || res.Attempts != 2 {
			t.Fatalf("ok %v (%s %s), attempts %d", res.OK, res.Class, res.Error, res.Attempts)
		}
		if gap := s.gap(); gap >= 900*time.Millisecond {
			t.Errorf("retried %v after the failure, want the backoff's millisecond", gap)
		}
	})
	t.Run("longer than the backoff's max: no retry", func(t *testing.T) {
		s := &script{steps: []http.HandlerFunc{slowDown("60"), okStream}}
		_, c := newServer(t, s.ServeHTTP, Config{Retry: fastRetry(3)})
		res := c.Stream(t.Context(), Request{Body: chatBody})
		if res.Class != ErrHTTP429 || res.Attempts != 1 || res.RetryAfter != 60 || !strings.Contains(res.Error, "not retried: the server asked to wait 1m0s") {
			t.Errorf("class %q, attempts %d, retryAfter %v, error %q", res.Class, res.Attempts, res.RetryAfter, res.Error)
		}
	})
}

func TestRetryWaitEndsWithTheRun(t *testing.T) {
	t.Parallel()
	s := &script{steps: []http.HandlerFunc{fail(503)}}
	_, c := newServer(t, s.ServeHTTP, Config{Retry: RetryPolicy{Attempts: 3, Backoff: Backoff{Base: time.Minute}}})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	res := c.Stream(ctx, Request{Body: chatBody})
	if res.Class != ErrCanceled || res.Attempts != 1 || !strings.Contains(res.Error, "canceled while waiting") || !strings.Contains(res.Error, "HTTP 503") {
		t.Errorf("class %q, attempts %d, error %q; want canceled in the wait after the 503", res.Class, res.Attempts, res.Error)
	}
}

func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	p, err := RetryPolicy{Attempts: 10, Backoff: Backoff{Base: 100 * time.Millisecond, Max: time.Second}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.On, DefaultRetryOn) {
		t.Errorf("on %v, want the default %v", p.On, DefaultRetryOn)
	}
	for n, ceiling := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		ceiling *= time.Millisecond
		for range 50 {
			d, ok := p.wait(n+1, 0)
			if !ok || d < ceiling/2 || d > ceiling {
				t.Fatalf("retry %d: wait %v, want between %v and %v", n+1, d, ceiling/2, ceiling)
			}
		}
	}
	if d, ok := p.wait(1, 700*time.Millisecond); !ok || d != 700*time.Millisecond {
		t.Errorf("wait %v with a Retry-After of 700ms, want 700ms", d)
	}
	if _, ok := p.wait(1, 2*time.Second); ok {
		t.Error("retry allowed after a Retry-After beyond the max")
	}
	d, err := RetryPolicy{Attempts: 2}.normalize()
	if err != nil || d.Backoff.Base != DefaultRetryBase || d.Backoff.Max != DefaultRetryMax {
		t.Errorf("defaults %+v (%v)", d.Backoff, err)
	}
}

func TestRetryPolicyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p   RetryPolicy
		msg string
	}{
		{RetryPolicy{Attempts: -1}, "negative attempts"},
		{RetryPolicy{On: []ErrorClass{"stream"}}, `unknown error class "stream" (want one of connect, dns, tls, timeout, idle_timeout, http_4xx, http_429, http_5xx, stream_error, cut, decode)`},
		{RetryPolicy{On: []ErrorClass{ErrCanceled}}, "canceled is never retried"},
		{RetryPolicy{On: []ErrorClass{ErrInvalidRequest}}, "invalid_request is never retried"},
		{RetryPolicy{Backoff: Backoff{Base: -time.Second}}, "negative backoff"},
		{RetryPolicy{Backoff: Backoff{Base: time.Minute, Max: time.Second}}, "backoff base 1m0s above its max 1s"},
	}
	for _, tt := range tests {
		if _, err := NewClient(Config{BaseURL: "http://h", Retry: tt.p}); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%+v: error %v, want %q", tt.p, err, tt.msg)
		}
		res := newClient(t, Config{BaseURL: "http://127.0.0.1:1"}).Stream(t.Context(), Request{Body: chatBody, Retry: &tt.p})
		if res.Class != ErrInvalidRequest || !strings.Contains(res.Error, tt.msg) || res.Attempts != 0 {
			t.Errorf("request with %+v: class %q, attempts %d, error %q", tt.p, res.Class, res.Attempts, res.Error)
		}
	}
}
