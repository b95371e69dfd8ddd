package llm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/internal/redact"
	"github.com/llmrun/llmrun/internal/wait"
	"github.com/llmrun/llmrun/modules/llm/internal/transport"
	"github.com/llmrun/llmrun/modules/metrics"
)

// DefaultTimeout is a request's total timeout unless Config or Request
// sets one.
const DefaultTimeout = 120 * time.Second

// DefaultIdleTimeout is the idle timeout unless Config or Request sets
// one: the longest wait for more of a response body once it has started.
// Servers stream tokens every few tens of milliseconds; a stream silent
// this long has stalled.
const DefaultIdleTimeout = 30 * time.Second

// NoIdleTimeout, as Config.IdleTimeout or Request.IdleTimeout, turns the
// idle timeout off.
const NoIdleTimeout time.Duration = -1

// maxCAFile bounds the size of a Config.TLS.CAFile bundle (a script's
// llm.client({ tls: { caFile } })); a system bundle is about 200 KiB.
const maxCAFile = 16 << 20

const (
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
	// For Ollama and TGI it is the server's root: a trailing "/v1" (or,
	// for Ollama, "/api") is dropped, so "http://127.0.0.1:11434" and
	// "http://127.0.0.1:11434/api" both send Ollama chat requests to
	// http://127.0.0.1:11434/api/chat.
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer <key>" (as
	// "x-api-key: <key>" to the Anthropic API). It never appears in
	// Result.Error.
	APIKey string
	// API is the API of requests that name none (Request.API): one of
	// APIs. Empty means inferred from each request's body: "messages" →
	// chat, "prompt" → completions.
	API API
	// Model is the "model" of requests whose body names none (TGI's
	// requests name no model: it is only the model reported).
	Model string
	// Headers are extra HTTP headers for every request.
	Headers map[string]string
	// Timeout is a request's total timeout, from its start to the end of
	// its response; 0 means DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout is the longest wait for more bytes of a response body
	// once its first bytes arrived: a stream silent that long ends as
	// idle_timeout. The wait for the response headers and for the first
	// bytes of the body (queueing, prefill) is bounded by Timeout alone.
	// 0 means DefaultIdleTimeout; NoIdleTimeout (any negative value)
	// means none.
	IdleTimeout time.Duration
	// Retry is the retry policy; the zero policy never retries.
	Retry RetryPolicy
	// HTTP2 makes the client speak HTTP/2 when the server does: with an
	// https server it is negotiated (ALPN), with an http:// one it is
	// spoken from the start (h2c with prior knowledge, which the server
	// must support). Otherwise the client speaks HTTP/1.1, one connection
	// per request in flight, as most LLM clients do.
	HTTP2 bool
	// TLS holds the TLS options for https servers.
	TLS TLSConfig
	// MaxConns caps the connections to the server; 0 means no cap.
	MaxConns int
	// Tokenizer, when set (a built-in encoding of tokenizer.Encodings, or a
	// tokenizer.json file or a Hugging Face model id: see tokenizer.Load), counts the output tokens of responses without usage
	// (TokenSource "tokenizer"), and checks the usage of the others
	// (Result.CheckTokens). The client then accumulates the generated text
	// of every response, asked for or not.
	Tokenizer string
}

// TLSConfig holds a client's TLS options.
type TLSConfig struct {
	// InsecureSkipVerify accepts any certificate the server presents (a
	// test server's self-signed one): the connection is encrypted but the
	// server not authenticated.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// CAFile is a PEM file of the certificate authorities to trust besides
	// the system's, read by NewClient (a relative path is relative to the
	// working directory; the llm module resolves a script's against the
	// script first).
	CAFile string `json:"caFile,omitempty"`
}

