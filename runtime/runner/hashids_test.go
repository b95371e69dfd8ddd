package runner_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/modules/data"
	"github.com/llmrun/llmrun/runtime/runner"
)

// traceRecord is a line of a Mooncake trace.
type traceRecord struct {
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	HashIDs      []int64 `json:"hash_ids"`
}

// hashIDsReplay replays a trace with the trace-replay executor, the
// record the executor passes straight to prompts.fromHashIds, each prompt
// sent with the completions API (no chat template adds tokens before the
// first block). maxConcurrency 1 queues each record behind the one
// before, so requests go one at a time, in the trace's order; the window
// of 100 minutes at speed 10 keeps the queued records from being dropped
// as ended however slow the machine (the scenario still ends as soon as
// every record has ended).
const hashIDsReplay = `
import llm from 'llm';
import { prompts } from 'data';
export const options = { scenarios: { trace: { executor: 'trace-replay', trace: 'testdata/hashids_trace.jsonl', speed: 10, window: { duration: '100m' }, preAllocatedVUs: 1, maxConcurrency: 1 } } };
export default function (data, record) {
  const p = prompts.fromHashIds(record);
  llm.stream({ prompt: p.text, max_tokens: Math.min(record.outputTokens, 4), ignore_eos: true });
}
`

// TestTraceHashIDsHitRateMatchesTheSimulator is issue 31's check of
// prompts from hash_ids: a Mooncake trace with heavy block sharing,
// replayed in order against the simulator with a cache that holds all of
// it, gets from the simulator the prefix-cache hits the trace's hash ids
// imply (data.ExpectedHits, the same computation the summary reports).
//
// The tolerance, from first principles: the simulator (as vLLM) caches
// full blocks of llmsim.PrefixBlockTokens (16) tokens only, and always
// computes a prompt's last token; the trace's 512-token blocks are 32 of
// its blocks, aligned since the completions API adds no token before the
// prompt. So each request's reported hits are its expected hits rounded
// down to a multiple of 16, or 16 fewer when the whole prompt was a hit:
// never more than expected, and at most 16 tokens fewer. Requests go one
// at a time, so each finds the blocks of every earlier one cached.
// Start times against the scaled timestamps are
// TestRunReplaysATraceAgainstTheSimulator's check.
func TestTraceHashIDsHitRateMatchesTheSimulator(t *testing.T) {
	records := readTrace(t, "testdata/hashids_trace.jsonl")
	sim := llmsimtest.Start(t, llmsimtest.Fast())
	out := filepath.Join(t.TempDir(), "requests.jsonl")
	r := run(t, hashIDsReplay, func(c *runner.Config) {
		c.Engine.ScriptPath = "test.js"
		c.Engine.LLM.BaseURL = sim.URL() + "/v1"
		c.Outputs = []string{"jsonl=" + out}
	})
	if r.outcome.Verdict != runner.Passed {
		t.Fatalf("verdict %v\nstderr:\n%s", r.outcome.Verdict, r.stderr)
	}
	if d := r.outcome.Summary.Metrics["dropped_iterations"].Values["count"]; d != 0 {
		t.Errorf("%v records dropped, want every one replayed", d)
	}
	sent := readRequests(t, out)
	if len(sent) != len(records) {
		t.Fatalf("%d requests recorded, want one per record (%d)", len(sent), len(records))
	}
	expected, err := data.NewExpectedHits(data.DefaultHashBlockTokens, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cached int64
	for i, rec := range records {
		want := expected.Add(rec.HashIDs, rec.InputLength)
		got := sent[i]
		if got.InputTokens != rec.InputLength {
			t.Errorf("record %d: the simulator counted %d prompt tokens, want the trace's %d", i+1, got.InputTokens, rec.InputLength)
		}
		if got.CachedTokens > want || got.CachedTokens < want-llmsim.PrefixBlockTokens {
			t.Errorf("record %d (%d tokens, hash ids %v): %d tokens cached, want %d less at most %d", i+1, rec.InputLength, rec.HashIDs, got.CachedTokens, want, llmsim.PrefixBlockTokens)
		}
		cached += int64(got.CachedTokens)
	}
	queried, hits := expected.Totals()
	tolerance := float64(llmsim.PrefixBlockTokens*len(records)) / float64(queried)
	if 3*hits < queried {
		t.Fatalf("the trace implies %d hits of %d tokens: too little sharing for this check", hits, queried)
	}
	reported := float64(cached) / float64(queried)
	if d := expected.Rate() - reported; d < 0 || d > tolerance {
		t.Errorf("the simulator's hit rate %.4f (its usage's cached tokens), the trace's %.4f: want at most %.4f below", reported, expected.Rate(), tolerance)
	}
	server := r.outcome.Summary.Server
	if server == nil || len(server.Targets) == 0 || server.Targets[0].PrefixCacheHitRate == nil {
		t.Fatalf("the summary has no prefix-cache hit rate from the simulator's /metrics: %+v", server)
	}
	metricsRate := *server.Targets[0].PrefixCacheHitRate
	if d := expected.Rate() - metricsRate; d < 0 || d > tolerance {
		t.Errorf("the simulator's /metrics hit rate %.4f, the trace's %.4f: want at most %.4f below", metricsRate, expected.Rate(), tolerance)
	}
	// The run counted the same as it went (data.ExpectedHits in the data
	// module), and the console prints it beside the server's.
	for name, want := range map[string]int64{data.HashInputTokensMetric: queried, data.ExpectedCachedTokensMetric: hits} {
		if got := r.outcome.Summary.Metrics[name].Values["count"]; got != float64(want) {
			t.Errorf("the summary's %s: %v, want %d", name, got, want)
		}
	}
	implied := fmt.Sprintf("the trace's hash_ids imply %.1f %%", 100*expected.Rate())
	if !strings.Contains(r.stdout, "as the responses' usage says; "+implied) {
		t.Errorf("the console does not say %q beside the server's hit rate:\n%s", implied, r.stdout)
	}
	t.Logf("hit rate: the trace's %.4f, the simulator's %.4f (usage) and %.4f (/metrics); tolerance %.4f", expected.Rate(), reported, metricsRate, tolerance)
}

func readTrace(t *testing.T, path string) []traceRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var records []traceRecord
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		var r traceRecord
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Fatalf("%s line %d: %v", path, len(records)+1, err)
		}
		records = append(records, r)
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return records
}

// sentRequest is a request's line in the jsonl output.
type sentRequest struct {
	OK           bool `json:"ok"`
	InputTokens  int  `json:"input_tokens"`
	CachedTokens int  `json:"cached_tokens"`
}

func readRequests(t *testing.T, path string) []sentRequest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sent []sentRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var s sentRequest
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		sent = append(sent, s)
	}
	return sent
}
