package llmsim

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/tokenizer"
)

// cl100k returns the cl100k_base tokenizer.
func cl100k(t testing.TB) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func encode(t testing.TB, tok tokenizer.Tokenizer, text string) []int {
	t.Helper()
	ids, err := tok.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// expectCached returns the cached tokens of a prompt of promptTokens
// whose token sequence shares common tokens with one cached before: its
// full shared blocks, never its whole prompt.
func expectCached(common, promptTokens int) int {
	return min(common/PrefixBlockTokens, (promptTokens-1)/PrefixBlockTokens) * PrefixBlockTokens
}

// timedStream streams body to path with usage and returns the usage and
// the simulator's own TTFT of the request (the growth of Stats.TTFTSum),
// which must be the only one in flight.
func timedStream(t *testing.T, r *Running, path string, body map[string]any) (usage, time.Duration) {
	t.Helper()
	body["stream_options"] = map[string]any{"include_usage": true}
	before := r.Server().Stats()
	s := mustStream(t, r, path, body)
	after := r.Server().Stats()
	if after.FirstTokens != before.FirstTokens+1 {
		t.Fatalf("%d first tokens timed, want 1", after.FirstTokens-before.FirstTokens)
	}
	u := s.chunks[len(s.chunks)-1].Usage
	if u == nil {
		t.Fatalf("no usage chunk: %s", s.raw[len(s.raw)-1])
	}
	return *u, after.TTFTSum - before.TTFTSum
}

// cached returns the cached tokens of a usage block, -1 when it gives none.
func (u *usage) cached() int {
	if u.PromptTokensDetails == nil {
		return -1
	}
	return u.PromptTokensDetails.CachedTokens
}

// TestPrefixCacheSharedPrefix sends two requests that share a long prefix
// (1,000 token ids; a chat's system prompt; a completions text): the
// second reports its prefix's full blocks as cached, and its TTFT, in the
// simulator's own accounting, is shorter by their prefill.
func TestPrefixCacheSharedPrefix(t *testing.T) {
	tok := cl100k(t)
	shared := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100) // about 1,000 tokens
	ids := func(first, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = first + i
		}
		return out
	}
	chat := func(question string) map[string]any {
		return map[string]any{"messages": []map[string]any{
			{"role": "system", "content": shared}, {"role": "user", "content": question},
		}}
	}
	// A chat's token sequence: per message, a role marker (here -1, -2),
	// then its content's ids.
	chatSeq := func(question string) []int {
		return slices.Concat([]int{-1}, encode(t, tok, shared), []int{-2}, encode(t, tok, question))
	}
	q1, q2 := "What does the fox do?", "Who is lazy here?"
	for _, tc := range []struct {
		name       string
		path       string
		a, b       map[string]any
		common     int // tokens of b's sequence that a's shares
		wantCached int // when known in advance; else from common
	}{
		{"1000 token ids", "/v1/completions",
			completionsBody(slices.Concat(ids(100, 1000), ids(5000, 10)), nil),
			completionsBody(slices.Concat(ids(100, 1000), ids(7000, 10)), nil),
			1000, 992},
		{"chat system prompt", "/v1/chat/completions", chat(q1), chat(q2),
			commonPrefix(chatSeq(q1), chatSeq(q2)), 0},
		{"completions text", "/v1/completions",
			completionsBody(shared+"And then?", nil), completionsBody(shared+"Meanwhile, far away...", nil),
			commonPrefix(encode(t, tok, shared+"And then?"), encode(t, tok, shared+"Meanwhile, far away...")), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each in its own bubble, on its own server
			cfg := fastConfig()
			cfg.PrefillBase, cfg.PrefillPerToken = 5*time.Millisecond, time.Millisecond
			inBubble(t, cfg, func(t *testing.T, r *Running) {
				for _, body := range []map[string]any{tc.a, tc.b} {
					body["max_tokens"], body["ignore_eos"] = 2, true
				}
				ua, ttftA := timedStream(t, r, tc.path, tc.a)
				ub, ttftB := timedStream(t, r, tc.path, tc.b)
				want := expectCached(tc.common, ub.PromptTokens)
				if tc.wantCached != 0 && want != tc.wantCached {
					t.Fatalf("expected %d cached tokens, the test says %d", want, tc.wantCached)
				}
				if ua.cached() != 0 || ub.cached() != want || want < 900 {
					t.Fatalf("cached tokens %d then %d of %d, want 0 then %d", ua.cached(), ub.cached(), ub.PromptTokens, want)
				}
				// Each TTFT is its prefill of the uncached tokens: the
				// second is shorter by the prefill the cache spared.
				uncachedA, uncachedB := ua.PromptTokens, ub.PromptTokens-want
				if wantA := cfg.PrefillBase + time.Duration(uncachedA)*cfg.PrefillPerToken; ttftA != wantA {
					t.Errorf("first TTFT %v, want its prefill %v", ttftA, wantA)
				}
				if wantB := cfg.PrefillBase + time.Duration(uncachedB)*cfg.PrefillPerToken; ttftB != wantB {
					t.Errorf("second TTFT %v, want its prefill of the uncached tokens %v", ttftB, wantB)
				}
				t.Logf("%d of %d prompt tokens cached; TTFT %v then %v", want, ub.PromptTokens, ttftA, ttftB)
			})
		})
	}
}

