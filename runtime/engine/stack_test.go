//go:build !race

package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/modules/standard"
)

// TestStreamingVUStack checks that no VU of bench/stream.js, running an
// iteration and then, in the next one, waiting for its next token, grows
// its stack past 8 KiB. A goroutine keeps the stack it grew to while it
// stays deep (a collection halves a stack only when less than a quarter
// of it is in use), and a VU streams some 6 KB deep all run long: one
// frame too many on any path of an iteration (the dial of its connection,
// sending, reading, the samples at its end) doubles every VU's stack to
// 16 KiB, 80 MiB more for 10,000 streams. The VUs run in a process of
// their own (this test again) whose goroutines may not grow a stack past
// 8 KiB (debug.SetMaxStack): a stack that grows past it ends the process
// with the call path that grew it.
//
// The first request of a process encodes the module's configuration
// (Module.client) with encoding/json, whose first encoding of a type is
// deeper: the test's VUs start after one that did, as all VUs of a run but
// its first do.
func TestStreamingVUStack(t *testing.T) {
	if os.Getenv(stackChildEnv) == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), exe, "-test.run=^TestStreamingVUStack$", "-test.count=1")
		cmd.Env = append(os.Environ(), stackChildEnv+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the VUs' process: %v\n%s", err, out)
		}
		return
	}
	const vus = 200
	src, err := os.ReadFile("../../bench/stream.js")
	if err != nil {
		t.Fatal(err)
	}
	srv := startStackServer(t)
	path := filepath.Join(t.TempDir(), "stream.js")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Load(t.Context(), Config{ScriptPath: path, Seed: 1, Logger: slog.New(slog.DiscardHandler), Env: map[string]string{"TOKENS": "10"},
		LLM: llm.Config{BaseURL: srv.url, Model: testModel}, Modules: standard.Modules(standard.Options{Seed: 1})})
	if err != nil {
		t.Fatal(err)
	}
	tags := metrics.NewTagSet(scenarioTags(&e.scenarios[0], e.options.Tags))
	pool := make([]*vu, vus+1)
	for i := range pool {
		if pool[i], err = e.newVU(t.Context(), int64(i+1), nil); err != nil {
			t.Fatal(err)
		}
		if err := pool[i].bind(&e.scenarios[0], tags, nil, e.live[0]); err != nil {
			t.Fatal(err)
		}
	}
	pool[0].RunIteration(t.Context()) // the process's first request
	pool = pool[1:]

	defer debug.SetMaxStack(debug.SetMaxStack(8 << 10))
	ctx, cancel := context.WithCancel(t.Context())
	var answered sync.WaitGroup
	answered.Add(vus)
	next := make(chan struct{})
	var done sync.WaitGroup
	for _, v := range pool {
		done.Go(func() {
			v.RunIteration(context.Background()) // a whole answer
			answered.Done()
			<-next
			v.RunIteration(ctx) // its first token, then waits
		})
	}
	answered.Wait()
	for _, c := range e.llmModule.Targets(ctx) {
		c.CloseIdleConnections()
	}
	srv.stall()
	close(next)
	// Each VU's first answer has 10 tokens, its second 1 so far; the
	// warm VU's had 10.
	want := int64(10 + vus*11)
	deadline := time.Now().Add(time.Minute)
	for arrived(e) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d tokens arrived, want %d", arrived(e), want)
		}
		runtime.Gosched()
	}
	cancel()
	done.Wait()
}

// stackChildEnv is set in the process of TestStreamingVUStack's VUs.
const stackChildEnv = "LLMRUN_TEST_VU_STACK_CHILD"

// arrived counts the tokens that reached e's VUs.
func arrived(e *Engine) int64 {
	_, total := e.run.arrivals.counts()
	return total
}

// stackServer serves whole streamed answers of 10 tokens, a goroutine
// for each connection, until told to stall; from then on it serves each
// new connection's first request on its accepting goroutine, with the
// headers and the first token of an answer, and then nothing: the
// stacks that grow then are the clients'.
type stackServer struct {
	ln      net.Listener
	url     string
	stalled chan struct{}
	// answering are the goroutines that serve whole answers.
	answering sync.WaitGroup
	mu        sync.Mutex
	open      []net.Conn
}

// startStackServer starts a stackServer and stops it at the end of t.
func startStackServer(t *testing.T) *stackServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stackServer{ln: ln, url: "http://" + ln.Addr().String() + "/v1", stalled: make(chan struct{})}
	whole := []byte(tenTokenStream())
	first := whole[:bytes.Index(whole, []byte("\n\n"))+2] // its first event
	accepting := make(chan error, 1)
	go func() { accepting <- s.accept(whole, first) }()
	t.Cleanup(func() {
		ln.Close()
		if err := <-accepting; !errors.Is(err, net.ErrClosed) {
			t.Errorf("serving: %v", err)
		}
		s.mu.Lock()
		for _, c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.answering.Wait()
	})
	return s
}

// stall makes s stall the answers of new connections, once the
// goroutines that served whole answers ended with their connections.
func (s *stackServer) stall() {
	s.answering.Wait()
	close(s.stalled)
}

func (s *stackServer) accept(whole, first []byte) error {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.open = append(s.open, conn)
		s.mu.Unlock()
		select {
		case <-s.stalled:
			if err := answer(bufio.NewReader(conn), conn, first, false); err != nil {
				return err
			}
		default:
			s.answering.Go(func() {
				r := bufio.NewReader(conn)
				for answer(r, conn, whole, true) == nil {
				}
			})
		}
	}
}

// answer reads a request from r and writes a chunked streamed answer of
// body to w, ended when whole.
func answer(r *bufio.Reader, w io.Writer, body []byte, whole bool) error {
	req, err := http.ReadRequest(r)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, req.Body); err != nil {
		return err
	}
	end := ""
	if whole {
		end = "0\r\n\r\n"
	}
	_, err = fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n%s", len(body), body, end)
	return err
}
