package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout is a request's total timeout unless Config or Request
// sets one.
const DefaultTimeout = 120 * time.Second

const (
	// maxIdleConnsPerHost keeps idle connections for far more VUs than a
	// run has, so that keep-alive never silently caps the load.
	maxIdleConnsPerHost = 10000
	// errorBodyLen bounds the body of an error response quoted in
	// Result.Error.
	errorBodyLen = 4 << 10
	// maxDrain and drainGrace bound the reading of what is left of a
	// finished response so that its connection can be reused.
	maxDrain   = 256 << 10
	drainGrace = time.Second
)

// Config configures a Client.
type Config struct {
	// BaseURL is the server's OpenAI-compatible API root, with or without
	// its "/v1": "http://127.0.0.1:8000" and "http://127.0.0.1:8000/v1"
	// both send chat requests to http://127.0.0.1:8000/v1/chat/completions.
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer <key>". It never
	// appears in Result.Error.
	APIKey string
	// Model is the "model" of requests whose body names none.
	Model string
	// Headers are extra HTTP headers for every request.
	Headers map[string]string
	// Timeout is a request's total timeout, from its start to the end of
	// its response; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxConns caps the connections to the server; 0 means no cap.
	MaxConns int
}

// Client sends generation requests to one OpenAI-compatible server. It is
// safe for concurrent use, and keeps connections alive between requests.
type Client struct {
	http      *http.Client
	endpoints map[API]string
	models    string
	header    http.Header
	model     string
	timeout   time.Duration
	secrets   []string
}

// NewClient returns a client for the server cfg describes, with its own
// connection pool.
func NewClient(cfg Config) (*Client, error) {
	base, err := apiRoot(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("negative timeout %v", cfg.Timeout)
	}
	if cfg.MaxConns < 0 {
		return nil, fmt.Errorf("negative connection cap %d", cfg.MaxConns)
	}
	c := &Client{
		http: &http.Client{Transport: newTransport(cfg.MaxConns)},
		endpoints: map[API]string{
			ChatCompletions: base.JoinPath("chat", "completions").String(),
			Completions:     base.JoinPath("completions").String(),
		},
		models:  base.JoinPath("models").String(),
		header:  http.Header{},
		model:   cfg.Model,
		timeout: cfg.Timeout,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	c.header.Set("Content-Type", "application/json")
	c.header.Set("User-Agent", "llmrun")
	if cfg.APIKey != "" {
		c.header.Set("Authorization", "Bearer "+cfg.APIKey)
		c.secrets = append(c.secrets, cfg.APIKey)
	}
	for k, v := range cfg.Headers {
		c.header.Set(k, v)
	}
	c.secrets = appendSecrets(c.secrets, cfg.Headers)
	return c, nil
}

// apiRoot parses a base URL into the API root, ending in "/v1".
func apiRoot(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("invalid base URL %q: want http://host[:port][/path] or https://host[:port][/path]", u.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	u.RawPath, u.Fragment = "", ""
	return u, nil
}

// newTransport returns a transport for load generation: no hidden cap on
// connections below maxConns, keep-alive, proxies from the environment, and
// no compression, which would hold chunks back.
func newTransport(maxConns int) *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		MaxConnsPerHost:       maxConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() {
	c.http.CloseIdleConnections()
}

// Stream sends one request and reads its response, streamed or not, into a
// Result. It never retries. Every failure is in the Result (OK false, its
// Class and Error). The end of ctx (canceled, or past its deadline) stops
// the request as canceled: the run stopped it. Only the client's own
// timeout (Config.Timeout, Request.Timeout) is a timeout.
func (c *Client) Stream(ctx context.Context, req Request) *Result {
	res := &Result{}
	p, err := c.prepare(req)
	res.API, res.Model, res.Stream = p.api, p.model, p.stream
	if err != nil {
		res.Start = time.Now()
		res.Class, res.Error = ErrInvalidRequest, redact(err.Error(), c.secretsFor(req))
		return res
	}
	timeout := c.timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := time.AfterFunc(timeout, func() { cancel(&timeoutError{timeout.String()}) })
	defer deadline.Stop()

	c.send(ctx, deadline, p, req, res)
	res.OK = res.Class == ErrNone
	if !res.OK {
		res.Error = redact(res.Error, c.secretsFor(req))
	}
	return res
}

// send does the HTTP exchange, filling res; a failure sets res.Class.
// deadline is the timer of the request's timeout.
func (c *Client) send(ctx context.Context, deadline *time.Timer, p prepared, req Request, res *Result) {
	var tr tracer
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tr.clientTrace()),
		http.MethodPost, p.url, bytes.NewReader(p.body))
	if err != nil {
		res.Start = time.Now()
		res.Class, res.Error = ErrInvalidRequest, err.Error()
		return
	}
	hreq.Header = c.headers(req, p.stream)
	before := time.Now()
	resp, err := c.http.Do(hreq)
	res.Start = tr.start(before)
	res.Timings = tr.timings(res.Start)
	if err != nil {
		res.E2E = ms(time.Since(res.Start))
		class := ErrConnect
		if tr.connected() {
			class = ErrStream // the connection broke before the response
		}
		res.Class, res.Error = classify(ctx, err, "sending the request", class)
		return
	}
	res.Status = resp.StatusCode
	if class, msg := statusError(resp); class != ErrNone {
		res.E2E = ms(time.Since(res.Start))
		res.Class, res.Error = class, msg
		drainClose(resp.Body, deadline)
		return
	}
	if err := readBody(resp, req.KeepText, res); err != nil {
		resp.Body.Close() // drops a connection whose response is unfinished
		res.Class, res.Error = classify(ctx, err, "reading the response", ErrStream)
		return
	}
	drainClose(resp.Body, deadline)
}

