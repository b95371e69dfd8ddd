package llmsim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The timing tests run the simulator in a synctest bubble
// (listenInBubble): its engine steps on the bubble's clock, so each time
// is exactly what the configuration gives, however loaded the host.

func TestSingleRequestTiming(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PrefillBase, cfg.PrefillPerToken = 40*time.Millisecond, 100*time.Microsecond
	cfg.DecodeBase, cfg.DecodePerSeq = 15*time.Millisecond, time.Millisecond
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		const tokens = 30
		s := mustStream(t, r, "/v1/completions", completionsBody(make([]int, 200), map[string]any{
			"max_tokens": tokens, "ignore_eos": true,
		}))
		if len(s.tokenAt) != tokens {
			t.Fatalf("%d tokens, want %d", len(s.tokenAt), tokens)
		}
		prefill := 40*time.Millisecond + 200*100*time.Microsecond // 200 token ids
		decode := 16 * time.Millisecond                           // one sequence
		for i, at := range s.tokenAt {
			if want := prefill + time.Duration(i)*decode; at != want {
				t.Errorf("token %d at %v, want %v (the prefill, then %d decode steps)", i, at, want, i)
			}
		}
	})
}

// Two slots, four requests sent one after another at the same instant:
// the second is prefilled after the first, the third and fourth wait for
// both to finish, then share a prefill.
func TestBatchSlotsQueueRequests(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxNumSeqs = 2
	cfg.PrefillBase, cfg.PrefillPerToken = 20*time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 20*time.Millisecond, 0
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		c := testClient(t)

		const requests, tokens = 4, 20
		firstToken := make([]time.Duration, requests)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range requests {
			wg.Go(func() {
				s, err := stream(t.Context(), c, r.URL(), "/v1/chat/completions", chatBody("hi", map[string]any{
					"max_tokens": tokens, "ignore_eos": true,
				}))
				if err != nil || len(s.tokenAt) != tokens {
					t.Errorf("request %d: %v", i, err)
					return
				}
				firstToken[i] = s.start.Sub(start) + s.ttft()
			})
			synctest.Wait() // queued before the next is sent
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		// The first is prefilled alone (20ms), then the second (20ms);
		// both then decode their other 19 tokens in 19 steps of 20ms; the
		// third and fourth get the slots they free and share a prefill.
		step := 20 * time.Millisecond
		both := 2*step + (tokens-1)*step
		if want := []time.Duration{step, 2 * step, both + step, both + step}; !slices.Equal(firstToken, want) {
			t.Errorf("first tokens at %v, want %v", firstToken, want)
		}
		// A client reads its [DONE] before the engine's next step counts
		// its sequence completed.
		synctest.Wait()
		if st := r.Server().Stats(); st.Completed != requests || st.Running != 0 || st.Waiting != 0 || st.Tokens != requests*tokens {
			t.Errorf("stats %+v, want %d requests of %d tokens completed", st, requests, tokens)
		}
	})
}

func TestPrefillTokenBudget(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxNumBatchedTokens = 100
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		// A holds the engine in its prefill while the others queue; then B
		// (60 tokens) and C (30) share a prefill, and D (60) needs another.
		queueBehind(t, r, make([]int, 60), make([]int, 30), make([]int, 60))
		if st := r.Server().Stats(); st.PrefillSteps != 3 || st.DecodeSteps != 0 {
			t.Errorf("stats %+v: want 3 prefill steps", st)
		}
	})
}

