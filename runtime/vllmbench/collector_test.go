package vllmbench

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/standard"
	"github.com/llmrun/llmrun/runtime/engine"
)

// records keeps a copy of each request record the run makes.
type records struct {
	mu   sync.Mutex
	kept []llm.Record
}

func (r *records) AddRequest(rec *llm.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kept = append(r.kept, *rec)
}

// firstByteWait is how long the server of TestCollectorKeepsTheResult
// holds its first request before any byte of its answer.
const firstByteWait = 20 * time.Millisecond

// The Collector receives each request's llm.Result from the llm module,
// not an object the script read back: the start it keeps is the one the
// client measured (the request's start plus its E2E is the end its
// record says, exactly, not "now" less E2E), before the server received
// the request however long the server then waited, and a failed
// request keeps its error class.
func TestCollectorKeepsTheResult(t *testing.T) {
	var (
		served   atomic.Int32
		received = make(chan time.Time, 1)
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if served.Add(1) > 1 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		received <- time.Now()
		// A slow server: the first byte after a wait.
		select {
		case <-time.After(firstByteWait):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, text := range []string{"a", "b", "c"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":%q,\"finish_reason\":null}]}\n\n", text)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":16,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	o := Defaults()
	o.NumPrompts, o.MaxConcurrency, o.RandomInputLen, o.RandomOutputLen = 2, 1, 16, 3
	source, err := Script(o, "")
	if err != nil {
		t.Fatal(err)
	}
	collector, recs := NewCollector(o), &records{}
	cfg := engine.Config{ScriptPath: "llmrun-bench.js", Source: source, LLM: llm.Config{BaseURL: srv.URL, Model: "m"},
		Modules: standard.Modules(standard.Options{Seed: 1}), Requests: recs, Results: collector,
		Logger: slog.New(slog.DiscardHandler), InitTimeout: engine.DefaultInitTimeout}
	if err := cfg.Modules.Register(ModuleName, collector); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Load(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(t.Context()); err != nil {
		t.Fatal(err)
	}

	got := collector.Requests()
	if len(got) != 2 || len(recs.kept) != 2 {
		t.Fatalf("%d requests kept and %d records, want 2 of each", len(got), len(recs.kept))
	}
	ok, failed := got[0], got[1]
	if !ok.OK || ok.Class != "" || ok.OutputTokens != 3 || ok.InputTokens != 16 || ok.RequestedLen != 16 || len(ok.ITL) != 2 {
		t.Errorf("the first request: %+v", ok)
	}
	if failed.OK || failed.Class != llm.ErrHTTP5xx || failed.Error == "" {
		t.Errorf("the failed request: %+v, want class %s", failed, llm.ErrHTTP5xx)
	}
	for i, req := range got {
		if end := req.Start.Add(time.Duration(req.E2E * float64(time.Millisecond))); !end.Equal(recs.kept[i].Time) {
			t.Errorf("request %d: start %v plus E2E %v ms is %v, not its end %v", i, req.Start, req.E2E, end, recs.kept[i].Time)
		}
	}
	if at := <-received; ok.Start.After(at) || ok.E2E < float64(firstByteWait.Milliseconds()) {
		t.Errorf("the slow request started %v after the server received it, and lasted %v ms: want a start before, and at least %v",
			ok.Start.Sub(at), ok.E2E, firstByteWait)
	}
}