// Client sends generation requests to one OpenAI-compatible server. It is
// safe for concurrent use, and keeps connections alive between requests.
type Client struct {
	http      *http.Client
	base      *url.URL // the base URL as configured, for messages
	api       API
	endpoints map[endpointKey]string
	models    string
	header    http.Header
	model     string
	timeout   time.Duration
	idle      time.Duration // 0: none
	retry     RetryPolicy   // normalized
	secrets   redact.Secrets
	tok       tokenCounter // Config.Tokenizer's; nil: none
	apiKey    string       // Config.APIKey, for adapters that send it otherwise (headerSetter)

	// streamHeaders and wholeHeaders are the headers of every streaming
	// and non-streaming request that adds none, under a protocol that
	// sets none: net/http only reads a request's headers, so one map
	// serves them all. Each is made at the first such request (sharedHeaders):
	// a VU's init code may make clients it never sends with.
	streamHeaders, wholeHeaders atomic.Pointer[http.Header]
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
	if err := CheckHeaders(cfg.Headers); err != nil {
		return nil, fmt.Errorf("headers: %w", err)
	}
	retry, err := cfg.Retry.normalize()
	if err != nil {
		return nil, err
	}
	tok, err := newTokenCounter(cfg.Tokenizer)
	if err != nil {
		return nil, err
	}
	httpTransport, err := newTransport(cfg, base.Scheme)
	if err != nil {
		return nil, err
	}
	if cfg.API != "" {
		if _, ok := protocols[cfg.API]; !ok {
			return nil, unknownAPI(cfg.API)
		}
	}
	given, _ := url.Parse(cfg.BaseURL) // apiRoot parsed it
	given.Path = strings.TrimRight(given.Path, "/")
	given.RawPath, given.Fragment = "", ""
	var rt http.RoundTripper = httpTransport
	if useH1(cfg, base, httpTransport.Proxy) {
		rt = transport.NewH1(base, httpTransport)
	}
	c := &Client{
		http:      &http.Client{Transport: rt, CheckRedirect: checkRedirect},
		base:      given,
		api:       cfg.API,
		endpoints: make(map[endpointKey]string, 2*len(protocols)),
		models:    base.JoinPath("models").String(),
		header:    http.Header{},
		model:     cfg.Model,
		timeout:   cfg.Timeout,
		idle:      cfg.IdleTimeout,
		retry:     retry,
		tok:       tok,
	}
	for api, proto := range protocols {
		for _, stream := range []bool{false, true} {
			c.endpoints[endpointKey{api, stream}] = proto.endpoint(given, api, stream)
		}
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.idle == 0:
		c.idle = DefaultIdleTimeout
	case c.idle < 0:
		c.idle = 0
	}
	c.header.Set("Content-Type", "application/json")
	c.header.Set("User-Agent", "llmrun")
	if cfg.APIKey != "" {
		c.header.Set("Authorization", "Bearer "+cfg.APIKey)
		c.secrets.Add(cfg.APIKey)
		c.apiKey = cfg.APIKey
	}
	for k, v := range cfg.Headers {
		c.header.Set(k, v)
	}
	addHeaderSecrets(&c.secrets, cfg.Headers)
	c.secrets.AddURL(given)
	return c, nil
}

// Retry is the client's retry policy (Config.Retry), its defaults filled
// in: the policy a request's own (Request.Retry) starts from.
func (c *Client) Retry() RetryPolicy { return c.retry }

// Server is the root URL of the client's server: its base URL without a
// trailing "/" or "/v1", so that clients made with "http://h:8000" and
// "http://h:8000/v1" name one server alike.
func (c *Client) Server() string { return serverRoot(c.base, false).String() }

// CheckBaseURL says what is wrong with a server's base URL, nil when
// llm.client() would accept it.
func CheckBaseURL(raw string) error {
	_, err := apiRoot(raw)
	return err
}

