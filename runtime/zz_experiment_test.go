package runtime

import (
	"testing"
	"time"
)

func TestZZCheckAfterInterrupt(t *testing.T) {
	sim := startSim(t, 5*time.Millisecond)
	for i := 0; i < 30; i++ {
		cfg := testConfig(t, `
import llm from 'llm';
import { check } from 'llmrun';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 4, duration: '50ms', gracefulStop: '20ms' } } };
export default function () {
  const r = llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3000, ignore_eos: true });
  check(r, { ok: (r) => r.ok });
}
`, sim, nil)
		rep := mustRun(t, load(t, cfg))
		if c := count(rep, "checks", nil); c != 0 {
			t.Logf("run %d: %d checks recorded after interrupted requests (fails %d)", i, c, c-rep.Snapshot.Stats("checks", nil).NonZero)
		}
	}
}
