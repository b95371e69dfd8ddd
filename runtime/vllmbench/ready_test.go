package vllmbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
)

// startingServer is the simulator behind a handler that answers 503 to the
// first notReady generation requests, as a server still loading its model.
type startingServer struct {
	next     http.Handler
	notReady int

	mu     sync.Mutex
	probes int
}

func (s *startingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/completions") {
		s.mu.Lock()
		s.probes++
		ready := s.probes > s.notReady
		s.mu.Unlock()
		if !ready {
			http.Error(w, "loading the model", http.StatusServiceUnavailable)
			return
		}
	}
	s.next.ServeHTTP(w, r)
}

func (s *startingServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probes
}

func startStarting(t *testing.T, notReady int) (*llm.Client, *startingServer) {
	t.Helper()
	sim, err := llmsim.New(llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	s := &startingServer{next: sim.Handler(), notReady: notReady}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(llm.Config{BaseURL: srv.URL, API: llm.Completions})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// --ready-check-timeout-sec probes the endpoint until it answers: a server
// that fails its first 3 requests is ready at the 4th probe, and the
// benchmark starts then; one that never answers ends the wait with the
// last failure once the timeout has passed.
func TestWaitReady(t *testing.T) {
	t.Parallel()
	c, s := startStarting(t, 3)
	var told int
	p, err := WaitReady(context.Background(), c.Probe, time.Minute, time.Millisecond, func(llm.Probe) { told++ })
	if err != nil || !p.OK {
		t.Fatalf("ready after 3 failures: %+v, %v", p, err)
	}
	if n := s.count(); n != 4 || told != 3 {
		t.Errorf("%d probes, %d failures told; want 4 and 3", n, told)
	}

	c, s = startStarting(t, 1<<30)
	// Long enough for a probe to come back with its 503 on a loaded
	// machine (200 ms was not, once in four runs); the failure reported is
	// that 503, not the probe the timeout cut.
	p, err = WaitReady(context.Background(), c.Probe, 3*time.Second, 10*time.Millisecond, nil)
	if err == nil || p.OK || !strings.Contains(err.Error(), "not ready within 3s") || !strings.Contains(err.Error(), "503") {
		t.Errorf("never ready: %+v, %v; want the timeout and the last failure", p, err)
	}
	if s.count() < 1 {
		t.Errorf("never ready: no probe sent")
	}
}