// headers returns the headers of one request: the client's, then the
// request's own.
func (c *Client) headers(req Request, stream bool) http.Header {
	h := make(http.Header, len(c.header)+len(req.Headers)+1)
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	for k, v := range c.header {
		h[k] = v
	}
	for k, v := range req.Headers {
		h.Set(k, v)
	}
	return h
}

// statusError reads the error of a non-2xx response: its class and a
// message quoting the start of its body. It returns ErrNone for a 2xx.
func statusError(resp *http.Response) (ErrorClass, string) {
	var class ErrorClass
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return ErrNone, ""
	case code == http.StatusTooManyRequests:
		class = ErrHTTP429
	case code >= 400 && code < 500:
		class = ErrHTTP4xx
	case code >= 500:
		class = ErrHTTP5xx
	default: // a 1xx or 3xx left unhandled by net/http
		class = ErrDecode
	}
	msg := "HTTP " + resp.Status
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLen))
	if text := strings.TrimSpace(string(body)); text != "" {
		msg += ": " + text
	}
	return class, msg
}

// readBody reads a 2xx response by its content type: an event stream, or
// a whole JSON response (asked for with "stream": false, or a server that
// does not stream).
func readBody(resp *http.Response, keepText bool, res *Result) error {
	ct := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(ct)
	rr := getResponseReader()
	defer rr.release()
	switch {
	case mediaType == "text/event-stream":
		return rr.readSSE(resp.Body, res.Start, keepText, res)
	case mediaType == "application/json" || strings.HasSuffix(mediaType, "+json"):
		return rr.readJSON(resp.Body, res.Start, keepText, res)
	}
	res.E2E = ms(time.Since(res.Start))
	return &failure{ErrDecode, fmt.Errorf("unexpected content type %q, want text/event-stream or application/json", ct)}
}

// drainClose reads what is left of a response body, so that its connection
// can be reused, and closes it. The drain is bounded in size, and in time:
// the request's timeout is shortened to drainGrace, after which its context
// is canceled and the connection dropped.
func drainClose(body io.ReadCloser, deadline *time.Timer) {
	deadline.Reset(drainGrace)
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	_ = body.Close()
}

// secretsFor returns the secrets that must not appear in req's error
// message: the client's, and the values of req's credential headers.
func (c *Client) secretsFor(req Request) []string {
	return appendSecrets(slices.Clip(c.secrets), req.Headers)
}

// appendSecrets appends the values of credential headers (names with
// "auth", "key", "token", "secret" or "cookie"), and of an Authorization
// value its credentials without the scheme.
func appendSecrets(dst []string, headers map[string]string) []string {
	for k, v := range headers {
		name := strings.ToLower(k)
		for _, word := range []string{"auth", "key", "token", "secret", "cookie"} {
			if strings.Contains(name, word) {
				dst = append(dst, v)
				if _, cred, ok := strings.Cut(v, " "); ok {
					dst = append(dst, strings.TrimSpace(cred))
				}
				break
			}
		}
	}
	return dst
}
