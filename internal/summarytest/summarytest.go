// Package summarytest builds run summaries for tests from requests' results,
// through the same aggregation and summary code a run uses: the figures,
// histograms and counts of a result file whose requests a test chose.
package summarytest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/metrics"
	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/summarize"
	"github.com/llmrun/llmrun/runtime/summary"
)

// Start is when the runs Build makes start.
var Start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Streamed returns the result of a completed streamed request whose first
// token came after ttft ms and each next one after the gaps (ms): one
// token per chunk, counted by the server's usage.
func Streamed(ttft float64, gaps ...float64) *llm.Result {
	e2e := ttft
	for _, g := range gaps {
		e2e += g
	}
	out := len(gaps) + 1
	r := &llm.Result{OK: true, Status: 200, API: llm.ChatCompletions, Model: "m", Stream: true, TTFT: ttft, TTFO: ttft, E2E: e2e,
		ITL: gaps, Chunks: out, OutputTokens: out, PromptTokens: 100, TokenSource: llm.TokensFromUsage, FinishReason: "length",
		Timings: llm.Timings{TTFB: ttft / 2}, Start: Start}
	if out > 1 {
		r.TPOT = (e2e - ttft) / float64(out-1)
	}
	return r
}

// Failed returns the result of a request that failed with class.
func Failed(class llm.ErrorClass) *llm.Result {
	return &llm.Result{Class: class, Error: "failed", API: llm.ChatCompletions, Model: "m", Start: Start}
}

// Build returns the summary of a run of one constant-vus scenario that
// lasted dur from Start and whose LLM requests ended with results.
func Build(t testing.TB, dur time.Duration, results ...*llm.Result) *summary.Summary {
	t.Helper()
	reg := metrics.NewRegistry()
	agg := metrics.NewAggregator(1)
	m := llm.RegisterMetrics(reg)
	tags := metrics.NewTagSet(map[string]string{"scenario": "default"})
	var samples []metrics.Sample
	for _, r := range results {
		samples = m.AppendSamples(samples[:0], tags, r)
		agg.Shard(0).AddSamples(samples)
	}
	opts, err := engine.ParseOptions([]byte(`{"vus": 1, "duration": "1s"}`))
	if err != nil {
		t.Fatal(err)
	}
	scs, err := engine.ResolveScenarios(opts, engine.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	rep := &engine.Report{Snapshot: agg.Snapshot(), Registry: reg, Scenarios: scs, Start: Start, End: Start.Add(dur)}
	return summarize.Build(rep, summary.Meta{Tool: "llmrun", Version: "test", RunID: "run", Script: "test.js", ScriptSHA256: "abc"})
}

// SameFile says whether two summaries write the same result file.
func SameFile(t testing.TB, a, b *summary.Summary) bool {
	t.Helper()
	var x, y bytes.Buffer
	if err := a.WriteJSON(&x); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteJSON(&y); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// LongRun returns the result of a run of run id runID whose timeline has
// points points, a second each: the bulk of a long run's result file (a
// day's timeline is 86,400 points).
func LongRun(t testing.TB, runID string, points int) *summary.Summary {
	t.Helper()
	s := Build(t, time.Duration(points)*time.Second, Streamed(120, 20, 25, 30), Streamed(90, 15))
	s.Meta.RunID = runID
	for i := range points {
		s.Timeline = append(s.Timeline, summary.TimelinePoint{T: float64(i + 1), Seconds: 1, Requests: int64(i % 7), OutputTokens: int64(i % 5000),
			ActiveVUs: 8, InFlight: int64(i % 9), TTFTP50: 100 + float64(i%13)/7, TTFTP99: 400 + float64(i%17)/3, E2EP50: 900.5, E2EP99: 2000 + float64(i%11)})
	}
	return s
}

// writeResult writes a summary as --summary-export does.
// WriteResult writes s as a result file in a temporary directory of t and
// returns its path.
func WriteResult(t testing.TB, s *summary.Summary) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "result.json")
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
