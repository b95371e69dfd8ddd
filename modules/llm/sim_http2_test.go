package llm

import (
	"testing"
)

// TestSimulatorHTTP2 checks that the built-in simulator serves HTTP/1.1
// and h2c on one port: a client with HTTP2 streams over HTTP/2 with prior
// knowledge, one without over HTTP/1.1, both every token asked for.
func TestSimulatorHTTP2(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}},
		"max_tokens": 8, "ignore_eos": true}
	for _, tc := range []struct {
		http2 bool
		proto string
	}{{false, "HTTP/1.1"}, {true, "HTTP/2.0"}} {
		res := newClient(t, Config{BaseURL: sim.URL() + "/v1", HTTP2: tc.http2}).Stream(t.Context(), Request{Body: body})
		if !res.OK || res.Proto != tc.proto || res.OutputTokens != 8 || res.Chunks != 8 {
			t.Errorf("http2 %v: ok %v (%s), proto %q, %d tokens in %d chunks; want %s, 8 tokens in 8 chunks",
				tc.http2, res.OK, res.Error, res.Proto, res.OutputTokens, res.Chunks, tc.proto)
		}
	}
}
