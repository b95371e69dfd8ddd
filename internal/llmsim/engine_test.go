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
	"time"
)

// The timing tests assert lower bounds exactly, since the engine never
// runs a step early, and upper bounds loosely, since a busy host may run it
// late.

func TestSingleRequestTiming(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PrefillBase, cfg.PrefillPerToken = 40*time.Millisecond, 100*time.Microsecond
	cfg.DecodeBase, cfg.DecodePerSeq = 15*time.Millisecond, time.Millisecond
	r := listen(t, cfg)
	const tokens = 30
	s := mustStream(t, r, "/v1/completions", completionsBody(make([]int, 200), map[string]any{
		"max_tokens": tokens, "ignore_eos": true,
	}))
	if len(s.tokenAt) != tokens {
		t.Fatalf("%d tokens, want %d", len(s.tokenAt), tokens)
	}
	prefill := 40*time.Millisecond + 200*100*time.Microsecond // 200 token ids
	decode := 16 * time.Millisecond
	if ttft := s.ttft(); ttft < prefill || ttft > prefill+time.Second {
		t.Errorf("TTFT %v, want ≈ %v", ttft, prefill)
	}
	if last, want := s.tokenAt[tokens-1], prefill+(tokens-1)*decode; last < want {
		t.Errorf("last token at %v, before the %v the steps take", last, want)
	}
	if itl := (s.tokenAt[tokens-1] - s.ttft()) / (tokens - 1); itl < decode*8/10 || itl > 3*decode {
		t.Errorf("mean ITL %v, want ≈ %v", itl, decode)
	}
}

func TestBatchSlotsQueueRequests(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxNumSeqs = 2
	cfg.PrefillBase, cfg.PrefillPerToken = 20*time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 20*time.Millisecond, 0
	r := listen(t, cfg)
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
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.Sort(firstToken)
	// The third request gets a slot when a first one has finished (a
	// prefill, then 19 decode steps), then needs its own prefill.
	if earliest := 20*time.Millisecond + (tokens-1)*20*time.Millisecond + 20*time.Millisecond; firstToken[2] < earliest {
		t.Errorf("third first token at %v, before a slot could free (%v)", firstToken[2], earliest)
	}
	if firstToken[1] > 200*time.Millisecond {
		t.Errorf("second first token at %v, want ≈ 40ms", firstToken[1])
	}
	// A client reads its [DONE] before the engine's next step counts its
	// sequence completed.
	eventually(t, 5*time.Second, "every request counted as completed", func() bool {
		st := r.Server().Stats()
		return st.Completed == requests && st.Running == 0 && st.Waiting == 0
	})
	if st := r.Server().Stats(); st.Tokens != requests*tokens {
		t.Errorf("stats %+v", st)
	}
}

func TestPrefillTokenBudget(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxNumBatchedTokens = 100
	cfg.PrefillBase = 50 * time.Millisecond // long enough for all to queue
	r := listen(t, cfg)
	c := testClient(t)

	// A holds the engine in its prefill while the others queue; then B (60
	// tokens) and C (30) share a prefill, and D (60) needs another.
	a := make(chan error, 1)
	go func() {
		_, err := stream(t.Context(), c, r.URL(), "/v1/completions", completionsBody(make([]int, 10), map[string]any{"max_tokens": 1}))
		a <- err
	}()
	eventually(t, 5*time.Second, "A admitted", func() bool { return r.Server().Stats().Running == 1 })
	var wg sync.WaitGroup
	for i, n := range []int{60, 30, 60} {
		wg.Go(func() {
			if _, err := stream(t.Context(), c, r.URL(), "/v1/completions", completionsBody(make([]int, n), map[string]any{"max_tokens": 1})); err != nil {
				t.Error(err)
			}
		})
		eventually(t, 5*time.Second, "request queued", func() bool { return r.Server().Stats().Received == uint64(2+i) })
	}
	wg.Wait()
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	if st := r.Server().Stats(); st.PrefillSteps != 3 || st.DecodeSteps != 0 {
		t.Errorf("stats %+v: want 3 prefill steps", st)
	}
}

func TestCanceledClientsFreeSlots(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxNumSeqs = 1
	cfg.DecodeBase = 10 * time.Millisecond
	cfg.MaxModelLen = 1 << 20
	r := listen(t, cfg)
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
	case <-time.After(10 * time.Second):
		t.Fatal("C never ran after A left")
	}
	// The client can read C's [DONE] before the engine's step that
	// finished C has updated its counts.
	eventually(t, 5*time.Second, "C counted as completed", func() bool { st := stats(); return st.Completed == 1 && st.Running == 0 })
	if st := stats(); st.Canceled != 2 {
		t.Errorf("stats %+v, want A and B canceled", st)
	}
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
	r := listen(t, cfg)
	for range 2 {
		mustStream(t, r, "/v1/completions", completionsBody("hello", map[string]any{"max_tokens": 3}))
	}
	st := getStats(t, r)
	if st.FirstTokens != 2 || st.Received != 2 {
		t.Fatalf("stats %+v: want 2 requests with a first token", st)
	}
	if mean := st.TTFTSum / time.Duration(st.FirstTokens); mean < 30*time.Millisecond || mean > time.Second {
		t.Errorf("server-side mean TTFT %v, want ≈ 30ms", mean)
	}
	// 3 tokens a stream, each decode step flushed alone: 2 gaps a stream.
	if st.FlushGaps != 4 {
		t.Fatalf("%d flush gaps, want 4 (2 streams of 3 tokens)", st.FlushGaps)
	}
	if mean := st.FlushGapSum / time.Duration(st.FlushGaps); mean < 15*time.Millisecond || mean > time.Second {
		t.Errorf("server-side mean gap %v, want ≈ 20ms", mean)
	}
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
