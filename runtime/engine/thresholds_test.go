package engine

import (
	"fmt"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim/llmsimtest"
)

// thresholdScript sends requests in two scenarios, %d and %d, and sets
// three thresholds: llm_requests count<4 fails from the fourth request.
const thresholdScript = `
import llm from 'llm';
export const options = {
  scenarios: {
    chat: { executor: 'shared-iterations', vus: 1, iterations: %d },
    batch: { executor: 'shared-iterations', vus: 1, iterations: %d },
  },
  thresholds: {
    llm_requests: ['count<4'],
    'llm_ttft{scenario:chat}': ['p(99)<60000'],
    llm_failed: ['rate<0.5'],
  },
};
export default function () { llm.stream({ prompt: 'hi', max_tokens: 3 }); }
`

// The live reading of the thresholds is the evaluation the end verdict
// uses, over the metrics so far: nothing before the run, and once the
// scenarios have run the values and verdicts of the run's report.
func TestThresholdsSoFarReadTheRunsMetrics(t *testing.T) {
	e := load(t, testConfig(t, fmt.Sprintf(thresholdScript, 3, 2), startSim(t, 0), nil))
	if got := e.ThresholdsSoFar(); got != nil {
		t.Errorf("before the run: %v, want nil", got)
	}
	rep, err := runBounded(t, t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	got := e.ThresholdsSoFar()
	if len(got) != 3 || len(rep.Thresholds) != 3 {
		t.Fatalf("%d readings and %d end results, want 3 each: %v", len(got), len(rep.Thresholds), got)
	}
	for i, r := range got {
		end := rep.Thresholds[i]
		if r.Key != end.Key || r.Source != end.Source || r.Value != end.Value || r.Passed != end.Passed || r.Evaluated != end.Evaluated {
			t.Errorf("reading %d is %s, the end's %s", i, r, end)
		}
	}
	if got[0].Passed || got[0].Value != 5 {
		t.Errorf("llm_requests count<4 reads %s, want failed, observed 5", got[0])
	}
	if !got[1].Passed || !got[1].Evaluated {
		t.Errorf("the chat scenario's TTFT p(99) reads %s, want passed", got[1])
	}
}

func TestThresholdsSoFarOfAScriptWithoutThresholds(t *testing.T) {
	e := load(t, testConfig(t, `
import llm from 'llm';
export const options = { iterations: 1 };
export default function () { llm.stream({ prompt: 'hi', max_tokens: 2 }); }`, startSim(t, 0), nil))
	mustRun(t, e)
	if got := e.ThresholdsSoFar(); got != nil {
		t.Errorf("a script without thresholds reads %v, want nil", got)
	}
}

// One live reading of the thresholds, over the metrics of a run of 400
// requests in two scenarios (the dashboard takes one a period).
//
// Its cost is that of a snapshot of every series (metrics.Aggregator's
// Snapshot clones each one's statistics, under each shard's lock, which
// the VUs' samples take too): it grows with the run's series and with
// how many distinct values their histograms hold, not with its requests
// once the histograms have filled; requests=4000 shows it.
func BenchmarkThresholdsSoFar(b *testing.B) {
	for _, n := range []int{400, 4000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			e := benchEngine(b, llmsimtest.Start(b, llmsimtest.Fast()).URL()+"/v1", fmt.Sprintf(thresholdScript, 3*n/4, n/4))
			if _, err := e.Run(b.Context()); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if len(e.ThresholdsSoFar()) != 3 {
					b.Fatal("want 3 readings")
				}
			}
		})
	}
}