// TestPrefixCacheMisses checks that prompts with other prefixes miss, and
// that /stats counts the queries and hits in prompt tokens.
func TestPrefixCacheMisses(t *testing.T) {
	r := listen(t, fastConfig())
	long := strings.Repeat("Tell me a story about the sea and its ships. ", 20)
	var cached []int
	for _, body := range []map[string]any{
		chatBody(long, nil),
		chatBody("Now: "+long, nil),                  // another first message
		completionsBody(long, nil),                   // no role marker before the text
		chatBody(long, map[string]any{"model": "x"}), // a hit
	} {
		body["max_tokens"] = 1
		cached = append(cached, complete(t, r, chatOrCompletions(body), body).Usage.cached())
	}
	if cached[0] != 0 || cached[1] != 0 || cached[2] != 0 || cached[3] < 160 {
		t.Errorf("cached tokens %v, want misses then a hit", cached)
	}

	st := getStats(t, r)
	if st.PrefixCacheHits != uint64(cached[3]) || st.PrefixCacheQueries < 4*160 || st.PrefixCacheBlocks < 3*10 {
		t.Errorf("stats %+v: want %d hits", st, cached[3])
	}
	t.Logf("hit rate %.2f", float64(st.PrefixCacheHits)/float64(st.PrefixCacheQueries))
}

// chatOrCompletions returns the endpoint of a chat or completions body.
func chatOrCompletions(body map[string]any) string {
	if _, ok := body["messages"]; ok {
		return "/v1/chat/completions"
	}
	return "/v1/completions"
}

// TestPrefixCacheEviction fills a cache of 8 blocks: a prompt of 12 blocks
// keeps its first 8 (a prompt's tail goes first), and another evicts it.
func TestPrefixCacheEviction(t *testing.T) {
	cfg := fastConfig()
	cfg.PrefixCacheBlocks = 8
	r := listen(t, cfg)
	a, b := make([]int, 200), make([]int, 200) // 12 full blocks each
	for i := range a {
		a[i], b[i] = i+1, i+1000
	}
	var got []int
	for _, p := range [][]int{a, a, b, a} {
		got = append(got, complete(t, r, "/v1/completions", completionsBody(p, map[string]any{"max_tokens": 1})).Usage.cached())
	}
	if want := []int{0, 8 * PrefixBlockTokens, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("cached tokens %v, want %v", got, want)
	}
	if st := r.Server().Stats(); st.PrefixCacheBlocks != 8 {
		t.Errorf("%d blocks cached, want the capacity, 8", st.PrefixCacheBlocks)
	}
}