// apiRoot parses a base URL into the API root, ending in "/v1".
func apiRoot(raw string) (*url.URL, error) {
	if raw != "" && !strings.Contains(raw, "://") {
		// host:port alone, which url.Parse takes for a scheme or refuses
		// ("first path segment in URL cannot contain colon").
		return nil, fmt.Errorf("invalid base URL: it has no scheme: add http:// (%s) or https://", RedactURL("http://"+raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid base URL: %w", err)
	}
	if strings.Contains(raw, "://") && u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid base URL %q: the scheme must be http or https, not %q", RedactURL(raw), u.Scheme)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("invalid base URL %q: want http://host[:port][/path] or https://host[:port][/path]", RedactURL(raw))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	u.RawPath, u.Fragment = "", ""
	return u, nil
}

// useH1 reports whether a client of cfg for the server at base takes
// transport.H1: plain-text HTTP/1.1 without a proxy (proxy is the
// transport's proxy function).
func useH1(cfg Config, base *url.URL, proxy func(*http.Request) (*url.URL, error)) bool {
	if cfg.HTTP2 || base.Scheme != "http" {
		return false
	}
	u, err := proxy(&http.Request{URL: base, Header: http.Header{}})
	return err == nil && u == nil
}

// newTransport returns a transport for load generation: no hidden cap on
// connections below cfg.MaxConns, keep-alive, proxies from the
// environment, no compression (which would hold chunks back), HTTP/1.1
// unless cfg.HTTP2, and cfg.TLS's options. scheme is the server's.
func newTransport(cfg Config, scheme string) (*http.Transport, error) {
	t := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: transport.DialWithReceiveTimes((&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext),
		Protocols:             new(http.Protocols),
		MaxIdleConnsPerHost:   transport.MaxIdleConnsPerHost,
		WriteBufferSize:       transport.RequestWriteBuffer,
		ReadBufferSize:        transport.ResponseReadBuffer,
		MaxConnsPerHost:       cfg.MaxConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
	switch {
	case !cfg.HTTP2:
		t.Protocols.SetHTTP1(true)
		t.DialContext = transport.DialKeepingHead(t.DialContext)
	case scheme == "http":
		t.Protocols.SetUnencryptedHTTP2(true)
	default:
		t.Protocols.SetHTTP1(true)
		t.Protocols.SetHTTP2(true)
	}
	if cfg.TLS.InsecureSkipVerify || cfg.TLS.CAFile != "" {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: cfg.TLS.InsecureSkipVerify}
	}
	if cfg.TLS.CAFile != "" {
		pem, err := capped.ReadFile(cfg.TLS.CAFile, maxCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls: reading the CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: no PEM certificate in the CA file %s", cfg.TLS.CAFile)
		}
		t.TLSClientConfig.RootCAs = pool
	}
	return t, nil
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() {
	c.http.CloseIdleConnections()
}

// Stream sends one request and reads its response, streamed or not, into a
// Result. Every failure is in the Result (OK false, its Class and Error).
// The end of ctx (canceled, or past its deadline) stops the request as
// canceled: the run stopped it. Only the client's own timeouts
// (Config.Timeout and Config.IdleTimeout, or the Request's) are timeout
// and idle_timeout.
//
// A failed request is sent again only as its retry policy (Request.Retry,
// else Config.Retry) says; the Result is then the final attempt's, with
// Attempts and the classes of the attempts Retried.
func (c *Client) Stream(ctx context.Context, req Request) *Result {
	return c.StreamInto(ctx, &req, nil, nil)
}

// StreamInto is Stream for a caller that sends one request after another
// and reuses what each Result holds once done with it (the JavaScript
// binding, for each VU): the Result is res, its previous content dropped
// (nil: a new one), and its ITL starts as itl[:0], so that a stream grows
// no new array of gaps. It reads *req and leaves it as it is, so that the
// caller passes its request without a copy of it in the frames on its
// stack. The Result of a request refused before it was sent is a new one.
func (c *Client) StreamInto(ctx context.Context, req *Request, res *Result, itl []float64) *Result {
	var p prepared
	policy, invalid := c.begin(req, &p)
	if invalid != nil {
		return invalid
	}
	p.result, p.itl = res, itl[:0]
	var retried []ErrorClass
	for attempt := 1; ; attempt++ {
		res := c.attempt(ctx, &p, req)
		res.Attempts, res.Retried = attempt, retried
		if res.OK || attempt >= policy.Attempts || !policy.retries(res) || !backOff(ctx, policy, attempt, res) {
			return res
		}
		retried = append(retried, res.Class)
	}
}

// begin prepares req into p and returns its retry policy (read only: the
// client's, or the request's own), or the Result of an invalid request.
// Stream's rare paths are functions of their own, so that its frame, on
// the stack while the request goes, stays small.
func (c *Client) begin(req *Request, p *prepared) (*RetryPolicy, *Result) {
	err := c.prepare(req, p)
	if err == nil {
		err = CheckHeaders(req.Headers)
	}
	if err == nil && req.Arrivals != nil {
		p.arrived = req.Arrivals.Counter(p.model)
	}
	policy := &c.retry
	if err == nil && req.Retry != nil {
		var own RetryPolicy
		own, err = req.Retry.normalize()
		policy = &own
	}
	if err != nil {
		res := &Result{API: p.api, Model: p.model, Stream: p.stream, Start: time.Now()}
		res.Class, res.Error = ErrInvalidRequest, cleanError(err.Error(), c.secretsFor(req.Headers))
		return nil, res
	}
	return policy, nil
}

// backOff waits, as policy says, before the retry of the attempt-th
// attempt, which failed as res, and reports whether to retry: not when
// the server asked for a longer wait than policy allows, nor when ctx
// ended meanwhile, which res then says.
func backOff(ctx context.Context, policy *RetryPolicy, attempt int, res *Result) bool {
	after := time.Duration(res.RetryAfter * float64(time.Second))
	backoff, ok := policy.wait(attempt, after)
	if !ok {
		res.Error += fmt.Sprintf(" (not retried: the server asked to wait %s, longer than the retry backoff's max %s)", after, policy.Backoff.Max)
		return false
	}
	if !wait.Sleep(ctx, backoff) {
		res.Error = fmt.Sprintf("canceled while waiting %s to retry: %v; attempt %d failed with %s: %s",
			backoff.Round(time.Millisecond), context.Cause(ctx), attempt, res.Class, res.Error)
		res.Class = ErrCanceled
		return false
	}
	return true
}

// attempt sends the request once; its Result is p.result when set.
func (c *Client) attempt(ctx context.Context, p *prepared, req *Request) *Result {
	res := p.result
	if res == nil {
		res = new(Result)
	}
	*res = Result{API: p.api, Model: p.model, Stream: p.stream, ITL: p.itl,
		ImageCount: p.images.count, ImageBytes: int(p.images.bytes), ImagePixels: int(p.images.pixels), attempt: attempts.Add(1)}
	res.Documents = p.documents
	timeout := c.timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	idle := c.idle
	switch {
	case req.IdleTimeout > 0:
		idle = req.IdleTimeout
	case req.IdleTimeout < 0:
		idle = 0
	}
	tr := transport.NewTracer(ctx)
	ctx, cancel := context.WithCancelCause(tr.Context(ctx))
	defer cancel(nil)
	w := transport.NewWatchdog(cancel, timeout, idle)
	defer w.Stop()

	c.send(ctx, w, tr, p, req, res)
	res.OK = res.Class == ErrNone
	if !res.OK {
		res.Error = cleanError(res.Error, c.secretsFor(req.Headers))
	}
	return res
}

// send does the HTTP exchange, filling res; a failure sets res.Class. w
// watches the request's timeouts, tr is the tracer of ctx. Its rare paths
// are functions of their own, so that its frame and those under it, on
// the VU's stack while the request goes, stay small.
func (c *Client) send(ctx context.Context, w *transport.Watchdog, tr *transport.Tracer, p *prepared, req *Request, res *Result) {
	resp := c.roundTrip(ctx, tr, p, req, res)
	if resp == nil {
		return
	}
	res.Status, res.Proto = resp.StatusCode, resp.Proto
	if code := resp.StatusCode; code < 200 || code >= 300 {
		failStatus(resp, w, tr, res)
		return
	}
	if err := readBody(p.proto, resp.Header, w.Watch(resp.Body), req.KeepText, c.tok, p.arrived, tr.ReceiveClock(), res); err != nil {
		resp.Body.Close() // drops a connection whose response is unfinished
		failRead(ctx, err, res)
		return
	}
	drainClose(resp.Body, w)
	tr.Release(resp.ProtoMajor == 1)
}

// roundTrip sends the request and returns its response, or nil once it
// has set res's failure.
func (c *Client) roundTrip(ctx context.Context, tr *transport.Tracer, p *prepared, req *Request, res *Result) *http.Response {
	hreq := c.httpRequest(ctx, p, req, res)
	if hreq == nil {
		return nil
	}
	before := time.Now()
	resp, err := c.http.Do(hreq)
	res.Start = tr.Start(before)
	setTimings(tr, res)
	if err != nil {
		failSend(ctx, tr, err, res)
		return nil
	}
	return resp
}

// httpRequest returns the HTTP request of p, or nil once it has set res's
// failure.
//
//go:noinline
func (c *Client) httpRequest(ctx context.Context, p *prepared, req *Request, res *Result) *http.Request {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(p.body))
	if err != nil {
		res.Start = time.Now()
		res.Class, res.Error = ErrInvalidRequest, err.Error()
		return nil
	}
	hreq.Header = c.requestHeaders(req.Headers, p)
	return hreq
}

// setTimings sets res.Timings from tr, once the response started at
// res.Start.
//
//go:noinline
func setTimings(tr *transport.Tracer, res *Result) {
	res.Timings = timingsOf(tr.Phases(res.Start))
}

// failSend sets res's failure to send the request: err.
//
//go:noinline
func failSend(ctx context.Context, tr *transport.Tracer, err error, res *Result) {
	res.E2E = ms(time.Since(res.Start))
	if f := notHTTP(tr.FirstBytes()); f != nil && ctx.Err() == nil {
		err = f
	}
	dnsErr, tlsErr := tr.Failures()
	res.Class, res.Error = classify(ctx, err, "sending the request", sendClass(err, tr.Connected(), dnsErr, tlsErr))
}

// failStatus sets res's failure of a response whose status is not 2xx,
// and drains and closes it.
//
//go:noinline
func failStatus(resp *http.Response, w *transport.Watchdog, tr *transport.Tracer, res *Result) {
	res.E2E = ms(time.Since(res.Start))
	class, msg, after := statusError(resp)
	res.Class, res.Error, res.RetryAfter = class, msg, after.Seconds()
	drainClose(resp.Body, w)
	tr.Release(resp.ProtoMajor == 1)
}

// failRead sets res's failure to read the response: err.
//
//go:noinline
func failRead(ctx context.Context, err error, res *Result) {
	res.Class, res.Error = classify(ctx, err, "reading the response", readClass(err))
}

// acceptStream and acceptJSON are the Accept values of requests, one
// slice for all of them as the client's own headers' are: nothing
// changes a header's values in place.
var (
	acceptStream = []string{"text/event-stream"}
	acceptJSON   = []string{"application/json"}
)

// requestHeaders returns the headers of a request prepared as p with
// headers of its own (extra): the shared ones of its kind when it has
// none and its protocol sets none, else a map of its own.
func (c *Client) requestHeaders(extra map[string]string, p *prepared) http.Header {
	hs, sets := p.proto.(headerSetter)
	if len(extra) == 0 && !sets {
		return c.sharedHeaders(p.stream)
	}
	h := c.headers(extra, p.stream)
	if sets {
		hs.setHeaders(h, c.apiKey)
	}
	return h
}

// sharedHeaders returns the headers of every streaming (or non-streaming)
// request that adds none, made at the first. Two first requests at once
// may each make them: either map serves.
func (c *Client) sharedHeaders(stream bool) http.Header {
	shared := &c.wholeHeaders
	if stream {
		shared = &c.streamHeaders
	}
	if h := shared.Load(); h != nil {
		return *h
	}
	h := c.headers(nil, stream)
	shared.Store(&h)
	return h
}

// headers returns the headers of one request: the client's, then the
// request's own (extra).
func (c *Client) headers(extra map[string]string, stream bool) http.Header {
	h := make(http.Header, len(c.header)+len(extra)+1)
	if stream {
		h["Accept"] = acceptStream
	} else {
		h["Accept"] = acceptJSON
	}
	for k, v := range c.header {
		h[k] = v
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	return h
}

// statusError reads the error of a non-2xx response: its class, a message
// quoting the start of its body, and its Retry-After (0 when none). It
// returns ErrNone for a 2xx.
func statusError(resp *http.Response) (ErrorClass, string, time.Duration) {
	var class ErrorClass
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return ErrNone, "", 0
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
	after, ok := parseRetryAfter(resp.Header, time.Now())
	if ok {
		msg += " (Retry-After " + after.String() + ")"
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLen+1))
	cut := len(body) > errorBodyLen
	if cut {
		body = body[:errorBodyLen]
	}
	if text := strings.TrimSpace(string(body)); text != "" {
		msg += ": " + text
	}
	if cut {
		msg += bodyCut
	}
	return class, msg, after
}

// readBody reads a 2xx response's body with its protocol's adapter, then
// settles its token count: with a tokenizer (tok not nil) the generated
// text is kept, counted, and dropped unless keepText. arrived, when not
// nil, counts the output tokens as they arrive: each token-bearing chunk,
// then the rest of a response read well.
func readBody(proto protocol, header http.Header, body io.Reader, keepText bool, tok tokenCounter, arrived *metrics.CounterShard, clock transport.ReceiveClock, res *Result) error {
	rr := getResponseReader()
	defer rr.release()
	rr.reasoning, rr.countText, rr.arrived, rr.cut = rr.reasoning[:0], tok != nil, arrived, false
	rr.received, rr.declared = clock, declaredLength(header)
	contentType := header.Get("Content-Type")
	rr.head.r, rr.head.kept = body, 0
	if err := proto.read(rr, contentType, &rr.head, keepText || tok != nil, res); err != nil {
		return misread(err, rr.head.head(), contentType, res)
	}
	if err := res.checkServerNumbers(); err != nil {
		return &failure{ErrDecode, err}
	}
	if res.answeredNothing = answeredNothing(res); res.answeredNothing {
		return &failure{ErrDecode, errAnsweredNothing}
	}
	if res.TextTruncated = rr.cut || rr.tools.cut; res.TextTruncated {
		tok = nil // it would count the cut text
	}
	settleTokens(tok, rr, res)
	if arrived != nil {
		arrived.Add(int64(res.uncountedTokens()))
	}
	switch {
	case !keepText:
		res.Text = ""
	case len(res.Text) > maxKeptText: // a whole response's, counted whole
		res.Text, res.TextTruncated = res.Text[:runeCut(res.Text, maxKeptText)], true
	}
	return nil
}

// drainClose reads what is left of a response body, so that its connection
// can be reused, and closes it. The drain is bounded in size, and in time:
// the request's timeout is shortened to drainGrace (w), after which its
// context is canceled and the connection dropped.
func drainClose(body io.ReadCloser, w *transport.Watchdog) {
	w.Shorten(drainGrace)
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	_ = body.Close()
}

// secretsFor returns the secrets that must not appear in the error
// message of a request with headers: the client's, and the values of its
// credential headers.
func (c *Client) secretsFor(headers map[string]string) redact.Secrets {
	secrets := c.secrets
	addHeaderSecrets(&secrets, headers)
	return secrets
}

// addHeaderSecrets adds to dst the values of credential headers (names
// with "auth", "key", "token", "secret" or "cookie"), and of an
// Authorization value its credentials without the scheme.
func addHeaderSecrets(dst *redact.Secrets, headers map[string]string) {
	for k, v := range headers {
		name := strings.ToLower(k)
		for _, word := range []string{"auth", "key", "token", "secret", "cookie"} {
			if strings.Contains(name, word) {
				dst.Add(v)
				if _, cred, ok := strings.Cut(v, " "); ok {
					dst.Add(strings.TrimSpace(cred))
				}
				break
			}
		}
	}
}
