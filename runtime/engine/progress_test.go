package engine

import (
	"slices"
	"testing"
)

// Each field of Progress means one thing, the one its consumers (the live
// view, the timeline, the InfluxDB and Prometheus outputs) read: Requests
// and Failed count ended requests, OutputTokens every output token that
// arrived (those of a request that then failed included) and Arrived the
// same tokens by scenario and model.
func TestProgressFieldsMeanOneThingEach(t *testing.T) {
	e := load(t, testConfig(t, `
import llm from 'llm';
export const options = {
  scenarios: {
    good: { executor: 'per-vu-iterations', vus: 1, iterations: 3 },
    cut: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'cut' },
  },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }
export function cut() {
  llm.stream({ prompt: 'hi', max_tokens: 4 }, { headers: { 'X-Llmsim-Fault': 'reset;after=1' } });
}`, startSim(t, 0), nil))
	rep := mustRun(t, e)
	p := e.Progress()
	wantArrived := []TokenCount{{Scenario: "cut", Model: testModel, Tokens: 2 * 1}, {Scenario: "good", Model: testModel, Tokens: 3 * 2}}
	var arrived int64
	for _, c := range p.Arrived {
		arrived += c.Tokens
	}
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"Requests (ended, failed included)", p.Requests, int64(5)},
		{"Failed", p.Failed, int64(2)},
		{"OutputTokens (arrived, the failed requests' included)", p.OutputTokens, int64(3*2 + 2*1)},
		{"OutputTokens = the sum of Arrived", p.OutputTokens, arrived},
		{"Arrived (by scenario and model, sorted)", slices.Equal(p.Arrived, wantArrived), true},
		{"ActiveVUs (after the run)", p.ActiveVUs, int64(0)},
		{"MaxVUs", p.MaxVUs, 2},
		{"Scenarios", len(p.Scenarios), 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v (arrived %+v)", c.field, c.got, c.want, p.Arrived)
		}
	}
	// The completed requests' tokens are llm_output_tokens; the tokens of
	// the failed ones are in OutputTokens only.
	if got := sum(rep, "llm_output_tokens", nil); got != 3*2 {
		t.Errorf("llm_output_tokens = %g, want 6", got)
	}
}
