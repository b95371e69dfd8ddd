package llmsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkEngineStep measures the engine's bookkeeping for one decode step
// of a full batch: releasing, admitting and emitting a token to each
// sequence.
func BenchmarkEngineStep(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("seqs=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MaxNumSeqs = n
			e := newEngine(cfg)
			for range n {
				e.running = append(e.running, newSequence(b.Context(), 1, 1<<62))
			}
			for b.Loop() {
				e.release()
				e.admit(time.Now())
				e.emit(e.running, time.Now())
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkStreams measures how many tokens per second the simulator
// streams over HTTP to n concurrent clients when the simulated steps take
// no time: its ceiling, client reading included. It counts prompt tokens
// as bytes/4 (no tokenizer, no prefix cache), as a load benchmark would;
// BenchmarkPromptTokens measures the tokenizer's cost.
func BenchmarkStreams(b *testing.B) {
	for _, n := range []int{1, 64, 1024} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Tokenizer = TokenizerBytes
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

// BenchmarkPromptTokens measures the decoding of a chat request with a
// system prompt of about 1,000 tokens and a question: with bytes/4, with
// cl100k_base counting, and with cl100k_base encoding and hashing the
// prefix cache's blocks; each tokenizer cold (a new text each time) and
// with the system prompt's tokens remembered (memo).
func BenchmarkPromptTokens(b *testing.B) {
	system := strings.Repeat("You are a helpful assistant that answers questions about the weather. ", 70)
	data, err := json.Marshal(map[string]any{"messages": []map[string]any{
		{"role": "system", "content": system}, {"role": "user", "content": "What is the weather like in Paris today?"},
	}, "max_tokens": 16})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, tokenizer string
		blocks          int
		memo            bool
	}{
		{"bytes", TokenizerBytes, 0, false},
		{"cl100k_base", "cl100k_base", 0, false},
		{"cl100k_base/memo", "cl100k_base", 0, true},
		{"cl100k_base+prefix-cache", "cl100k_base", 16384, false},
		{"cl100k_base+prefix-cache/memo", "cl100k_base", 16384, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Tokenizer, cfg.PrefixCacheBlocks = tc.tokenizer, tc.blocks
			p, err := newPrompter(&cfg)
			if err != nil {
				b.Fatal(err)
			}
			s := &Server{cfg: cfg, prompter: p}
			b.ReportAllocs()
			var j job
			for b.Loop() {
				if !tc.memo {
					s.prompter = &prompter{tok: p.tok, blocks: p.blocks} // forgets the texts
				}
				var aerr *apiError
				if j, aerr = parseJob(data, true, s); aerr != nil {
					b.Fatal(aerr)
				}
			}
			b.ReportMetric(float64(j.promptTokens), "prompt-tokens")
		})
	}
}

// BenchmarkPrefixCache measures the engine's prefix-cache work for one
// request of 1,000 prompt tokens (62 blocks) in a full cache: the lookup
// at admission and the insertion after prefill, half of them hits.
func BenchmarkPrefixCache(b *testing.B) {
	const blocks = 62
	cache := newPrefixCache(16384)
	prompts := make([][]uint64, 1024)
	for i := range prompts {
		h := newBlockHasher()
		for k := range blocks * PrefixBlockTokens {
			h.add(uint64(i%(len(prompts)/2)*100000 + k)) // pairs of equal prompts
		}
		prompts[i] = h.blocks
	}
	for _, p := range prompts {
		cache.touch(p)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := prompts[i%len(prompts)]
		cache.match(p)
		cache.touch(p)
		i++
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
