package runner_test

import (
	"path/filepath"
	"testing"

	"github.com/llmrun/llmrun/runtime/runner"
	"github.com/llmrun/llmrun/runtime/summary"
)

// A run of two scenarios writes each one's timeline in the result file:
// the second starts a second late and its timeline with it, and in every
// interval the scenarios' requests, failures and output tokens add up to
// the run's timeline, as their totals add up to the run's.
func TestRunWritesEachScenariosTimeline(t *testing.T) {
	const script = `
import llm from 'llm';
export const options = {
  scenarios: {
    chat: { executor: 'constant-vus', vus: 1, duration: '3s', exec: 'chat' },
    rag: { executor: 'constant-vus', vus: 2, duration: '2s', exec: 'rag', startTime: '1s' },
  },
};
const ask = (n) => llm.stream({ messages: [{ role: 'user', content: 'Hi.' }], max_tokens: n, ignore_eos: true });
export function chat() { ask(4); }
export function rag() { ask(16); }
`
	export := filepath.Join(t.TempDir(), "result.json")
	r := run(t, script, func(c *runner.Config) { c.SummaryExport = export })
	if r.outcome.Verdict != runner.Passed {
		t.Fatalf("outcome %+v\nstderr:\n%s", r.outcome, r.stderr)
	}
	s, err := summary.ReadJSON(export)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(s.Scenarios))
	}
	type counts struct{ requests, failed, tokens int64 }
	byT := map[float64]counts{}
	for _, sc := range s.Scenarios {
		if len(sc.Timeline) == 0 {
			t.Fatalf("scenario %s has no timeline", sc.Name)
		}
		var requests int64
		for _, p := range sc.Timeline {
			c := byT[p.T]
			byT[p.T] = counts{c.requests + p.Requests, c.failed + p.Failed, c.tokens + p.OutputTokens}
			requests += p.Requests
		}
		if requests != sc.Serving.Requests {
			t.Errorf("scenario %s: %d requests in its timeline, %d in its serving block", sc.Name, requests, sc.Serving.Requests)
		}
		// rag starts at 1 s: no interval of its ends before 2 s.
		if first := sc.Timeline[0]; sc.Name == "rag" && first.T-first.Seconds < 1 {
			t.Errorf("rag's timeline starts at %g s, before the scenario did", first.T-first.Seconds)
		}
	}
	var total counts
	for _, p := range s.Timeline {
		c := byT[p.T]
		if c != (counts{p.Requests, p.Failed, p.OutputTokens}) {
			t.Errorf("at %g s the scenarios add up to %+v; the run's timeline has %d requests, %d failed, %d tokens",
				p.T, c, p.Requests, p.Failed, p.OutputTokens)
		}
		delete(byT, p.T)
		total = counts{total.requests + p.Requests, total.failed + p.Failed, total.tokens + p.OutputTokens}
	}
	if len(byT) > 0 {
		t.Errorf("scenario points at no point of the run's timeline: %+v", byT)
	}
	if total.requests != s.Serving.Requests || total.tokens == 0 {
		t.Errorf("the run's timeline has %d requests and %d tokens; the run %d requests", total.requests, total.tokens, s.Serving.Requests)
	}
}