// TestPrefixCacheLRU checks the cache's order: the least recently used
// blocks go first, a prompt's last blocks before its first.
func TestPrefixCacheLRU(t *testing.T) {
	blocks := func(seed, n int) []uint64 {
		h := newBlockHasher()
		for i := range n * PrefixBlockTokens {
			h.add(uint64(seed*1000 + i))
		}
		return h.blocks
	}
	a, b, c := blocks(1, 2), blocks(2, 2), blocks(3, 2)
	cache := newPrefixCache(4)
	cache.touch(a)
	cache.touch(b)
	if cache.match(a) != 2 || cache.match(b) != 2 || cache.len() != 4 {
		t.Fatalf("a %d, b %d blocks cached of 4", cache.match(a), cache.match(b))
	}
	cache.touch(a[:1]) // a's first block is now the most recent, then b's
	cache.touch(c)     // evicts a's second block, then b's second
	if cache.match(a) != 1 || cache.match(b) != 1 || cache.match(c) != 2 || cache.len() != 4 {
		t.Errorf("a %d, b %d, c %d blocks cached", cache.match(a), cache.match(b), cache.match(c))
	}
	cache.touch(blocks(4, 4)) // a prompt as large as the cache evicts all
	if cache.match(a) != 0 || cache.match(b) != 0 || cache.match(c) != 0 || cache.match(blocks(4, 4)) != 4 {
		t.Errorf("after a 4-block prompt: a %d, b %d, c %d", cache.match(a), cache.match(b), cache.match(c))
	}
	cache.touch(blocks(5, 6)) // larger than the cache: its first blocks stay
	if got := cache.match(blocks(5, 6)); got != 4 || cache.len() != 4 {
		t.Errorf("%d leading blocks of a 6-block prompt cached, want 4", got)
	}
	if newPrefixCache(0) != nil {
		t.Error("a cache of 0 blocks")
	}
}

// TestBlockHashesChain checks that a block's hash stands for its whole
// prefix: equal blocks after different ones differ.
func TestBlockHashesChain(t *testing.T) {
	hash := func(ids ...int) []uint64 {
		h := newBlockHasher()
		for _, id := range ids {
			for range PrefixBlockTokens {
				h.add(uint64(id))
			}
		}
		return h.blocks
	}
	x, y := hash(1, 2, 3), hash(9, 2, 3)
	if len(x) != 3 || x[0] == y[0] || x[1] == y[1] || x[2] == y[2] {
		t.Errorf("blocks %x and %x", x, y)
	}
	if z := hash(1, 2, 4); z[0] != x[0] || z[1] != x[1] || z[2] == x[2] {
		t.Errorf("blocks %x and %x", x, z)
	}
	h := newBlockHasher()
	h.addIDs(make([]int, PrefixBlockTokens-1))
	if len(h.blocks) != 0 {
		t.Error("a partial block hashed")
	}
}

// TestPrefillBudgetCountsUncachedTokens checks that the prefill token
// budget counts only the tokens a request prefills: a 210-token prompt
// whose first 192 are cached shares a prefill step with a 50-token one
// under a budget of 100.
func TestPrefillBudgetCountsUncachedTokens(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxNumBatchedTokens = 100
	inBubble(t, cfg, func(t *testing.T, r *Running) {
		long := make([]int, 210)
		for i := range long {
			long[i] = i + 1
		}
		// Cache the long prompt's blocks (alone in its step: the first
		// request always fits).
		complete(t, r, "/v1/completions", completionsBody(long[:200], map[string]any{"max_tokens": 1}))
		steps := r.Server().Stats().PrefillSteps

		// A holds the engine in its prefill while the others queue.
		queueBehind(t, r, long, make([]int, 50))
		if st := r.Server().Stats(); st.PrefillSteps-steps != 2 {
			t.Errorf("stats %+v: want 2 prefill steps, A's and one for both others", st)
		}
	})
}

