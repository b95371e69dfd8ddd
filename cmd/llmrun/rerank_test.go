package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
	"github.com/llmrun/llmrun/runtime/exitcode"
)

// rerankScript sends one rerank request of four documents per iteration
// with the client of the script's API, and checks the scores it gets.
const rerankScript = `
import llm from 'llm';
import { check } from 'llmrun';
const docs = ['rivers flow to the sea', 'mountains are tall', 'the sea is salty', 'deserts are dry'];
const vllm = llm.client({ api: 'rerank' });
const tei = llm.client({ api: 'tei-rerank' });
export default function () {
  const v = vllm.stream({ query: 'where do rivers go?', documents: docs });
  const t = tei.stream({ query: 'where do rivers go?', texts: docs });
  check(v, {
    'vllm scored': (r) => r.ok && r.documents === 4 && r.rerank.length === 4 && r.promptTokens > 0 && r.ttft === 0,
    'best first': (r) => r.rerank.every((s, i) => i === 0 || s.score <= r.rerank[i - 1].score),
  });
  check(t, {
    'tei scored': (r) => r.ok && r.documents === 4 && r.rerank.length === 4,
    'same order': (r) => JSON.stringify(r.rerank.map((s) => s.index)) === JSON.stringify(v.rerank.map((s) => s.index)),
  });
}
`

// A script's rerank requests, against the simulator after the preflight,
// give the run's documents and documents per second, their E2E, and the
// scores to the script.
func TestRerankRun(t *testing.T) {
	t.Parallel()
	sim := llmsimtest.Start(t, llmsimtest.Fast())
	script := writeScript(t, "rerank.js", rerankScript)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := cli(t, context.Background(), nil, "run", "-q", "--base-url", sim.URL(), "-i", "5", "--summary-export", export, script)
	if code != exitcode.OK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	s := readSummary(t, export)
	sv := s.Serving
	if sv.OK != 10 || sv.Documents != 40 || sv.PromptTokens == 0 || sv.OutputTokens != 0 {
		t.Errorf("serving: %d ok, %d documents, %d prompt and %d output tokens; want 10, 40, some and 0", sv.OK, sv.Documents, sv.PromptTokens, sv.OutputTokens)
	}
	if want := float64(sv.Documents) / sv.DurationSeconds; sv.DocumentThroughput <= 0 || math.Abs(sv.DocumentThroughput-want) > 1e-9*want {
		t.Errorf("document throughput %v, want %v", sv.DocumentThroughput, want)
	}
	for _, c := range s.Checks {
		if c.Passes != 5 || c.Fails != 0 {
			t.Errorf("check %q: %d passes, %d fails", c.Name, c.Passes, c.Fails)
		}
	}
	if len(s.Checks) != 4 {
		t.Errorf("%d checks, want 4", len(s.Checks))
	}
	rows := map[string]int64{}
	for _, row := range s.Latency {
		rows[row.Metric] = row.Count
	}
	if rows["llm_e2e"] != 10 || rows["llm_ttft"] != 0 {
		t.Errorf("latency rows' samples %v, want 10 of llm_e2e and none of llm_ttft", rows)
	}
}