func TestCanceledClientsFreeSlots(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxNumSeqs = 1
	cfg.DecodeBase = 10 * time.Millisecond
	cfg.MaxModelLen = 1 << 20
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		c := testClient(t)
		stats := r.Server().Stats

		// A holds the only slot for hours unless canceled.
		ctxA, cancelA := context.WithCancel(t.Context())
		defer cancelA()
		respA, err := post(ctxA, c, r.URL(), "/v1/completions", completionsBody("a", map[string]any{
			"max_tokens": 1 << 19, "ignore_eos": true, "stream": true,
		}))
		if err != nil {
			t.Fatal(err)
		}
		defer respA.Body.Close()
		if _, err := respA.Body.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}

		// B waits behind A, then leaves while waiting.
		ctxB, cancelB := context.WithCancel(t.Context())
		go func() {
			if resp, err := post(ctxB, c, r.URL(), "/v1/completions", completionsBody("b", nil)); err == nil {
				resp.Body.Close()
			}
		}()
		eventually(t, 5*time.Second, "B waiting", func() bool { return stats().Waiting == 1 })
		cancelB()
		eventually(t, 5*time.Second, "B dropped", func() bool { st := stats(); return st.Waiting == 0 && st.Canceled == 1 })

		// C waits behind A, and runs once A leaves.
		done := make(chan error, 1)
		go func() {
			s, err := stream(t.Context(), c, r.URL(), "/v1/completions", completionsBody("c", map[string]any{"max_tokens": 3}))
			if err == nil && !s.done {
				err = context.Canceled
			}
			done <- err
		}()
		eventually(t, 5*time.Second, "C waiting", func() bool { return stats().Waiting == 1 })
		cancelA()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second): // on the bubble's clock, not the host's
			t.Fatal("C never ran after A left")
		}
		// The client can read C's [DONE] before the engine's step that
		// finished C has updated its counts.
		eventually(t, 5*time.Second, "C counted as completed", func() bool { st := stats(); return st.Completed == 1 && st.Running == 0 })
		if st := stats(); st.Canceled != 2 {
			t.Errorf("stats %+v, want A and B canceled", st)
		}
	})
}

func TestCloseCutsRequests(t *testing.T) {
	r, err := Listen(t.Context(), "127.0.0.1:0", fastConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := testClient(t)
	done := make(chan *streamed, 1)
	go func() {
		s, _ := stream(t.Context(), c, r.URL(), "/v1/completions", completionsBody("a", map[string]any{
			"max_tokens": 10000, "ignore_eos": true,
		}))
		done <- s
	}()
	eventually(t, 5*time.Second, "request running", func() bool { return r.Server().Stats().Tokens > 0 })
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-done:
		if s != nil && s.done {
			t.Error("a cut stream ended with [DONE]")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open after Close")
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// A closed Server answers 503.
	s, err := New(fastConfig())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(`{"prompt":"a"}`)))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "server_error") {
		t.Errorf("closed server: %d %s", rec.Code, rec.Body)
	}
}

// The server's own view of TTFT and of the gaps between tokens, which
// clients compare with theirs, is served at GET /stats.
func TestStatsReportServerSideTTFT(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PrefillBase, cfg.PrefillPerToken = 30*time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 20*time.Millisecond, 0
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		for range 2 {
			mustStream(t, r, "/v1/completions", completionsBody("hello", map[string]any{"max_tokens": 3}))
		}
		st := getStats(t, r)
		if st.FirstTokens != 2 || st.Received != 2 {
			t.Fatalf("stats %+v: want 2 requests with a first token", st)
		}
		if st.TTFTSum != 2*cfg.PrefillBase {
			t.Errorf("server-side TTFT %v over 2 requests, want 2 × the prefill %v", st.TTFTSum, cfg.PrefillBase)
		}
		// 3 tokens a stream, each decode step flushed alone: 2 gaps a stream.
		if st.FlushGaps != 4 {
			t.Fatalf("%d flush gaps, want 4 (2 streams of 3 tokens)", st.FlushGaps)
		}
		if st.FlushGapSum != 4*cfg.DecodeBase {
			t.Errorf("server-side gaps %v over 4, want 4 × the decode step %v", st.FlushGapSum, cfg.DecodeBase)
		}
	})
}

// The instance id its starter chose is answered by GET /stats, and by no
// response that llmrun measures: not in a completion's headers or body.
func TestStatsNameTheInstance(t *testing.T) {
	const id = "harness-5d1e9c"
	cfg := fastConfig()
	cfg.InstanceID = id
	r := listen(t, cfg)
	resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/chat/completions", chatBody("hi", map[string]any{"max_tokens": 2}))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), id) || strings.Contains(fmt.Sprint(resp.Header), id) {
		t.Errorf("a completion carries the instance id:\n%v\n%s", resp.Header, body)
	}
	if st := getStats(t, r); st.InstanceID != id {
		t.Errorf("GET /stats names instance %q, want %q", st.InstanceID, id)
	}
}
