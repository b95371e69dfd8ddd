package timeline

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/runtime/engine"
)

// A long request's output tokens are in the seconds they arrived, not all
// in the one it ended in: with a run's engine and a recorder wired as
// llmrun run wires them, one request that streams for about 3 s has
// tokens in the intervals before the one it ends in, and they add up to
// its output.
func TestALongRequestsTokensAreInTheSecondsTheyArrived(t *testing.T) {
	const tokens = 30
	cfg := llmsim.DefaultConfig()
	cfg.PrefillBase, cfg.PrefillPerToken = time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 100*time.Millisecond, 0
	sim, err := llmsim.Listen(t.Context(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	script := filepath.Join(t.TempDir(), "long.js")
	if err := os.WriteFile(script, []byte(`
import llm from 'llm';
export const options = { vus: 1, iterations: 1 };
export default function () {
  const r = llm.stream({ prompt: 'hi', max_tokens: 30, ignore_eos: true });
  if (!r.ok || r.outputTokens !== 30) throw new Error(r.errorClass + ': ' + r.outputTokens + ' tokens');
}`), 0o644); err != nil {
		t.Fatal(err)
	}

	var eng *engine.Engine
	rec := New(time.Now(), func() engine.Progress { return eng.Progress() })
	eng, err = engine.Load(t.Context(), engine.Config{ScriptPath: script, Requests: rec,
		LLM: llm.Config{BaseURL: sim.URL() + "/v1", Model: "m"}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	recDone := make(chan struct{})
	ctx, stop := context.WithCancel(t.Context())
	go func() {
		rec.Run(ctx)
		close(recDone)
	}()
	rep, err := eng.Run(t.Context())
	stop()
	<-recDone
	if err != nil {
		t.Fatal(err)
	}
	if st := rep.Snapshot.Stats("script_errors", nil); st != nil {
		t.Fatalf("the request failed: %+v", rep.ScriptErrors)
	}

	points := rec.Points(time.Now())
	var sum, before, withTokens int64
	ended := -1
	for i, p := range points {
		sum += p.OutputTokens
		if p.OutputTokens > 0 {
			withTokens++
		}
		if p.Requests > 0 {
			ended = i
		}
		if ended < 0 {
			before += p.OutputTokens
		}
	}
	if sum != tokens || ended < 0 {
		t.Fatalf("%d tokens, the request ended in interval %d: %+v", sum, ended, points)
	}
	if withTokens < 2 || before == 0 {
		t.Errorf("tokens in %d intervals, %d before the one the request ended in; want them spread over the stream: %+v", withTokens, before, points)
	}
}
