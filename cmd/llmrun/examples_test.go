package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/runtime/exitcode"
	"github.com/llmrun/llmrun/runtime/summary"
)

// exampleChecks are what the workload examples must show beyond a clean
// run, with the variables that make them quick.
var exampleChecks = map[string]struct {
	env   []string
	check func(t *testing.T, s *summary.Summary)
}{
	"chat.js": {check: func(t *testing.T, s *summary.Summary) {
		// Prompts of exact lengths: the simulator counts them with the
		// same tokenizer, plus its chat framing.
		if pc := s.PromptCheck; pc == nil || pc.Warning != "" || pc.PerRequest != 6 {
			t.Errorf("prompt check %+v, want the 6 tokens of the simulator's chat framing per request", pc)
		}
	}},
	// Two groups and 16 requests a second: a second request of a group
	// after the first one's prefill is all but certain within the second.
	"prefix-cache.js": {env: []string{"RATE=16", "GROUPS=2", "PREFIX=512"}, check: func(t *testing.T, s *summary.Summary) {
		cached := map[string]int64{}
		for _, sc := range s.Scenarios {
			cached[sc.Name] = sc.Serving.CachedTokens
		}
		if cached["shared"] == 0 || cached["unique"] != 0 {
			t.Errorf("cached prompt tokens by scenario %v: want some for shared prefixes, none for unique prompts", cached)
		}
	}},
	// 256-token answers instead of 1,024: the TPOT check is over as many
	// gaps as it needs, in a quarter of the time.
	"code.js": {env: []string{"OUTPUT_TOKENS=256"}},
	"multi-turn.js": {env: []string{"TURNS=2", "THINK=50ms"}, check: func(t *testing.T, s *summary.Summary) {
		if m, ok := s.Metrics["llm_ttft{turn:2}"]; !ok || m.Values["count"] == 0 {
			t.Errorf("no second-turn TTFT: %+v", m)
		}
	}},
	"agentic.js": {env: []string{"THINK_MS=20"}, check: func(t *testing.T, s *summary.Summary) {
		if m, ok := s.Metrics["llm_session_cache_hit{turn:3}"]; !ok || m.Values["count"] == 0 {
			t.Errorf("no third-turn prefix-cache share: %+v", m)
		}
	}},
	"sharegpt.js": {check: func(t *testing.T, s *summary.Summary) {
		if s.Serving.OK < 2 {
			t.Errorf("%d requests replayed", s.Serving.OK)
		}
	}},
	// The sample trace's 24 records over 8.5 s, at 8× speed: one request
	// each, none dropped, every prompt built from the record's hash_ids
	// (the run counts the trace's input tokens and the hits they imply),
	// and the simulator's cache hit by the blocks they share.
	"trace-replay.js": {env: []string{"SPEED=8"}, check: func(t *testing.T, s *summary.Summary) {
		if s.Serving.OK != 24 {
			t.Errorf("%d requests for the trace's 24 records", s.Serving.OK)
		}
		if got, want := s.Metrics["trace_input_tokens"].Values["count"], float64(sampleTraceInputTokens(t)); got != want {
			t.Errorf("trace_input_tokens %v, want the sample trace's %v: are the prompts built from hash_ids?", got, want)
		}
		if s.Metrics["trace_expected_cached_tokens"].Values["count"] == 0 || s.Serving.CachedTokens == 0 {
			t.Errorf("the trace implies %v cached tokens, the simulator served %d: want both above 0",
				s.Metrics["trace_expected_cached_tokens"].Values["count"], s.Serving.CachedTokens)
		}
	}},
}

// sampleTraceInputTokens sums the input lengths of
// examples/trace-replay.js's sample trace.
func sampleTraceInputTokens(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("../../examples/data/mooncake-trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			InputLength int `json:"input_length"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("mooncake-trace.jsonl line %d: %v", i+1, err)
		}
		sum += r.InputLength
	}
	return sum
}

// Every example runs end to end against the built-in simulator, shortened
// through its DURATION variable, with a fixed seed: a 1 s Poisson
// scenario of another seed may draw no arrival beyond its warmup. The
// examples run one after the other, each alone with its simulator: they
// carry latency thresholds and checks of their own (mixed-workload.js's
// chat TTFT p99 < 1 s), which two of them at once on a loaded 2-core
// machine miss.
func TestExamplesRun(t *testing.T) {
	examples, err := filepath.Glob("../../examples/*.[jt]s")
	if err != nil || len(examples) < 2 {
		t.Fatalf("examples: %v %v", examples, err)
	}
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			export := filepath.Join(t.TempDir(), "summary.json")
			args := []string{"run", "-q", "--seed", "1", "-e", "DURATION=1s", "--summary-export", export}
			extra := exampleChecks[filepath.Base(ex)]
			for _, kv := range extra.env {
				args = append(args, "-e", kv)
			}
			code, stdout, stderr := cli(t, context.Background(), nil, append(args, ex)...)
			if code != exitcode.OK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			s := readSummary(t, export)
			if s.Serving.OK == 0 || s.Serving.Failed != 0 || len(s.ScriptErrors) != 0 {
				t.Errorf("serving %+v, script errors %v", s.Serving, s.ScriptErrors)
			}
			for _, c := range s.Checks {
				if c.Fails != 0 {
					t.Errorf("check %q failed %d times", c.Name, c.Fails)
				}
			}
			if strings.Contains(stdout, "✗") {
				t.Errorf("a check failed:\n%s", stdout)
			}
			if extra.check != nil {
				extra.check(t, s)
			}
		})
	}
}
