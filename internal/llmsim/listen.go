package llmsim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Running is a Server listening on a TCP address.
type Running struct {
	server *Server
	http   *http.Server
	url    string
	served chan struct{} // closed when Serve has returned
	// serveErr is Serve's error, read after served is closed.
	serveErr error
}

// Listen starts a Server with cfg and serves it on addr ("127.0.0.1:0"
// picks a free port) until Close, over HTTP/1.1 and over HTTP/2 without
// TLS (h2c, prior knowledge: the client speaks HTTP/2 from the start). ctx bounds only the listening, like
// net.ListenConfig.Listen.
func Listen(ctx context.Context, addr string, cfg Config) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		s.Close()
		return nil, err
	}
	// HTTP/1.1 and HTTP/2 cleartext with prior knowledge (h2c) on one
	// port, so that a client's http2 option can be tried without TLS.
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	r := &Running{
		server: s,
		http:   &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, Protocols: &protocols},
		url:    "http://" + ln.Addr().String(),
		served: make(chan struct{}),
	}
	go func() {
		defer close(r.served)
		r.serveErr = r.http.Serve(ln)
	}()
	return r, nil
}

// URL returns the base URL, "http://host:port"; the OpenAI base URL is
// URL() + "/v1".
func (r *Running) URL() string { return r.url }

// Server returns the running Server, for its Stats.
func (r *Running) Server() *Server { return r.server }

// Close stops the server: it cuts in-flight requests, closes the listener
// and connections, and waits until serving has stopped. It returns the
// error that stopped serving early, if any.
func (r *Running) Close() error {
	r.server.Close()
	err := r.http.Close()
	<-r.served
	if !errors.Is(r.serveErr, http.ErrServerClosed) {
		return r.serveErr
	}
	return err
}
