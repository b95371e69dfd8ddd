package llmsim

import (
	"sync"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/race"
)

// TestThousandStreams checks that the simulator keeps its timing with 1000
// concurrent streams: the decode step of a full batch sets the ITL, not
// the streams one after another. On a loaded machine the ITL is several
// steps, so the bound is far from both: a twentieth of what stepping the
// streams one at a time would give.
func TestThousandStreams(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("load timing needs neither -short nor -race: TestBatchSlotsQueueRequests covers a batch decoding in one step, exactly, in a synctest bubble")
	}
	cfg := DefaultConfig()
	cfg.Tokenizer = TokenizerBytes // a load test: the cheapest prompt counting
	cfg.MaxNumSeqs = 1024
	cfg.DecodeBase, cfg.DecodePerSeq = 10*time.Millisecond, 10*time.Microsecond
	r := listen(t, cfg)
	c := testClient(t)

	const streams, tokens = 1000, 50
	itl := make([]time.Duration, streams)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			s, err := stream(t.Context(), c, r.URL(), "/v1/completions", completionsBody("x", map[string]any{
				"max_tokens": tokens, "ignore_eos": true,
			}))
			if err != nil || len(s.tokenAt) != tokens || !s.done {
				t.Errorf("stream %d: %v", i, err)
				return
			}
			itl[i] = (s.tokenAt[tokens-1] - s.ttft()) / (tokens - 1)
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var sum time.Duration
	for _, d := range itl {
		sum += d
	}
	mean, step := sum/streams, cfg.DecodeBase+streams*cfg.DecodePerSeq
	t.Logf("mean ITL %v; a full batch's decode step is %v", mean, step)
	if serial := streams * cfg.DecodeBase; mean < cfg.DecodeBase || mean > serial/20 {
		t.Errorf("mean ITL %v, want about %v (and far below %v, one stream at a time)", mean, step, serial)
	}
	// A client reads its [DONE] before the engine's next step counts its
	// sequence completed.
	eventually(t, 5*time.Second, "every stream counted as completed", func() bool { return r.Server().Stats().Completed == streams })
	if st := r.Server().Stats(); st.Tokens != streams*tokens {
		t.Errorf("stats %+v", st)
	}
}