// TestPrefixCacheOff checks that usage leaves cached_tokens out, and
// /stats counts nothing, when the cache is off: with 0 blocks, or with
// the "bytes" tokenizer, which has no token ids.
func TestPrefixCacheOff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tokenizer string
		blocks    int
	}{
		{"0 blocks", "cl100k_base", 0},
		{"bytes", TokenizerBytes, 16384},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fastConfig()
			cfg.Tokenizer, cfg.PrefixCacheBlocks = tc.tokenizer, tc.blocks
			r := listen(t, cfg)
			long := strings.Repeat("All work and no play makes Jack a dull boy. ", 30)
			for range 2 {
				u := complete(t, r, "/v1/chat/completions", chatBody(long, map[string]any{"max_tokens": 1})).Usage
				if u.PromptTokensDetails != nil {
					t.Errorf("usage %+v gives cached tokens", u)
				}
				s := mustStream(t, r, "/v1/completions", completionsBody(long, map[string]any{
					"max_tokens": 1, "stream_options": map[string]any{"include_usage": true},
				}))
				if last := s.raw[len(s.raw)-2]; strings.Contains(last, "prompt_tokens_details") || !strings.Contains(last, `"usage":{`) {
					t.Errorf("usage chunk %s", last)
				}
				if body := anthropicWhole(t, r, long); strings.Contains(body, "cache_read_input_tokens") {
					t.Errorf("anthropic message %s", body)
				}
			}
			if st := r.Server().Stats(); st.PrefixCacheQueries != 0 || st.PrefixCacheHits != 0 || st.PrefixCacheBlocks != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// anthropicWhole posts a whole Messages request and returns its body.
func anthropicWhole(t *testing.T, r *Running, content string) string {
	t.Helper()
	resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/messages", map[string]any{
		"system": "Be brief.", "messages": []map[string]any{{"role": "user", "content": content}}, "max_tokens": 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %s %v", resp.StatusCode, b, err)
	}
	return string(b)
}

// TestAnthropicCacheUsage checks that Anthropic's usage gives the cached
// prompt tokens as cache_read_input_tokens and leaves them out of
// input_tokens, streamed and not.
func TestAnthropicCacheUsage(t *testing.T) {
	r := listen(t, fastConfig())
	long := strings.Repeat("Summarize the following report in one line. ", 30)
	type usage struct {
		InputTokens              int  `json:"input_tokens"`
		CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
		OutputTokens             int  `json:"output_tokens"`
	}
	var whole [2]usage
	for i := range whole {
		var msg struct {
			Usage usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(anthropicWhole(t, r, long)), &msg); err != nil {
			t.Fatal(err)
		}
		whole[i] = msg.Usage
	}
	a, b := whole[0], whole[1]
	if a.CacheReadInputTokens == nil || *a.CacheReadInputTokens != 0 || b.CacheReadInputTokens == nil || *b.CacheReadInputTokens < 160 ||
		*b.CacheReadInputTokens%PrefixBlockTokens != 0 || b.InputTokens+*b.CacheReadInputTokens != a.InputTokens ||
		b.CacheCreationInputTokens == nil || *b.CacheCreationInputTokens != 0 {
		t.Errorf("usage %+v then %+v", a, b)
	}

	// The stream's message_start, sent with the first token, gives them.
	resp, err := post(t.Context(), testClient(t), r.URL(), "/v1/messages", map[string]any{
		"system": "Be brief.", "messages": []map[string]any{{"role": "user", "content": long}}, "max_tokens": 2, "stream": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	want := `"usage":{"input_tokens":` + itoa(a.InputTokens-*b.CacheReadInputTokens) +
		`,"cache_creation_input_tokens":0,"cache_read_input_tokens":` + itoa(*b.CacheReadInputTokens) + `,"output_tokens":1}`
	if !strings.HasPrefix(string(raw), "event: message_start\n") || !strings.Contains(string(raw), want) {
		t.Errorf("stream lacks %s:\n%s", want, raw)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestPromptMemo checks that remembered tokenizations give what fresh
// ones give, whichever of counting and encoding came first.
func TestPromptMemo(t *testing.T) {
	long := content{text: strings.Repeat("Remember this text, for it comes back. ", 20)}
	msgs := []chatMessage{{Role: hashRole([]byte(`"user"`)), Content: long}}
	for _, blocks := range []bool{false, true} {
		p := &prompter{tok: cl100k(t), blocks: blocks}
		fresh, err := (&prompter{tok: p.tok, blocks: blocks}).chat(content{}, msgs)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := p.plain(long.text); err != nil || n != fresh.tokens-tokensPerMsg-tokensForReply {
			t.Fatalf("plain: %d tokens, %v", n, err)
		}
		for range 2 {
			got, err := p.chat(content{}, msgs)
			if err != nil || got.tokens != fresh.tokens || !slices.Equal(got.blocks, fresh.blocks) || (len(got.blocks) > 0) != blocks {
				t.Errorf("blocks %v: %d tokens, %d blocks; want %d, %d (%v)", blocks, got.tokens, len(got.blocks), fresh.tokens, len(fresh.blocks), err)
			}
		}
	}
}
