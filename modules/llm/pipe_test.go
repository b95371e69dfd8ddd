package llm

import (
	"net/http"
	"testing"

	"github.com/llmrun/llmrun/internal/pipetest"
	"github.com/llmrun/llmrun/modules/llm/internal/transport"
)

// pipeServer serves h over in-memory pipes and returns a client of it
// made with cfg; both are closed when the test ends. Call it inside a
// synctest bubble.
func pipeServer(t *testing.T, h http.HandlerFunc, cfg Config) *Client {
	t.Helper()
	l := pipetest.NewListener()
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	cfg.BaseURL = "http://llm.test"
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	switch tr := c.http.Transport.(type) {
	case *http.Transport:
		tr.Proxy, tr.DialContext = nil, l.Dial
	case *transport.H1:
		tr.Dial = l.Dial
	}
	t.Cleanup(func() {
		c.CloseIdleConnections()
		srv.Close()
	})
	return c
}
