package llmjs

import (
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
)

// The servers the binding's tests send to: the simulator, and handlers
// that answer a short stream, fail, or hold the response.

// startSim starts a simulator with 1 ms steps.
func startSim(t *testing.T) *llmsim.Running {
	t.Helper()
	return llmsimtest.Start(t, llmsimtest.Fast())
}

// script answers the requests in turn with the given handlers, the last
// one for every request after; it counts the requests.
type script struct {
	n     atomic.Int32
	steps []http.HandlerFunc
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(s.n.Add(1)) - 1
	s.steps[min(i, len(s.steps)-1)](w, r)
}

// fail answers the HTTP status code.
func fail(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, http.StatusText(code), code) }
}

// okStream answers a short, complete stream.
func okStream(w http.ResponseWriter, r *http.Request) {
	startSSE(w)
	send(w, contentChunk("a"))
	send(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	send(w, "[DONE]")
}

// contentChunk is a chat chunk bringing s.
func contentChunk(s string) string {
	return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, s)
}

// startSSE starts an event stream.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// send writes one SSE event and flushes it.
func send(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

// sleep waits d, or until the request is canceled, having read the body
// (the server notices a client gone only once the body is read).
func sleep(r *http.Request, d time.Duration) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
}

// writeCA writes the certificate of a TLS test server to a PEM file and
// returns its path.
func writeCA(t testing.TB, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
