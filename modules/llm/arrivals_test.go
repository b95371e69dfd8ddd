package llm

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/race"
	"github.com/llmrun/llmrun/modules/metrics"
)

// modelArrivals counts a request's arriving output tokens by model, in
// counters of one shard. It is safe for concurrent use.
type modelArrivals struct {
	mu     sync.Mutex
	counts map[string]*metrics.ShardedCounter
}

// Counter implements TokenArrivals.
func (a *modelArrivals) Counter(model string) *metrics.CounterShard {
	return a.counter(model).Shard(0)
}

// Tokens returns the output tokens of model counted so far.
func (a *modelArrivals) Tokens(model string) int64 { return a.counter(model).Total() }

func (a *modelArrivals) counter(model string) *metrics.ShardedCounter {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts[model] == nil {
		if a.counts == nil {
			a.counts = map[string]*metrics.ShardedCounter{}
		}
		a.counts[model] = metrics.NewShardedCounter(1)
	}
	return a.counts[model]
}

// A request counts one output token per token-bearing chunk, and, once it
// completed, what its usage has beyond its chunks; nothing is taken back,
// and the chunks of a request that failed stay counted.
func TestArrivalsCountChunksThenTheRest(t *testing.T) {
	t.Parallel()
	usage := func(n int) string {
		return fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d}}`, n)
	}
	stream := func(events ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			for _, e := range events {
				send(w, e)
			}
		}
	}
	a, b, c := contentChunk("a"), contentChunk("b"), contentChunk("c")
	tests := []struct {
		name    string
		h       http.HandlerFunc
		class   ErrorClass
		counted int64
	}{
		{name: "usage as the chunks", h: stream(roleChunk, a, b, c, finishChunk, usage(3), "[DONE]"), counted: 3},
		{name: "several tokens per chunk: the rest at the end", h: stream(roleChunk, a, b, c, finishChunk, usage(7), "[DONE]"), counted: 7},
		{name: "usage below the chunks: nothing taken back", h: stream(a, b, c, finishChunk, usage(2), "[DONE]"), counted: 3},
		{name: "no usage: the chunks", h: stream(a, b, c, finishChunk, "[DONE]"), counted: 3},
		{name: "non-streamed: all at the end", h: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":4}}`)
		}, counted: 4},
		{name: "cut after chunks: those that arrived", h: stream(roleChunk, a, b, c), class: ErrCut, counted: 3},
		{name: "error after chunks: those that arrived", h: stream(a, b, `{"error":{"message":"engine died"}}`), class: ErrStreamError, counted: 2},
		{name: "error status: none", h: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }, class: ErrHTTP5xx},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, client := newServer(t, tc.h, Config{Model: "m1"})
			counts := &modelArrivals{}
			res := client.Stream(t.Context(), Request{Body: chatBody, Arrivals: counts})
			if res.Class != tc.class {
				t.Fatalf("class %q (%s), want %q", res.Class, res.Error, tc.class)
			}
			if got := counts.Tokens("m1"); got != tc.counted {
				t.Errorf("%d tokens counted, want %d (chunks %d, output tokens %d)", got, tc.counted, res.Chunks, res.OutputTokens)
			}
		})
	}
}

// Each protocol counts its chunks as they arrive and its usage's rest at
// the end: a completed request, streamed or not, counts its output tokens,
// into its model's counter.
func TestArrivalsOfEachProtocol(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	chat := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 12, "ignore_eos": true}
	tests := []struct {
		api  API
		body map[string]any
	}{
		{ChatCompletions, chat},
		{OllamaChat, protocolBody(OllamaChat, 12)},
		{OllamaGenerate, protocolBody(OllamaGenerate, 12)},
		{TGI, protocolBody(TGI, 12)},
		{Anthropic, anthropicBody(12, true)},
		{Anthropic, anthropicBody(5, false)},
		{Triton, map[string]any{"text_input": "hello there", "max_tokens": 12, "parameters": map[string]any{"ignore_eos": true}}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.api, " ", tc.body["stream"] != false), func(t *testing.T) {
			c, err := NewClient(Config{BaseURL: srv.URL(), Model: "m", API: tc.api})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			counts := &modelArrivals{}
			res := c.Stream(t.Context(), Request{Body: tc.body, Arrivals: counts})
			if !res.OK || res.OutputTokens == 0 {
				t.Fatalf("%s %s: %d output tokens", res.Class, res.Error, res.OutputTokens)
			}
			if got := counts.Tokens("m"); got != int64(res.OutputTokens) {
				t.Errorf("%d tokens counted, want %d", got, res.OutputTokens)
			}
		})
	}
}

// Chunks count as they are read, before the response ends: once the
// reader asks for bytes after some events, those events are counted.
func TestArrivalsCountAsChunksArrive(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	counter := metrics.NewShardedCounter(1)
	rr := getResponseReader()
	rr.arrived = counter.Shard(0)
	done := make(chan error, 1)
	var res Result
	go func() { done <- rr.readSSE(pr, time.Now(), false, &res) }()

	write := func(s string) {
		if _, err := io.WriteString(pw, s); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int64{1, 3, 6} {
		write(sse(roleChunk))
		for range i + 1 {
			write(sse(contentChunk("x")))
		}
		// The reader takes these bytes only once it has handled every
		// event before them.
		write(": keep-alive\n")
		if got := counter.Total(); got != want {
			t.Errorf("after %d content chunks, %d counted", want, got)
		}
	}
	write(sse(finishChunk, usageChunk, "[DONE]"))
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rr.release()
	// readSSE counts the chunks; the rest of the usage is readBody's.
	if res.Chunks != 6 || counter.Total() != 6 {
		t.Errorf("%d chunks, %d counted, want 6", res.Chunks, counter.Total())
	}
}

// Counting the chunks as they arrive allocates nothing: a stream read with
// a counter allocates as much as one read without.
func TestArrivalsAllocateNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts mean nothing under the race detector: TestArrivalsAllocateNothing counts them without -race, TestArrivalsCountAsChunksArrive covers the counting under it")
	}
	data, _ := openAIStream(benchChunks)
	r := bytes.NewReader(data)
	counter := metrics.NewShardedCounter(1)
	allocs := func(arrived *metrics.CounterShard) float64 {
		return testing.AllocsPerRun(50, func() {
			r.Reset(data)
			rr := getResponseReader()
			rr.arrived = arrived
			var res Result
			if err := rr.readSSE(r, time.Now(), false, &res); err != nil {
				t.Fatal(err)
			}
			rr.release()
		})
	}
	if with, without := allocs(counter.Shard(0)), allocs(nil); with > without {
		t.Errorf("%v allocations per %d-chunk stream with a counter, %v without", with, benchChunks, without)
	}
	if counter.Total() == 0 {
		t.Error("nothing counted")
	}
}
