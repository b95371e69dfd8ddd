package llmsim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// BenchmarkEngineStep measures the engine's bookkeeping for one decode step
// of a full batch: releasing, admitting and emitting a token to each
// sequence.
func BenchmarkEngineStep(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("seqs=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MaxNumSeqs = n
			e := &engine{cfg: cfg}
			for range n {
				e.running = append(e.running, newSequence(b.Context(), 1, 1<<62))
			}
			for b.Loop() {
				e.release()
				e.admit()
				e.emit(e.running)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkStreams measures how many tokens per second the simulator
// streams over HTTP to n concurrent clients when the simulated steps take
// no time: its ceiling, client reading included.
func BenchmarkStreams(b *testing.B) {
	for _, n := range []int{1, 64, 1024} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MaxNumSeqs = n
			cfg.PrefillBase, cfg.PrefillPerToken, cfg.DecodeBase, cfg.DecodePerSeq = 0, 0, 0, 0
			r := listen(b, cfg)
			c := testClient(b)
			const tokens = 256
			body := completionsBody("x", map[string]any{"max_tokens": tokens, "ignore_eos": true, "stream": true})
			for b.Loop() {
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						if got, err := countTokens(b.Context(), c, r.URL(), body); err != nil || got != tokens {
							b.Errorf("%d tokens, %v", got, err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*n*tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// countTokens streams a completions request and counts its token chunks,
// with as little work as possible.
func countTokens(ctx context.Context, c *http.Client, url string, body map[string]any) (int, error) {
	resp, err := post(ctx, c, url, "/v1/completions", body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	tokens := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if bytes.HasSuffix(sc.Bytes(), []byte(`"finish_reason":null}]}`)) {
			tokens++
		}
	}
	return tokens, sc.Err()
}
