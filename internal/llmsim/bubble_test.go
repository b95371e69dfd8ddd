package llmsim

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/llmrun/llmrun/internal/pipetest"
)

// inBubble runs f in a synctest bubble with a Server of cfg served over
// in-memory connections (net.Pipe) that testClient dials by the Running's
// URL. Its engine steps on the bubble's clock, and a client's reads and
// the server's writes block durably, so a test reads the timings the
// configuration gives exactly, however loaded the host. The tokenizer,
// which the process shares, is loaded before the bubble, not in it.
func inBubble(t *testing.T, cfg Config, f func(t *testing.T, r *Running)) {
	t.Helper()
	if _, err := newPrompter(&cfg); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) { f(t, listenInBubble(t, cfg)) })
}

// listenInBubble serves a Server with cfg in the caller's bubble (see
// inBubble) until the test's end.
func listenInBubble(t testing.TB, cfg Config) *Running {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln := pipetest.NewListener()
	host := fmt.Sprintf("bubble-%d.llmsim.test:80", bubbleHosts.n.Add(1))
	bubbleHosts.m.Store(host, ln)
	r := &Running{server: s, http: &http.Server{Handler: s.Handler()}, url: "http://" + host, served: make(chan struct{})}
	go func() {
		defer close(r.served)
		r.serveErr = r.http.Serve(ln)
	}()
	t.Cleanup(func() {
		bubbleHosts.m.Delete(host)
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// bubbleHosts are the listeners of listenInBubble by host and port.
var bubbleHosts struct {
	m sync.Map
	n atomic.Uint64
}

// dialTest dials a server of listenInBubble by its address, any other
// over the network.
func dialTest(ctx context.Context, network, addr string) (net.Conn, error) {
	if ln, ok := bubbleHosts.m.Load(addr); ok {
		return ln.(*pipetest.Listener).Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// queueBehind sends a 10-token prompt, then each of prompts one at a
// time, each streamed for one token, in the bubble: the first holds the
// engine in its prefill while the others queue behind it. It returns
// once all have been answered.
func queueBehind(t *testing.T, r *Running, prompts ...[]int) {
	t.Helper()
	c := testClient(t)
	var wg sync.WaitGroup
	for i, p := range slices.Concat([][]int{make([]int, 10)}, prompts) {
		wg.Go(func() {
			if _, err := stream(t.Context(), c, r.URL(), "/v1/completions", completionsBody(p, map[string]any{"max_tokens": 1})); err != nil {
				t.Error(err)
			}
		})
		synctest.Wait() // admitted or queued before the next is sent
		if st := r.Server().Stats(); st.Running != 1 || st.Waiting != i {
			t.Errorf("stats %+v after %d requests: want the first prefilling, the others waiting", st, i+1)
		}
	}
	wg.Wait()
}
